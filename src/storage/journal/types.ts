/**
 * The run journal contract: an append-only record of one run's chunks, its commits and its tool
 * ledger, written by one owner at a time (fenced by the run's `epoch`) and read by any process.
 * Every implementation (`InMemoryRunJournal`, `PostgresRunJournal`) passes one shared test suite.
 */
import type { Observable } from 'rxjs';
import type { ChunkType } from '../../contract/chunk-types.js';
import type { JsonValue } from '../../contract/json-codec.js';
import type { MalformedJournalEntryError } from './errors/malformed-journal-entry-error.js';

/**
 * One chunk of a run as the journal holds it: its dense sequence number (from 1), the epoch of
 * the owner that wrote it, the chunk, and the JSON text every reader gets byte for byte.
 *
 * @example
 * ```ts
 * import type { JournalEntry } from 'rxagent/durable';
 * journal.read$(runId).subscribe((entry: JournalEntry) => console.log(entry.seq, entry.chunk.type));
 * ```
 */
export interface JournalEntry {
  /** The entry's dense sequence number in its run, from 1. */
  readonly seq: number;
  /** The epoch of the owner that wrote the entry. */
  readonly epoch: number;
  /** The chunk, decoded from `json`. */
  readonly chunk: ChunkType;
  /** The chunk as the JSON text stored, the same bytes for every reader. */
  readonly json: string;
}

/** Where a run stands: `queued` (created, never claimed), `running` (claimed), or ended. */
export type RunStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

/** The kind of a run's terminal chunk. */
export type RunTerminal = 'finish' | 'tripwire' | 'error' | 'abort';

/**
 * A run as the journal knows it. `status` follows the terminal chunk once the run ended:
 * `finish`/`tripwire` → `completed`, `error` → `failed`, `abort` → `cancelled`.
 *
 * @example
 * ```ts
 * import type { RunRecord } from 'rxagent/durable';
 * const run: RunRecord | null = await journal.getRun(runId);
 * if (run?.status === 'running') console.log(`owned by ${run.owner} (epoch ${run.epoch}), ${run.lastSeq} chunks`);
 * ```
 */
export interface RunRecord {
  /** The run's id, as given to `createRun`. */
  runId: string;
  /** The id of the agent that runs it. */
  agentId: string;
  /** The memory thread the run belongs to, if any. */
  threadId?: string;
  /** The memory resource (user, …) the run belongs to, if any. */
  resourceId?: string;
  /** Where the run stands (see {@link RunStatus}). */
  status: RunStatus;
  /** Bumped by every claim: the fencing token of the current owner (0 before the first claim). */
  epoch: number;
  /** The sequence number of the last chunk (0: none yet). */
  lastSeq: number;
  /** The run format its rows are written in (`RunJournal.format` when created). */
  format: number;
  /**
   * Which run under this id it is: the same for every claim of the run, another when a run is
   * created again under its id (after an erase or a purge). A durable run's commit ids carry it
   * (format 2 on). Absent on a run stored before the journal kept it (PostgreSQL rows from before
   * migration 7) and on a journal that keeps none.
   */
  incarnation?: string;
  /** The owner given to the last `claim` (absent before the first claim). */
  owner?: string;
  /** The kind of the run's terminal chunk, once the run has ended. */
  terminal?: RunTerminal;
  /** When the run was created. */
  createdAt: Date;
  /** When the run's record last changed. */
  updatedAt: Date;
  /**
   * When retention removed the run's chunks, commits, ledger and signals (the run ended more than
   * `chunkRetentionSeconds` ago): readers answer it with `RunNotFoundError { reason: 'expired' }`
   * (HTTP 410). Absent while the run's chunks are kept.
   */
  expiredAt?: Date;
}

/**
 * Options of `RunJournal.listRuns`.
 *
 * @example
 * ```ts
 * import type { ListRunsOptions } from 'rxagent/durable';
 * const forOperators: ListRunsOptions = { limit: 100, unusable: 'report' };
 * ```
 */
