import type { Pool, PoolClient, PoolConfig, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import { pg } from '../internal/load-driver.js';
import type { MastraDBMessage } from '../../message-list/types.js';
import { StorageError, type StorageOperation } from '../errors/storage-error.js';
import { ThreadNotFoundError } from '../errors/thread-not-found-error.js';
import { ThreadOwnershipError } from '../errors/thread-ownership-error.js';
import { assertStorageId } from '../internal/ids.js';
import { closedError, guard } from '../internal/guard.js';
import { messageWindow, threadWindow } from '../internal/query-options.js';
import { metadataJson, toMessage, toResource, toThread } from '../internal/records.js';
import { messageInOtherThreadError, serialiseContent, validateMessages } from '../internal/validate-messages.js';
import type {
  CreateThreadInput,
  GetMessagesOptions,
  ListThreadsOptions,
  MemoryStorage,
  SaveMessagesOptions,
  SaveResourceInput,
  StorageResource,
  StorageThread,
} from '../types.js';
import { migratePostgres, quoteIdentifier } from './migrations.js';
import type { Query } from './query.js';

interface PostgresStorageCommonOptions {
  /** The PostgreSQL schema holding rxagent's tables (created when missing). Default `rxagent`. */
  schema?: string;
  /**
   * The longest one statement may run, in ms (default 30 000). The server cancels it
   * (`statement_timeout`: set for the store's own pool, and `SET LOCAL` in every transaction on
   * any pool); a server or network that stops answering is given up on client-side one second
   * later (`query_timeout`) and its connection dropped. Either way the operation rejects with a
   * `StorageError` and a save writes nothing.
   */
  statementTimeoutMs?: number;
  /** The longest wait for a connection from the pool, in ms (default 10 000). */
  connectionTimeoutMs?: number;
  /** The clock for thread and resource timestamps. Default: `new Date()`. */
  now?: () => Date;
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

interface ThreadRow {
  id: string;
  resource_id: string;
  title: string | null;
  metadata: string | null;
  created_ms: number;
  updated_ms: number;
}

interface MessageRow {
  id: string;
  thread_id: string;
  resource_id: string;
  role: string;
  type: string | null;
  content: string;
  created_ms: number;
}

interface ResourceRow {
  id: string;
  working_memory: string | null;
  metadata: string | null;
  created_ms: number;
  updated_ms: number;
}

// Columns read as text / epoch milliseconds, so a pool with custom type parsers reads the same.
const epochMs = (column: string): string => `(extract(epoch from ${column}) * 1000)::float8`;
const threadColumns = `id, resource_id, title, metadata::text AS metadata, ${epochMs('created_at')} AS created_ms, ${epochMs('updated_at')} AS updated_ms`;
const messageColumns = `id, thread_id, resource_id, role, type, content::text AS content, ${epochMs('created_at')} AS created_ms, seq`;
const resourceColumns = `id, working_memory, metadata::text AS metadata, ${epochMs('created_at')} AS created_ms, ${epochMs('updated_at')} AS updated_ms`;

/**
 * A `MemoryStorage` on PostgreSQL (`pg`), for many agent processes sharing one database.
 *
 * Tables live in their own schema (default `rxagent`), created and migrated on first use under
 * an advisory lock, so processes starting together are safe. `saveMessages` is one
 * transaction that locks the thread row: concurrent saves to one thread take turns, each
 * batch stays contiguous, and the order is a `bigserial` sequence.
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
  readonly #pool: Pool;
  readonly #ownsPool: boolean;
  readonly #schemaName: string;
  readonly #schema: string;
  readonly #now: () => Date;
  readonly #statementTimeoutMs: number;
  readonly #connectionTimeoutMs: number;
  /** Idle pooled connections the server drops emit 'error' on the pool: never fatal here. */
  readonly #onIdleError = (): void => undefined;
  #migrating: Promise<void> | undefined;
  #migrated = false;
  #closed = false;

  constructor(options: PostgresStorageOptions) {
    this.#schemaName = options.schema ?? 'rxagent';
    this.#schema = quoteIdentifier(this.#schemaName);
    this.#now = options.now ?? (() => new Date());
    this.#statementTimeoutMs = positiveMs('statementTimeoutMs', options.statementTimeoutMs, 30_000);
    this.#connectionTimeoutMs = positiveMs('connectionTimeoutMs', options.connectionTimeoutMs, 10_000);
    if (options.pool !== undefined) {
      this.#pool = options.pool;
      this.#ownsPool = false;
    } else {
      this.#pool = new pg.Pool({
        connectionTimeoutMillis: this.#connectionTimeoutMs,
        statement_timeout: this.#statementTimeoutMs,
        ...options.poolConfig,
        connectionString: options.connectionString,
      });
      this.#ownsPool = true;
    }
    // Also on a pool you pass in (removed again by close()): pg emits an idle connection's
    // failure (server restarted, backend terminated) on the pool, and an 'error' event nobody
    // listens to ends the process. The next operation simply opens a new connection.
    this.#pool.on('error', this.#onIdleError);
  }

  async getThread(threadId: string): Promise<StorageThread | null> {
    assertStorageId('threadId', threadId);

    return this.#run('getThread', async () => {
      const result = await this.#query<ThreadRow>(`SELECT ${threadColumns} FROM ${this.#schema}.threads WHERE id = $1`, [threadId]);
      const row = result.rows[0];
      return row === undefined ? null : threadFromRow(row);
    });
  }

  async createThread(input: CreateThreadInput): Promise<StorageThread> {
    assertStorageId('threadId', input.id);
    assertStorageId('resourceId', input.resourceId);

    return this.#run('createThread', async () => {
      const now = this.#now();
      const createdAt = input.createdAt ?? now;
      const inserted = await this.#query<ThreadRow>(
        `INSERT INTO ${this.#schema}.threads (id, resource_id, title, metadata, created_at, updated_at)
         VALUES ($1, $2, $3, $4::json, $5, $6) ON CONFLICT (id) DO NOTHING RETURNING ${threadColumns}`,
        [input.id, input.resourceId, input.title ?? null, metadataJson(input.metadata), createdAt, input.updatedAt ?? createdAt],
      );
      const row =
        inserted.rows[0] ??
        (await this.#query<ThreadRow>(`SELECT ${threadColumns} FROM ${this.#schema}.threads WHERE id = $1`, [input.id])).rows[0];
      if (row === undefined) throw new Error(`thread ${input.id} was deleted while being created`);
      if (row.resource_id !== input.resourceId) {
        throw new ThreadOwnershipError({ threadId: input.id, resourceId: input.resourceId });
      }
      return threadFromRow(row);
    });
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
    });
  }

  async saveMessages(options: SaveMessagesOptions): Promise<void> {
    assertStorageId('threadId', options.threadId);
    assertStorageId('resourceId', options.resourceId);

    if (this.#closed) throw closedError('saveMessages');
    validateMessages(options.messages, options);
    const { threadId, resourceId, abortSignal } = options;
    abortSignal?.throwIfAborted();
    await this.#run('saveMessages', () =>
      this.#transaction(async (query) => {
        const now = this.#now();
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
          const result = await query(
            `INSERT INTO ${this.#schema}.messages AS stored (id, thread_id, resource_id, role, type, content, created_at)
             VALUES ($1, $2, $3, $4, $5, $6::json, $7)
             ON CONFLICT (id) DO UPDATE SET role = EXCLUDED.role, type = EXCLUDED.type,
               content = EXCLUDED.content, created_at = EXCLUDED.created_at
             WHERE stored.thread_id = EXCLUDED.thread_id`,
            [message.id, threadId, resourceId, message.role, message.type ?? null, serialiseContent(message, index), message.createdAt],
          );
          if (result.rowCount === 0) throw messageInOtherThreadError(index, message.id);
        }
        await query(`UPDATE ${this.#schema}.threads SET updated_at = $2 WHERE id = $1`, [threadId, now]);
        // The last point where an abort is honoured: rolled back, nothing stored.
        abortSignal?.throwIfAborted();
      }),
      abortSignal,
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

    return this.#run('saveResource', async () => {
      const now = this.#now();
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

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ownsPool) {
      await guard('close', () => this.#pool.end());
    }
    this.#pool.removeListener('error', this.#onIdleError);
  }

  /** Runs an operation once the schema is ready; backend failures become `StorageError`. */
  #run<T>(operation: StorageOperation, task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.#closed) return Promise.reject(closedError(operation));
    return guard(
      operation,
      async () => {
        if (!this.#migrated) await this.#migrate();
        return task();
      },
      signal,
    );
  }

  #migrate(): Promise<void> {
    this.#migrating ??= this.#withClient((query) => migratePostgres(query, this.#schemaName, this.#statementTimeoutMs))
      .then(() => {
        this.#migrated = true;
      })
      .catch((error: unknown) => {
        this.#migrating = undefined;
        throw new StorageError({ operation: 'migrate', cause: error });
      });
    return this.#migrating;
  }

  /** One statement on a guarded pooled connection. */
  #query<R extends QueryResultRow>(text: string, values?: ReadonlyArray<unknown>): Promise<QueryResult<R>> {
    return this.#withClient((query) => query<R>(text, values));
  }

  /** `BEGIN … COMMIT` on one guarded pooled connection; `ROLLBACK` on any error. */
  #transaction<T>(task: (query: Query) => Promise<T>): Promise<T> {
    return this.#withClient(task, { transaction: true });
  }

  /**
   * Takes a connection from the pool (bounded by `connectionTimeoutMs`) and guards it for as
   * long as it is out of the pool: its 'error' event (server stopped, backend terminated,
   * network cut) is recorded instead of ending the process, and every statement has a
   * client-side timeout. A connection that failed or timed out is dropped, never reused.
   * A transaction bounds its statements server-side too (`SET LOCAL statement_timeout`).
   */
  async #withClient<T>(task: (query: Query) => Promise<T>, { transaction = false } = {}): Promise<T> {
    const client = await this.#connect();
    let broken: Error | undefined;
    const markBroken = (error: unknown): void => {
      broken ??= error instanceof Error ? error : new Error(String(error));
    };
    client.on('error', markBroken);
    const queryTimeout = this.#statementTimeoutMs + clientGraceMs;
    const query: Query = async <R extends QueryResultRow>(text: string, values?: ReadonlyArray<unknown>) => {
      try {
        // query_timeout is a per-statement option of pg's Client#query that @types/pg omits.
        const config: QueryConfig & { query_timeout: number } = { text, query_timeout: queryTimeout };
        if (values !== undefined) config.values = [...values];
        return await client.query<R>(config);
      } catch (error) {
        if (connectionFailed(error)) markBroken(error);
        throw error;
      }
    };
    try {
      if (!transaction) return await task(query);
      await query(`BEGIN; SET LOCAL statement_timeout = ${this.#statementTimeoutMs}`);
      try {
        const result = await task(query);
        await query('COMMIT');
        return result;
      } catch (error) {
        if (broken === undefined) await query('ROLLBACK').catch(markBroken);
        throw error;
      }
    } finally {
      client.release(broken);
      client.removeListener('error', markBroken);
    }
  }

  /** `pool.connect()`, given up after `connectionTimeoutMs` (a late connection goes straight back). */
  async #connect(): Promise<PoolClient> {
    const pending = this.#pool.connect();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no connection from the pool within ${this.#connectionTimeoutMs} ms`)), this.#connectionTimeoutMs);
    });
    try {
      return await Promise.race([pending, timedOut]);
    } catch (error) {
      pending.then(
        (late) => late.release(),
        () => undefined,
      );
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** How long after the server-side `statement_timeout` the client gives up on a silent server. */
const clientGraceMs = 1000;

/**
 * True when the connection itself failed rather than one statement: no SQLSTATE (terminated,
 * read timeout, not queryable), class 08 (connection exception) or 57P (the server shut the
 * backend down, e.g. `pg_terminate_backend`).
 */
function connectionFailed(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return true;
  return code.startsWith('08') || code.startsWith('57P');
}

function positiveMs(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0) {
    throw new RangeError(`PostgresStorage: ${name} must be a whole number of milliseconds > 0 (got ${String(value)})`);
  }
  return value;
}

function threadFromRow(row: ThreadRow): StorageThread {
  return toThread({
    id: row.id,
    resourceId: row.resource_id,
    title: row.title,
    metadata: row.metadata,
    createdAt: Math.round(Number(row.created_ms)),
    updatedAt: Math.round(Number(row.updated_ms)),
  });
}

function messageFromRow(row: MessageRow): MastraDBMessage {
  return toMessage({
    id: row.id,
    threadId: row.thread_id,
    resourceId: row.resource_id,
    role: row.role,
    type: row.type,
    content: row.content,
    createdAt: Math.round(Number(row.created_ms)),
  });
}

function resourceFromRow(row: ResourceRow): StorageResource {
  return toResource({
    id: row.id,
    workingMemory: row.working_memory,
    metadata: row.metadata,
    createdAt: Math.round(Number(row.created_ms)),
    updatedAt: Math.round(Number(row.updated_ms)),
  });
}
