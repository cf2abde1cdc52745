/**
 * Memory message ids under attack, on every store (in-memory, a libSQL file, PostgreSQL).
 *
 * What must hold (docs/memory.md "Ids", docs/security.md's memory row): a message stored in a
 * thread is never overwritten by another message that happens to get its id — a deterministic
 * `generateId` (a counter from 0 in each process, as tests and reproducible runs use) repeated in a
 * second process, an id a store already holds — and the run that would have overwritten it ends
 * with one typed error naming the id; the updates memory makes on purpose (a remembered tool call
 * that gets its result, a save run again after a lost `COMMIT`) still work. Ids that no store can
 * hold are refused before anything is written, ids with control characters round-trip exactly.
 *
 * Durable runs (a fenced save, `SaveMessagesOptions.runId`): the store keeps the run that stored each
 * message, and a run's save replaces only what that run stored (its takeover saving again) — another
 * run's message under one of its ids, or one stored before the store kept runs, is refused the same
 * way, through a real worker on the in-memory journal and on PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@libsql/client';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { filter, firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import type { AgentMemoryCall } from '../../src/contract/memory-types.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { createRunWorker } from '../../src/durable/create-run-worker.js';
import { NotDurableError } from '../../src/durable/errors/not-durable-error.js';
import type { RunWorkerEvent } from '../../src/durable/run-worker-event.js';
import { Agent } from '../../src/loop/agent.js';
import { Memory } from '../../src/memory/memory.js';
import { InvalidMessageError } from '../../src/message-list/errors/invalid-message-error.js';
import type { MastraDBMessage } from '../../src/message-list/types.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import { InMemoryRunJournal } from '../../src/storage/journal/in-memory-run-journal.js';
import type { RunJournal } from '../../src/storage/journal/types.js';
import { libsqlMigrations } from '../../src/storage/libsql/migrations.js';
import { LibSQLStorage } from '../../src/storage/libsql/libsql-storage.js';
import { postgresMigrations } from '../../src/storage/postgres/migrations.js';
import { PostgresRunJournal } from '../../src/storage/postgres/postgres-run-journal.js';
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js';
import type { MemoryStorage } from '../../src/storage/types.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
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
/** What tests and reproducible runs pass: a counter that starts at 0 in every process. */
const counterIds = (prefix: string): (() => string) => {
  let next = 0;
  return () => `${prefix}-${next++}`;
};

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

/** Runs the agent and returns its chunks, its one terminal chunk and the error it carries. */
async function run(agent: Agent, text: string, memory: AgentMemoryCall) {
  const chunks = await lastValueFrom(agent.stream$(text, { memory }).pipe(toArray()));
  const terminal = chunks.filter((chunk) => terminalTypes.includes(chunk.type));
  expect(terminal).toHaveLength(1);
  const last = terminal[0];
  return { chunks, terminal: last, error: last?.type === 'error' ? last.payload.error : undefined };
}

/** The `InvalidMessageError` a run ended with (the cause of the memory processor's `ProcessorError`). */
function idError(error: unknown, processorId: string): InvalidMessageError {
  expect(ProcessorError.isInstance(error)).toBe(true);
  expect(error).toMatchObject({ processorId });
  const cause = (error as ProcessorError).cause;
  expect(InvalidMessageError.isInstance(cause)).toBe(true);
  const invalid = cause as InvalidMessageError;
  expect(invalid.path.at(-1)).toBe('id');
  return invalid;
}

// ---- stores -------------------------------------------------------------------------------

let server: TestPostgres | undefined;
const schema = `rxagent_ids_${randomUUID().slice(0, 8)}`;
const directory = mkdtempSync(join(tmpdir(), 'rxagent-memory-ids-'));
const opened: MemoryStorage[] = [];
const shared = new InMemoryStorage();

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

/** Each store, opened as a new instance (a second process) on the same data where it can be. */
const stores: Array<[string, () => MemoryStorage]> = [
  ['InMemoryStorage', () => shared],
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
  if (storage !== shared) opened.push(storage);
  return storage;
}

