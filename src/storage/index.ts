/**
 * The storage layer: the `MemoryStorage` contract, the in-memory store and the storage errors.
 * The SQL stores have their own entry points (`rxagent/storage/libsql`,
 * `rxagent/storage/postgres`) so their drivers stay optional.
 *
 * @example
 * ```ts
 * import { InMemoryStorage, StorageError, type MemoryStorage } from 'rxagent/memory';
 * const storage: MemoryStorage = new InMemoryStorage();
 * ```
 */
export type {
  CreateThreadInput,
  GetMessagesOptions,
  ListThreadsOptions,
  MemoryStorage,
  SaveFence,
  SaveMessagesOptions,
  SaveResourceInput,
  StorageCallOptions,
  StorageResource,
  StorageThread,
} from './types.js';
export { InMemoryStorage, type FenceChecker, type InMemoryStorageOptions } from './in-memory-storage.js';
export { StorageError, type StorageOperation } from './errors/storage-error.js';
export { ThreadNotFoundError } from './errors/thread-not-found-error.js';
export { MissingDriverError } from './errors/missing-driver-error.js';
export { ThreadOwnershipError } from './errors/thread-ownership-error.js';
export { InvalidIdError, MAX_STORAGE_ID_LENGTH, type InvalidIdField, type InvalidIdReason } from './errors/invalid-id-error.js';
// The run journal (durable runs): public through `rxagent/durable`.
export type {
  EncodedChunk,
  JournalEntry,
  JournalReadOptions,
  LostOwnerRun,
  OwnerLockState,
  OwnerSession,
  Appended,
  CreatedRun,
  NewRun,
  PinnedToolCall,
  ClaimOptions,
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
  DeleteRunOptions,
  PurgeOptions,
  PurgeResult,
  RunRetentionOptions,
  ListRunsOptions,
  ListedRun,
  UnusableRun,
} from './journal/types.js';
export { InMemoryRunJournal, type InMemoryRunJournalOptions } from './journal/in-memory-run-journal.js';
// not re-exported by a package entry: the rule every store holds ids to (the durable worker bounds a
// submitted message id by it, as the journal bounds run ids)
export { storageIdProblem } from './internal/ids.js';
// not re-exported by a package entry: the refund bound both journals keep
export { MAX_INFRASTRUCTURE_LOSSES } from './journal/types.js';
// not re-exported by a package entry: the stores' retry through infrastructure failures (the
// durable worker retries a submit's writes with it)
export { DEFAULT_RETRY_DEADLINE_MS, retryInfrastructure } from './internal/infrastructure-retry.js';
// not re-exported by a package entry: the one classifier of infrastructure failures (the stores
// retry them; a durable run's attempt fails on them) and the backoff between tries
export {
  INFRASTRUCTURE_BACKOFF_BASE_MS,
  INFRASTRUCTURE_BACKOFF_MAX_MS,
  infrastructureBackoffMs,
  isInfrastructureError,
  isStorageInfrastructureError,
} from './infrastructure-error.js';
export { RunNotFoundError } from './journal/errors/run-not-found-error.js';
export { JournalCursorError } from './journal/errors/journal-cursor-error.js';
export { JournalSchemaError } from './journal/errors/journal-schema-error.js';
export { FencedError } from './journal/errors/fenced-error.js';
export { RunConflictError } from './journal/errors/run-conflict-error.js';
export { RunOpenError } from './journal/errors/run-open-error.js';
export { MalformedJournalEntryError } from './journal/errors/malformed-journal-entry-error.js';
export { MissingAuthorizationError } from './journal/errors/missing-authorization-error.js';
export { assertRunAccess, authorizedRun, checkedEntryChunk, clientEntry, type RunAccess, type RunAuthorize } from './journal/run-access.js';
export { RUN_ID_HEADER, decodeRunIdHeader, encodeRunIdHeader } from './journal/run-id-header.js';
