/**
 * `rxagent/durable`: runs that survive their server. The run journal contract (`RunJournal`, its
 * records and errors), the in-memory journal, and the readers any instance serves a run from.
 * `PostgresRunJournal` is in `rxagent/storage/postgres`; the UI-stream readers and
 * `DurableChatTransport` in `rxagent/ai-sdk`.
 *
 * @example
 * ```ts
 * import { InMemoryRunJournal, journalStreamResponse } from 'rxagent/durable';
 * const journal = new InMemoryRunJournal();
 * const response = await journalStreamResponse(journal, runId, { request });
 * ```
 */
export {
  FencedError,
  InMemoryRunJournal,
  JournalCursorError,
  JournalSchemaError,
  RunConflictError,
  RunNotFoundError,
  type EncodedChunk,
  type InMemoryRunJournalOptions,
  type JournalEntry,
  type JournalReadOptions,
  type NewRun,
  type PinnedToolCall,
  type RunClaim,
  type RunCommit,
  type RunCommitKind,
  type RunCommitRecord,
  type RunJournal,
  type RunLease,
  type RunRecord,
  type RunSignal,
  type RunSignalRecord,
  type RunStatus,
  type RunTerminal,
  type ToolCallRecord,
  type ToolCallStatus,
  type ToolTransition,
} from '../storage/index.js';
export { journalStreamResponse, type JournalStreamResponseOptions } from './journal-stream-response.js';
// The worker (createRunWorker, RunWorker, …) is added here by the worker's change.