describe.each(stores)('message ids on %s', (_name, make) => {
  it('a counter generateId restarted in a second process: the first turn stays; the second run ends with one InvalidMessageError naming the repeated id, before any model call', async () => {
    const thread = fresh('t');
    const memory = { thread, resource: 'u' };
    // one prefix for both processes (each test its own, so tests sharing a store never meet)
    const prefix = fresh('id');
    const first = open(make);
    await new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage: first }), generateId: counterIds(prefix) }).generate('first process', { memory });
    const before = await first.getMessages({ threadId: thread });
    expect(before.map(textOf)).toEqual(['first process', 'echo: first process']);

    const second = open(make);
    const model = echoModel();
    const outcome = await run(new Agent({ id: 'a', model, memory: new Memory({ storage: second }), generateId: counterIds(prefix) }), 'second process', memory);
    expect(outcome.terminal?.type).toBe('error');
    const error = idError(outcome.error, 'message-history');
    expect(error.message).toContain(JSON.stringify(before[0]?.id));
    expect(error.message).toMatch(/generateId/);
    expect(model.calls).toHaveLength(0);
    expect(await first.getMessages({ threadId: thread })).toEqual(before);
  });

  it.each([0, 1])('the repeated ids were not loaded (lastMessages %i): the save refuses them, nothing of the run is stored, nothing stored is lost', async (lastMessages) => {
    const thread = fresh('t');
    const memory = { thread, resource: 'u' };
    const prefix = fresh('id');
    const first = open(make);
    const firstAgent = new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage: first }), generateId: counterIds(prefix) });
    await firstAgent.generate('one', { memory });
    await firstAgent.generate('two', { memory });
    const before = await first.getMessages({ threadId: thread });
    expect(before.map(textOf)).toEqual(['one', 'echo: one', 'two', 'echo: two']);

    const second = open(make);
    const outcome = await run(new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage: second, lastMessages }), generateId: counterIds(prefix) }), 'three', memory);
    expect(outcome.terminal?.type).toBe('error');
    const error = idError(outcome.error, 'message-history-save');
    expect(error.message).toMatch(/already stored/);
    expect(await first.getMessages({ threadId: thread })).toEqual(before);
  });

  it('a generateId that repeats a loaded id for the reply (not the input): the save refuses it, the stored message stays', async () => {
    const storage = open(make);
    const thread = fresh('t');
    const memory = { thread, resource: 'u' };
    const taken = fresh('taken');
    await storage.saveMessages({ threadId: thread, resourceId: 'u', messages: [textMessage(taken, 'stored earlier')], ensureThread: true });
    const before = await storage.getMessages({ threadId: thread });
    let calls = 0;
    // the run id, the input's conversion and its fresh id come first; every id after them repeats the stored one
    const generateId = (): string => (calls++ < 3 ? fresh('ok') : taken);
    const outcome = await run(new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage }), generateId }), 'hello', memory);
    expect(outcome.terminal?.type).toBe('error');
    expect(outcome.error).toMatchObject({ processorId: 'message-history-save' });
    const cause = (outcome.error as ProcessorError).cause as InvalidMessageError;
    expect(InvalidMessageError.isInstance(cause)).toBe(true);
    expect(cause.message).toContain(JSON.stringify(taken));
    expect(await storage.getMessages({ threadId: thread })).toEqual(before);
  });

  it("saveOnTripwire: 'input' with a repeated id: refused the same way, nothing stored is lost", async () => {
    const prefix = fresh('id');
    const thread = fresh('t');
    const memory = { thread, resource: 'u' };
    const storage = open(make);
    await new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage, lastMessages: 0 }), generateId: counterIds(prefix) }).generate('kept', { memory });
    const before = await storage.getMessages({ threadId: thread });
    const blocker: Processor = { id: 'blocker', processOutputResult: ({ abort }) => abort('blocked') };
    const agent = new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage, lastMessages: 0, saveOnTripwire: 'input' }), outputProcessors: [blocker], generateId: counterIds(prefix) });
    const outcome = await run(agent, 'blocked turn', memory);
    expect(outcome.terminal?.type).toBe('error');
    expect(InvalidMessageError.isInstance(outcome.error)).toBe(true);
    expect(await storage.getMessages({ threadId: thread })).toEqual(before);
  });

  it('one process with a counter generateId: a multi-step tool run and three turns store every message once, in order', async () => {
    const storage = open(make);
    const thread = fresh('t');
    const memory = { thread, resource: 'u' };
    const model = mockModel({
      parts: ({ callIndex }) =>
        callIndex % 2 === 0 ? [...toolCallParts('lookup', { q: callIndex }, { toolCallId: `call-${callIndex}` }), finishPart('tool-calls')] : [...textParts(`answer ${callIndex}`), finishPart()],
    });
    const agent = new Agent({
      id: 'a',
      model,
      memory: new Memory({ storage }),
      generateId: counterIds(fresh('id')),
      tools: { lookup: { inputSchema: z.object({ q: z.number() }), execute: ({ q }: { q: number }) => ({ found: q }) } },
    });
    for (const turn of ['one', 'two', 'three']) expect((await run(agent, turn, memory)).terminal?.type).toBe('finish');
    const stored = await storage.getMessages({ threadId: thread });
    expect(new Set(stored.map((message) => message.id)).size).toBe(stored.length);
    expect(stored.filter((message) => message.role === 'user').map(textOf)).toEqual(['one', 'two', 'three']);
    expect(stored.map(textOf).filter((text) => text.startsWith('answer'))).toEqual(['answer 1', 'answer 3', 'answer 5']);
    const results = stored.flatMap((message) => message.content.parts.filter((part) => part.type === 'tool-invocation').map((part) => part.type === 'tool-invocation' && part.toolInvocation.state));
    expect(results).toEqual(['result', 'result', 'result']);
  });

  it('a remembered tool call that gets its result in a later run is updated in place (an update memory makes on purpose)', async () => {
    const storage = open(make);
    const thread = fresh('t');
    const pending: MastraDBMessage = {
      id: fresh('pending'),
      role: 'assistant',
      createdAt: new Date('2026-01-01T10:00:01.000Z'),
      content: { format: 2, parts: [{ type: 'tool-invocation', toolInvocation: { state: 'call', toolCallId: 'call-approve', toolName: 'approve', args: { amount: 5 } } }] },
    };
    await storage.saveMessages({ threadId: thread, resourceId: 'u', messages: [textMessage(fresh('ask'), 'approve 5?'), pending], ensureThread: true });
    const clientResult: Processor = {
      id: 'client-tool-result',
      processInput: ({ messageList }) => {
        messageList.updateToolInvocation({ type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: 'call-approve', toolName: 'approve', args: { amount: 5 }, result: { approved: true } } });
        return undefined;
      },
    };
    const agent = new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage }), inputProcessors: [clientResult], generateId: counterIds(fresh('p')) });
    expect((await run(agent, 'done?', { thread, resource: 'u' })).terminal?.type).toBe('finish');
    const stored = await storage.getMessages({ threadId: thread });
    expect(stored.map((message) => message.id).slice(0, 2)).toEqual([expect.any(String), pending.id]);
    expect(stored[1]?.content.parts[0]).toMatchObject({ type: 'tool-invocation', toolInvocation: { state: 'result', result: { approved: true } } });
    expect(stored.slice(2).map(textOf)).toEqual(['done?', 'echo: done?']);
  });

  it.each([
    ['1 MB', 'x'.repeat(1024 * 1024)],
    ['empty', ''],
    ['a NUL', 'id\u0000x'],
    ['a lone surrogate', 'id\ud800'],
  ])('a generateId returning an id no store can hold (%s): one typed error before any model call, its text bounded, nothing stored or lost', async (_label, bad) => {
    const storage = open(make);
    const thread = fresh('t');
    const memory = { thread, resource: 'u' };
    await new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage }) }).generate('kept', { memory });
    const before = await storage.getMessages({ threadId: thread });
    const model = echoModel();
    let calls = 0;
    // the run's own id comes first: a bad id for it is the run's concern; every message id after it is bad
    const generateId = (): string => (calls++ === 0 ? fresh('run') : bad);
    const outcome = await run(new Agent({ id: 'a', model, memory: new Memory({ storage }), generateId }), 'hello', memory);
    expect(outcome.terminal?.type).toBe('error');
    expect(model.calls).toHaveLength(0);
    expect(String(outcome.error).length).toBeLessThan(2_000);
    expect(JSON.stringify(outcome.chunks).length).toBeLessThan(10_000);
    expect(await storage.getMessages({ threadId: thread })).toEqual(before);
  });

  it('ids with control characters, line breaks, bidi controls and emoji round-trip exactly and never merge', async () => {
    const storage = open(make);
    const base = fresh('t');
    const odd = ['\n', '\r\n', '\u001b[31m', '\u007f', '\u0085', '\u2028', '\u202e', '\u200b', '\ufeff', '😀', ' ', '\t'];
    for (const [index, piece] of odd.entries()) {
      const thread = `${base}${piece}${index}`;
      const id = `${base}-m${piece}${index}`;
      await storage.saveMessages({ threadId: thread, resourceId: `u${piece}`, messages: [textMessage(id, `text ${index}`)], ensureThread: true });
      const [stored] = await storage.getMessages({ threadId: thread, resourceId: `u${piece}` });
      expect(stored?.id).toBe(id);
      expect(stored?.threadId).toBe(thread);
      expect(textOf(stored)).toBe(`text ${index}`);
      expect((await storage.getThread(thread))?.resourceId).toBe(`u${piece}`);
    }
    // through an Agent: a generateId with control characters stores and loads its ids as they are
    const thread = `${base}\u202e\n`;
    const agent = new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage }), generateId: counterIds(`${fresh('p')}\u001b\r\n\u2028`) });
    await agent.generate('one', { memory: { thread, resource: 'u' } });
    await agent.generate('two', { memory: { thread, resource: 'u' } });
    const stored = await storage.getMessages({ threadId: thread });
    expect(stored.map(textOf)).toEqual(['one', 'echo: one', 'two', 'echo: two']);
    expect(stored.every((message) => message.id.includes('\u001b\r\n\u2028'))).toBe(true);
  });
});

