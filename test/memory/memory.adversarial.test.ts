/**
 * Agent memory under faults, races and hostile content, on every store (in-memory, a libSQL
 * file, PostgreSQL). What must hold (docs/memory.md, docs/security.md): nothing already stored
 * is lost or rewritten; a failing store ends the run with one typed error and stores nothing of
 * it; bad input or a malformed load is a typed error naming what was wrong — a prompt is never
 * built from another thread's messages.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@libsql/client';
import pg from 'pg';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { Memory } from '../../src/memory/memory.js';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import { InvalidMessageError } from '../../src/message-list/errors/invalid-message-error.js';
import type { MastraDBMessage } from '../../src/message-list/types.js';
import type { AgentMemoryCall } from '../../src/contract/memory-types.js';
import { InvalidIdError } from '../../src/storage/errors/invalid-id-error.js';
import { StorageError } from '../../src/storage/errors/storage-error.js';
import { ThreadOwnershipError } from '../../src/storage/errors/thread-ownership-error.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import { LibSQLStorage } from '../../src/storage/libsql/libsql-storage.js';
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js';
import type { MemoryStorage } from '../../src/storage/types.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';

const terminalTypes = ['finish', 'error', 'tripwire', 'abort'];
const textOf = (message: MastraDBMessage | undefined): string =>
  (message?.content.parts ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
const echoModel = () =>
  mockModel({
    parts: ({ options }) => {
      const last = options.prompt.at(-1);
      const said = last?.role === 'user' ? last.content.map((part) => (part.type === 'text' ? part.text : '')).join('') : '';
      return [...textParts(`echo: ${said}`), finishPart()];
    },
  });
const fresh = (name: string): string => `${name}-${randomUUID().slice(0, 8)}`;

function textMessage(id: string, text: string, overrides: Partial<MastraDBMessage> = {}): MastraDBMessage {
  return { id, role: 'user', createdAt: new Date('2026-01-01T10:00:00.000Z'), content: { format: 2, parts: [{ type: 'text', text }], content: text }, ...overrides };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

/** A store that forwards to `inner` except for `overrides`. */
function delegate(inner: MemoryStorage, overrides: Partial<MemoryStorage>): MemoryStorage {
  return {
    getThread: (threadId) => inner.getThread(threadId),
    createThread: (input) => inner.createThread(input),
    listThreads: (options) => inner.listThreads(options),
    deleteThread: (threadId) => inner.deleteThread(threadId),
    getMessages: (options) => inner.getMessages(options),
    saveMessages: (options) => inner.saveMessages(options),
    getResource: (resourceId) => inner.getResource(resourceId),
    saveResource: (input) => inner.saveResource(input),
    close: () => inner.close(),
    ...overrides,
  };
}

/** Runs the agent and returns its chunks and its one terminal chunk. */
async function run(agent: Agent, text: string, memory: AgentMemoryCall, abortSignal?: AbortSignal) {
  const chunks = await lastValueFrom(agent.stream$(text, { memory, ...(abortSignal === undefined ? {} : { abortSignal }) }).pipe(toArray()));
  const terminal = chunks.filter((chunk) => terminalTypes.includes(chunk.type));
  expect(terminal).toHaveLength(1);
  const last = terminal[0];
  return { chunks, terminal: last, error: last?.type === 'error' ? last.payload.error : undefined };
}

// ---- stores -------------------------------------------------------------------------------

let server: TestPostgres | undefined;
const schema = `rxagent_adv_${randomUUID().slice(0, 8)}`;
const directory = mkdtempSync(join(tmpdir(), 'rxagent-memory-adv-'));
const opened: MemoryStorage[] = [];

beforeAll(async () => {
  server = await startTestPostgres();
});
afterAll(async () => {
  await Promise.all(opened.map((storage) => storage.close()));
  rmSync(directory, { recursive: true, force: true });
  if (server === undefined) return;
  if (!server.started) {
    const pool = new pg.Pool({ connectionString: server.connectionString });
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  }
  await server.stop();
});

