/**
 * The run's state as JSON at a step boundary (`RunSnapshot`), and back: what another process
 * needs to go on with a run — the message list (its unsaved ids included), the steps, the retry
 * counters and feedback, the signals waiting, the system messages every step starts from, each
 * processor's `state` and `streamParts`, the custom chunks waiting, the run's request-context
 * overlay, and where it stands. Made from the state alone (`snapshotRun`); read back as a fresh
 * state (`restoreRun`) the run is then set up over. `Date`s and `Error`s go through the one JSON
 * codec (`toJsonValue`); the known date fields are dates again after `restoreRun`.
 */
import { MessageList } from '../../message-list/message-list.js';
import type { CoreSystemMessage } from '../../message-list/types.js';
import { streamPartsFrom, streamPartsLogs, streamPartsMismatch, type StreamPartsLogs } from '../../operators/stream-parts.js';
import type { AgentChunk, ChunkType, DataChunkType } from '../../contract/chunk-types.js';
import { findNonJson, toJsonValue, type JsonValue } from '../../contract/json-codec.js';
import type { Processor, ProcessorState, StepResult } from '../../contract/processor-types.js';
import type { RequestContextOverlay } from '../../contract/request-context.js';
import { isHooked } from '../../contract/has-hook.js';
import type { ProcessorSignal } from '../../contract/signal-types.js';
import { DurableStateError } from './durable-state-error.js';
import { storedUsage } from '../../model/usage.js';
import { RunSnapshotError } from './run-snapshot-error.js';
import { RUN_SNAPSHOT_FORMAT, type RunSnapshot } from './run-snapshot-types.js';
import { checkRunSnapshot, malformed } from './run-snapshot-check.js';
import { COMMIT, positionJson, stepAt, type Position } from './run-position.js';
import type { RunSources } from './run-sources.js';
import { restoreAttempt } from './attempt-snapshot.js';
import { createRunState, type RunState } from './run-state.js';

export { RUN_SNAPSHOT_FORMAT, type RunPosition, type RunSnapshot } from './run-snapshot-types.js';

/** The processors by id (the first of an id: processors sharing an id share their state). */
function processorsById(processors: readonly Processor[]): Map<string, Processor> {
  const byId = new Map<string, Processor>();
  for (const processor of processors) if (!byId.has(processor.id)) byId.set(processor.id, processor);
  return byId;
}

/**
 * Every processor's `state` as JSON, as its `durableState` says: plain JSON by default (else a
 * `DurableStateError` naming processor and path), left out for `'reset'`, its own `snapshot`.
 */
function processorStatesOf(processors: readonly Processor[], state: RunState): Record<string, JsonValue> {
  const byId = processorsById(processors);
  const states: Record<string, JsonValue> = {};
  for (const [processorId, processorState] of Object.entries(state.processorStates)) {
    const durable = byId.get(processorId)?.durableState ?? 'json';
    if (durable === 'reset') continue;
    if (durable === false) throw new DurableStateError({ processorId, path: '$', type: 'durableState: false' });
    if (typeof durable === 'object' && 'notDurable' in durable) throw new DurableStateError({ processorId, path: '$', type: `not durable: ${durable.notDurable}` });
    const value: unknown = durable === 'json' ? processorState : durable.snapshot(processorState);
    const nonJson = findNonJson(value);
    if (nonJson !== undefined) throw new DurableStateError({ processorId, path: nonJson.path, type: nonJson.type });
    states[processorId] = toJsonValue(value);
  }
  return states;
}

/** The request-context overlay as a snapshot keeps it. */
function overlayJson(overlay: RequestContextOverlay): RunSnapshot['requestContext'] {
  return {
    values: [...(overlay.values ?? [])].map(([key, value]): [string, JsonValue] => [key, toJsonValue(value, `requestContext "${key}"`)]),
    deleted: [...(overlay.deleted ?? [])],
  };
}

/**
 * The run's state as a {@link RunSnapshot}, at `position`: JSON all through (a processor state that
 * is not JSON is a `DurableStateError`; a value the codec cannot write, a `JsonEncodingError`
 * naming its path). `processors`: the run's processors, whose `durableState` declarations say how
 * each processor's `state` is written (configuration, not state).
 */
export function snapshotRun(state: RunState, position: Position, processors: readonly Processor[]): RunSnapshot {
  const streamParts = state.streamParts[0];
  return {
    format: RUN_SNAPSHOT_FORMAT,
    runId: state.runId,
    next: positionJson(position, state.steps),
    messageList: state.messageList.serialize(),
    steps: state.steps.map((step, index) => toJsonValue(step, `steps[${index}]`)),
    retryCount: state.retryCount,
    apiErrorRetryCount: state.apiErrorRetryCount,
    retryFeedback: state.retryFeedback ?? null,
    pendingSignals: state.pendingSignals.map((signal) => toJsonValue(signal, 'a pending signal')),
    initialSystemMessages: toJsonValue(state.initialSystemMessages) as unknown as CoreSystemMessage[],
    finish: state.finish === undefined ? null : toJsonValue(state.finish, 'finish'),
    processorStates: processorStatesOf(processors, state),
    streamParts: streamParts === undefined ? null : toJsonValue(streamPartsLogs(streamParts), 'streamParts'),
    customChunks: state.customChunks.map((chunk) => toJsonValue(chunk, `chunk ${chunk.type}`)),
    requestContext: overlayJson(state.requestContext),
  };
}

/** An ISO date string back as a `Date` (anything else as it is). */
function date(value: unknown): unknown {
  return typeof value === 'string' ? new Date(value) : value;
}

