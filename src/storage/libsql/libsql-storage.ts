import { mkdir, realpath } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Client, InStatement, Row } from '@libsql/client';
import { createClient } from '../internal/load-driver.js';
import type { MastraDBMessage } from '../../message-list/types.js';
import { StorageError, type StorageOperation } from '../errors/storage-error.js';
import { ThreadOwnershipError } from '../errors/thread-ownership-error.js';
import { assertStorageId } from '../internal/ids.js';
import { closedError, guard, runExclusive } from '../internal/guard.js';
import { messageWindow, threadWindow } from '../internal/query-options.js';
import { metadataJson } from '../internal/records.js';
import { assertStorableText, storableDate, savePolicy, validateMessages } from '../internal/validate-messages.js';
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
import { exists, fileTarget, isBusy, isReadOnlyError, requireCurrentSchema } from './libsql-files.js';
import { messageColumns, messageFromRow, resourceColumns, resourceFromRow, text, threadColumns, threadFromRow } from './libsql-rows.js';
import { writeMessages } from './libsql-save.js';
import { migrateLibSQL } from './migrations.js';

/**
 * Options of `LibSQLStorage`.
 *
 * @example
 * ```ts
 * import { LibSQLStorage } from 'rxagent/storage/libsql';
 * const storage = new LibSQLStorage({ url: 'file:.rxagent/memory.db', busyTimeoutMs: 10_000 });
 * ```
 */
export interface LibSQLStorageOptions {
  /**
   * `file:<path>` for the embedded database (parent directory created when missing),
   * `libsql://…` or `http(s)://…` for a libSQL server, `:memory:` for a private in-memory one.
   */
  url: string;
  /** Token for a libSQL server. */
  authToken?: string;
  /**
   * How long an operation waits for another process's lock on the same file before it fails
   * with a `StorageError` (`SQLITE_BUSY`). Default 5000 ms. The wait never blocks the event
   * loop: the driver is asked not to wait, and the store retries with a growing pause (2 → 50 ms).
   */
  busyTimeoutMs?: number;
  /** The clock for thread and resource timestamps. Default: `new Date()`. */
  now?: () => Date;
  /**
   * Open for reading only: nothing is created, migrated or written (the schema must already be
   * current, but for what only saves use: a file of schema 1 is read), and every write rejects with
   * a `StorageError`. Without it, a file this process cannot write is still opened for reading when
   * its schema is current in that sense; writes then fail.
   */
  readOnly?: boolean;
}

let instanceCount = 0;

/**
 * A `MemoryStorage` on libSQL / SQLite through `@libsql/client`: an embedded file by default,
 * or a libSQL server. The schema is created (and migrated) on first use.
 *
 * Writes run one at a time per database file within the process (a promise queue shared by
 * every instance on that file) inside `BEGIN IMMEDIATE` transactions, and a busy timeout makes
 * writers from other processes wait instead of failing with `SQLITE_BUSY`. The file is put in
 * WAL mode so reads do not wait for writes.
 *
 * @example
 * ```ts
 * import { LibSQLStorage } from 'rxagent/storage/libsql';
 * const storage = new LibSQLStorage({ url: 'file:.rxagent/memory.db' });
 * await storage.saveMessages({ threadId: 't1', resourceId: 'u1', messages, ensureThread: true });
 * await storage.close();
 * ```
 */
export class LibSQLStorage implements MemoryStorage {
  readonly #options: LibSQLStorageOptions;
  readonly #now: () => Date;
  readonly #filePath: string | undefined;
  readonly #inMemory: boolean;
  readonly #busyTimeoutMs: number;
  #lockKey: string;
  #client: Client | undefined;
  #writer: Client | undefined;
  #opening: Promise<Client> | undefined;
  #closed = false;

