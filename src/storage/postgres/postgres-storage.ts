import type { Pool, PoolConfig, QueryResult, QueryResultRow } from 'pg';
import { pg } from '../internal/load-driver.js';
import type { MastraDBMessage } from '../../message-list/types.js';
import { RxAgentError } from '../../errors/rxagent-error.js';
import { StorageError, type StorageOperation } from '../errors/storage-error.js';
import { ThreadNotFoundError } from '../errors/thread-not-found-error.js';
import { ThreadOwnershipError } from '../errors/thread-ownership-error.js';
import { assertStorageId } from '../internal/ids.js';
import { closedError, guard } from '../internal/guard.js';
import { retryDeadlineMs, retryInfrastructure } from '../internal/infrastructure-retry.js';
import { messageWindow, threadWindow } from '../internal/query-options.js';
import { metadataJson } from '../internal/records.js';
import { assertStorableText, storableDate, messageIdTakenError, messageInOtherThreadError, savePolicy, serialiseContent, validateMessages } from '../internal/validate-messages.js';
import type {
  CreateThreadInput,
  GetMessagesOptions,
  ListThreadsOptions,
  MemoryStorage,
  SaveMessagesOptions,
  SaveResourceInput,
  StorageCallOptions,
  StorageResource,
  StorageThread,
} from '../types.js';
import { GuardedPool, positiveMs, type GuardedPoolTimeouts } from './guarded-pool.js';
import {
  messageColumns,
  messageFromRow,
  resourceColumns,
  resourceFromRow,
  threadColumns,
  threadFromRow,
  type MessageRow,
  type ResourceRow,
  type ThreadRow,
} from './memory-rows.js';
import { migratePostgres, quoteIdentifier } from './migrations.js';
import { checkSaveFence, fenceSettings } from './save-fence.js';

/**
 * How `PostgresStorage` retries an operation that failed for the infrastructure's reason.
 *
 * @example
 * ```ts
 * import { PostgresStorage, type PostgresStorageRetry } from 'rxagent/storage/postgres';
 * const retry: PostgresStorageRetry = { deadlineMs: 30_000 };
 * const storage = new PostgresStorage({ connectionString: process.env.DATABASE_URL!, retry });
 * ```
 */
export interface PostgresStorageRetry {
  /**
   * How long after an operation's first infrastructure failure it is still tried again, in ms
   * (default 10 000; 0: never). Tries are paused 100 ms, 200 ms, … up to 5 s apart (jittered);
   * the last pause ends at the deadline, where one last try runs. Each try is bounded as any
   * operation is (`statementTimeoutMs` + 1 s per statement, `connectionTimeoutMs` for a
   * connection), and one running at the deadline is not cut short.
   */
  deadlineMs?: number;
}

interface PostgresStorageCommonOptions {
  /** The PostgreSQL schema holding rxagent's tables (created when missing). Default `rxagent`. */
  schema?: string;
  /**
   * The longest one statement may run, in ms (default 30 000). The server cancels it
   * (`statement_timeout`: set for the store's own pool, and `SET LOCAL` in every transaction on
   * any pool); a server or network that stops answering is given up on client-side one second
   * later (`query_timeout`) and its connection dropped. Either way the try fails and a save
   * writes nothing; the operation is retried within `retry.deadlineMs`, then rejects with a
   * `StorageError`.
   */
  statementTimeoutMs?: number;
  /** The longest wait for a connection from the pool, in ms (default 10 000). */
  connectionTimeoutMs?: number;
  /** The clock for thread and resource timestamps. Default: `new Date()`. */
  now?: () => Date;
  /**
   * Fenced transactions (a durable run's memory save, its tool ledger) run with this
   * `idle_in_transaction_session_timeout` and `lock_timeout`, in ms (default 5000): an owner
   * paused inside one is cut off by the server, so it cannot hold the lock a takeover needs.
   */
  fenceTimeoutMs?: number;
  /**
   * Retries of an operation that failed for the infrastructure's reason — a terminated backend
   * or a server shut down or starting (`57P01`–`57P03`), a cut or refused connection (class `08`,
   * `ECONNRESET`, `ECONNREFUSED`, …), a serialization failure or deadlock (`40001`, `40P01`), a
   * lock or statement timeout (`55P03`, `57014`), too many connections (class `53`): the
   * operation runs again, whole (a save is one transaction of upserts by message id, so a save
   * whose `COMMIT` answer was lost stores each message once when it runs again), for up to
   * `retry.deadlineMs` (default 10 000) after its first such failure. Then it rejects with the
   * `StorageError` of the last failure, and a save has stored nothing. Other failures (bad input,
   * a constraint, another thread's message id, another resource's thread, a stale fence) are
   * never retried, and an operation's `abortSignal` ends the retries at once with its reason.
   * A durable run's fenced save is not retried either: its attempt fails, and the run goes on from
   * its last commit. `PostgresStorage` only: `PostgresRunJournal` takes the same connection options
   * but does not retry (its writes are fenced the same way): passing `retry` to it is a `TypeError`.
   */
  retry?: PostgresStorageRetry;
}

