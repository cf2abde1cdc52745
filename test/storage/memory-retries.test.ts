/**
 * PostgresStorage retries an operation that failed for the infrastructure's reason within its
 * `retry.deadlineMs`, on a throwaway cluster of its own (it restarts the server, so never
 * `DATABASE_URL`'s) and a TCP proxy that cuts connections and refuses new ones
 * (test/support/tcp-proxy.ts). Through an Agent with Memory:
 *
 * - within the deadline — a backend terminated mid-save and mid-load, the network cut for less
 *   than the deadline, the server restarted — the run completes and memory holds the turn once;
 * - an answer lost after the server did the work (a `COMMIT`, a thread's `INSERT`): the retry
 *   stores each message once, in order, and creates the thread once;
 * - past the deadline: one `error` chunk (a `StorageError`), nothing of the turn stored, and the
 *   next run works once the database is back;
 * - an abort during the retries ends the run (and a read) with the abort, without waiting for the
 *   deadline, and nothing is stored;
 * - failures that are not the infrastructure's (bad input, constraints, another thread's message
 *   id) are not retried: the server ran the statement once (a trigger counts it).
 *
 * Deadlines are small and every wait is for an event; the test timeouts bound what "at once" means.
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
import { InvalidMessageError } from '../../src/message-list/errors/invalid-message-error.js';
import { StorageError } from '../../src/storage/errors/storage-error.js';
import { isInfrastructureError } from '../../src/storage/infrastructure-error.js';
import { PostgresStorage, type PostgresStorageOptions } from '../../src/storage/postgres/postgres-storage.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { textMessage } from './storage-suite.js';

let server: TestPostgres;
let admin: pg.Pool;
let proxy: TcpProxy;
/** The test's own view of the data (never through the proxy). */
let direct: PostgresStorage;
const schema = `rxagent_retries_${randomUUID().slice(0, 8)}`;
const failures: unknown[] = [];
const recordFailure = (error: unknown): void => {
  failures.push(error);
};
const opened: PostgresStorage[] = [];
const userPools: pg.Pool[] = [];

beforeAll(async () => {
  process.on('uncaughtException', recordFailure);
  process.on('unhandledRejection', recordFailure);
  server = await startTestPostgres({ ownCluster: true });
  admin = new pg.Pool({ connectionString: server.connectionString, max: 4 });
  admin.on('error', () => undefined);
  proxy = await startTcpProxy(server.connectionString);
  direct = store();
  await direct.getThread('migrate');
  // A fault the server itself raises, with any SQLSTATE, when a message of a planned thread is
  // inserted; every try is counted (a sequence is not rolled back with its transaction).
  await admin.query(`
    CREATE TABLE "${schema}".fault_plan (thread_id text PRIMARY KEY, code text, failures int NOT NULL);
    CREATE SEQUENCE "${schema}".fault_hits;
    CREATE FUNCTION "${schema}".fault() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE plan record;
    BEGIN
      SELECT * INTO plan FROM "${schema}".fault_plan WHERE thread_id = NEW.thread_id;
      IF NOT FOUND THEN RETURN NEW; END IF;
      IF nextval('"${schema}".fault_hits') <= plan.failures AND plan.code IS NOT NULL THEN
        RAISE EXCEPTION 'injected fault %', plan.code USING ERRCODE = plan.code;
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER fault BEFORE INSERT ON "${schema}".messages FOR EACH ROW EXECUTE FUNCTION "${schema}".fault();
  `);
});

afterEach(async () => {
  proxy.refuse(0);
  // Give late 'error' events (sockets closing after a cut or a termination) time to surface.
  await delay(100);
  expect(failures).toEqual([]);
});

afterAll(async () => {
  process.removeListener('uncaughtException', recordFailure);
  process.removeListener('unhandledRejection', recordFailure);
  await Promise.all(opened.map((storage) => storage.close().catch(() => undefined)));
  await Promise.all(userPools.map((pool) => pool.end().catch(() => undefined)));
  await proxy?.close();
  await admin?.end().catch(() => undefined);
  await server?.stop();
});