export interface ListRunsOptions {
  /** How many runs, from 1 to 1000 (else a `RangeError` naming it). Default 50. */
  limit?: number;
  /**
   * What a run row this build cannot use does to the listing — a status, terminal, epoch, format
   * or `last_seq` that `getRun` and the claim refuse (another build's row, or one edited in the
   * database):
   * - `'refuse'` (default): the whole listing rejects with that row's `MalformedJournalEntryError`
   *   (`row: 'runs'`, `field`). For callers that act on the runs they list.
   * - `'report'`: the row is an {@link UnusableRun} in its place, every other run listed as it is,
   *   in order. For a listing an operator reads (the run inspector's).
   *
   * Any other value is a `RangeError` naming it.
   */
  unusable?: 'refuse' | 'report';
}

/**
 * A run row `listRuns({ unusable: 'report' })` lists in its place because this build cannot use
 * it: its run id and the error `getRun` and the claim give for it. Told from a `RunRecord` by
 * `'unusable' in entry`.
 *
 * @example
 * ```ts
 * import type { ListedRun, UnusableRun } from 'rxagent/durable';
 * const isUnusable = (entry: ListedRun): entry is UnusableRun => 'unusable' in entry;
 * for (const entry of await journal.listRuns({ unusable: 'report' })) {
 *   if (isUnusable(entry)) console.warn(entry.runId, entry.error.field, entry.error.problem);
 * }
 * ```
 */
export interface UnusableRun {
  /** Always `true`: what tells this entry from a `RunRecord`. */
  readonly unusable: true;
  /** The run's id as its row holds it (the run's other fields are not given: one of them is wrong). */
  readonly runId: string;
  /** What is wrong: `row: 'runs'`, the `field`, the `problem` — the error `getRun` throws for the run. */
  readonly error: MalformedJournalEntryError;
}

/**
 * One entry of `listRuns({ unusable: 'report' })`: a run, or an {@link UnusableRun} in place of a
 * row this build cannot use.
 *
 * @example
 * ```ts
 * import type { ListedRun } from 'rxagent/durable';
 * const label = (entry: ListedRun) => ('unusable' in entry ? `${entry.runId}: ${entry.error.message}` : `${entry.runId} ${entry.status}`);
 * ```
 */
export type ListedRun = RunRecord | UnusableRun;

/**
 * How long a journal keeps ended runs (see docs/durable.md, "Retention"). Both count from the
 * run's end on the database's clock; `chunkRetentionSeconds ≤ runRetentionSeconds`.
 *
 * @example
 * ```ts
 * import { PostgresRunJournal } from 'rxagent/storage/postgres';
 * const journal = new PostgresRunJournal({ connectionString, chunkRetentionSeconds: 86_400, runRetentionSeconds: 7 * 86_400 });
 * ```
 */
export interface RunRetentionOptions {
  /**
   * Seconds an ended run keeps its chunks, commits, tool ledger and signals; after that a purge
   * removes them and readers answer 410. Default 604,800 (7 days).
   */
  chunkRetentionSeconds?: number;
  /**
   * Seconds an ended run keeps its row (its status, owner, terminal, ids: what a 410 is told from a
   * 404 by); after that a purge removes it and the run is unknown (404). Default 2,592,000 (30 days).
   */
  runRetentionSeconds?: number;
}

/**
 * What one `RunJournal.purgeExpired` call did.
 *
 * @example
 * ```ts
 * const { expired, removed, done }: PurgeResult = await journal.purgeExpired({ batchSize: 1000 });
 * ```
 */
export interface PurgeResult {
  /** Runs whose chunks (and commits, ledger, signals) were removed: they now answer 410. */
  expired: number;
  /** Rows removed in all (chunks, commits, ledger rows, signals, run rows). */
  removed: number;
  /** Run rows removed (past `runRetentionSeconds`): they now answer 404. */
  runsRemoved: number;
  /** `false` when the call stopped at `maxStatements` with work left: call again. */
  done: boolean;
}

/**
 * Options of `RunJournal.purgeExpired`.
 *
 * @example
 * ```ts
 * const options: PurgeOptions = { batchSize: 500, maxStatements: 20 };
 * while (!(await journal.purgeExpired(options)).done);
 * ```
 */
