/**
 * The storage contract behind agent memory: threads owned by resources, the messages of each
 * thread in a stable order, and per-resource working memory. Every implementation
 * (`InMemoryStorage`, `LibSQLStorage`, `PostgresStorage`) passes the same test suite.
 */
import type { MastraDBMessage } from '../message-list/types.js';

/**
 * A conversation thread. A thread belongs to exactly one resource (a user, a tenant, …) for
 * its whole life.
 *
 * @example
 * ```ts
 * import type { StorageThread } from 'rxagent/memory';
 * const thread: StorageThread | null = await storage.getThread('thread-1');
 * ```
 */
export interface StorageThread {
  /** The id. */
  id: string;
  /** The id of the resource (user, tenant) that owns the thread. */
  resourceId: string;
  /** The title. */
  title?: string;
  /** Free-form metadata (JSON). */
  metadata?: Record<string, unknown>;
  /** When it was created. */
  createdAt: Date;
  /** When it was last changed. */
  updatedAt: Date;
}

/**
 * What `createThread` takes. `createdAt`/`updatedAt` default to the store's clock. A date that is
 * no valid `Date` or is before 4714-11-24 BC (the earliest every store can hold) — given here or
 * read from the store's clock by any write — is a `RangeError` on every store, before anything
 * is written.
 *
 * @example
 * ```ts
 * import type { CreateThreadInput } from 'rxagent/memory';
 * const input: CreateThreadInput = { id: 'thread-1', resourceId: 'user-1', title: 'Trip plans' };
 * ```
 */
export interface CreateThreadInput {
  /** The id. */
  id: string;
  /** The id of the resource (user, tenant) that owns the thread. */
  resourceId: string;
  /** The title. */
  title?: string;
  /** Free-form metadata (JSON). */
  metadata?: Record<string, unknown>;
  /** When it was created. */
  createdAt?: Date;
  /** When it was last changed. */
  updatedAt?: Date;
}

/**
 * Options of `listThreads`: the threads of one resource, most recently updated first.
 *
 * @example
 * ```ts
 * import type { ListThreadsOptions } from 'rxagent/memory';
 * const page: ListThreadsOptions = { resourceId: 'user-1', limit: 20, offset: 20 };
 * ```
 */
export interface ListThreadsOptions {
  /** The id of the resource (user, tenant) that owns the thread. */
  resourceId: string;
  /** At most this many threads (a non-negative integer). Default: all. */
  limit?: number;
  /** Skip this many threads first (a non-negative integer). Default: 0. */
  offset?: number;
}

/**
 * Options of `getMessages`. Messages come back in chronological order: the order in which
 * they were first saved (an insertion sequence), not only `createdAt`.
 *
 * - `after` / `before` keep messages whose `createdAt` is strictly after / before the date.
 * - `last: n` returns the newest `n` (of those kept), still oldest first; with `offset`, the
 *   `offset` newest are skipped first, so `{ last: 10, offset: 10 }` pages backwards.
 * - Without `last`, `offset`/`limit` count from the oldest message.
 * - `last` and `limit` together are a `RangeError`.
 *
 * @example
 * ```ts
 * import type { GetMessagesOptions } from 'rxagent/memory';
 * const history: GetMessagesOptions = { threadId: 'thread-1', last: 20 };
 * ```
 */
export interface GetMessagesOptions {
  /** The id of the conversation thread. */
  threadId: string;
  /** When given, reading a thread of another resource is a `ThreadOwnershipError`. */
  resourceId?: string;
  /** At most this many messages: the latest ones. */
  last?: number;
  /** Only messages created after this time. */
  after?: Date;
  /** Only messages created before this time. */
  before?: Date;
  /** At most this many. */
  limit?: number;
  /** Skip this many first. */
  offset?: number;
  /** Ends the read early (see {@link StorageCallOptions}). */
  abortSignal?: AbortSignal;
}

/**
 * What `getThread` and `createThread` take besides their input.
 *
 * @example
 * ```ts
 * import type { StorageCallOptions } from 'rxagent/memory';
 * const call: StorageCallOptions = { abortSignal: AbortSignal.timeout(5_000) };
 * const thread = await storage.getThread('thread-1', call);
 * ```
 */
export interface StorageCallOptions {
  /**
   * Ends the operation early: a store that waits or retries (`PostgresStorage` through an
   * infrastructure failure, `LibSQLStorage` on a locked file) rejects with `abortSignal.reason`
   * instead of waiting or trying again. A store may ignore it (`InMemoryStorage` never waits).
   */
  abortSignal?: AbortSignal;
}