/** Runs one SQL statement on the store's own database (`undefined` for the in-memory store). */
type RawSql = ((sql: string, args: Array<string | number>) => Promise<void>) | undefined;
const rawSql: Record<string, RawSql> = {
  'LibSQLStorage (file)': async (sql, args) => {
    const client = createClient({ url: `file:${join(directory, 'memory.db')}` });
    try {
      await client.execute({ sql: sql.replaceAll('$T', 'rxagent_messages').replace(/\$\d/g, '?'), args });
    } finally {
      client.close();
    }
  },
  PostgresStorage: async (sql, args) => {
    const pool = new pg.Pool({ connectionString: server?.connectionString });
    try {
      await pool.query(sql.replaceAll('$T', `"${schema}".messages`), args);
    } finally {
      await pool.end();
    }
  },
};

const stores: Array<[string, () => MemoryStorage]> = [
  ['InMemoryStorage', () => new InMemoryStorage()],
  ['LibSQLStorage (file)', () => new LibSQLStorage({ url: `file:${join(directory, 'memory.db')}` })],
  [
    'PostgresStorage',
    () => {
      if (server === undefined) throw new Error('PostgreSQL did not start');
      return new PostgresStorage({ connectionString: server.connectionString, schema });
    },
  ],
];

function open(make: () => MemoryStorage): MemoryStorage {
  const storage = make();
  opened.push(storage);
  return storage;
}