export interface PurgeOptions {
  /** At most this many rows per statement (and runs marked expired per statement). Default 1000. */
  batchSize?: number;
  /** At most this many delete statements in the call. Default 100. */
  maxStatements?: number;
}

/**
 * Options of `RunJournal.deleteRun`.
 *
 * @example
 * ```ts
 * const options: DeleteRunOptions = { force: true }; // erase even a run still running
 * await journal.deleteRun(runId, options);
 * ```
 */
export interface DeleteRunOptions {
  /**
   * Erase a run that is still `queued` or `running` too: its owner's next write finds no run
   * (`RunNotFoundError`) and stops. Default false: an open run is refused with `RunOpenError`.
   */
  force?: boolean;
}

/**
 * The right to write one run, from `claim`: valid until another claim bumps the epoch.
 *
 * @example
 * ```ts
 * import type { RunLease } from 'rxagent/durable';
 * const { lease }: { lease: RunLease } = await journal.claim(runId, 'worker-1');
 * ```
 */
export interface RunLease {
  /** The run the lease is for. */
  readonly runId: string;
  /** The epoch its claim gave the run: the fencing token every write is checked against. */
  readonly epoch: number;
  /** The owner that claimed the run. */
  readonly owner: string;
  /**
   * Which run under `runId` the claim took (`RunRecord.incarnation`; absent for a run without
   * one): writes under the lease go to that run only. A run erased and created again under its id
   * starts at epoch 0 again, so its owner's epoch can be the old owner's: the old lease is fenced
   * by this (`RunNotFoundError`: its run is gone), not by the epoch.
   */
  readonly incarnation?: string;
}

/**
 * Options of `RunJournal.claim`.
 *
 * @example
 * ```ts
 * const claim = await journal.claim(runId, 'worker-1', { incarnation: run.incarnation });
 * ```
 */
export interface ClaimOptions {
  /**
   * Claim this run under the id only (`RunRecord.incarnation`, as a run's job carries it): when
   * the journal holds another — the one asked for was erased or purged and a run created again
   * under its id — or one without an incarnation, the claim is `RunNotFoundError` and nothing is
   * changed. Absent: whichever run the journal holds under the id.
   */
  readonly incarnation?: string;
}

/** What `createRun` takes. `input` is the run's JSON input (agent input, call options…). */
export interface NewRun {
  /** The run's id: one id names one run (`createRun` is idempotent by it). */
  runId: string;
  /** The id of the agent that runs it. */
  agentId: string;
  /** The memory thread the run belongs to, if any. */
  threadId?: string;
  /** The memory resource (user, …) the run belongs to, if any. */
  resourceId?: string;
  /** The run's JSON input (agent input, call options…): what an owner rebuilds the run from. */
  input: JsonValue;
}

/** The commit points of a run (see docs/durable.md). */
export type RunCommitKind = 'input' | 'model' | 'step' | 'rejected' | 'final';

/** A tool call pinned by a `model` commit: a `pending` ledger row written with the commit. */
export interface PinnedToolCall {
  /** The tool call's id (the ledger row's key). */
  toolCallId: string;
  /** The name of the tool called. */
  toolName: string;
  /** The call's arguments, as JSON. */
  args: JsonValue;
}

/**
 * A checkpoint written atomically with the chunks of the same `append`. `state` is the run's
 * snapshot (opaque to the journal). A `final` commit must end with the terminal chunk and sets
 * the run's status from it; a `model` commit may pin tool calls (`pending` ledger rows).
 */
export interface RunCommit {
  /** The commit point this checkpoint is. */
  kind: RunCommitKind;
  /** The step number the commit belongs to. */
  step: number;
  /** The attempt at the commit: the run's retries so far (tripwire and API-error retries together). */
  attempt: number;
  /** The run's snapshot, opaque to the journal. */
  state: JsonValue;
  /** Tool calls pinned by a `model` commit: written as `pending` ledger rows with it. */
  toolCalls?: readonly PinnedToolCall[];
}

