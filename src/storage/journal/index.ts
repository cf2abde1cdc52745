/**
 * The run journal (durable runs): its contract, the in-memory journal and its errors. Public
 * through `rxagent/durable`; `PostgresRunJournal` is in `rxagent/storage/postgres`.
 *
 * @example
 * ```ts
 * import { InMemoryRunJournal, type RunJournal } from 'rxagent/durable';
 * const journal: RunJournal = new InMemoryRunJournal();
 * ```
 */
export type {
  EncodedChunk,
  JournalEntry,
  JournalReadOptions,
  NewRun,
  PinnedToolCall,
  RunClaim,
  RunCommit,
  RunCommitKind,
  RunCommitRecord,
  RunJournal,
  RunLease,
  RunRecord,
  RunSignal,
  RunSignalRecord,
  RunStatus,
  RunTerminal,
  ToolCallRecord,
  ToolCallStatus,
  ToolTransition,
} from './types.js';
export { InMemoryRunJournal, type InMemoryRunJournalOptions } from './in-memory-run-journal.js';
export { RunNotFoundError } from './errors/run-not-found-error.js';
export { JournalCursorError } from './errors/journal-cursor-error.js';
export { JournalSchemaError } from './errors/journal-schema-error.js';
export { FencedError } from './errors/fenced-error.js';
export { RunConflictError } from './errors/run-conflict-error.js';
