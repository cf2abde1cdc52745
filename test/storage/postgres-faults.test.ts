/**
 * PostgresStorage when the connection dies or the database freezes, on a throwaway cluster of
 * its own (it stops and restarts the server, so never `DATABASE_URL`'s): backends terminated
 * mid-save, mid-load and mid-migration, idle pooled connections terminated, the server
 * stopped and started again, the network cut (a TCP proxy), a frozen server and a table lock
 * (statement and connection timeouts). Every case checks that the process survives (an
 * 'uncaughtException' or 'unhandledRejection' fails the test), the error is a `StorageError`
 * (through an Agent: one `error` chunk), what was stored before is intact, and the next
 * operation or run works once the database is back.
 *
 * The stores here do not retry (`retry: { deadlineMs: 0 }`): each case is what an operation ends
 * with once its retries are over — the same path, without waiting out a deadline. The retries
 * themselves (the same faults, within and past the deadline) are test/storage/memory-retries.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { Memory } from '../../src/memory/memory.js';
import type { MastraDBMessage } from '../../src/message-list/types.js';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import { StorageError } from '../../src/storage/errors/storage-error.js';
import { PostgresStorage, type PostgresStorageOptions } from '../../src/storage/postgres/postgres-storage.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { textMessage } from './storage-suite.js';

let server: TestPostgres;
let admin: pg.Pool;
let proxy: TcpProxy;
const schema = `rxagent_faults_${randomUUID().slice(0, 8)}`;
const failures: unknown[] = [];
const recordFailure = (error: unknown): void => {
  failures.push(error);
};
const opened: PostgresStorage[] = [];
/** Pools the tests pass in (as a user would): ended by the test, after the stores. */
const userPools: pg.Pool[] = [];
const userPool = (max: number): pg.Pool => {
  const pool = new pg.Pool({ connectionString: connectionString(), max });
  userPools.push(pool);
  return pool;
};

beforeAll(async () => {
  process.on('uncaughtException', recordFailure);
  process.on('unhandledRejection', recordFailure);
  server = await startTestPostgres({ ownCluster: true });
  admin = new pg.Pool({ connectionString: server.connectionString, max: 4 });
  admin.on('error', () => undefined);
  proxy = await startTcpProxy(server.connectionString);
});

afterEach(async () => {
  // Give late 'error' events (sockets closing after a termination) time to surface.
  await delay(100);
  expect(failures).toEqual([]);
});

afterAll(async () => {
  process.removeListener('uncaughtException', recordFailure);
  process.removeListener('unhandledRejection', recordFailure);
  await Promise.all(opened.map((storage) => storage.close().catch(() => undefined)));
  // Once the stores are closed their listener is gone: the user's own pools are the user's to end.
  await Promise.all(userPools.map((pool) => pool.end().catch(() => undefined)));
  await proxy?.close();
  await admin?.end().catch(() => undefined);
  await server?.stop();
});

const connectionString = (): string => server.connectionString;
const viaProxy = (): string => proxy.connectionString;

/** A store that does not retry (see the module comment). */
function store(options: Partial<PostgresStorageOptions> & { pool?: pg.Pool } = {}): PostgresStorage {
  const retry = { deadlineMs: 0 };
  const storage =
    options.pool === undefined
      ? new PostgresStorage({ connectionString: connectionString(), schema, retry, ...(options as { connectionString?: string }) })
      : new PostgresStorage({ retry, ...options, pool: options.pool, schema: options.schema ?? schema } as PostgresStorageOptions);
  opened.push(storage);
  return storage;
}

let sequence = 0;
const fresh = (name: string): string => `${name}-${process.pid}-${++sequence}`;
const textOf = (message: MastraDBMessage): string => message.content.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