/**
 * Options of `PostgresStorage`: a connection string (the store owns and ends its pool), or a
 * `pg` `Pool` you own (`close()` leaves it open).
 *
 * @example
 * ```ts
 * import { PostgresStorage } from 'rxagent/storage/postgres';
 * const storage = new PostgresStorage({ connectionString: process.env.DATABASE_URL!, schema: 'agents' });
 * ```
 */
export type PostgresStorageOptions =
  | (PostgresStorageCommonOptions & {
      /** A `postgres://` connection string. */
      connectionString: string;
      /** Extra `pg` pool settings (`max`, `ssl`, …). `connectionTimeoutMillis` defaults to 10 s. */
      poolConfig?: Omit<PoolConfig, 'connectionString'>;
      /** A `pg` `Pool` you own (`close()` leaves it open). */
      pool?: never;
    })
  | (PostgresStorageCommonOptions & {
    /** A `pg` `Pool` you own (`close()` leaves it open). */
    pool: Pool;
    /** A `postgres://` connection string. */
    connectionString?: never;
    /** Extra `pg` pool settings (`max`, `ssl`, …). */
    poolConfig?: never;
  });

/**
 * A `MemoryStorage` on PostgreSQL (`pg`), for many agent processes sharing one database.
 *
 * Tables live in their own schema (default `rxagent`), created and migrated on first use under
 * an advisory lock, so processes starting together are safe. `saveMessages` is one
 * transaction that locks the thread row: concurrent saves to one thread take turns, each
 * batch stays contiguous, and the order is a `bigserial` sequence. An operation that fails for
 * the infrastructure's reason (a cut connection, a restart, a lock timeout, …) is run again
 * within `retry.deadlineMs` (default 10 s), then rejects with a `StorageError`.
 *
 * @example
 * ```ts
 * import { PostgresStorage } from 'rxagent/storage/postgres';
 * const storage = new PostgresStorage({ connectionString: 'postgres://app:app@127.0.0.1:5432/appdb' });
 * await storage.saveMessages({ threadId: 't1', resourceId: 'u1', messages, ensureThread: true });
 * await storage.close();
 * ```
 */
export class PostgresStorage implements MemoryStorage {
  readonly #db: GuardedPool;
  readonly #ownsPool: boolean;
  readonly #schemaName: string;
  readonly #schema: string;
  readonly #now: () => Date;
  readonly #statementTimeoutMs: number;
  readonly #fenceTimeoutMs: number;
  readonly #retryDeadlineMs: number;
  /** Idle pooled connections the server drops emit 'error' on the pool: never fatal here. */
  readonly #onIdleError = (): void => undefined;
  #migrating: Promise<void> | undefined;
  #migrated = false;
  #closed = false;

  constructor(options: PostgresStorageOptions) {
    this.#schemaName = options.schema ?? 'rxagent';
    this.#schema = quoteIdentifier(this.#schemaName);
    this.#now = options.now ?? (() => new Date());
    const { pool, owned, timeouts } = openPool('PostgresStorage', options);
    this.#statementTimeoutMs = timeouts.statementTimeoutMs;
    this.#fenceTimeoutMs = positiveMs('PostgresStorage', 'fenceTimeoutMs', options.fenceTimeoutMs, 5000);
    this.#retryDeadlineMs = retryDeadlineMs('PostgresStorage', options.retry);
    this.#db = new GuardedPool(pool, timeouts);
    this.#ownsPool = owned;
    // Also on a pool you pass in (removed again by close()): pg emits an idle connection's
    // failure (server restarted, backend terminated) on the pool, and an 'error' event nobody
    // listens to ends the process. The next operation simply opens a new connection.
    pool.on('error', this.#onIdleError);
  }

  async getThread(threadId: string, options?: StorageCallOptions): Promise<StorageThread | null> {
    assertStorageId('threadId', threadId);

    return this.#run(
      'getThread',
      async () => {
        const result = await this.#query<ThreadRow>(`SELECT ${threadColumns} FROM ${this.#schema}.threads WHERE id = $1`, [threadId]);
        const row = result.rows[0];
        return row === undefined ? null : threadFromRow(row);
      },
      options?.abortSignal,
    );
  }