/** A stored commit: numbered from 1 per run, with the epoch that wrote it and the last seq it covers. */
export interface RunCommitRecord {
  /** The commit's number in its run, from 1. */
  no: number;
  /** The commit point it is. */
  kind: RunCommitKind;
  /** The step number it belongs to (`RunCommit.step`). */
  step: number;
  /** The attempt at the commit (`RunCommit.attempt`). */
  attempt: number;
  /** The epoch of the owner that wrote it. */
  epoch: number;
  /** The seq of the last chunk written with (and covered by) the commit. */
  seqEnd: number;
  /** The run's snapshot as written (`RunCommit.state`). */
  state: JsonValue;
}

/** Where a tool call stands in the ledger: `pending → started → completed | failed`. */
export type ToolCallStatus = 'pending' | 'started' | 'completed' | 'failed';

/**
 * A ledger transition. `pending` (also pinned by a `model` commit) records the call;
 * `started` is written before `execute` (again by a later owner re-running an idempotent call);
 * `completed`/`failed` keep the JSON result or error. `pending → failed` is allowed (a call that
 * never ran, e.g. invalid input).
 */
export type ToolTransition =
  | {
      /** The tool call's id (the ledger row's key). */
      toolCallId: string;
      /** Records the call. */
      status: 'pending';
      /** The name of the tool called. */
      toolName: string;
      /** The call's arguments, as JSON. */
      args: JsonValue;
    }
  | {
      /** The tool call's id. */
      toolCallId: string;
      /** Written before `execute` runs. */
      status: 'started';
    }
  | {
      /** The tool call's id. */
      toolCallId: string;
      /** `execute` returned. */
      status: 'completed';
      /** The tool's result, as JSON. */
      output: JsonValue;
    }
  | {
      /** The tool call's id. */
      toolCallId: string;
      /** The call failed (or never ran, from `pending`). */
      status: 'failed';
      /** The call's error, as JSON. */
      error: JsonValue;
    };

/** A ledger row. `epoch` is the epoch of its last transition. */
export interface ToolCallRecord {
  /** The tool call's id (the row's key). */
  toolCallId: string;
  /** The name of the tool called. */
  toolName: string;
  /** The call's arguments, as JSON. */
  args: JsonValue;
  /** Where the call stands. */
  status: ToolCallStatus;
  /** The epoch of the row's last transition. */
  epoch: number;
  /** The tool's result, as JSON (once `completed`). */
  output?: JsonValue;
  /** The call's error, as JSON (once `failed`). */
  error?: JsonValue;
}

/** What `claim` gives the new owner: its lease, the run, its input as created, its last commit and the ledger. */
export interface RunClaim {
  /** The new owner's lease: every write it makes carries it. */
  lease: RunLease;
  /** The run as claimed (`status: 'running'`, the new epoch and owner). */
  run: RunRecord;
  /** The run's `input`, as given to `createRun` (what a new owner rebuilds the run from). */
  input: JsonValue;
  /**
   * The run's last commit (an empty array before the first): the one a new owner goes on from.
   * Older commits are not read (their snapshots are superseded; journals keep only the last).
   */
  commits: RunCommitRecord[];
  /** The run's tool ledger. */
  toolCalls: ToolCallRecord[];
}

/** A request recorded for a run's owner (any instance may send it). */
export interface RunSignal {
  /** What is asked: `stop` (the run ends with `abort`). */
  kind: 'stop';
  /** Why, as JSON (the owner aborts the run with it). */
  reason?: JsonValue;
}

/** A stored signal, numbered per journal in the order received. */
export interface RunSignalRecord extends RunSignal {
  /** The signal's number in the journal, in the order received. */
  id: number;
  /** When the signal was recorded. */
  createdAt: Date;
}

/** A chunk already encoded (by `encodeJson`): what the batched writer hands to `appendEncoded`. */
export interface EncodedChunk {
  /** The chunk's `type`. */
  readonly type: string;
  /** The chunk as JSON text, stored as it is (a raw U+001E, never in JSON text, is a `TypeError`). */
  readonly json: string;
}