describe.each(stores.filter(([name]) => name !== 'InMemoryStorage').concat([['InMemoryStorage (own)', () => new InMemoryStorage()]]))(
  'saveMessages refusing to overwrite on %s (replaceable)',
  (_name, make) => {
    it('a stored id saved again with other content is an InvalidMessageError naming it; the whole batch is rolled back', async () => {
      const storage = open(make);
      const thread = fresh('t');
      const kept = textMessage(fresh('kept'), 'original');
      await storage.saveMessages({ threadId: thread, resourceId: 'u', messages: [kept], ensureThread: true });
      const batch = [textMessage(fresh('new1'), 'new 1'), textMessage(fresh('new2'), 'new 2'), textMessage(kept.id, 'overwritten?', { createdAt: new Date('2026-02-01T00:00:00.000Z') })];
      const error = await rejection(storage.saveMessages({ threadId: thread, resourceId: 'u', messages: batch, replaceable: [] }));
      expect(InvalidMessageError.isInstance(error)).toBe(true);
      expect((error as InvalidMessageError).path).toEqual([2, 'id']);
      expect((error as InvalidMessageError).message).toContain(JSON.stringify(kept.id));
      expect((error as InvalidMessageError).message).toContain(JSON.stringify(thread));
      expect((await storage.getMessages({ threadId: thread })).map((message) => [message.id, textOf(message)])).toEqual([[kept.id, 'original']]);
    });

    it('the same content again (a save run again after a lost COMMIT) is left as it is: once, in its place', async () => {
      const storage = open(make);
      const thread = fresh('t');
      const messages = [textMessage(fresh('u'), 'question'), textMessage(fresh('a'), 'answer', { role: 'assistant' })];
      await storage.saveMessages({ threadId: thread, resourceId: 'u', messages, ensureThread: true, replaceable: [] });
      await storage.saveMessages({ threadId: thread, resourceId: 'u', messages: [textMessage(fresh('later'), 'later')], replaceable: [] });
      await storage.saveMessages({ threadId: thread, resourceId: 'u', messages, ensureThread: true, replaceable: [] });
      expect((await storage.getMessages({ threadId: thread })).map(textOf)).toEqual(['question', 'answer', 'later']);
    });

    it('an id listed in replaceable is updated in place; one not listed is refused in the same batch', async () => {
      const storage = open(make);
      const thread = fresh('t');
      const [one, two] = [textMessage(fresh('one'), 'one'), textMessage(fresh('two'), 'two')];
      await storage.saveMessages({ threadId: thread, resourceId: 'u', messages: [one, two], ensureThread: true });
      await storage.saveMessages({ threadId: thread, resourceId: 'u', messages: [textMessage(one.id, 'one, updated')], replaceable: [one.id] });
      expect((await storage.getMessages({ threadId: thread })).map(textOf)).toEqual(['one, updated', 'two']);
      const refused = await rejection(
        storage.saveMessages({ threadId: thread, resourceId: 'u', messages: [textMessage(one.id, 'one, again'), textMessage(two.id, 'two, overwritten?')], replaceable: [one.id] }),
      );
      expect((refused as InvalidMessageError).path).toEqual([1, 'id']);
      expect((await storage.getMessages({ threadId: thread })).map(textOf)).toEqual(['one, updated', 'two']);
    });

    it('an id twice in one batch is refused before anything is written', async () => {
      const storage = open(make);
      const thread = fresh('t');
      const id = fresh('twice');
      const error = await rejection(
        storage.saveMessages({ threadId: thread, resourceId: 'u', messages: [textMessage(id, 'v1'), textMessage(id, 'v2')], ensureThread: true, replaceable: [] }),
      );
      expect((error as InvalidMessageError).path).toEqual([1, 'id']);
      expect(await storage.getThread(thread)).toBeNull();
    });

    it('another thread’s id stays the other-thread refusal; a replaceable list naming it changes nothing', async () => {
      const storage = open(make);
      const [mine, theirs] = [fresh('t'), fresh('t')];
      const id = fresh('taken');
      await storage.saveMessages({ threadId: theirs, resourceId: 'u', messages: [textMessage(id, 'theirs')], ensureThread: true });
      const error = await rejection(storage.saveMessages({ threadId: mine, resourceId: 'u', messages: [textMessage(id, 'mine')], ensureThread: true, replaceable: [id] }));
      expect((error as InvalidMessageError).message).toMatch(/another thread/);
      expect((await storage.getMessages({ threadId: theirs })).map(textOf)).toEqual(['theirs']);
      expect(await storage.getThread(mine)).toBeNull();
    });

    it('a replaceable list that is not an array of strings is a TypeError before anything is written', async () => {
      const storage = open(make);
      const thread = fresh('t');
      for (const bad of ['x', [1], null, new Set(['x'])]) {
        const error = await rejection(storage.saveMessages({ threadId: thread, resourceId: 'u', messages: [textMessage(fresh('m'), 'm')], ensureThread: true, replaceable: bad as never }));
        expect(error).toBeInstanceOf(TypeError);
      }
      expect(await storage.getThread(thread)).toBeNull();
    });
  },
);

