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
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import type { AgentMemoryCall } from '../../src/contract/memory-types.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { Agent } from '../../src/loop/agent.js';
import { Memory } from '../../src/memory/memory.js';
import { InvalidMessageError } from '../../src/message-list/errors/invalid-message-error.js';
import type { MastraDBMessage } from '../../src/message-list/types.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import { LibSQLStorage } from '../../src/storage/libsql/libsql-storage.js';
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