describe.each(stores)('memory under attack on %s', (name, make) => {
  it('two runs on one thread, both loaded before either saves: each exchange stored whole and contiguous, turn one untouched', async () => {
    const storage = open(make);
    const thread = fresh('t');
    const memory = { thread, resource: 'u' };
    await new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage }) }).generate('turn one', { memory });
    const before = await storage.getMessages({ threadId: thread });
    // Both saves are held until both runs reach them, then released in reverse order.
    const waiting: Array<() => void> = [];
    let bothWaiting!: () => void;
    const ready = new Promise<void>((resolve) => (bothWaiting = resolve));
    const gated = delegate(storage, {
      saveMessages: async (options) => {
        await new Promise<void>((resolve) => {
          waiting.push(resolve);
          if (waiting.length === 2) bothWaiting();
        });
        return storage.saveMessages(options);
      },
    });
    void ready.then(() => {
      waiting[1]?.();
      waiting[0]?.();
    });
    const model = echoModel();
    const agent = new Agent({ id: 'a', model, memory: new Memory({ storage: gated }) });
    const [first, second] = await Promise.all([run(agent, 'run A', memory), run(agent, 'run B', memory)]);
    expect([first.terminal?.type, second.terminal?.type]).toEqual(['finish', 'finish']);
    // Both prompts held turn one and not the other run's message.
    for (const call of model.calls) {
      const prompt = JSON.stringify(call.prompt);
      expect(prompt).toContain('turn one');
      expect(prompt.includes('run A') && prompt.includes('run B')).toBe(false);
    }
    const stored = await storage.getMessages({ threadId: thread });
    expect(stored.slice(0, 2)).toEqual(before);
    const pairs = [stored.slice(2, 4).map(textOf), stored.slice(4, 6).map(textOf)];
    expect(stored).toHaveLength(6);
    expect(new Set(stored.map((message) => message.id)).size).toBe(6);
    expect(pairs.sort()).toEqual([
      ['run A', 'echo: run A'],
      ['run B', 'echo: run B'],
    ]);
  });

  it('hostile content round-trips exactly: 5 MB of text, NUL, lone surrogates, __proto__ keys in metadata and parts', async () => {
    const storage = open(make);
    const thread = fresh('t');
    const big = 'x'.repeat(5 * 1024 * 1024);
    const odd = 'a\u0000b \ud800 c\udfff d\udc00\ud800 \ufffe';
    const metadata = JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}, "ok": 1}') as Record<string, unknown>;
    const part = JSON.parse('{"type": "data-x", "data": {"__proto__": {"polluted": true}}, "__proto__": {"text": "injected"}}') as MastraDBMessage['content']['parts'][number];
    const messages = [
      textMessage(fresh('big'), big),
      textMessage(fresh('odd'), odd),
      { ...textMessage(fresh('proto'), 'proto'), content: { format: 2 as const, parts: [{ type: 'text' as const, text: 'p' }, part], metadata } },
    ];
    await storage.saveMessages({ threadId: thread, resourceId: 'u', messages, ensureThread: true });
    const stored = await storage.getMessages({ threadId: thread });
    expect(stored.map((message) => message.id)).toEqual(messages.map((message) => message.id));
    expect(textOf(stored[0])).toHaveLength(big.length);
    expect(textOf(stored[0]) === big).toBe(true);
    expect(textOf(stored[1])).toBe(odd);
    const proto = stored[2];
    expect(Object.getPrototypeOf(proto?.content.metadata)).toBe(Object.prototype);
    expect(Object.hasOwn(proto?.content.metadata ?? {}, '__proto__')).toBe(true);
    expect(JSON.stringify(proto?.content)).toBe(JSON.stringify(messages[2]?.content));
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it.each([
    ['a NUL', 'a\u0000b', /NUL/],
    ['a lone surrogate', 'a\ud800b', /lone surrogate/],
  ])('text columns with %s (thread title, message type, working memory) are a typed error naming the field, never cut or replaced', async (_label, bad, reason) => {
    const storage = open(make);
    const thread = fresh('t');
    const titleError = await rejection(storage.createThread({ id: thread, resourceId: 'u', title: bad }));
    expect(titleError).toBeInstanceOf(TypeError);
    expect(String(titleError)).toMatch(/title/);
    expect(String(titleError)).toMatch(reason);
    expect(await storage.getThread(thread)).toBeNull();
    const typeError = await rejection(
      storage.saveMessages({ threadId: thread, resourceId: 'u', messages: [textMessage(fresh('ok'), 'ok'), textMessage(fresh('m'), 'x', { type: bad })], ensureThread: true }),
    );
    expect(InvalidMessageError.isInstance(typeError)).toBe(true);
    expect((typeError as InvalidMessageError).path).toEqual([1, 'type']);
    expect(String(typeError)).toMatch(reason);
    expect(await storage.getThread(thread)).toBeNull();
    const resource = fresh('r');
    const workingMemoryError = await rejection(storage.saveResource({ id: resource, workingMemory: bad }));
    expect(workingMemoryError).toBeInstanceOf(TypeError);
    expect(String(workingMemoryError)).toMatch(/workingMemory/);
    expect(await storage.getResource(resource)).toBeNull();
    // Through an Agent: a client message carrying such a type, a thread title from the call.
    const model = echoModel();
    const agent = new Agent({ id: 'a', model, memory: new Memory({ storage }) });
    const input = [{ ...textMessage(fresh('in'), 'hello'), type: bad }];
    const viaType = await lastValueFrom(agent.stream$(input, { memory: { thread, resource: 'u' } }).pipe(toArray()));
    const typeChunk = viaType.filter((chunk) => terminalTypes.includes(chunk.type));
    expect(typeChunk.map((chunk) => chunk.type)).toEqual(['error']);
    expect(await storage.getMessages({ threadId: thread })).toEqual([]);
    const viaTitle = await run(agent, 'hello', { thread: { id: fresh('t'), title: bad }, resource: 'u' });
    expect(viaTitle.error).toMatchObject({ name: 'ProcessorError', processorId: 'message-history' });
    expect((viaTitle.error as ProcessorError).cause).toBeInstanceOf(TypeError);
  });

  it('10,000 messages in a thread: the run loads only lastMessages of them', async () => {
    const storage = open(make);
    const thread = fresh('t');
    const messages = Array.from({ length: 10_000 }, (_, index) => textMessage(`${thread}-${index}`, `m${index}`, { role: index % 2 === 0 ? 'user' : 'assistant' }));
    for (let start = 0; start < messages.length; start += 2500) {
      await storage.saveMessages({ threadId: thread, resourceId: 'u', messages: messages.slice(start, start + 2500), ensureThread: true });
    }
    const loaded: number[] = [];
    const counting = delegate(storage, {
      getMessages: async (options) => {
        const result = await storage.getMessages(options);
        loaded.push(result.length);
        return result;
      },
    });
    const model = echoModel();
    await new Agent({ id: 'a', model, memory: new Memory({ storage: counting, lastMessages: 7 }) }).generate('next', { memory: { thread, resource: 'u' } });
    expect(loaded).toEqual([7]);
    expect(model.calls[0]?.prompt.filter((message) => message.role !== 'system')).toHaveLength(8);
    expect((await storage.getMessages({ threadId: thread, last: 3 })).map(textOf)).toEqual(['m9999', 'next', 'echo: next']);
  });

  it('two resources racing to create one new thread: one owns it, the other run fails with ThreadOwnershipError and stores nothing', async () => {
    const storage = open(make);
    const thread = fresh('t');
    const agent = new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage }) });
    const [first, second] = await Promise.all([run(agent, 'from A', { thread, resource: 'A' }), run(agent, 'from B', { thread, resource: 'B' })]);
    const outcomes = [first, second];
    expect(outcomes.map((outcome) => outcome.terminal?.type).sort()).toEqual(['error', 'finish']);
    const winner = first.terminal?.type === 'finish' ? 'A' : 'B';
    const loser = outcomes.find((outcome) => outcome.terminal?.type === 'error');
    expect(ThreadOwnershipError.isInstance((loser?.error as ProcessorError).cause)).toBe(true);
    expect((await storage.getThread(thread))?.resourceId).toBe(winner);
    expect((await storage.getMessages({ threadId: thread })).map(textOf)).toEqual([`from ${winner}`, `echo: from ${winner}`]);
  });

  it.each([0, 5])("another resource's thread with lastMessages: %i is a ThreadOwnershipError before any model call (read-only too)", async (lastMessages) => {
    const storage = open(make);
    const thread = fresh('t');
    await new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage }) }).generate('owner turn', { memory: { thread, resource: 'owner' } });
    const model = echoModel();
    const agent = new Agent({ id: 'a', model, memory: new Memory({ storage, lastMessages }) });
    for (const readOnly of [false, true]) {
      const chunks = await lastValueFrom(agent.stream$('intruder turn', { memory: { thread, resource: 'intruder', readOnly } }).pipe(toArray()));
      const last = chunks.at(-1);
      const error = last?.type === 'error' ? last.payload.error : undefined;
      expect(error).toMatchObject({ name: 'ProcessorError', processorId: 'message-history' });
      expect(ThreadOwnershipError.isInstance((error as ProcessorError).cause)).toBe(true);
    }
    expect(model.calls).toHaveLength(0);
    expect((await storage.getMessages({ threadId: thread })).map(textOf)).toEqual(['owner turn', 'echo: owner turn']);
  });

  it('a save that never settles, with processorTimeoutMs: the aborted run ends with one error chunk and nothing is stored', async () => {
    const storage = open(make);
    const thread = fresh('t');
    // The load answers at once with what the store holds, read before the run: on a loaded machine a
    // real libSQL/PostgreSQL read can outlast processorTimeoutMs, and the error would then name the
    // load (`message-history`); only the save is left to the timeout.
    await storage.createThread({ id: thread, resourceId: 'u' });
    const stored = await storage.getThread(thread);
    const history = await storage.getMessages({ threadId: thread });
    expect(stored?.resourceId).toBe('u');
    expect(history).toEqual([]);
    let entered!: () => void;
    const saving = new Promise<void>((resolve) => (entered = resolve));
    const frozen = delegate(storage, {
      getThread: () => Promise.resolve(stored),
      getMessages: () => Promise.resolve(history),
      saveMessages: () => {
        entered();
        return new Promise<void>(() => undefined);
      },
    });
    const controller = new AbortController();
    void saving.then(() => controller.abort(new Error('user left')));
    const agent = new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage: frozen }), processorTimeoutMs: 50 });
    const result = await run(agent, 'two', { thread, resource: 'u' }, controller.signal);
    expect(result.error).toMatchObject({ name: 'ProcessorError', processorId: 'message-history-save' });
    expect(await storage.getMessages({ threadId: thread })).toEqual([]);
  });

  it('a stored row edited behind the store (an unknown role, content without parts) is a typed error, not a prompt', async () => {
    const sql = rawSql[name];
    if (sql === undefined) return;
    const storage = open(make);
    const thread = fresh('t');
    const memory = { thread, resource: 'u' };
    await new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage }) }).generate('one', { memory });
    const [user, reply] = await storage.getMessages({ threadId: thread });
    await sql("UPDATE $T SET role = 'hacker' WHERE id = $1", [user?.id ?? '']);
    await sql(`UPDATE $T SET content = '{"format":2}' WHERE id = $1`, [reply?.id ?? '']);
    const model = echoModel();
    const failed = await run(new Agent({ id: 'a', model, memory: new Memory({ storage }) }), 'two', memory);
    expect(model.calls).toHaveLength(0);
    expect(failed.error).toMatchObject({ name: 'ProcessorError', processorId: 'message-history' });
    const cause = (failed.error as ProcessorError).cause as StorageError;
    expect(StorageError.isInstance(cause)).toBe(true);
    expect(InvalidMessageError.isInstance(cause.cause)).toBe(true);
    expect((cause.cause as InvalidMessageError).issues.map((issue) => issue.path.join('.'))).toEqual(['0.role', '1.content.parts']);
  });

  it('ids with SQL quotes and LIKE wildcards name their own thread only', async () => {
    const storage = open(make);
    const base = fresh('t');
    const victim = `${base}-ab`;
    await storage.saveMessages({ threadId: victim, resourceId: 'victim', messages: [textMessage(fresh('m'), 'secret')], ensureThread: true });
    for (const hostile of [`${base}-%`, `${base}-_b`, `${base}-a_`, `${base}%`, "' OR '1'='1", `${base}-ab' --`, `${base}-ab\\`, '%', '_']) {
      expect(await storage.getThread(hostile)).toBeNull();
      expect(await storage.getMessages({ threadId: hostile })).toEqual([]);
      expect(await storage.listThreads({ resourceId: hostile })).toEqual([]);
      const model = echoModel();
      const outcome = await run(new Agent({ id: 'a', model, memory: new Memory({ storage }) }), 'hi', { thread: hostile, resource: 'attacker' });
      expect(outcome.terminal?.type).toBe('finish');
      expect(JSON.stringify(model.calls)).not.toContain('secret');
      expect((await storage.getThread(hostile))?.resourceId).toBe('attacker');
    }
    expect(await storage.listThreads({ resourceId: '%' })).toEqual([]);
    expect((await storage.getMessages({ threadId: victim })).map(textOf)).toEqual(['secret']);
  });

  it('a 10 KB, NUL or lone-surrogate thread id ends the run with one InvalidIdError, an empty one with a TypeError; nothing stored', async () => {
    const storage = open(make);
    const model = echoModel();
    const agent = new Agent({ id: 'a', model, memory: new Memory({ storage }) });
    for (const thread of ['x'.repeat(10 * 1024), 'a\u0000b', 'a\ud800']) {
      const { error } = await run(agent, 'hello', { thread, resource: 'u' });
      expect(ProcessorError.isInstance(error)).toBe(true);
      expect(InvalidIdError.isInstance((error as ProcessorError).cause)).toBe(true);
    }
    const empty = await run(agent, 'hello', { thread: '', resource: 'u' });
    expect(empty.error).toBeInstanceOf(TypeError);
    expect(String(empty.error)).toContain('options.memory.thread');
    expect(model.calls).toHaveLength(0);
  });
});