/** Backends (other than `except`) waiting on a lock, once at least one is. */
async function waitForLockWaiters(except: number[] = []): Promise<number[]> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const result = await admin.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> ALL($1::int[]) AND pid <> pg_backend_pid()`,
      [except],
    );
    if (result.rows.length > 0) return result.rows.map((row) => row.pid);
    await delay(20);
  }
  throw new Error('no backend started waiting on the lock');
}

async function terminate(pids: number[]): Promise<void> {
  await admin.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [pids]);
}

/** A connection of its own holding a lock until `release()` (it survives its own termination). */
async function holdLock(sql: string, values: unknown[] = []): Promise<{ pid: number; release(): Promise<void> }> {
  const client = await admin.connect();
  client.on('error', () => undefined);
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  await client.query('BEGIN');
  await client.query(sql, values);
  return {
    pid,
    release: async () => {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release(true);
    },
  };
}

/** The error of a stored operation: a StorageError (the store), or its cause chain holds one. */
function storageErrorIn(error: unknown): StorageError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current !== undefined; depth++) {
    if (StorageError.isInstance(current)) return current;
    current = (current as { cause?: unknown } | null)?.cause;
  }
  return undefined;
}

const echoModel = () =>
  mockModel({
    parts: ({ options }) => {
      const last = options.prompt.at(-1);
      const said = last?.role === 'user' ? last.content.map((part) => (part.type === 'text' ? part.text : '')).join('') : '';
      return [...textParts(`echo: ${said}`), finishPart()];
    },
  });

async function runChunks(agent: Agent, text: string, thread: string) {
  return lastValueFrom(agent.stream$(text, { memory: { thread, resource: 'u' } }).pipe(toArray()));
}

/** One terminal chunk, the last, an `error` carrying a StorageError (as the cause of the memory processor's error). */
function expectStorageErrorEnd(chunks: Awaited<ReturnType<typeof runChunks>>, operation?: string): StorageError {
  const terminals = chunks.filter((chunk) => ['finish', 'error', 'tripwire', 'abort'].includes(chunk.type));
  expect(terminals).toHaveLength(1);
  const last = chunks.at(-1);
  expect(last?.type).toBe('error');
  const error = last?.type === 'error' ? last.payload.error : undefined;
  expect(ProcessorError.isInstance(error) || StorageError.isInstance(error)).toBe(true);
  const storageError = storageErrorIn(error);
  expect(storageError).toBeDefined();
  if (operation !== undefined) expect(storageError?.operation).toBe(operation);
  return storageError!;
}

describe.each([
  ['its own pool', () => store()],
  // A pool you pass in, with no 'error' listener of yours: pg would end the process.
  ['a pool you pass in', () => store({ pool: userPool(4) })],
])('PostgresStorage on %s: backend terminated', (_label, makeStore) => {
  it('mid-save: StorageError, earlier messages intact, the next save works', async () => {
    const storage = makeStore();
    const threadId = fresh('t');
    await storage.saveMessages({ threadId, resourceId: 'r', messages: [textMessage(`${threadId}-1`, 'one')], ensureThread: true });
    const lock = await holdLock(`SELECT 1 FROM "${schema}".threads WHERE id = $1 FOR UPDATE`, [threadId]);
    const save = rejection(storage.saveMessages({ threadId, resourceId: 'r', messages: [textMessage(`${threadId}-2`, 'two')] }));
    await terminate(await waitForLockWaiters([lock.pid]));
    const error = await save;
    expect(StorageError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ operation: 'saveMessages' });
    await lock.release();
    expect((await storage.getMessages({ threadId })).map(textOf)).toEqual(['one']);
    await storage.saveMessages({ threadId, resourceId: 'r', messages: [textMessage(`${threadId}-3`, 'three')] });
    expect((await storage.getMessages({ threadId })).map(textOf)).toEqual(['one', 'three']);
  });

  it('mid-load: StorageError, then reads work again', async () => {
    const storage = makeStore();
    const threadId = fresh('t');
    await storage.saveMessages({ threadId, resourceId: 'r', messages: [textMessage(`${threadId}-1`, 'one')], ensureThread: true });
    const lock = await holdLock(`LOCK TABLE "${schema}".messages IN ACCESS EXCLUSIVE MODE`);
    const load = rejection(storage.getMessages({ threadId }));
    await terminate(await waitForLockWaiters([lock.pid]));
    expect(await load).toMatchObject({ name: 'StorageError', operation: 'getMessages' });
    await lock.release();
    expect((await storage.getMessages({ threadId })).map(textOf)).toEqual(['one']);
  });

  it('idle pooled connections terminated: no crash, the next operation reconnects', async () => {
    const storage = makeStore();
    const threadId = fresh('t');
    // Several connections, then idle in the pool.
    await Promise.all(Array.from({ length: 4 }, (_, index) => storage.createThread({ id: `${threadId}-${index}`, resourceId: 'r' })));
    const idle = await admin.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND state = 'idle'`,
    );
    expect(idle.rows.length).toBeGreaterThan(0);
    await terminate(idle.rows.map((row) => row.pid));
    await delay(200);
    expect(await storage.getThread(`${threadId}-0`)).toMatchObject({ id: `${threadId}-0` });
  });
});