  async createThread(input: CreateThreadInput, options?: StorageCallOptions): Promise<StorageThread> {
    assertStorageId('threadId', input.id);
    assertStorageId('resourceId', input.resourceId);
    assertStorableText('createThread', 'title', input.title);
    const now = this.#clock('createThread');
    const createdAt = input.createdAt === undefined ? now : storableDate('createThread', 'createdAt', input.createdAt);
    const updatedAt = input.updatedAt === undefined ? createdAt : storableDate('createThread', 'updatedAt', input.updatedAt);

    return this.#run('createThread', async () => {
      const inserted = await this.#query<ThreadRow>(
        `INSERT INTO ${this.#schema}.threads (id, resource_id, title, metadata, created_at, updated_at)
         VALUES ($1, $2, $3, $4::json, $5, $6) ON CONFLICT (id) DO NOTHING RETURNING ${threadColumns}`,
        [input.id, input.resourceId, input.title ?? null, metadataJson(input.metadata), createdAt, updatedAt],
      );
      const row =
        inserted.rows[0] ??
        (await this.#query<ThreadRow>(`SELECT ${threadColumns} FROM ${this.#schema}.threads WHERE id = $1`, [input.id])).rows[0];
      if (row === undefined) throw new Error(`thread ${input.id} was deleted while being created`);
      if (row.resource_id !== input.resourceId) {
        throw new ThreadOwnershipError({ threadId: input.id, resourceId: input.resourceId });
      }
      return threadFromRow(row);
    }, options?.abortSignal);
  }

  async listThreads(options: ListThreadsOptions): Promise<StorageThread[]> {
    assertStorageId('resourceId', options.resourceId);

    const window = threadWindow(options);
    return this.#run('listThreads', async () => {
      const result = await this.#query<ThreadRow>(
        `SELECT ${threadColumns} FROM ${this.#schema}.threads WHERE resource_id = $1
         ORDER BY updated_at DESC, id ASC LIMIT $2 OFFSET $3`,
        [options.resourceId, window.limit ?? null, window.offset],
      );
      return result.rows.map(threadFromRow);
    });
  }

  async deleteThread(threadId: string): Promise<void> {
    assertStorageId('threadId', threadId);

    await this.#run('deleteThread', async () => {
      // Messages go with it (ON DELETE CASCADE).
      await this.#query(`DELETE FROM ${this.#schema}.threads WHERE id = $1`, [threadId]);
    });
  }

  async getMessages(options: GetMessagesOptions): Promise<MastraDBMessage[]> {
    assertStorageId('threadId', options.threadId);
    if (options.resourceId !== undefined) assertStorageId('resourceId', options.resourceId);

    const window = messageWindow(options);
    return this.#run('getMessages', async () => {
      const owner = await this.#query<{ resource_id: string }>(`SELECT resource_id FROM ${this.#schema}.threads WHERE id = $1`, [
        options.threadId,
      ]);
      const ownerRow = owner.rows[0];
      if (ownerRow === undefined) return [];
      if (options.resourceId !== undefined && ownerRow.resource_id !== options.resourceId) {
        throw new ThreadOwnershipError({ threadId: options.threadId, resourceId: options.resourceId });
      }
      const values: Array<string | number | Date | null> = [options.threadId];
      const conditions = ['thread_id = $1'];
      if (options.after !== undefined) {
        values.push(options.after);
        conditions.push(`created_at > $${values.length}`);
      }
      if (options.before !== undefined) {
        values.push(options.before);
        conditions.push(`created_at < $${values.length}`);
      }
      values.push(window.last ?? window.limit ?? null, window.offset);
      const page = `LIMIT $${values.length - 1} OFFSET $${values.length}`;
      const filtered = `SELECT ${messageColumns} FROM ${this.#schema}.messages WHERE ${conditions.join(' AND ')}`;
      const sql =
        window.last === undefined
          ? `${filtered} ORDER BY seq ASC ${page}`
          : `SELECT * FROM (${filtered} ORDER BY seq DESC ${page}) AS recent ORDER BY seq ASC`;
      const result = await this.#query<MessageRow>(sql, values);
      return result.rows.map(messageFromRow);
    }, options.abortSignal);
  }

  async saveMessages(options: SaveMessagesOptions): Promise<void> {
    assertStorageId('threadId', options.threadId);
    assertStorageId('resourceId', options.resourceId);

    if (this.#closed) throw closedError('saveMessages');
    validateMessages(options.messages, options);
    const { replaceable, writer, supersedes } = savePolicy(options);
    const { threadId, resourceId, abortSignal, fence } = options;
    const now = this.#clock('saveMessages');
    abortSignal?.throwIfAborted();
    await this.#run('saveMessages', () =>
      this.#db.transaction(async (query) => {
        // A durable run's save: its owner must still hold the run (row held FOR SHARE until COMMIT).
        if (fence !== undefined) await checkSaveFence(query, this.#schema, fence);
        if (options.ensureThread === true) {
          await query(
            `INSERT INTO ${this.#schema}.threads (id, resource_id, created_at, updated_at) VALUES ($1, $2, $3, $3) ON CONFLICT (id) DO NOTHING`,
            [threadId, resourceId, now],
          );
        }
        // Locking the thread row serialises saves to one thread: each batch lands contiguously.
        const owner = await query<{ resource_id: string }>(
          `SELECT resource_id FROM ${this.#schema}.threads WHERE id = $1 FOR UPDATE`,
          [threadId],
        );
        const ownerRow = owner.rows[0];
        if (ownerRow === undefined) throw new ThreadNotFoundError({ threadId });
        if (ownerRow.resource_id !== resourceId) throw new ThreadOwnershipError({ threadId, resourceId });
        for (const [index, message] of options.messages.entries()) {
          // Serialised here, statement by statement: a failure rolls back what came before.
          // a stored message of the thread is replaced when the save may replace it, when the saving
          // run stored it (its takeover saving again), or is unchanged (a save run again after its
          // COMMIT answer was lost); a replaced message stays the run's that stored it first
          const mayReplace = replaceable === undefined || replaceable.has(message.id);
          const result = await query(
            `INSERT INTO ${this.#schema}.messages AS stored (id, thread_id, resource_id, role, type, content, created_at, run_id)
             VALUES ($1, $2, $3, $4, $5, $6::json, $7, $9)
             ON CONFLICT (id) DO UPDATE SET role = EXCLUDED.role, type = EXCLUDED.type,
               content = EXCLUDED.content, created_at = EXCLUDED.created_at
             WHERE stored.thread_id = EXCLUDED.thread_id
               AND ($8::boolean OR stored.run_id = EXCLUDED.run_id
                 OR (stored.role = EXCLUDED.role AND stored.type IS NOT DISTINCT FROM EXCLUDED.type
                 AND stored.content::text = EXCLUDED.content::text AND stored.created_at = EXCLUDED.created_at))`,
            [message.id, threadId, resourceId, message.role, message.type ?? null, serialiseContent(message, index), message.createdAt, mayReplace, writer ?? null],
          );
          if (result.rowCount === 0) {
            const stored = await query<{ thread_id: string }>(`SELECT thread_id FROM ${this.#schema}.messages WHERE id = $1`, [message.id]);
            throw stored.rows[0]?.thread_id === threadId ? messageIdTakenError(index, message.id, threadId, writer) : messageInOtherThreadError(index, message.id);
          }
        }
        if (supersedes !== undefined) {
          // what only an earlier owner of the run's commit stored: the run's own, under its commit's prefix, not saved now
          await query(
            `DELETE FROM ${this.#schema}.messages
             WHERE thread_id = $1 AND run_id = $2 AND left(id, char_length($3)) = $3 AND NOT (id = ANY($4::text[]))`,
            [threadId, supersedes.runId, supersedes.idPrefix, [...supersedes.kept]],
          );
        }
        await query(`UPDATE ${this.#schema}.threads SET updated_at = $2 WHERE id = $1`, [threadId, now]);
        await fence?.beforeCommit?.();
        // The last point where an abort is honoured: rolled back, nothing stored.
        abortSignal?.throwIfAborted();
      }, fence === undefined ? [] : fenceSettings(this.#fenceTimeoutMs)),
      abortSignal,
      // a durable run's fenced save is not retried here: its attempt fails, and the durable layer
      // goes on from the last commit (a fence cut for an idle owner stays cut)
      fence === undefined ? this.#retryDeadlineMs : 0,
    );
  }

  async getResource(resourceId: string): Promise<StorageResource | null> {
    assertStorageId('resourceId', resourceId);

    return this.#run('getResource', async () => {
      const result = await this.#query<ResourceRow>(`SELECT ${resourceColumns} FROM ${this.#schema}.resources WHERE id = $1`, [
        resourceId,
      ]);
      const row = result.rows[0];
      return row === undefined ? null : resourceFromRow(row);
    });
  }

  async saveResource(input: SaveResourceInput): Promise<StorageResource> {
    assertStorageId('resourceId', input.id);
    assertStorableText('saveResource', 'workingMemory', input.workingMemory);

    const now = this.#clock('saveResource');
    return this.#run('saveResource', async () => {
      const result = await this.#query<ResourceRow>(
        `INSERT INTO ${this.#schema}.resources AS stored (id, working_memory, metadata, created_at, updated_at)
         VALUES ($1, $2, $3::json, $4, $4)
         ON CONFLICT (id) DO UPDATE SET
           working_memory = COALESCE(EXCLUDED.working_memory, stored.working_memory),
           metadata = COALESCE(EXCLUDED.metadata, stored.metadata),
           updated_at = EXCLUDED.updated_at
         RETURNING ${resourceColumns}`,
        [input.id, input.workingMemory ?? null, metadataJson(input.metadata), now],
      );
      const row = result.rows[0];
      if (row === undefined) throw new Error(`resource ${input.id} missing right after it was saved`);
      return resourceFromRow(row);
    });
  }

  /** The store's clock, checked as every store checks it (`storableDate`). */
  #clock(operation: StorageOperation): Date {
    return storableDate(operation, 'the store clock (`now`)', this.#now());
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // an owned pool keeps its error listener: `end()` resolves while its clients are still closing,
    // and a server going away then (a restart, a test's server stopping) must not be an uncaught error
    if (this.#ownsPool) await guard('close', () => this.#db.pool.end());
    else this.#db.pool.removeListener('error', this.#onIdleError);
  }

  /**
   * Runs an operation once the schema is ready, again while it fails for the infrastructure's
   * reason within the retry deadline (every operation here is safe to run again: a read, an
   * idempotent statement, or one transaction of upserts); backend failures become `StorageError`.
   */
  #run<T>(operation: StorageOperation, task: () => Promise<T>, signal?: AbortSignal, deadlineMs = this.#retryDeadlineMs): Promise<T> {
    if (this.#closed) return Promise.reject(closedError(operation));
    const attempt = async (): Promise<T> => {
      if (!this.#migrated) await this.#migrate();
      return task();
    };
    return guard(
      operation,
      () => retryInfrastructure(attempt, { deadlineMs, signal, stopped: () => this.#closed }),
      signal,
    );
  }

  #migrate(): Promise<void> {
    this.#migrating ??= this.#db.withClient((query) => migratePostgres(query, this.#schemaName, this.#statementTimeoutMs))
      .then(() => {
        this.#migrated = true;
      })
      .catch((error: unknown) => {
        this.#migrating = undefined;
        // A schema newer than this build (JournalSchemaError) passes as it is.
        throw RxAgentError.isInstance(error) ? error : new StorageError({ operation: 'migrate', cause: error });
      });
    return this.#migrating;
  }

  /** One statement on a guarded pooled connection. */
  #query<R extends QueryResultRow>(text: string, values?: ReadonlyArray<unknown>): Promise<QueryResult<R>> {
    return this.#db.query<R>(text, values);
  }
}

/**
 * The pool of a store or journal: the one given (never ended by it), or its own, made from the
 * connection string with the timeouts resolved here.
 */
export function openPool(owner: string, options: PostgresStorageOptions): { pool: Pool; owned: boolean; timeouts: GuardedPoolTimeouts } {
  const timeouts = {
    statementTimeoutMs: positiveMs(owner, 'statementTimeoutMs', options.statementTimeoutMs, 30_000),
    connectionTimeoutMs: positiveMs(owner, 'connectionTimeoutMs', options.connectionTimeoutMs, 10_000),
  };
  if (options.pool !== undefined) return { pool: options.pool, owned: false, timeouts };
  const pool = new pg.Pool({
    connectionTimeoutMillis: timeouts.connectionTimeoutMs,
    statement_timeout: timeouts.statementTimeoutMs,
    ...options.poolConfig,
    connectionString: options.connectionString,
  });
  return { pool, owned: true, timeouts };
}