/** A step result read back: its response timestamp a `Date` again. */
function reviveStep(json: JsonValue): StepResult {
  const step = json as unknown as StepResult;
  const timestamp = step.response?.timestamp as unknown;
  if (timestamp !== undefined) (step.response as { timestamp?: unknown }).timestamp = date(timestamp);
  // counts an earlier build wrote as `null` (a provider's NaN through JSON): unknown, as they enter now
  step.usage = storedUsage(step.usage);
  return step;
}

/** A chunk read back: the date fields of `response-metadata` and `step-finish` `Date`s again. */
export function reviveChunk(json: JsonValue): ChunkType {
  const chunk = json as unknown as ChunkType;
  if (chunk.type === 'response-metadata' && chunk.payload.timestamp !== undefined) chunk.payload.timestamp = date(chunk.payload.timestamp) as Date;
  if (chunk.type === 'step-finish') {
    const response = (chunk.payload as { response?: { timestamp?: unknown } }).response;
    if (response?.timestamp !== undefined) response.timestamp = date(response.timestamp);
  }
  return chunk;
}

/** The processor states of a snapshot, as each processor's `durableState` restores them. */
function restoredStates(processors: readonly Processor[], states: Record<string, JsonValue>): Record<string, ProcessorState> {
  const byId = processorsById(processors);
  const restored: Record<string, ProcessorState> = {};
  for (const [processorId, json] of Object.entries(states)) {
    if (processorId === '__proto__') throw malformed(['processorStates', processorId], 'not a processor id (its state would be every processor\'s prototype)');
    const durable = byId.get(processorId)?.durableState ?? 'json';
    if (durable === 'reset' || durable === false || (typeof durable === 'object' && 'notDurable' in durable)) continue;
    if (durable === 'json' && (json === null || typeof json !== 'object' || Array.isArray(json))) throw malformed(['processorStates', processorId], 'expected an object (the processor\'s state)');
    restored[processorId] = durable === 'json' ? (json as ProcessorState) : durable.restore(json);
  }
  return restored;
}

/**
 * The output chain's `streamParts` of a snapshot, for a run whose output processors are
 * `processors`: none when the snapshot has none or the run has no `processOutputStream` hook; a
 * `RunSnapshotError` when the snapshot's chain had other processors.
 */
function restoredStreamParts(processors: readonly Processor[], json: JsonValue | null): RunState['streamParts'] {
  const chain = processors.filter((processor) => isHooked(processor, 'processOutputStream')).map((processor) => processor.id);
  if (json === null || chain.length === 0) return [];
  const logs = json as unknown as StreamPartsLogs;
  if (logs.processors.length !== chain.length || logs.processors.some((id, index) => id !== chain[index])) {
    const message = streamPartsMismatch(logs.processors, chain);
    throw new RunSnapshotError({ message: `The snapshot's output processors differ from this run's at $.streamParts.processors: ${message}`, cause: new TypeError(message) });
  }
  return [streamPartsFrom(logs, reviveChunk)];
}

/** The request-context overlay of a snapshot. */
function restoredOverlay(json: RunSnapshot['requestContext']): RequestContextOverlay {
  return {
    values: json.values.length === 0 ? undefined : new Map(json.values),
    deleted: json.deleted.length === 0 ? undefined : new Set(json.deleted),
  };
}

/**
 * The run's state of `snapshot`, a fresh value, and where the run goes on (never `processInput`
 * again; at a `tools` position the model is not called again either). The run is then set up over
 * that state. `sources`: the run's configuration the state needs to come back (run-sources.ts).
 */
export function restoreRun(snapshot: RunSnapshot, sources: RunSources): { state: RunState; position: Position } {
  checkRunSnapshot(snapshot);
  const messageList = MessageList.deserialize(snapshot.messageList, { generateId: sources.generateId, now: sources.now });
  const state = createRunState(snapshot.runId, messageList, restoredOverlay(snapshot.requestContext));
  state.steps = snapshot.steps.map(reviveStep);
  state.retryCount = snapshot.retryCount;
  state.apiErrorRetryCount = snapshot.apiErrorRetryCount;
  state.retryFeedback = snapshot.retryFeedback ?? undefined;
  state.pendingSignals = snapshot.pendingSignals.map((json) => {
    const signal = json as unknown as ProcessorSignal;
    return { ...signal, createdAt: date(signal.createdAt) as Date };
  });
  state.initialSystemMessages = snapshot.initialSystemMessages;
  state.finish = snapshot.finish === null ? undefined : (reviveChunk(snapshot.finish) as AgentChunk<'finish'>);
  state.processorStates = restoredStates(sources.apiErrorProcessors, snapshot.processorStates);
  state.streamParts = restoredStreamParts(sources.outputProcessors, snapshot.streamParts);
  state.customChunks = (snapshot.customChunks ?? []).map((chunk) => chunk as unknown as DataChunkType);
  return { state, position: restoredPosition(sources, state, snapshot.next) };
}

/** Where a restored run goes on: a `tools` position's attempt made again from its snapshot. */
function restoredPosition(sources: RunSources, state: RunState, next: RunSnapshot['next']): Position {
  if (next.kind === 'commit') return COMMIT;
  if (next.kind === 'step') return stepAt(next.stepNumber);
  try {
    return { kind: 'tools', stepNumber: next.stepNumber, ...restoreAttempt(sources, state.steps, next.attempt) };
  } catch (error) {
    throw new RunSnapshotError({ message: `The snapshot's attempt cannot be restored: ${(error as Error).message}`, cause: error });
  }
}