describe('PostgresStorage: other connection faults', () => {
  it('mid-migration (a new schema): StorageError for migrate, and the next operation migrates', async () => {
    const freshSchema = `${schema}_m`;
    const storage = store({ schema: freshSchema });
    const lock = await holdLock('SELECT pg_advisory_xact_lock(hashtext($1))', [`rxagent.migrate:${freshSchema}`]);
    const first = rejection(storage.getThread('t'));
    await terminate(await waitForLockWaiters([lock.pid]));
    expect(await first).toMatchObject({ name: 'StorageError', operation: 'migrate' });
    await lock.release();
    expect(await storage.getThread('t')).toBeNull();
    await storage.saveMessages({ threadId: 't', resourceId: 'r', messages: [textMessage(`${freshSchema}-m`, 'x')], ensureThread: true });
    const versions = await admin.query(`SELECT version FROM "${freshSchema}".schema_version`);
    expect(versions.rows).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }, { version: 4 }, { version: 5 }, { version: 6 }, { version: 7 }]);
  });

  it('the network cut mid-save (TCP proxy): StorageError, stored data intact, the next save works', async () => {
    const storage = store({ connectionString: viaProxy() });
    const threadId = fresh('t');
    await storage.saveMessages({ threadId, resourceId: 'r', messages: [textMessage(`${threadId}-1`, 'one')], ensureThread: true });
    const lock = await holdLock(`SELECT 1 FROM "${schema}".threads WHERE id = $1 FOR UPDATE`, [threadId]);
    const save = rejection(storage.saveMessages({ threadId, resourceId: 'r', messages: [textMessage(`${threadId}-2`, 'two')] }));
    await waitForLockWaiters([lock.pid]);
    proxy.cut();
    expect(await save).toMatchObject({ name: 'StorageError', operation: 'saveMessages' });
    await lock.release();
    await storage.saveMessages({ threadId, resourceId: 'r', messages: [textMessage(`${threadId}-3`, 'three')] });
    expect((await storage.getMessages({ threadId })).map(textOf)).toEqual(['one', 'three']);
  });

  it('a run whose save loses its backend ends with one error chunk; the next run works and sees turn one only', async () => {
    const storage = store();
    const agent = new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage }) });
    const thread = fresh('thread');
    await agent.generate('turn one', { memory: { thread, resource: 'u' } });
    const lock = await holdLock(`SELECT 1 FROM "${schema}".threads WHERE id = $1 FOR UPDATE`, [thread]);
    const run = runChunks(agent, 'turn two', thread);
    await terminate(await waitForLockWaiters([lock.pid]));
    expectStorageErrorEnd(await run, 'saveMessages');
    await lock.release();
    const chunks = await runChunks(agent, 'turn three', thread);
    expect(chunks.at(-1)?.type).toBe('finish');
    expect((await storage.getMessages({ threadId: thread })).map(textOf)).toEqual(['turn one', 'echo: turn one', 'turn three', 'echo: turn three']);
  });

  it('a run whose history load loses its backend ends with one error chunk and stores nothing', async () => {
    const storage = store();
    const agent = new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage }) });
    const thread = fresh('thread');
    await agent.generate('turn one', { memory: { thread, resource: 'u' } });
    const lock = await holdLock(`LOCK TABLE "${schema}".messages IN ACCESS EXCLUSIVE MODE`);
    const run = runChunks(agent, 'turn two', thread);
    await terminate(await waitForLockWaiters([lock.pid]));
    expectStorageErrorEnd(await run, 'getMessages');
    await lock.release();
    expect((await storage.getMessages({ threadId: thread })).map(textOf)).toEqual(['turn one', 'echo: turn one']);
  });

  it('the server stopped mid-save and started again: error chunk, StorageErrors while down, then the next run works', async () => {
    const storage = store();
    const agent = new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage }) });
    const thread = fresh('thread');
    await agent.generate('turn one', { memory: { thread, resource: 'u' } });
    const lock = await holdLock(`SELECT 1 FROM "${schema}".threads WHERE id = $1 FOR UPDATE`, [thread]);
    const run = runChunks(agent, 'turn two', thread);
    await waitForLockWaiters([lock.pid]);
    await server.pause!();
    try {
      expectStorageErrorEnd(await run, 'saveMessages');
      // While the server is down: typed errors, no hang, no crash.
      expect(await rejection(storage.getThread(thread))).toMatchObject({ name: 'StorageError', operation: 'getThread' });
      expectStorageErrorEnd(await runChunks(agent, 'while down', thread), 'getThread');
    } finally {
      await lock.release();
      await server.resume!();
    }
    const chunks = await runChunks(agent, 'turn three', thread);
    expect(chunks.at(-1)?.type).toBe('finish');
    expect((await storage.getMessages({ threadId: thread })).map(textOf)).toEqual(['turn one', 'echo: turn one', 'turn three', 'echo: turn three']);
  });
});