// ---- a run's own messages: what a durable run's fenced save may replace -------------------------

describe.each(stores.filter(([name]) => name !== 'InMemoryStorage').concat([['InMemoryStorage (own)', () => new InMemoryStorage()]]))(
  'saveMessages naming its run on %s (runId: a durable run’s save)',
  (_name, make) => {
    it('the run’s own messages are replaced in place; another run’s or nobody’s under one of its ids is an InvalidMessageError naming it, nothing of the batch stored', async () => {
      const storage = open(make);
      const thread = fresh('t');
      const [runA, runB] = [fresh('run-a'), fresh('run-b')];
      const [a1, a2] = [textMessage(fresh('a1'), 'a1'), textMessage(fresh('a2'), 'a2', { role: 'assistant' })];
      const theirs = textMessage(fresh('b'), 'theirs');
      const nobodys = textMessage(fresh('n'), 'nobody’s');
      await storage.saveMessages({ threadId: thread, resourceId: 'u', messages: [a1, a2], ensureThread: true, runId: runA });
      await storage.saveMessages({ threadId: thread, resourceId: 'u', messages: [theirs], runId: runB });
      await storage.saveMessages({ threadId: thread, resourceId: 'u', messages: [nobodys] });
      // the run saves again (its takeover, a processor giving other content): replaced, in place
      await storage.saveMessages({ threadId: thread, resourceId: 'u', messages: [textMessage(a1.id, 'a1, again')], runId: runA });
      const before = await storage.getMessages({ threadId: thread });
      expect(before.map(textOf)).toEqual(['a1, again', 'a2', 'theirs', 'nobody’s']);
      // each batch: a new message, the run's own (replaceable), then the taken id last
      const own = textMessage(a2.id, 'a2, again', { role: 'assistant' });
      for (const taken of [theirs, nobodys]) {
        const batch = [textMessage(fresh('new'), 'new'), own, textMessage(taken.id, 'overwritten?')];
        const index = batch.length - 1;
        const error = await rejection(storage.saveMessages({ threadId: thread, resourceId: 'u', messages: batch, runId: runA }));
        expect(InvalidMessageError.isInstance(error)).toBe(true);
        expect((error as InvalidMessageError).path).toEqual([index, 'id']);
        expect((error as InvalidMessageError).message).toContain(JSON.stringify(taken.id));
        expect((error as InvalidMessageError).message).toContain(JSON.stringify(runA));
        expect(await storage.getMessages({ threadId: thread })).toEqual(before);
      }
      // saved again unchanged by another run: left as it is, still its own run's
      await storage.saveMessages({ threadId: thread, resourceId: 'u', messages: [theirs], runId: runA });
      await storage.saveMessages({ threadId: thread, resourceId: 'u', messages: [textMessage(theirs.id, 'theirs, again')], runId: runB });
      // a plain upsert (your own code) replaces a run's message, which stays the run's
      await storage.saveMessages({ threadId: thread, resourceId: 'u', messages: [textMessage(a2.id, 'a2, edited', { role: 'assistant' })] });
      await storage.saveMessages({ threadId: thread, resourceId: 'u', messages: [textMessage(a2.id, 'a2, again', { role: 'assistant' })], runId: runA });
      expect((await storage.getMessages({ threadId: thread })).map(textOf)).toEqual(['a1, again', 'a2, again', 'theirs, again', 'nobody’s']);
    });

    it('replaceable still lets the run update a remembered message another run stored (a tool call that got its result)', async () => {
      const storage = open(make);
      const thread = fresh('t');
      const call = textMessage(fresh('call'), 'pending', { role: 'assistant' });
      await storage.saveMessages({ threadId: thread, resourceId: 'u', messages: [call], ensureThread: true, runId: fresh('earlier') });
      await storage.saveMessages({ threadId: thread, resourceId: 'u', messages: [textMessage(call.id, 'done', { role: 'assistant' }), textMessage(fresh('m'), 'next')], runId: fresh('later'), replaceable: [call.id] });
      expect((await storage.getMessages({ threadId: thread })).map(textOf)).toEqual(['done', 'next']);
    });

    it('a runId no store can hold, or one that is not the fence’s run, is a TypeError before anything is written', async () => {
      const storage = open(make);
      const thread = fresh('t');
      for (const runId of ['', 'r\u0000', 'r\ud800', 'x'.repeat(300), 7]) {
        const error = await rejection(storage.saveMessages({ threadId: thread, resourceId: 'u', messages: [textMessage(fresh('m'), 'm')], ensureThread: true, runId: runId as never }));
        expect(error).toBeInstanceOf(TypeError);
        expect((error as TypeError).message).toMatch(/runId/);
      }
      const error = await rejection(storage.saveMessages({ threadId: thread, resourceId: 'u', messages: [textMessage(fresh('m'), 'm')], ensureThread: true, runId: 'r1', fence: { runId: 'r2', epoch: 1 } }));
      expect(error).toBeInstanceOf(TypeError);
      expect(await storage.getThread(thread)).toBeNull();
    });
  },
);

