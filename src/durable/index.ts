/**
 * `rxagent/durable`: runs that survive their server. The worker (`createRunWorker`: submit, claim,
 * checkpoint, take over), the run journal contract (`RunJournal`, its records and errors), the
 * in-memory journal, and the readers any instance serves a run from.
 * `PostgresRunJournal` is in `rxagent/storage/postgres`; the UI-stream readers and
 * `DurableChatTransport` in `rxagent/ai-sdk`.
 *
 * @example
 * ```ts
 * import { createRunToken, createRunWorker, journalStreamResponse, runTokenAuthorization } from 'rxagent/durable';
 * const worker = createRunWorker({ journal, boss, agents: [support] });
 * await worker.start();
 * const { runId } = await worker.submit('support', 'Hi', { memory: { thread: chatId, resource: userId } });
 * const token = createRunToken({ runId, resourceId: userId, expiresInSeconds: 3600, secret });
 * const response = await journalStreamResponse(journal, runId, { request, authorize: runTokenAuthorization({ secret }) });
 * ```
 */
export {
  FencedError,
  InMemoryRunJournal,
  JournalCursorError,
  JournalSchemaError,
  MalformedJournalEntryError,
  MissingAuthorizationError,
  RunConflictError,
  RunNotFoundError,
  RunOpenError,
  RUN_ID_HEADER,
  decodeRunIdHeader,
  encodeRunIdHeader,
  type DeleteRunOptions,
  type PurgeOptions,
  type PurgeResult,
  type RunRetentionOptions,
  type ListRunsOptions,
  type ListedRun,
  type UnusableRun,
  type RunAccess,
  type RunAuthorize,
  type EncodedChunk,
  type InMemoryRunJournalOptions,
  type JournalEntry,
  type JournalReadOptions,
  type LostOwnerRun,
  type OwnerLockState,
  type OwnerSession,
  type Appended,
  type CreatedRun,
  type NewRun,
  type PinnedToolCall,
  type ClaimOptions,
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
export {
  RUN_TOKEN_HEADER,
  createRunToken,
  runTokenAuthorization,
  verifyRunToken,
  type CreateRunTokenOptions,
  type RunTokenAuthorizationOptions,
  type RunTokenClaims,
  type VerifyRunTokenOptions,
} from './run-token.js';
export { createRunWorker, type CancelRunOptions, type JobPolicies, type RunJob, type RunQueue, type RunWorker, type RunWorkerOptions } from './create-run-worker.js';
export type { RetentionJobOptions } from './internal/retention-job.js';
export type { RunWorkerEvent } from './run-worker-event.js';
export type { DurableCallOptions } from './durable-call-options.js';
export type { FaultPointInfo, RunFaultPoint } from './fault-point.js';
export { NotDurableError } from './errors/not-durable-error.js';
export { ToolOutcomeUnknownError } from './errors/tool-outcome-unknown-error.js';
export { RunAttemptsExhaustedError } from './errors/run-attempts-exhausted-error.js';
// what a commit's `state` holds, and the errors of a run's snapshot (a processor state that is not JSON; a snapshot that cannot be restored)
export { DurableStateError, RunSnapshotError, type RunSnapshot, type RunPosition } from '../loop/index.js';
// the JSON codec chunks, run snapshots, processor state and call options go through (`JsonEncodingError` names what JSON would change)
export { JsonEncodingError, encodeJson, findNonJson, toJsonValue, type JsonValue, type NonJsonAt } from '../contract/index.js';