describe.each(stores)('a failing store on %s', (_name, make) => {
  it('a save that rejects once: one error chunk, nothing of that run stored; the next run stores', async () => {
    const storage = open(make);
    const thread = fresh('t');
    const memory = { thread, resource: 'u' };
    let failures = 1;
    const flaky = delegate(storage, {
      saveMessages: (options) => (failures-- > 0 ? Promise.reject(new StorageError({ operation: 'saveMessages', message: 'blip' })) : storage.saveMessages(options)),
    });
    const agent = new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage: flaky }) });
    const failed = await run(agent, 'lost', memory);
    expect(failed.error).toMatchObject({ name: 'ProcessorError', processorId: 'message-history-save' });
    expect(StorageError.isInstance((failed.error as ProcessorError).cause)).toBe(true);
    expect(await storage.getMessages({ threadId: thread })).toEqual([]);
    expect((await run(agent, 'kept', memory)).terminal?.type).toBe('finish');
    expect((await storage.getMessages({ threadId: thread })).map(textOf)).toEqual(['kept', 'echo: kept']);
  });

  it('a save that throws synchronously is the same one error chunk; earlier turns intact', async () => {
    const storage = open(make);
    const thread = fresh('t');
    const memory = { thread, resource: 'u' };
    await new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage }) }).generate('one', { memory });
    const throwing = delegate(storage, {
      saveMessages: () => {
        throw new Error('sync boom');
      },
    });
    const failed = await run(new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage: throwing }) }), 'two', memory);
    expect(failed.error).toMatchObject({ name: 'ProcessorError', processorId: 'message-history-save' });
    expect((await storage.getMessages({ threadId: thread })).map(textOf)).toEqual(['one', 'echo: one']);
  });

  it('a load that fails (getThread, getMessages; rejected or thrown): one error chunk, no model call, nothing stored', async () => {
    const storage = open(make);
    const thread = fresh('t');
    const memory = { thread, resource: 'u' };
    await new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage }) }).generate('one', { memory });
    const broken: Array<Partial<MemoryStorage>> = [
      { getThread: () => Promise.reject(new StorageError({ operation: 'getThread', message: 'down' })) },
      { getMessages: () => Promise.reject(new StorageError({ operation: 'getMessages', message: 'down' })) },
      {
        getMessages: () => {
          throw new Error('sync down');
        },
      },
    ];
    for (const overrides of broken) {
      const model = echoModel();
      const failed = await run(new Agent({ id: 'a', model, memory: new Memory({ storage: delegate(storage, overrides) }) }), 'two', memory);
      expect(failed.error).toMatchObject({ name: 'ProcessorError', processorId: 'message-history' });
      expect(model.calls).toHaveLength(0);
    }
    expect((await storage.getMessages({ threadId: thread })).map(textOf)).toEqual(['one', 'echo: one']);
  });

  it('an abort while the save is held: the run ends (abort, nothing stored, or finish and stored), never both', async () => {
    const storage = open(make);
    const thread = fresh('t');
    const memory = { thread, resource: 'u' };
    let entered!: () => void;
    const saving = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let settled: Promise<void> = Promise.resolve();
    const slow = delegate(storage, {
      saveMessages: (options) => {
        entered();
        settled = held.then(() => storage.saveMessages(options));
        return settled;
      },
    });
    const controller = new AbortController();
    void saving.then(() => {
      controller.abort(new Error('user left'));
      release();
    });
    const result = await run(new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage: slow }) }), 'two', memory, controller.signal);
    await settled.catch(() => undefined);
    expect(result.terminal?.type).toBe('abort');
    expect(await storage.getMessages({ threadId: thread })).toEqual([]);
  });
});

