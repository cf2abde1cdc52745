/** One Agent-level memory suite, run against every store (in-memory, libSQL file, PostgreSQL). */
import { expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { Agent } from '../../src/loop/agent.js';
import { Memory } from '../../src/memory/memory.js';
import type { MastraDBMessage } from '../../src/message-list/types.js';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import type { Processor } from '../../src/contract/processor-types.js';
import type { MemoryStorage } from '../../src/storage/types.js';
import { InvalidIdError } from '../../src/storage/errors/invalid-id-error.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { mockModel } from '../../src/testing/mock-model.js';

const textOf = (message: MastraDBMessage) => message.content.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
const echoModel = () =>
  mockModel({
    parts: ({ options }) => {
      const last = options.prompt.at(-1);
      const said = last?.role === 'user' ? last.content.map((part) => (part.type === 'text' ? part.text : '')).join('') : '';
      return [...textParts(`echo: ${said}`), finishPart()];
    },
  });
let sequence = 0;
const newThread = () => `thread-${process.pid}-${Date.now()}-${++sequence}`;

/** A redactor that rewrites e-mail addresses in the streamed text. */
const redactor: Processor = {
  id: 'redactor',
  processOutputStream: ({ part }) =>
    part.type === 'text-delta' ? { ...part, payload: { ...part.payload, text: part.payload.text.replace(/\S+@\S+/g, '[email]') } } : part,
};

export function describeMemory(makeStorage: () => MemoryStorage | Promise<MemoryStorage>): void {
  it("multi-turn: turn 2's prompt holds turn 1's exchange; the redaction is what is stored", async () => {
    const storage = await makeStorage();
    const model = echoModel();
    const agent = new Agent({ id: 'a', model, memory: new Memory({ storage }), outputProcessors: [redactor] });
    const thread = newThread();
    await agent.generate('my mail is ada@example.com', { memory: { thread, resource: 'user-1' } });
    await agent.generate('second question', { memory: { thread, resource: 'user-1' } });
    const secondPrompt = JSON.stringify(model.calls[1]?.prompt);
    expect(secondPrompt).toContain('my mail is ada@example.com');
    expect(secondPrompt).toContain('echo: my mail is [email]');
    const stored = await storage.getMessages({ threadId: thread });
    expect(stored.map((message) => [message.role, textOf(message)])).toEqual([
      ['user', 'my mail is ada@example.com'],
      ['assistant', 'echo: my mail is [email]'],
      ['user', 'second question'],
      ['assistant', 'echo: second question'],
    ]);
  });

  it('data chunks are stored as assistant parts unless transient; removeByIds keeps a message out', async () => {
    const storage = await makeStorage();
    const annotate: Processor = {
      id: 'annotate',
      processOutputResult: async ({ writer, messageList }) => {
        await writer.custom({ type: 'data-kept', data: { n: 1 } });
        await writer.custom({ type: 'data-ephemeral', data: { n: 2 }, transient: true });
        const input = messageList.get.input.db()[0];
        if (input && textOf(input).includes('forget')) messageList.removeByIds([input.id]);
      },
    };
    const agent = new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage }), outputProcessors: [annotate] });
    const thread = newThread();
    const chunks = await lastValueFrom(agent.stream$('please forget this', { memory: { thread, resource: 'u' } }).pipe(toArray()));
    expect(chunks.some((chunk) => chunk.type === 'data-ephemeral')).toBe(true);
    const stored = await storage.getMessages({ threadId: thread });
    expect(stored.map((message) => message.role)).toEqual(['assistant']);
    const types = stored.flatMap((message) => message.content.parts.map((part) => part.type));
    expect(types).toContain('data-kept');
    expect(types).not.toContain('data-ephemeral');
  });

  it("a processor's prompt rewrite in processLLMRequest never reaches storage", async () => {
    const storage = await makeStorage();
    const rewrite: Processor = {
      id: 'rewrite',
      processLLMRequest: ({ prompt }) => ({
        prompt: prompt.map((message) => (message.role === 'user' ? { ...message, content: [{ type: 'text' as const, text: 'REWRITTEN' }] } : message)),
      }),
    };
    const model = echoModel();
    const agent = new Agent({ id: 'a', model, memory: new Memory({ storage }), inputProcessors: [rewrite] });
    const thread = newThread();
    await agent.generate('original words', { memory: { thread, resource: 'u' } });
    expect(JSON.stringify(model.calls[0]?.prompt)).toContain('REWRITTEN');
    const stored = await storage.getMessages({ threadId: thread });
    expect(textOf(stored[0] as MastraDBMessage)).toBe('original words');
  });

  it('nothing of a rejected retry attempt and nothing of a reply blocked in processOutputResult is stored', async () => {
    const storage = await makeStorage();
    const answers = ['bad answer', 'good answer'];
    const model = mockModel({ parts: ({ callIndex }) => [...textParts(answers[callIndex] ?? 'blocked answer'), finishPart()] });
    const quality: Processor = { id: 'q', processOutputStep: ({ text, abort }) => (text === 'bad answer' ? abort('retry please', { retry: true }) : undefined) };
    const agent = new Agent({ id: 'a', model, memory: new Memory({ storage }), outputProcessors: [quality], maxProcessorRetries: 1 });
    const thread = newThread();
    await agent.generate('first', { memory: { thread, resource: 'u' } });
    const stored = await storage.getMessages({ threadId: thread });
    expect(stored.map(textOf)).toEqual(['first', 'good answer']);

    const block: Processor = { id: 'final', processOutputResult: ({ abort }) => abort('not this one') };
    const blocked = new Agent({ id: 'b', model, memory: new Memory({ storage }), outputProcessors: [block] });
    const result = await blocked.generate('second', { memory: { thread, resource: 'u' } });
    expect(result.tripwire?.processorId).toBe('final');
    expect((await storage.getMessages({ threadId: thread })).map(textOf)).toEqual(['first', 'good answer']);
  });

  it("a tripwired run saves its input only with saveOnTripwire: 'input'", async () => {
    const storage = await makeStorage();
    const guard: Processor = { id: 'guard', processOutputStream: ({ part, abort }) => (part.type === 'text-delta' ? abort('no') : part) };
    const thread = newThread();
    await new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage }), outputProcessors: [guard] }).generate('lost', { memory: { thread, resource: 'u' } });
    expect(await storage.getMessages({ threadId: thread })).toEqual([]);
    await new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage, saveOnTripwire: 'input' }), outputProcessors: [guard] }).generate('kept', {
      memory: { thread, resource: 'u' },
    });
    expect((await storage.getMessages({ threadId: thread })).map((message) => [message.role, textOf(message)])).toEqual([['user', 'kept']]);
  });

  it('per-call processor overrides keep the memory processors; thread and resource reach requestContext', async () => {
    const storage = await makeStorage();
    const seen: Array<[string | undefined, string | undefined]> = [];
    const spy: Processor = { id: 'spy', processInput: ({ requestContext }) => void seen.push([requestContext.threadId, requestContext.resourceId]) };
    const agent = new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage }), inputProcessors: [redactor as Processor] });
    const thread = newThread();
    await agent.generate('one', { memory: { thread, resource: 'u' }, inputProcessors: [spy], outputProcessors: [] });
    expect(seen).toEqual([[thread, 'u']]);
    expect(await storage.getMessages({ threadId: thread })).toHaveLength(2);
  });

  it('an unknown thread with readOnly is a typed error and nothing is created', async () => {
    const storage = await makeStorage();
    const thread = newThread();
    const agent = new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage }) });
    const error = await agent.generate('x', { memory: { thread, resource: 'u', readOnly: true } }).catch((thrown: unknown) => thrown);
    expect(ProcessorError.isInstance(error)).toBe(true);
    expect((error as ProcessorError).cause).toMatchObject({ name: 'ThreadNotFoundError', threadId: thread });
    expect(await storage.getThread(thread)).toBeNull();
  });

  it('50 parallel runs on one thread and on 50 threads: exact counts, no message lost or duplicated', async () => {
    const storage = await makeStorage();
    const agent = new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage, lastMessages: 0 }) });
    const shared = newThread();
    await Promise.all(Array.from({ length: 50 }, (_, index) => agent.generate(`shared ${index}`, { memory: { thread: shared, resource: 'u' } })));
    const onShared = await storage.getMessages({ threadId: shared });
    expect(onShared).toHaveLength(100);
    expect(new Set(onShared.map((message) => message.id)).size).toBe(100);
    for (let index = 0; index < onShared.length; index += 2) {
      const question = textOf(onShared[index] as MastraDBMessage);
      expect(textOf(onShared[index + 1] as MastraDBMessage)).toBe(`echo: ${question}`);
    }
    const threads = Array.from({ length: 50 }, () => newThread());
    await Promise.all(threads.map((thread, index) => agent.generate(`own ${index}`, { memory: { thread, resource: 'u' } })));
    const counts = await Promise.all(threads.map(async (thread) => (await storage.getMessages({ threadId: thread })).length));
    expect(counts).toEqual(threads.map(() => 2));
  });

  it('a save that fails ends the run with an error chunk and loses nothing stored earlier', async () => {
    const storage = await makeStorage();
    const agent = new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage }) });
    const thread = newThread();
    await agent.generate('turn one', { memory: { thread, resource: 'u' } });
    const failing = delegate(storage, { saveMessages: () => Promise.reject(new Error('disk full')) });
    const broken = new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage: failing }) });
    const chunks = await lastValueFrom(broken.stream$('turn two', { memory: { thread, resource: 'u' } }).pipe(toArray()));
    const last = chunks.at(-1);
    expect(last?.type).toBe('error');
    // It is the save that failed (the history load before it worked).
    const error = last?.type === 'error' ? last.payload.error : undefined;
    expect(error).toMatchObject({ name: 'ProcessorError', processorId: 'message-history-save' });
    expect(chunks.filter((chunk) => ['finish', 'error', 'tripwire', 'abort'].includes(chunk.type))).toHaveLength(1);
    expect((await storage.getMessages({ threadId: thread })).map(textOf)).toEqual(['turn one', 'echo: turn one']);
  });

  it('an abort during the save: either finish and the exchange stored, or abort and nothing stored — never both', async () => {
    const storage = await makeStorage();
    const thread = newThread();
    await new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage }) }).generate('turn one', { memory: { thread, resource: 'u' } });
    let saveStarted!: () => void;
    const started = new Promise<void>((resolve) => (saveStarted = resolve));
    let saveSettled: Promise<unknown> = Promise.resolve();
    // The save is slow to start: the abort arrives while it is under way.
    const slow = delegate(storage, {
      saveMessages: (options) => {
        saveStarted();
        saveSettled = (async () => {
          await new Promise((resolve) => setTimeout(resolve, 50));
          return storage.saveMessages(options);
        })();
        return saveSettled as Promise<void>;
      },
    });
    const agent = new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage: slow }) });
    const controller = new AbortController();
    void started.then(() => controller.abort(new Error('user left')));
    const chunks = await lastValueFrom(agent.stream$('turn two', { memory: { thread, resource: 'u' }, abortSignal: controller.signal }).pipe(toArray()));
    await saveSettled.catch(() => undefined);
    const terminal = chunks.filter((chunk) => ['finish', 'error', 'tripwire', 'abort'].includes(chunk.type));
    expect(terminal).toHaveLength(1);
    const stored = (await storage.getMessages({ threadId: thread })).map(textOf);
    if (terminal[0]?.type === 'finish') expect(stored).toEqual(['turn one', 'echo: turn one', 'turn two', 'echo: turn two']);
    else {
      expect(terminal[0]?.type).toBe('abort');
      expect(stored).toEqual(['turn one', 'echo: turn one']);
    }
  });

  it('a thread or resource id no store accepts ends the run with one error chunk naming it; nothing stored', async () => {
    const storage = await makeStorage();
    const agent = new Agent({ id: 'a', model: echoModel(), memory: new Memory({ storage }) });
    const resource = `resource-${newThread()}`;
    const goodThread = newThread();
    for (const memory of [{ thread: 'bad\ud800', resource }, { thread: goodThread, resource: 'bad\u0000' }]) {
      const chunks = await lastValueFrom(agent.stream$('hello', { memory }).pipe(toArray()));
      const last = chunks.at(-1);
      expect(chunks.filter((chunk) => ['finish', 'error', 'tripwire', 'abort'].includes(chunk.type))).toHaveLength(1);
      const error = last?.type === 'error' ? last.payload.error : undefined;
      expect(ProcessorError.isInstance(error)).toBe(true);
      expect(InvalidIdError.isInstance((error as ProcessorError).cause)).toBe(true);
    }
    expect(await storage.listThreads({ resourceId: resource })).toEqual([]);
    expect(await storage.getThread(goodThread)).toBeNull();
  });
}

/** A store that forwards to `inner` except for `overrides` (private fields stay on `inner`). */
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