/** A store on the server (`through: 'proxy'`: through the TCP proxy). */
function store(options: Partial<PostgresStorageOptions> & { through?: 'proxy' } = {}): PostgresStorage {
  const { through, ...rest } = options;
  const connectionString = through === 'proxy' ? proxy.connectionString : server.connectionString;
  const storage = new PostgresStorage({ connectionString, schema, ...(rest as { retry?: PostgresStorageOptions['retry'] }) });
  opened.push(storage);
  return storage;
}

let sequence = 0;
const fresh = (name: string): string => `${name}-${process.pid}-${++sequence}`;
const textOf = (message: MastraDBMessage): string => message.content.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
const stored = async (threadId: string): Promise<string[]> => (await direct.getMessages({ threadId })).map(textOf);

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

async function waitFor(what: string, done: () => boolean | Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 500; attempt++) {
    if (await done()) return;
    await delay(20);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Backends (other than `except`) waiting on a lock, once at least one is. */
async function waitForLockWaiters(except: number[]): Promise<number[]> {
  let pids: number[] = [];
  await waitFor('a backend waiting on the lock', async () => {
    const result = await admin.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> ALL($1::int[]) AND pid <> pg_backend_pid()`,
      [except],
    );
    pids = result.rows.map((row) => row.pid);
    return pids.length > 0;
  });
  return pids;
}

/** Terminates the backends and waits until they are gone (so a lock released after cannot reach them). */
async function terminate(pids: number[]): Promise<void> {
  await admin.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [pids]);
  await waitFor('the terminated backends to exit', async () => {
    const left = await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = ANY($1::int[])', [pids]);
    return left.rows.length === 0;
  });
}

/** A connection of its own holding a lock until `release()` (it survives its own termination and a restart). */
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
const lockThread = (threadId: string) => holdLock(`SELECT 1 FROM "${schema}".threads WHERE id = $1 FOR UPDATE`, [threadId]);
const lockMessages = () => holdLock(`LOCK TABLE "${schema}".messages IN ACCESS EXCLUSIVE MODE`);

const echoModel = () =>
  mockModel({
    parts: ({ options }) => {
      const last = options.prompt.at(-1);
      const said = last?.role === 'user' ? last.content.map((part) => (part.type === 'text' ? part.text : '')).join('') : '';
      return [...textParts(`echo: ${said}`), finishPart()];
    },
  });

const agentOn = (storage: PostgresStorage): Agent => new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage }) });

async function runChunks(agent: Agent, text: string, thread: string, abortSignal?: AbortSignal) {
  return lastValueFrom(
    agent.stream$(text, { memory: { thread, resource: 'u' }, ...(abortSignal === undefined ? {} : { abortSignal }) }).pipe(toArray()),
  );
}
type Chunks = Awaited<ReturnType<typeof runChunks>>;

/** The run's one terminal chunk, the last. */
function terminalOf(chunks: Chunks): Chunks[number] {
  const terminals = chunks.filter((chunk) => ['finish', 'error', 'tripwire', 'abort'].includes(chunk.type));
  expect(terminals).toHaveLength(1);
  expect(chunks.at(-1)).toBe(terminals[0]);
  return terminals[0]!;
}

function expectFinished(chunks: Chunks): void {
  const terminal = terminalOf(chunks);
  expect(terminal.type === 'error' ? terminal.payload.error : terminal.type).toBe('finish');
}

/** One `error` chunk, the last, carrying a StorageError of `operation` (as the memory processor's cause). */
function expectStorageErrorEnd(chunks: Chunks, operation: string): StorageError {
  const terminal = terminalOf(chunks);
  expect(terminal.type).toBe('error');
  const error = terminal.type === 'error' ? terminal.payload.error : undefined;
  expect(ProcessorError.isInstance(error)).toBe(true);
  const cause = (error as { cause?: unknown }).cause;
  expect(StorageError.isInstance(cause)).toBe(true);
  expect(cause).toMatchObject({ operation });
  return cause as StorageError;
}

/** A thread with one exchange stored (`turn one`), through `agent`. */
async function threadWithTurnOne(agent: Agent): Promise<string> {
  const thread = fresh('thread');
  expectFinished(await runChunks(agent, 'turn one', thread));
  return thread;
}

describe('within the deadline: the run completes and memory holds the turn once', () => {
  it('a backend terminated mid-save (default retry)', async () => {
    const agent = agentOn(store());
    const thread = await threadWithTurnOne(agent);
    const lock = await lockThread(thread);
    const run = runChunks(agent, 'turn two', thread);
    await terminate(await waitForLockWaiters([lock.pid]));
    await lock.release();
    expectFinished(await run);
    expect(await stored(thread)).toEqual(['turn one', 'echo: turn one', 'turn two', 'echo: turn two']);
  });

  it('a backend terminated mid-load (default retry)', async () => {
    const agent = agentOn(store());
    const thread = await threadWithTurnOne(agent);
    const lock = await lockMessages();
    const run = runChunks(agent, 'turn two', thread);
    await terminate(await waitForLockWaiters([lock.pid]));
    await lock.release();
    const chunks = await run;
    expectFinished(chunks);
    // the history was loaded: the model saw turn one
    expect(await stored(thread)).toEqual(['turn one', 'echo: turn one', 'turn two', 'echo: turn two']);
  });

  it('the network cut mid-save and down for less than the deadline', async () => {
    const agent = agentOn(store({ through: 'proxy', retry: { deadlineMs: 8_000 }, connectionTimeoutMs: 1_000 }));
    const thread = await threadWithTurnOne(agent);
    const lock = await lockThread(thread);
    const run = runChunks(agent, 'turn two', thread);
    await waitForLockWaiters([lock.pid]);
    proxy.refuse(500);
    proxy.cut();
    await lock.release();
    expectFinished(await run);
    expect(await stored(thread)).toEqual(['turn one', 'echo: turn one', 'turn two', 'echo: turn two']);
  });

  it('the network cut mid-load and down for less than the deadline', async () => {
    const agent = agentOn(store({ through: 'proxy', retry: { deadlineMs: 8_000 }, connectionTimeoutMs: 1_000 }));
    const thread = await threadWithTurnOne(agent);
    const lock = await lockMessages();
    const run = runChunks(agent, 'turn two', thread);
    await waitForLockWaiters([lock.pid]);
    proxy.refuse(500);
    proxy.cut();
    await lock.release();
    expectFinished(await run);
    expect(await stored(thread)).toEqual(['turn one', 'echo: turn one', 'turn two', 'echo: turn two']);
  });

  it('the deadline counts from the first failure: a save that waited on a lock for longer is still retried', async () => {
    const agent = agentOn(store({ through: 'proxy', retry: { deadlineMs: 1_000 }, connectionTimeoutMs: 1_000 }));
    const thread = await threadWithTurnOne(agent);
    const lock = await lockThread(thread);
    const run = runChunks(agent, 'turn two', thread);
    await waitForLockWaiters([lock.pid]);
    await delay(1_500);
    proxy.refuse(100);
    proxy.cut();
    await lock.release();
    expectFinished(await run);
    expect(await stored(thread)).toEqual(['turn one', 'echo: turn one', 'turn two', 'echo: turn two']);
  });

  it('the server restarted mid-save', async () => {
    const agent = agentOn(store({ retry: { deadlineMs: 30_000 } }));
    const thread = await threadWithTurnOne(agent);
    const lock = await lockThread(thread);
    const run = runChunks(agent, 'turn two', thread);
    await waitForLockWaiters([lock.pid]);
    try {
      await server.pause!();
    } finally {
      await server.resume!();
    }
    await lock.release();
    expectFinished(await run);
    expect(await stored(thread)).toEqual(['turn one', 'echo: turn one', 'turn two', 'echo: turn two']);
  }, 40_000);
});

/**
 * A pool you pass in whose next statement matching `loseNext` runs on the server, and whose
 * answer the network then loses: the connection is cut before the caller sees the answer, and
 * the caller gets what `pg` says about the cut connection.
 */
function poolLosingAnswers(): { pool: pg.Pool; loseNext(statement: RegExp): void; lost: string[] } {
  const pool = new pg.Pool({ connectionString: proxy.connectionString, max: 4 });
  userPools.push(pool);
  let armed: RegExp | undefined;
  const lost: string[] = [];
  const patched = new WeakSet<object>();
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  (pool as unknown as { connect: () => Promise<pg.PoolClient> }).connect = async () => {
    const client = await connect();
    if (patched.has(client)) return client;
    patched.add(client);
    const query = client.query.bind(client) as (config: pg.QueryConfig) => Promise<pg.QueryResult>;
    (client as unknown as { query: typeof query }).query = async (config) => {
      const result = await query(config);
      if (armed === undefined || !armed.test(config.text)) return result;
      armed = undefined;
      lost.push(config.text);
      proxy.cut();
      throw await query({ text: 'SELECT 1' }).then(
        () => new Error('a cut connection answered'),
        (error: unknown) => error,
      );
    };
    return client;
  };
  return {
    pool,
    loseNext: (statement) => {
      armed = statement;
    },
    lost,
  };
}

describe('an answer lost after the server did the work: the retry changes nothing', () => {
  it('a save whose COMMIT answer was lost stores each message once, in order', async () => {
    const losing = poolLosingAnswers();
    const storage = new PostgresStorage({ pool: losing.pool, schema, retry: { deadlineMs: 5_000 } });
    opened.push(storage);
    const threadId = fresh('t');
    await storage.saveMessages({ threadId, resourceId: 'r', messages: [textMessage(`${threadId}-0`, 'zero')], ensureThread: true });
    losing.loseNext(/^COMMIT$/);
    const messages = ['a', 'b', 'c'].map((text) => textMessage(`${threadId}-${text}`, text));
    await storage.saveMessages({ threadId, resourceId: 'r', messages });
    expect(losing.lost).toEqual(['COMMIT']);
    expect(await stored(threadId)).toEqual(['zero', 'a', 'b', 'c']);
  });

  it('a run whose save lost its COMMIT answer completes; memory holds the turn once', async () => {
    const losing = poolLosingAnswers();
    const storage = new PostgresStorage({ pool: losing.pool, schema, retry: { deadlineMs: 5_000 } });
    opened.push(storage);
    const agent = agentOn(storage);
    const thread = await threadWithTurnOne(agent);
    losing.loseNext(/^COMMIT$/);
    expectFinished(await runChunks(agent, 'turn two', thread));
    expect(losing.lost).toEqual(['COMMIT']);
    expect(await stored(thread)).toEqual(['turn one', 'echo: turn one', 'turn two', 'echo: turn two']);
  });

  it('a run whose thread creation lost its answer completes; the thread exists once, owned by the run’s resource', async () => {
    const losing = poolLosingAnswers();
    const storage = new PostgresStorage({ pool: losing.pool, schema, retry: { deadlineMs: 5_000 } });
    opened.push(storage);
    const agent = agentOn(storage);
    const thread = fresh('thread');
    losing.loseNext(/\.threads \(id, resource_id, title/);
    expectFinished(await runChunks(agent, 'turn one', thread));
    expect(losing.lost).toHaveLength(1);
    expect(await direct.getThread(thread)).toMatchObject({ id: thread, resourceId: 'u' });
    expect(await stored(thread)).toEqual(['turn one', 'echo: turn one']);
  });
});

describe('past the deadline: one error chunk, nothing of the turn stored', () => {
  it('the network down for longer than the deadline mid-save; the next run works once it is back', async () => {
    const agent = agentOn(store({ through: 'proxy', retry: { deadlineMs: 600 }, connectionTimeoutMs: 1_000 }));
    const thread = await threadWithTurnOne(agent);
    const lock = await lockThread(thread);
    const run = runChunks(agent, 'turn two', thread);
    await waitForLockWaiters([lock.pid]);
    const refusedBefore = proxy.stats.refused;
    proxy.refuse(60_000);
    proxy.cut();
    await lock.release();
    const error = expectStorageErrorEnd(await run, 'saveMessages');
    // it was retried (refused) before the deadline gave up
    expect(proxy.stats.refused).toBeGreaterThan(refusedBefore);
    expect(isInfrastructureError(error.cause)).toBe(true);
    proxy.refuse(0);
    expect(await stored(thread)).toEqual(['turn one', 'echo: turn one']);
    expectFinished(await runChunks(agent, 'turn three', thread));
    expect(await stored(thread)).toEqual(['turn one', 'echo: turn one', 'turn three', 'echo: turn three']);
  });

  it('the network down for longer than the deadline mid-load', async () => {
    const agent = agentOn(store({ through: 'proxy', retry: { deadlineMs: 600 }, connectionTimeoutMs: 1_000 }));
    const thread = await threadWithTurnOne(agent);
    const lock = await lockMessages();
    const run = runChunks(agent, 'turn two', thread);
    await waitForLockWaiters([lock.pid]);
    proxy.refuse(60_000);
    proxy.cut();
    await lock.release();
    expectStorageErrorEnd(await run, 'getMessages');
    proxy.refuse(0);
    expect(await stored(thread)).toEqual(['turn one', 'echo: turn one']);
  });
});

describe('an abort during the retries ends the operation at once (the deadline is a minute away)', () => {
  it('a run aborted while its save is retried ends with the abort; nothing of the turn stored', async () => {
    const agent = agentOn(store({ through: 'proxy', retry: { deadlineMs: 60_000 }, connectionTimeoutMs: 1_000 }));
    const thread = await threadWithTurnOne(agent);
    const lock = await lockThread(thread);
    const controller = new AbortController();
    const run = runChunks(agent, 'turn two', thread, controller.signal);
    await waitForLockWaiters([lock.pid]);
    const refusedBefore = proxy.stats.refused;
    proxy.refuse(60_000);
    proxy.cut();
    await lock.release();
    await waitFor('a retry refused', () => proxy.stats.refused > refusedBefore);
    controller.abort(new Error('the user left'));
    const chunks = await run;
    expect(terminalOf(chunks).type).toBe('abort');
    proxy.refuse(0);
    expect(await stored(thread)).toEqual(['turn one', 'echo: turn one']);
  }, 10_000);

  it('a read aborted while it is retried rejects with the abort reason', async () => {
    const storage = store({ through: 'proxy', retry: { deadlineMs: 60_000 }, connectionTimeoutMs: 1_000 });
    const threadId = fresh('t');
    await storage.saveMessages({ threadId, resourceId: 'r', messages: [textMessage(`${threadId}-1`, 'one')], ensureThread: true });
    const refusedBefore = proxy.stats.refused;
    proxy.refuse(60_000);
    proxy.cut();
    const controller = new AbortController();
    const { signal } = controller;
    const reads = [storage.getMessages({ threadId, abortSignal: signal }), storage.getThread(threadId, { abortSignal: signal })].map(rejection);
    await waitFor('a retry refused', () => proxy.stats.refused > refusedBefore);
    const reason = new Error('the user left');
    controller.abort(reason);
    const [load, thread] = await Promise.all(reads);
    expect(load).toBe(reason);
    expect(thread).toBe(reason);
  }, 10_000);
});

/**
 * Plans `failures` faults with SQLSTATE `code` (null: count only) for inserts of the thread's
 * messages; resolves to how many inserts the server ran since.
 */
async function plan(threadId: string, code: string | null, failures: number): Promise<() => Promise<number>> {
  await admin.query(`INSERT INTO "${schema}".fault_plan VALUES ($1, $2, $3)`, [threadId, code, failures]);
  await admin.query(`SELECT setval('"${schema}".fault_hits', 1, false)`);
  return async () => {
    const hits = await admin.query<{ hits: string }>(`SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS hits FROM "${schema}".fault_hits`);
    return Number(hits.rows[0]?.hits);
  };
}

describe('not the infrastructure’s failures: never retried', () => {
  it.each([
    ['23505 unique violation', '23505'],
    ['23514 check violation', '23514'],
    ['22P02 invalid text representation', '22P02'],
    ['42501 insufficient privilege', '42501'],
    ['P0001 raised by a trigger', 'P0001'],
  ])('%s: the save runs once and is a StorageError', async (_name, code) => {
    const storage = store({ retry: { deadlineMs: 5_000 } });
    const threadId = fresh('t');
    await storage.createThread({ id: threadId, resourceId: 'r' });
    const hits = await plan(threadId, code, 1_000);
    const error = await rejection(storage.saveMessages({ threadId, resourceId: 'r', messages: [textMessage(`${threadId}-1`, 'one')] }));
    expect(error).toMatchObject({ name: 'StorageError', operation: 'saveMessages', cause: { code } });
    expect(await hits()).toBe(1);
    expect(await stored(threadId)).toEqual([]);
  });

  it.each([
    ['40001 serialization failure', '40001'],
    ['40P01 deadlock detected', '40P01'],
    ['55P03 lock not available', '55P03'],
    ['57014 statement timeout', '57014'],
    ['53300 too many connections', '53300'],
    ['57P01 admin shutdown', '57P01'],
  ])('(the contrast) %s twice: the save runs a third time and stores the message once', async (_name, code) => {
    const storage = store({ retry: { deadlineMs: 5_000 } });
    const threadId = fresh('t');
    await storage.createThread({ id: threadId, resourceId: 'r' });
    const hits = await plan(threadId, code, 2);
    await storage.saveMessages({ threadId, resourceId: 'r', messages: [textMessage(`${threadId}-1`, 'one')] });
    expect(await hits()).toBe(3);
    expect(await stored(threadId)).toEqual(['one']);
  });

  it('another thread’s message id: an InvalidMessageError after one try', async () => {
    const storage = store({ retry: { deadlineMs: 5_000 } });
    const [first, second] = [fresh('t'), fresh('t')];
    await storage.saveMessages({ threadId: first, resourceId: 'r', messages: [textMessage(`${first}-1`, 'one')], ensureThread: true });
    await storage.createThread({ id: second, resourceId: 'r' });
    const hits = await plan(second, null, 0);
    const error = await rejection(storage.saveMessages({ threadId: second, resourceId: 'r', messages: [textMessage(`${first}-1`, 'taken')] }));
    expect(InvalidMessageError.isInstance(error)).toBe(true);
    expect(await hits()).toBe(1);
    expect(await stored(first)).toEqual(['one']);
    expect(await stored(second)).toEqual([]);
  });
});

describe('the retry option', () => {
  it('is checked when the store is made: a whole number of ms ≥ 0', () => {
    const connectionString = 'postgres://app@127.0.0.1:1/none';
    for (const deadlineMs of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '100']) {
      expect(() => new PostgresStorage({ connectionString, retry: { deadlineMs: deadlineMs as number } })).toThrow(/retry\.deadlineMs/);
    }
    for (const retry of [null, 5_000, 'yes', []]) {
      expect(() => new PostgresStorage({ connectionString, retry: retry as never })).toThrow(/PostgresStorage: retry must be/);
    }
    expect(() => new PostgresStorage({ connectionString, retry: { deadlineMs: 0 } })).not.toThrow();
    expect(() => new PostgresStorage({ connectionString, retry: {} })).not.toThrow();
  });

  it('deadlineMs 0: a failure is not retried', async () => {
    const storage = store({ retry: { deadlineMs: 0 } });
    const threadId = fresh('t');
    await storage.createThread({ id: threadId, resourceId: 'r' });
    const hits = await plan(threadId, '40001', 1);
    const error = await rejection(storage.saveMessages({ threadId, resourceId: 'r', messages: [textMessage(`${threadId}-1`, 'one')] }));
    expect(error).toMatchObject({ name: 'StorageError', operation: 'saveMessages', cause: { code: '40001' } });
    expect(await hits()).toBe(1);
    expect(await stored(threadId)).toEqual([]);
  });
});