  constructor(options: LibSQLStorageOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => new Date());
    this.#busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    if (!Number.isInteger(this.#busyTimeoutMs) || this.#busyTimeoutMs < 0) {
      throw new RangeError(`LibSQLStorage: busyTimeoutMs must be a whole number of milliseconds ≥ 0 (got ${String(options.busyTimeoutMs)})`);
    }
    const target = fileTarget(options.url);
    this.#inMemory = target === 'memory';
    this.#filePath = typeof target === 'string' && target !== 'memory' ? target : undefined;
    instanceCount += 1;
    this.#lockKey = this.#filePath === undefined ? `libsql-instance:${instanceCount}` : `libsql-file:${this.#filePath}`;
  }

  async getThread(threadId: string, options?: StorageCallOptions): Promise<StorageThread | null> {
    assertStorageId('threadId', threadId);

    return this.#read('getThread', async (client) => {
      const result = await client.execute({ sql: `SELECT ${threadColumns} FROM rxagent_threads WHERE id = ?`, args: [threadId] });
      const row = result.rows[0];
      return row === undefined ? null : threadFromRow(row);
    }, options?.abortSignal);
  }

  async createThread(input: CreateThreadInput, options?: StorageCallOptions): Promise<StorageThread> {
    assertStorageId('threadId', input.id);
    assertStorageId('resourceId', input.resourceId);
    assertStorableText('createThread', 'title', input.title);
    const now = this.#clock('createThread');
    const createdAt = input.createdAt === undefined ? now : storableDate('createThread', 'createdAt', input.createdAt).getTime();
    const updatedAt = input.updatedAt === undefined ? createdAt : storableDate('createThread', 'updatedAt', input.updatedAt).getTime();

    return this.#write('createThread', async (client) => {
      const [, selected] = await client.batch(
        [
          {
            sql: `INSERT INTO rxagent_threads (${threadColumns}) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
            args: [input.id, input.resourceId, input.title ?? null, metadataJson(input.metadata), createdAt, updatedAt],
          },
          { sql: `SELECT ${threadColumns} FROM rxagent_threads WHERE id = ?`, args: [input.id] },
        ],
        'write',
      );
      const row = selected?.rows[0];
      if (row === undefined) throw new Error(`thread ${input.id} missing right after it was created`);
      const thread = threadFromRow(row);
      if (thread.resourceId !== input.resourceId) {
        throw new ThreadOwnershipError({ threadId: input.id, resourceId: input.resourceId });
      }
      return thread;
    }, options?.abortSignal);
  }

  async listThreads(options: ListThreadsOptions): Promise<StorageThread[]> {
    assertStorageId('resourceId', options.resourceId);

    const window = threadWindow(options);
    return this.#read('listThreads', async (client) => {
      const result = await client.execute({
        sql: `SELECT ${threadColumns} FROM rxagent_threads WHERE resource_id = ? ORDER BY updated_at DESC, id ASC LIMIT ? OFFSET ?`,
        args: [options.resourceId, window.limit ?? -1, window.offset],
      });
      return result.rows.map(threadFromRow);
    });
  }

  async deleteThread(threadId: string): Promise<void> {
    assertStorageId('threadId', threadId);

    await this.#write('deleteThread', async (client) => {
      await client.batch(
        [
          { sql: 'DELETE FROM rxagent_messages WHERE thread_id = ?', args: [threadId] },
          { sql: 'DELETE FROM rxagent_threads WHERE id = ?', args: [threadId] },
        ],
        'write',
      );
    });
  }

  async getMessages(options: GetMessagesOptions): Promise<MastraDBMessage[]> {
    assertStorageId('threadId', options.threadId);
    if (options.resourceId !== undefined) assertStorageId('resourceId', options.resourceId);

    const window = messageWindow(options);
    return this.#read('getMessages', async (client) => {
      const owner = await client.execute({ sql: 'SELECT resource_id FROM rxagent_threads WHERE id = ?', args: [options.threadId] });
      const ownerRow = owner.rows[0];
      if (ownerRow === undefined) return [];
      if (options.resourceId !== undefined && text(ownerRow, 'resource_id') !== options.resourceId) {
        throw new ThreadOwnershipError({ threadId: options.threadId, resourceId: options.resourceId });
      }
      const conditions = ['thread_id = ?'];
      const args: Array<string | number> = [options.threadId];
      if (options.after !== undefined) {
        conditions.push('created_at > ?');
        args.push(options.after.getTime());
      }
      if (options.before !== undefined) {
        conditions.push('created_at < ?');
        args.push(options.before.getTime());
      }
      const filtered = `SELECT ${messageColumns} FROM rxagent_messages WHERE ${conditions.join(' AND ')}`;
      const sql =
        window.last === undefined
          ? `${filtered} ORDER BY seq ASC LIMIT ? OFFSET ?`
          : `SELECT * FROM (${filtered} ORDER BY seq DESC LIMIT ? OFFSET ?) ORDER BY seq ASC`;
      args.push(window.last ?? window.limit ?? -1, window.offset);
      const result = await client.execute({ sql, args });
      return result.rows.map(messageFromRow);
    }, options.abortSignal);
  }

  async saveMessages(options: SaveMessagesOptions): Promise<void> {
    assertStorageId('threadId', options.threadId);
    assertStorageId('resourceId', options.resourceId);

    if (this.#closed) throw closedError('saveMessages');
    validateMessages(options.messages, options);
    const policy = savePolicy(options);
    const { abortSignal } = options;
    if (options.fence !== undefined) {
      throw new TypeError('LibSQLStorage: a fenced save (a durable run) needs its journal in the same database: use PostgresStorage with PostgresRunJournal');
    }
    const now = this.#clock('saveMessages');
    abortSignal?.throwIfAborted();
    await this.#write('saveMessages', async (client) => {
      abortSignal?.throwIfAborted();
      const transaction = await client.transaction('write');
      try {
        await writeMessages(transaction, options, now, policy);
        // The last point where an abort is honoured: rolled back below, nothing stored.
        abortSignal?.throwIfAborted();
        await transaction.commit();
      } finally {
        // Rolls back unless committed.
        transaction.close();
      }
    }, abortSignal);
  }

  async getResource(resourceId: string): Promise<StorageResource | null> {
    assertStorageId('resourceId', resourceId);

    return this.#read('getResource', async (client) => {
      const result = await client.execute({ sql: `SELECT ${resourceColumns} FROM rxagent_resources WHERE id = ?`, args: [resourceId] });
      const row = result.rows[0];
      return row === undefined ? null : resourceFromRow(row);
    });
  }

  async saveResource(input: SaveResourceInput): Promise<StorageResource> {
    assertStorageId('resourceId', input.id);
    assertStorableText('saveResource', 'workingMemory', input.workingMemory);

    const now = this.#clock('saveResource');
    return this.#write('saveResource', async (client) => {
      const [, selected] = await client.batch(
        [
          {
            sql: `INSERT INTO rxagent_resources (${resourceColumns}) VALUES (?, ?, ?, ?, ?)
                  ON CONFLICT (id) DO UPDATE SET
                    working_memory = COALESCE(excluded.working_memory, rxagent_resources.working_memory),
                    metadata = COALESCE(excluded.metadata, rxagent_resources.metadata),
                    updated_at = excluded.updated_at`,
            args: [input.id, input.workingMemory ?? null, metadataJson(input.metadata), now, now],
          },
          { sql: `SELECT ${resourceColumns} FROM rxagent_resources WHERE id = ?`, args: [input.id] },
        ] satisfies InStatement[],
        'write',
      );
      const row = selected?.rows[0];
      if (row === undefined) throw new Error(`resource ${input.id} missing right after it was saved`);
      return resourceFromRow(row);
    });
  }

  /** The store's clock, checked as every store checks it (`storableDate`). */
  #clock(operation: StorageOperation): number {
    return storableDate(operation, 'the store clock (`now`)', this.#now()).getTime();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const opening = this.#opening;
    if (opening === undefined) return;
    const client = await opening.catch(() => undefined);
    // Writes issued before close() still land: wait for this file's queue, then close.
    await runExclusive(this.#lockKey, async () => undefined);
    client?.close();
    this.#writer?.close();
    this.#writer = undefined;
  }

  /** A write: one at a time per file (or per instance for a server or `:memory:`). */
  #write<T>(operation: StorageOperation, task: (client: Client) => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.#options.readOnly === true && !this.#closed) {
      return Promise.reject(new StorageError({ operation, message: 'the store was opened with readOnly: true' }));
    }
    return guard(
      operation,
      async () => {
        const reader = await this.#ready(operation);
        return runExclusive(this.#lockKey, () => this.#retryWhileBusy(() => task(this.#writerFor(reader)), signal));
      },
      signal,
    );
  }

  /** A read: concurrent, except on `:memory:` whose single connection a write may hold. */
  #read<T>(operation: StorageOperation, task: (client: Client) => Promise<T>, signal?: AbortSignal): Promise<T> {
    return guard(
      operation,
      async () => {
        signal?.throwIfAborted();
        const client = await this.#ready(operation);
        return this.#inMemory ? runExclusive(this.#lockKey, () => task(client)) : this.#retryWhileBusy(() => task(client), signal);
      },
      signal,
    );
  }

  /**
   * The client writes go through. On a file it is a client of its own, used by one write at a
   * time (the per-file queue), so that it can be replaced after `SQLITE_BUSY`: the driver leaves
   * the refused `BEGIN IMMEDIATE` unfinished on its connection, and a later `COMMIT` there would
   * fail with "SQL statements in progress".
   */
  #writerFor(reader: Client): Client {
    if (this.#filePath === undefined) return reader;
    this.#writer ??= this.#newClient();
    return this.#writer;
  }

  /**
   * Runs `task` again while the file is locked by another connection (`SQLITE_BUSY`), pausing
   * 2, 4, … up to 50 ms between tries, until `busyTimeoutMs` has passed; the event loop stays
   * free meanwhile. Every task is one transaction or one read, rolled back when it fails, so
   * running it again is safe. After a refusal the write client is replaced (see `#writerFor`).
   */
  async #retryWhileBusy<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const deadline = Date.now() + this.#busyTimeoutMs;
    for (let pause = 2; ; pause = Math.min(pause * 2, 50)) {
      try {
        return await task();
      } catch (error) {
        if (!isBusy(error)) throw error;
        this.#writer?.close();
        this.#writer = undefined;
        const left = deadline - Date.now();
        if (left <= 0 || this.#closed) throw error;
        signal?.throwIfAborted();
        await delay(Math.min(pause, left));
        signal?.throwIfAborted();
      }
    }
  }

  #ready(operation: StorageOperation): Promise<Client> {
    if (this.#closed) return Promise.reject(closedError(operation));
    if (this.#client !== undefined) return Promise.resolve(this.#client);
    this.#opening ??= this.#open().then(
      (client) => (this.#client = client),
      (error: unknown) => {
        this.#opening = undefined;
        throw StorageError.isInstance(error) ? error : new StorageError({ operation: 'migrate', cause: error });
      },
    );
    return this.#opening;
  }

  #newClient(): Client {
    return createClient({
      url: this.#options.url,
      ...(this.#options.authToken === undefined ? {} : { authToken: this.#options.authToken }),
      // The embedded driver is synchronous: its own busy wait would hold the event loop for the
      // whole wait. On a file it waits 0 ms and #retryWhileBusy waits asynchronously instead.
      timeout: this.#filePath === undefined ? this.#busyTimeoutMs : 0,
    });
  }

  async #open(): Promise<Client> {
    const readOnly = this.#options.readOnly === true;
    if (this.#filePath !== undefined) {
      const directory = dirname(this.#filePath);
      if (!readOnly) await mkdir(directory, { recursive: true });
      else if (!(await exists(this.#filePath))) {
        // The driver would create an empty file: a read-only store never creates anything.
        throw new StorageError({ operation: 'migrate', message: `readOnly: true and there is no database file at ${this.#filePath}` });
      }
      this.#lockKey = `libsql-file:${join(await realpath(directory), basename(this.#filePath))}`;
    }
    const client = this.#newClient();
    try {
      if (readOnly) await requireCurrentSchema(client);
      else {
        await runExclusive(this.#lockKey, () =>
          this.#retryWhileBusy(async () => {
            const writer = this.#writerFor(client);
            if (this.#filePath !== undefined) await writer.execute('PRAGMA journal_mode = WAL');
            await migrateLibSQL(writer, this.#now().getTime());
          }),
        ).catch(async (error: unknown) => {
          // A file this process may not write (read-only file, directory or mount): still
          // readable when its schema is current. Writes then fail with SQLITE_READONLY.
          if (!isReadOnlyError(error)) throw error;
          await requireCurrentSchema(client, error);
        });
      }
    } catch (error) {
      client.close();
      this.#writer?.close();
      this.#writer = undefined;
      throw error;
    }
    return client;
  }
}