describe('messages stored before the stores kept runs: migrated, they are nobody’s run', () => {
  const oldText = 'stored by an older build';

  it('a libSQL file of schema version 1 gets the run column; a save naming a run cannot replace its messages', async () => {
    const url = `file:${join(directory, `old-${randomUUID().slice(0, 8)}.db`)}`;
    const old = createClient({ url });
    for (const statement of libsqlMigrations.find((migration) => migration.version === 1)?.statements ?? []) await old.execute(statement);
    await old.execute('CREATE TABLE rxagent_schema_version (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
    await old.execute({ sql: 'INSERT INTO rxagent_schema_version (version, applied_at) VALUES (1, ?)', args: [Date.now()] });
    const id = fresh('old');
    await old.execute({ sql: 'INSERT INTO rxagent_threads (id, resource_id, title, metadata, created_at, updated_at) VALUES (?, ?, NULL, NULL, 0, 0)', args: ['t-old', 'u'] });
    await old.execute({
      sql: 'INSERT INTO rxagent_messages (id, thread_id, resource_id, role, type, content, created_at) VALUES (?, ?, ?, ?, NULL, ?, ?)',
      args: [id, 't-old', 'u', 'user', JSON.stringify({ format: 2, parts: [{ type: 'text', text: oldText }] }), 0],
    });
    old.close();
    // a store that only reads takes the file as it is (the run column is only for saves)
    const reader = open(() => new LibSQLStorage({ url, readOnly: true }));
    expect((await reader.getMessages({ threadId: 't-old' })).map(textOf)).toEqual([oldText]);
    await reader.close();
    const storage = open(() => new LibSQLStorage({ url }));
    const before = await storage.getMessages({ threadId: 't-old' });
    const error = await rejection(storage.saveMessages({ threadId: 't-old', resourceId: 'u', messages: [textMessage(id, 'overwritten?')], runId: fresh('run') }));
    expect(InvalidMessageError.isInstance(error)).toBe(true);
    expect((error as InvalidMessageError).message).toContain(JSON.stringify(id));
    expect(await storage.getMessages({ threadId: 't-old' })).toEqual(before);
    expect(before.map(textOf)).toEqual([oldText]);
    const check = createClient({ url });
    expect((await check.execute('SELECT version FROM rxagent_schema_version ORDER BY version')).rows.map((row) => row['version'])).toEqual([1, 2]);
    check.close();
  });

  it('a PostgreSQL schema of version 4 gets the run column; a save naming a run cannot replace its messages', async () => {
    if (server === undefined) throw new Error('PostgreSQL did not start');
    const oldSchema = `${schema}_v4`;
    const admin = new pg.Pool({ connectionString: server.connectionString });
    try {
      await admin.query(`CREATE SCHEMA "${oldSchema}"`);
      await admin.query(`CREATE TABLE "${oldSchema}".schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
      for (const migration of postgresMigrations.filter((step) => step.version <= 4)) {
        for (const statement of migration.statements(`"${oldSchema}"`)) await admin.query(statement);
        await admin.query(`INSERT INTO "${oldSchema}".schema_version (version) VALUES ($1)`, [migration.version]);
      }
      const id = fresh('old');
      await admin.query(`INSERT INTO "${oldSchema}".threads (id, resource_id, created_at, updated_at) VALUES ('t-old', 'u', now(), now())`);
      await admin.query(`INSERT INTO "${oldSchema}".messages (id, thread_id, resource_id, role, content, created_at) VALUES ($1, 't-old', 'u', 'user', $2::json, now())`, [
        id,
        JSON.stringify({ format: 2, parts: [{ type: 'text', text: oldText }] }),
      ]);
      const storage = open(() => new PostgresStorage({ connectionString: server!.connectionString, schema: oldSchema }));
      const before = await storage.getMessages({ threadId: 't-old' });
      const error = await rejection(storage.saveMessages({ threadId: 't-old', resourceId: 'u', messages: [textMessage(id, 'overwritten?')], runId: fresh('run') }));
      expect(InvalidMessageError.isInstance(error)).toBe(true);
      expect((error as InvalidMessageError).message).toContain(JSON.stringify(id));
      expect(await storage.getMessages({ threadId: 't-old' })).toEqual(before);
      expect(before.map(textOf)).toEqual([oldText]);
      const versions = await admin.query<{ version: number }>(`SELECT version FROM "${oldSchema}".schema_version ORDER BY version`);
      // migrated to the latest version (run_id came with 5)
      expect(versions.rows.map((row) => row.version)).toEqual(postgresMigrations.map((step) => step.version));
      expect(versions.rows.map((row) => row.version)).toContain(5);
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS "${oldSchema}" CASCADE`);
      await admin.end();
    }
  }, 60_000);
});

// ---- durable runs through a real worker -------------------------------------------------------

describe('a durable run’s reply under an id another run stored (a generateId repeating it, not loaded)', () => {
  const bosses: PgBoss[] = [];
  afterAll(async () => {
    await Promise.all(bosses.map((boss) => boss.stop({ graceful: false }).catch(() => undefined)));
  }, 60_000);

  /** A started pg-boss of its own (each case its own queues), on the test server. */
  async function startBoss(name: string): Promise<PgBoss> {
    if (server === undefined) throw new Error('PostgreSQL did not start');
    const boss = new PgBoss({ connectionString: server.connectionString, schema: `pgboss_ids_${name}_${randomUUID().slice(0, 6)}`, superviseIntervalSeconds: 1, monitorIntervalSeconds: 1 });
    boss.on('error', () => undefined);
    await boss.start();
    bosses.push(boss);
    return boss;
  }

  const journals: Array<[string, () => { journal: RunJournal; storage: MemoryStorage; close: () => Promise<void> }]> = [
    [
      'in memory',
      () => {
        const runJournal = new InMemoryRunJournal();
        return { journal: runJournal, storage: new InMemoryStorage({ runJournal }), close: async () => undefined };
      },
    ],
    [
      'PostgreSQL',
      () => {
        if (server === undefined) throw new Error('PostgreSQL did not start');
        const journal = new PostgresRunJournal({ connectionString: server.connectionString, schema });
        const storage = new PostgresStorage({ connectionString: server.connectionString, schema });
        return { journal, storage, close: async () => { await journal.close(); await storage.close(); } };
      },
    ],
  ];

  it.each(journals)('on the %s journal: the run ends with an error naming the id, the thread as it was, nothing of the run stored', async (name, setUp) => {
    const { journal, storage, close } = setUp();
    const boss = await startBoss(name.replace(/\W/g, ''));
    const thread = fresh('t');
    const memory = { thread, resource: 'u' };
    await new Agent({ id: 'plain', model: echoModel(), memory: new Memory({ storage }) }).generate('stored by another run', { memory });
    const before = await storage.getMessages({ threadId: thread });
    const taken = before[1]?.id ?? '';
    // the first id asked for once the input is in (the reply's) repeats the other run's reply id
    let armed = false;
    const generateId = (): string => {
      if (!armed) return fresh('ok');
      armed = false;
      return taken;
    };
    const arm: Processor = { id: 'arm', processInput: () => { armed = true; return undefined; } };
    const agent = new Agent({ id: `durable-${name.replace(/\W/g, '-')}`, model: echoModel(), memory: new Memory({ storage, lastMessages: 0 }), inputProcessors: [arm], generateId });
    const worker = createRunWorker({ journal, boss, agents: [agent], concurrency: 1, queue: { pollingIntervalSeconds: 0.5 } });
    try {
      await worker.start();
      const runId = fresh('run');
      const completed = firstValueFrom(worker.events$.pipe(filter((event): event is Extract<RunWorkerEvent, { type: 'completed' }> => event.type === 'completed' && event.runId === runId)));
      await worker.submit(agent.id, 'durable turn', { runId, memory });
      expect((await completed).status).toBe('failed');
      const entries = await lastValueFrom(journal.read$(runId, { live: false }).pipe(toArray()));
      const terminal = entries.map((entry) => JSON.parse(entry.json) as { type: string; payload?: { error?: unknown } }).filter((chunk) => terminalTypes.includes(chunk.type));
      expect(terminal.map((chunk) => chunk.type)).toEqual(['error']);
      expect(JSON.stringify(terminal[0]?.payload)).toContain(JSON.stringify(taken).slice(1, -1));
      expect(await storage.getMessages({ threadId: thread })).toEqual(before);
    } finally {
      await worker.close().catch(() => undefined);
      await close();
    }
  }, 120_000);

  it('LibSQLStorage: a durable worker refuses its memory at start (NotDurableError), so no durable run saves there', async () => {
    const boss = await startBoss('libsql');
    const storage = open(() => new LibSQLStorage({ url: `file:${join(directory, 'memory.db')}` }));
    const agent = new Agent({ id: 'durable-libsql', model: echoModel(), memory: new Memory({ storage }) });
    const worker = createRunWorker({ journal: new InMemoryRunJournal(), boss, agents: [agent], concurrency: 0 });
    const error = await worker.start().catch((caught: unknown) => caught);
    expect(NotDurableError.isInstance(error)).toBe(true);
    await worker.close().catch(() => undefined);
  }, 60_000);
});