/** Options of `read$`. */
export interface JournalReadOptions {
  /** Serve entries with `seq > after` (an integer from 0 to `lastSeq`). Default 0. */
  after?: number;
  /** Follow new entries until the terminal one (default); `false`: complete at the current end. */
  live?: boolean;
  /**
   * Awaited before each next page is requested: a consumer's backpressure (an HTTP response
   * waits for its client). Default: none.
   */
  ready?: () => Promise<void> | void;
  /**
   * At most this many bytes of chunk text per page (a reader's buffer bound): a page of large
   * chunks is split, a single chunk larger than the bound comes alone. Default: pages bounded by
   * row count only.
   */
  maxPageBytes?: number;
}

/**
 * What `RunJournal.createRun` resolves with.
 *
 * @example
 * ```ts
 * const { created }: CreatedRun = await journal.createRun({ runId: 'r1', agentId: 'support', input: { messages: [] } });
 * ```
 */
export interface CreatedRun {
  /** The run as stored (the existing one when not created). */
  run: RunRecord;
  /** `false` when the same run was already there. */
  created: boolean;
}

/**
 * What `RunJournal.append` / `appendEncoded` resolve with.
 *
 * @example
 * ```ts
 * const { lastSeq }: Appended = await journal.append(lease, chunks);
 * ```
 */
export interface Appended {
  /** The run's last seq after the write. */
  lastSeq: number;
}

/**
 * The run journal: an append-only record of each run (chunks with dense `seq` from 1, commits, a
 * tool ledger), written by the run's one owner and read by anyone. Every write carries a
 * `RunLease`; a lease whose epoch is not the run's current one is refused with `FencedError`.
 *
 * @example
 * ```ts
 * import { InMemoryRunJournal } from 'rxagent/durable';
 * const journal = new InMemoryRunJournal();
 * await journal.createRun({ runId: 'r1', agentId: 'support', input: { messages: [] } });
 * const { lease } = await journal.claim('r1', 'worker-1');
 * await journal.append(lease, [{ type: 'start', runId: 'r1', from: 'AGENT', payload: { messageId: 'm1' } }]);
 * journal.read$('r1', { live: false }).subscribe((entry) => console.log(entry.seq, entry.json));
 * ```
 */
export interface RunJournal {
  /** The newest run format this build reads and writes. */
  readonly format: number;
  /** Creates a `queued` run. Idempotent by `runId`: the same run again → `{ created: false }`; another → `RunConflictError`. */
  createRun(run: NewRun): Promise<CreatedRun>;
  /**
   * The run with this id, or `null` when the journal holds none. A run row this build cannot use (a
   * status, terminal, epoch or format another build or an edit left: `PostgresRunJournal`) is a
   * `MalformedJournalEntryError` naming the field (`row: 'runs'`), never a record that says otherwise.
   */
  getRun(runId: string): Promise<RunRecord | null>;
  /** The newest `queued` or `running` run of a thread, or `null`. */
  activeRun(threadId: string): Promise<RunRecord | null>;
  /**
   * Optional (both journals of rxagent): the runs changed most recently, newest first, at most
   * `limit` (1 to 1000, default 50) — what an operator's tool lists to open. Each row is checked
   * as `getRun` and the claim check it. A row this build cannot use rejects the whole listing with
   * its `MalformedJournalEntryError` (`unusable: 'refuse'`, the default: for callers that act on
   * the rows), or is listed in its place as an {@link UnusableRun} (`unusable: 'report'`), every
   * other run listed as it is. A row of a newer format is listed as `getRun` gives it.
   */
  listRuns?(options?: ListRunsOptions & { unusable?: 'refuse' }): Promise<RunRecord[]>;
  /** The same listing with each run row this build cannot use in its place (`unusable: 'report'`). */
  listRuns?(options: ListRunsOptions & { unusable: 'report' }): Promise<ListedRun[]>;
  /** The listing when `unusable` is only known at run time: either form. */
  listRuns?(options?: ListRunsOptions): Promise<ListedRun[]>;