/**
 * Options of `saveMessages`. One call is one transaction: every message is stored or none is.
 *
 * @example
 * ```ts
 * import type { SaveMessagesOptions } from 'rxagent/memory';
 * const save: SaveMessagesOptions = { threadId: 'thread-1', resourceId: 'user-1', messages, ensureThread: true };
 * ```
 */
export interface SaveMessagesOptions {
  /** The id of the conversation thread. */
  threadId: string;
  /** The id of the resource (user, tenant) that owns the thread. */
  resourceId: string;
  /** The messages to save (stored shape). */
  messages: ReadonlyArray<MastraDBMessage>;
  /**
   * Create the thread (owned by `resourceId`) in the same transaction when it does not exist.
   * Default `false`: saving into a missing thread is a `ThreadNotFoundError`.
   */
  ensureThread?: boolean;
  /**
   * Cancels the save while nothing is committed yet: the signal is checked before the
   * transaction starts, while waiting for a lock (libSQL) and right before `COMMIT`. An aborted
   * signal rolls the transaction back and the save rejects with `abortSignal.reason`; nothing
   * is stored. Once `COMMIT` is sent the signal is ignored and the save completes.
   */
  abortSignal?: AbortSignal;
  /**
   * Which messages already stored in the thread this save may change. Absent (default): every
   * message is an upsert by id — a stored message of the thread with the same id is replaced.
   * Given (`Memory` always gives it: the remembered messages its run updated, such as a tool call
   * that got its result): a message whose id is already stored in the thread is replaced only
   * when its id is listed here; saved again unchanged (same role, type, content and `createdAt`:
   * a save run again after its `COMMIT` answer was lost) it is left as it is, in its place; with
   * anything else the save is an `InvalidMessageError` at `[index, 'id']` naming the id and the
   * thread, and stores nothing — an id that repeats (a deterministic `generateId` restarted in
   * another process) never overwrites history. An id twice in `messages` is refused too. Not an
   * array of strings: a `TypeError`. Another thread's message id is refused either way. With
   * `runId` (or a `fence`) the messages that run stored may be replaced too.
   */
  replaceable?: ReadonlyArray<string>;
  /**
   * The run saving (a durable run's id; a fenced save's is `fence.runId`, and a `runId` naming
   * another run is a `TypeError`). The store keeps it with each message the save adds, and the save
   * may replace, besides the `replaceable` ones (none when absent), only the messages this run
   * stored: a takeover saves its run's messages again, and a processor may give the second owner
   * other content. A stored message of another run, or of no run (saved without `runId`, or before
   * the store kept runs), under one of the ids is an `InvalidMessageError` at `[index, 'id']`
   * naming the id, and nothing of the batch is stored — unless it is saved again unchanged. A
   * replaced message stays the run's that stored it first. Not an id a store can hold: a `TypeError`.
   */
  runId?: string;
  /**
   * Drops what only an earlier owner of the save's run stored: in the same transaction, the
   * messages of the thread that this save's run (`runId`, or the fence's) stored under an id
   * starting with this prefix and that `messages` does not hold are deleted. A durable run's commit
   * hands out ids of one prefix made from the run id (`Memory` names it): when the next owner runs
   * the commit again after memory's save, the thread keeps what its commit made, and a message
   * only the first owner's commit made does not stay behind. Messages of other runs, of no run,
   * and this run's under other ids (its input, its steps' replies) are never deleted. Without a
   * run, not a string, or empty: a `TypeError`.
   */
  supersedesIdPrefix?: string;
  /**
   * Save only while a durable run's owner still holds it: the store checks, inside the save's
   * transaction, that the run's epoch is still `epoch` (`PostgresStorage`: the `runs` row read
   * `FOR SHARE` in the same schema, so a takeover waits for the save or the save sees the new
   * epoch). A stale epoch rejects with `FencedError` and stores nothing. `beforeCommit` is awaited
   * inside the transaction, right before `COMMIT`. Stores that cannot check a fence against the
   * journal (libSQL, in-memory) reject a save that carries one with a `TypeError`. The fence's
   * run is the save's `runId`: the save replaces only what that run stored (and `replaceable`).
   */
  fence?: SaveFence;
}

/**
 * The fence of a durable run's memory save: the run and the epoch of the owner saving.
 *
 * @example
 * ```ts
 * import type { SaveFence } from 'rxagent/memory';
 * const fence: SaveFence = { runId: lease.runId, epoch: lease.epoch };
 * ```
 */