describe('PostgresStorage: an abort during the save', () => {
  it('an abort while the save waits inside its transaction rolls it back: rejects with the reason, nothing stored', async () => {
    const storage = store();
    const threadId = fresh('t');
    await storage.saveMessages({ threadId, resourceId: 'r', messages: [textMessage(`${threadId}-1`, 'one')], ensureThread: true });
    const lock = await holdLock(`SELECT 1 FROM "${schema}".threads WHERE id = $1 FOR UPDATE`, [threadId]);
    const controller = new AbortController();
    const save = rejection(
      storage.saveMessages({ threadId, resourceId: 'r', messages: [textMessage(`${threadId}-2`, 'two')], abortSignal: controller.signal }),
    );
    await waitForLockWaiters([lock.pid]);
    const reason = new Error('user left mid-save');
    controller.abort(reason);
    await lock.release();
    expect(await save).toBe(reason);
    expect((await storage.getMessages({ threadId })).map(textOf)).toEqual(['one']);
    await storage.saveMessages({ threadId, resourceId: 'r', messages: [textMessage(`${threadId}-3`, 'three')] });
    expect((await storage.getMessages({ threadId })).map(textOf)).toEqual(['one', 'three']);
  });
});

describe('PostgresStorage timeouts: a frozen database is a StorageError, not a hang', () => {
  it('a table lock held by another connection: statementTimeoutMs cancels reads and saves (own pool and your pool)', async () => {
    const own = store({ statementTimeoutMs: 300 });
    const yours = store({ pool: userPool(2), statementTimeoutMs: 300 });
    const threadId = fresh('t');
    await own.saveMessages({ threadId, resourceId: 'r', messages: [textMessage(`${threadId}-1`, 'one')], ensureThread: true });
    await yours.getThread(threadId);
    const lock = await holdLock(`LOCK TABLE "${schema}".threads IN ACCESS EXCLUSIVE MODE`);
    try {
      for (const storage of [own, yours]) {
        const read = await rejection(storage.getThread(threadId));
        expect(read).toMatchObject({ name: 'StorageError', operation: 'getThread' });
        const save = await rejection(storage.saveMessages({ threadId, resourceId: 'r', messages: [textMessage(`${threadId}-2`, 'two')] }));
        expect(save).toMatchObject({ name: 'StorageError', operation: 'saveMessages' });
        // The server cancelled the save's statement (57014 query_canceled): a clean rollback.
        expect((save as StorageError).cause).toMatchObject({ code: '57014' });
      }
      // The store's own pool sets statement_timeout for plain reads too.
      expect((await rejection(own.getThread(threadId)) as StorageError).cause).toMatchObject({ code: '57014' });
    } finally {
      await lock.release();
    }
    expect((await own.getMessages({ threadId })).map(textOf)).toEqual(['one']);
    expect((await yours.getMessages({ threadId })).map(textOf)).toEqual(['one']);
  });

  it('a run against a locked table ends with one error chunk instead of waiting', async () => {
    const storage = store({ statementTimeoutMs: 300 });
    const agent = new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage }) });
    const thread = fresh('thread');
    await agent.generate('turn one', { memory: { thread, resource: 'u' } });
    const lock = await holdLock(`LOCK TABLE "${schema}".messages IN ACCESS EXCLUSIVE MODE`);
    try {
      expectStorageErrorEnd(await runChunks(agent, 'turn two', thread), 'getMessages');
    } finally {
      await lock.release();
    }
    expect((await runChunks(agent, 'turn three', thread)).at(-1)?.type).toBe('finish');
  });

  it('a server that stops answering (frozen proxy): the statement and then the connection time out; it recovers after', async () => {
    const storage = store({ connectionString: viaProxy(), statementTimeoutMs: 300, connectionTimeoutMs: 500 });
    const threadId = fresh('t');
    await storage.saveMessages({ threadId, resourceId: 'r', messages: [textMessage(`${threadId}-1`, 'one')], ensureThread: true });
    proxy.freezeAll();
    try {
      // An idle connection exists: the statement is sent and never answered (client-side timeout).
      const read = await rejection(storage.getThread(threadId));
      expect(read).toMatchObject({ name: 'StorageError', operation: 'getThread' });
      expect(String((read as StorageError).message)).toMatch(/timeout/i);
      // That connection was dropped; a new one never completes its startup.
      const connect = await rejection(storage.saveMessages({ threadId, resourceId: 'r', messages: [textMessage(`${threadId}-2`, 'two')] }));
      expect(connect).toMatchObject({ name: 'StorageError', operation: 'saveMessages' });
      expect(String((connect as StorageError).message)).toMatch(/timeout|connection/i);
    } finally {
      proxy.thaw();
      proxy.cut();
    }
    expect((await storage.getMessages({ threadId })).map(textOf)).toEqual(['one']);
  });

  it('rejects a timeout that is not a positive whole number of ms', () => {
    expect(() => new PostgresStorage({ connectionString: connectionString(), statementTimeoutMs: 0 })).toThrow(RangeError);
    expect(() => new PostgresStorage({ connectionString: connectionString(), connectionTimeoutMs: 1.5 })).toThrow(RangeError);
  });

  it('the server ending a connection while close() is ending it is no uncaught error (a restart, a test server stopping)', async () => {
    // pool.end() resolves before its clients' sockets have closed; a FATAL arriving then (here
    // pg_terminate_backend's 57P01) reaches the pool's error listener, which an owned pool keeps
    for (let round = 0; round < 20; round++) {
      const name = `closing-${schema}-${round}`;
      const url = new URL(server.connectionString);
      url.searchParams.set('application_name', name);
      const storage = new PostgresStorage({ connectionString: url.toString(), schema });
      await storage.getThread('x');
      // the FATAL is on its way to the store's idle client when close() begins ending it
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [name]);
      await storage.close();
    }
    await delay(100);
    expect(failures).toEqual([]);
  });

  it('close() removes the store’s listener from a pool you pass in', async () => {
    const pool = new pg.Pool({ connectionString: connectionString(), max: 1 });
    const storage = new PostgresStorage({ pool, schema });
    expect(pool.listenerCount('error')).toBe(1);
    await storage.getThread('x');
    await storage.close();
    expect(pool.listenerCount('error')).toBe(0);
    await pool.end();
  });
});