  /**
   * Takes the run over: epoch + 1, `status: 'running'`. Unknown run → `RunNotFoundError`; a run of
   * a newer format → `JournalSchemaError` (epoch unchanged); an ended run → `FencedError` (`'ended'`);
   * a run row no claim can go on from (a field `getRun` refuses, an epoch at the store's maximum, a
   * `last_seq` that is not where its chunks end) → `MalformedJournalEntryError` naming the field,
   * nothing changed; with `options.incarnation`, a run of another incarnation → `RunNotFoundError`,
   * nothing changed. The rest (input, commit, ledger) is returned as stored: the worker checks it.
   * The lease carries the run's incarnation: its writes are fenced to that run.
   */
  claim(runId: string, owner: string, options?: ClaimOptions): Promise<RunClaim>;
  /** Appends chunks (and a commit) in one fenced write; the chunks get `lastSeq + 1…`. */
  append(lease: RunLease, chunks: readonly ChunkType[], commit?: RunCommit): Promise<Appended>;
  /** `append` with chunks already encoded (the batched writer encodes each chunk once). */
  appendEncoded(lease: RunLease, chunks: readonly EncodedChunk[], commit?: RunCommit): Promise<Appended>;
  /** One fenced ledger transition. */
  toolCall(lease: RunLease, transition: ToolTransition): Promise<ToolCallRecord>;
  /**
   * Records a request for the run's owner (`stop`). Unknown run → `RunNotFoundError`; an ended run:
   * nothing to do. A run holds one signal of a kind: a stop after the first records nothing and
   * wakes nobody (the first one's `reason` is the one the owner aborts with), so repeated stops of
   * one run cost no rows, however many.
   */
  signal(runId: string, signal: RunSignal): Promise<void>;
  /** The run's signals, recorded and future, until the run ends (for its owner). */
  signals$(runId: string): Observable<RunSignalRecord>;
  /** The run's entries after `after`, in order; live by default (completes after the terminal entry). */
  read$(runId: string, options?: JournalReadOptions): Observable<JournalEntry>;
  /**
   * The seq of the last chunk of `type` at or before `atOrBefore` (0 when there is none): how a
   * UI-stream reader finds the step a cursor falls in without reading the run from the start.
   */
  findLastSeq(runId: string, type: string, atOrBefore: number): Promise<number>;
  /**
   * The run's **structure** with `after < seq ≤ until`: every entry but the deltas (`text-delta`,
   * `reasoning-delta`, `tool-call-delta`), in order. What a takeover and a UI resume need of a long
   * step (its start, which parts opened and closed), at a cost that does not grow with its deltas.
   * Unknown run → `RunNotFoundError` (`reason: 'expired'` once retention removed its chunks).
   */
  readStructure(runId: string, range: { after: number; until: number }): Promise<JournalEntry[]>;
  /**
   * Erases a run for an erasure request: its row, chunks, commits, tool ledger and signals, in one
   * atomic write. Resolves `true` when a run was erased, `false` when the journal held none. A run
   * still `queued` or `running` is refused with `RunOpenError` unless `force` is set. Afterwards
   * the run is unknown (`getRun` → `null`, readers 404).
   */
  deleteRun(runId: string, options?: DeleteRunOptions): Promise<boolean>;
  /**
   * One round of retention (the worker schedules it through pg-boss): runs ended more than
   * `chunkRetentionSeconds` ago are marked expired and their chunks, commits, ledger and signals
   * removed; rows of runs ended more than `runRetentionSeconds` ago are removed. Every statement
   * touches at most `batchSize` rows; safe to run from many instances at once.
   */
  purgeExpired(options?: PurgeOptions): Promise<PurgeResult>;
  /**
   * Optional (`PostgresRunJournal`): holds a database session whose life is `owner`'s (a
   * session-level lock keyed from the owner id), so other instances see at once when the owner's
   * process died (see {@link RunJournal.runsOfLostOwners}). A lost connection is opened again and
   * the lock taken again, at most `options.reconnectWithinMs` apart (`PostgresRunJournal`: default
   * 200; a number of milliseconds above 0 and at most 2^31 − 1, a `TypeError` naming it otherwise).
   * A worker passes a quarter of its `lostOwnerSweep.graceMs` (at least 50, at most 2000), so its
   * session is back within other workers' grace once the database answers after an outage.
   * Holders of one owner on one journal share its session: the shortest `reconnectWithinMs` applies.
   */
  holdOwnerSession?(owner: string, options?: { reconnectWithinMs?: number }): OwnerSession;
  /**
   * Optional (`PostgresRunJournal`): `running` runs of `agentIds` whose owner holds no owner
   * session (its process died, or its session blipped): one statement, at most `limit` runs.
   */
  runsOfLostOwners?(agentIds: readonly string[], limit?: number): Promise<LostOwnerRun[]>;
  /**
   * Optional (both journals of rxagent): notes that the infrastructure (the database or the way
   * to it), not the run, failed attempt `attempt` of run `runId` — a key its worker makes (the
   * job's generation and retry count). A worker notes it once it reaches the database again; when
   * the run's job runs out of attempts, the give-up refunds every noted one (see docs/durable.md,
   * "Outages"). Idempotent per key; at most 64 keys are kept per
   * run (further ones are not recorded, so an error misjudged as the infrastructure's cannot keep a
   * run alive for ever); a run that does not exist is left alone, and so is a run of another
   * incarnation than `options.incarnation` (the attempt's run was erased or purged and another
   * created under its id: the old run's note must not refund the new run's attempts). Without it,
   * whichever run the journal holds under the id (a job of an earlier build).
   */
  noteInfrastructureLoss?(runId: string, attempt: string, options?: { readonly incarnation?: string }): Promise<void>;
  /**
   * Optional (with `noteInfrastructureLoss`): the attempts noted for `runId`, in the order noted
   * (empty for an unknown run, and for a run of another incarnation than `options.incarnation`).
   */
  infrastructureLosses?(runId: string, options?: { readonly incarnation?: string }): Promise<readonly string[]>;
  /** Releases connections and ends live readers. Idempotent. */
  close(): Promise<void>;
}