export interface SaveFence {
  /** The durable run saving. */
  runId: string;
  /** The epoch of the owner saving: a save from an older epoch is refused (`FencedError`). */
  epoch: number;
  /** Awaited inside the save's transaction, before `COMMIT` (a fault point for tests). */
  beforeCommit?: () => Promise<void>;
  /**
   * Which run under `runId` is saving (`RunRecord.incarnation`): when the journal holds another
   * (the run was erased and one created again under its id, from epoch 0 again), the save is
   * refused (`RunNotFoundError`) whatever its epoch. Absent: the epoch alone.
   */
  incarnation?: string;
}

/**
 * Per-resource memory shared by all its threads (working memory and metadata).
 *
 * @example
 * ```ts
 * import type { StorageResource } from 'rxagent/memory';
 * const resource: StorageResource | null = await storage.getResource('user-1');
 * ```
 */
export interface StorageResource {
  /** The id. */
  id: string;
  /** Working memory text kept for the resource. */
  workingMemory?: string;
  /** Free-form metadata (JSON). */
  metadata?: Record<string, unknown>;
  /** When it was created. */
  createdAt: Date;
  /** When it was last changed. */
  updatedAt: Date;
}

/**
 * What `saveResource` takes. Fields left `undefined` keep their stored value; `metadata` is
 * replaced as a whole, not merged.
 *
 * @example
 * ```ts
 * import type { SaveResourceInput } from 'rxagent/memory';
 * const input: SaveResourceInput = { id: 'user-1', workingMemory: '# Name: Ada' };
 * ```
 */
export interface SaveResourceInput {
  /** The id. */
  id: string;
  /** Working memory text kept for the resource. */
  workingMemory?: string;
  /** Free-form metadata (JSON). */
  metadata?: Record<string, unknown>;
}

/**
 * The store behind `Memory`: threads, their messages and resources. Every method is async;
 * failures of the backend (server unreachable, disk full, …) reject with `StorageError`.
 *
 * Guarantees every implementation keeps:
 * - `saveMessages` is atomic and validates every message (zod) before writing anything; an
 *   invalid message is an `InvalidMessageError` naming its path, e.g. `[2, 'content', 'parts']`.
 * - Saving an existing message id replaces that message but keeps its original position —
 *   unless the save lists what it may replace (`SaveMessagesOptions.replaceable`, what `Memory`
 *   does): then another message under a stored id is refused and nothing is stored.
 *   The new messages of one call stay together, in the order given, even when several runs
 *   save to the same thread at once. A message id lives in one thread only.
 * - A thread never changes resource: touching it as another resource is a
 *   `ThreadOwnershipError`.
 * - Message content is stored as JSON: what JSON cannot carry (a `Date` inside metadata, a
 *   `Map`) comes back in its JSON form; a `BigInt` is rejected as an `InvalidMessageError`.
 *
 * @example
 * ```ts
 * import { InMemoryStorage } from 'rxagent/memory';
 * const storage = new InMemoryStorage();
 * await storage.saveMessages({ threadId: 't1', resourceId: 'u1', messages, ensureThread: true });
 * const history = await storage.getMessages({ threadId: 't1', last: 20 });
 * ```
 */
export interface MemoryStorage {
  /** The thread, or `null` when it does not exist. */
  getThread(threadId: string, options?: StorageCallOptions): Promise<StorageThread | null>;
  /**
   * Creates a thread. Creating one that already exists for the same resource returns the
   * stored thread unchanged; for another resource it is a `ThreadOwnershipError`.
   */
  createThread(input: CreateThreadInput, options?: StorageCallOptions): Promise<StorageThread>;
  /** The threads of a resource, most recently updated first. */
  listThreads(options: ListThreadsOptions): Promise<StorageThread[]>;
  /** Deletes a thread and all its messages. Deleting a missing thread does nothing. */
  deleteThread(threadId: string): Promise<void>;
  /** Messages of a thread in chronological (insertion) order; `[]` for a missing thread. */
  getMessages(options: GetMessagesOptions): Promise<MastraDBMessage[]>;
  /** Upserts messages by id in one transaction (only the `replaceable` ones and the run's own when either is given). */
  saveMessages(options: SaveMessagesOptions): Promise<void>;
  /** The resource, or `null` when it does not exist. */
  getResource(resourceId: string): Promise<StorageResource | null>;
  /** Creates or updates a resource and returns what is stored. */
  saveResource(input: SaveResourceInput): Promise<StorageResource>;
  /** Releases connections. Idempotent; the store is unusable afterwards. */
  close(): Promise<void>;
}
