/**
 * `rxagent/devtools`: the run inspector — `inspect(agent)` serves a local page to chat with an
 * agent and watch each run as a marble timeline (processor hooks, chunks in and out, tripwires,
 * retries, judge and tool calls, timings); `Inspector` records runs; `toMarbleDiagram` turns a
 * run's chunks into a diagram and values for a `TestScheduler` test. Node only (`node:http`).
 */
export { inspect, type InspectOptions, type InspectorServer } from './inspect.js';
export { Inspector, type InspectableJournal, type InspectorJournalListing, type InspectorJournalRun, type InspectorJournalRunError, type InspectorOptions, type InspectorRowError, type TraceContext, type TraceOptions } from './inspector.js';
export { toMarbleDiagram, type MarbleExport, type MarbleExportOptions, type MarbleTestOptions } from './marble-export.js';
export { InspectorError, type InspectorErrorReason } from './errors/inspector-error.js';
export type {
  ChunkEvent,
  HookEvent,
  InspectorEvent,
  InspectorEventBase,
  InspectorRunRecord,
  InspectorRunStatus,
  InspectorJournalFacts,
  InspectorRunSummary,
  JudgeEvent,
  MarbleOutcome,
  Payload,
  RevisedEvent,
  RunEndEvent,
  RunEvictedEvent,
  RunStartEvent,
  TakeoverEvent,
} from './inspector-events.js';