describe('a store returning malformed history', () => {
  const cases: Array<[string, (history: MastraDBMessage[], own: string) => MastraDBMessage[]]> = [
    ['a message of another thread', (history) => [...history, textMessage('other-1', 'the other thread’s secret', { threadId: 'someone-else', resourceId: 'u' })]],
    ['a message of another resource', (history, own) => [...history, textMessage('other-2', 'the other thread’s secret', { threadId: own, resourceId: 'intruder' })]],
    ['a duplicated id', (history) => [...history, { ...(history[0] as MastraDBMessage), content: { format: 2, parts: [{ type: 'text', text: 'the other thread’s secret' }] } }]],
    ['a wrong role', (history) => [...history, { ...textMessage('bad-role', 'the other thread’s secret'), role: 'hacker' as MastraDBMessage['role'] }]],
    ['a message without content', (history) => [...history, { ...textMessage('no-content', 'x'), content: undefined as unknown as MastraDBMessage['content'] }]],
    ['a message without an id', (history) => [...history, { ...textMessage('', 'the other thread’s secret'), id: undefined as unknown as string }]],
    ['more messages than lastMessages asked for', (history) => [...Array.from({ length: 10 }, (_, index) => textMessage(`old-${index}`, 'the other thread’s secret')), ...history]],
    ['not an array', () => ({ length: 1, 0: textMessage('x', 'the other thread’s secret') }) as unknown as MastraDBMessage[]],
  ];

  it.each(cases)('%s: one typed error, no model call, nothing stored', async (_label, corrupt) => {
    const storage = new InMemoryStorage();
    const thread = fresh('t');
    const memory = { thread, resource: 'u' };
    await new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage }) }).generate('one', { memory });
    const hostile = delegate(storage, { getMessages: async (options) => corrupt(await storage.getMessages(options), thread) });
    const model = echoModel();
    const failed = await run(new Agent({ id: 'a', model, memory: new Memory({ storage: hostile, lastMessages: 5 }) }), 'two', memory);
    expect(model.calls).toHaveLength(0);
    expect(failed.error).toMatchObject({ name: 'ProcessorError', processorId: 'message-history' });
    const cause = (failed.error as ProcessorError).cause;
    expect(StorageError.isInstance(cause)).toBe(true);
    expect(cause).toMatchObject({ operation: 'getMessages' });
    expect(InvalidMessageError.isInstance((cause as StorageError).cause)).toBe(true);
    expect(JSON.stringify(failed.chunks)).not.toContain('the other thread’s secret');
    expect((await storage.getMessages({ threadId: thread })).map(textOf)).toEqual(['one', 'echo: one']);
  });
});