/** How many attempts `RunJournal.noteInfrastructureLoss` keeps per run (internal: both journals use it). */
export const MAX_INFRASTRUCTURE_LOSSES = 64;

/**
 * A held owner session (see `RunJournal.holdOwnerSession`).
 *
 * @example
 * ```ts
 * const session = journal.holdOwnerSession?.('worker-1', { reconnectWithinMs: 100 });
 * await session?.ready();   // the lock is held: runs claimed by worker-1 from now on look alive
 * session?.lock$.subscribe(({ held, at }) => console.log(held ? 'held' : 'lost', new Date(at)));
 * await session?.close();   // released: other instances take worker-1's runs over at once
 * ```
 */
export interface OwnerSession {
  /** Resolves once the session's lock is held (again, after a lost connection). */
  ready(): Promise<void>;
  /** Whether the lock is held right now. */
  readonly held: boolean;
  /**
   * The lock's state, then each change as the session learns it (a lost connection, the lock taken
   * again): `{ held, at }`, `at` this process's `Date.now()` at the change. A new subscriber gets
   * the current state first (with the moment it began); consecutive values differ in `held`.
   * Completes once this holder has closed the session.
   */
  readonly lock$: Observable<OwnerLockState>;
  /** Releases the lock and its connection; no new attempt is made. */
  close(): Promise<void>;
}

/**
 * A state of an owner session's lock (see {@link OwnerSession.lock$}).
 *
 * @example
 * ```ts
 * const lost: OwnerLockState = { held: false, at: Date.now() };
 * ```
 */
export interface OwnerLockState {
  /** Whether the session holds its lock from `at` on. */
  readonly held: boolean;
  /** When the session learnt it (`Date.now()` of the process holding it). */
  readonly at: number;
}

/**
 * A `running` run whose owner's session is gone (see `RunJournal.runsOfLostOwners`).
 *
 * @example
 * ```ts
 * const lost: LostOwnerRun = { runId: 'r1', agentId: 'support', owner: 'host:42:ab12cd34', epoch: 3, updatedAt: new Date() };
 * ```
 */
export interface LostOwnerRun {
  /** The run's id. */
  runId: string;
  /** The agent that runs it (its queue is the agent's). */
  agentId: string;
  /** The owner whose session is gone. */
  owner: string;
  /** The run's epoch: the lost owner's claim. */
  epoch: number;
  /** The run row's last write (the database's clock): the dead owner's job was fetched before it. */
  updatedAt: Date;
}
