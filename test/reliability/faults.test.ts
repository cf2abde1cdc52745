/**
 * Fault injection: every fault class of the provider, tools, processors, `onViolation` and
 * storage, each with the outcome the contract promises — and, since every run here uses memory
 * on a thread that already holds an exchange, proof that nothing stored earlier is lost.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NEVER, Observable, concat, from, lastValueFrom, take, throwError, toArray } from 'rxjs';
import { APICallError, type LanguageModelV4, type LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { Agent } from '../../src/loop/agent.js';
import { AgentRunError } from '../../src/loop/run/agent-run-error.js';
import { waitFor } from '../support/wait-for.js';
import type { AgentConfig } from '../../src/loop/agent-types.js';
import { OBSERVABLE_STREAM } from '../../src/model/observable-stream.js';
import { MessageList } from '../../src/message-list/message-list.js';
import type { MastraDBMessage } from '../../src/message-list/types.js';
import { Memory } from '../../src/memory/memory.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import { mockModel, type MockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { checkBracketing, checkLifecycle } from './support/invariants.js';

const THREAD = { thread: 'thread-1', resource: 'user-1' };
const types = (chunks: readonly ChunkType[]) => chunks.map((chunk) => chunk.type);
const textOf = (chunks: readonly ChunkType[]) => chunks.map((chunk) => (chunk.type === 'text-delta' ? chunk.payload.text : '')).join('');
const terminal = (chunks: readonly ChunkType[]) => chunks[chunks.length - 1] as ChunkType;
const errorOf = (chunks: readonly ChunkType[]): unknown => {
  const last = terminal(chunks);
  return last.type === 'error' ? last.payload.error : undefined;
};

/** A thread that already holds one exchange; `expectKept` checks it is still there, unchanged. */
interface Seeded {
  storage: InMemoryStorage;
  memory: Memory;
  before: MastraDBMessage[];
  /** The thread's messages now. */
  stored(): Promise<MastraDBMessage[]>;
  /** Nothing stored earlier is lost or changed; `added` new messages at most follow it. */
  expectKept(added?: number): Promise<MastraDBMessage[]>;
}

async function seeded(): Promise<Seeded> {
  const storage = new InMemoryStorage();
  const memory = new Memory({ storage });
  const first = new Agent({ id: 'seed', model: mockModel({ parts: [...textParts('I remember you.'), finishPart()] }), memory });
  await first.generate('My name is Ada.', { memory: THREAD });
  const before = await storage.getMessages({ threadId: THREAD.thread });
  expect(before.map((message) => message.role)).toEqual(['user', 'assistant']);
  const stored = () => storage.getMessages({ threadId: THREAD.thread });
  return {
    storage,
    memory,
    before,
    stored,
    async expectKept(added = 0) {
      const now = await stored();
      expect(now.slice(0, before.length)).toEqual(before);
      expect(now).toHaveLength(before.length + added);
      return now;
    },
  };
}

function agentOn(seed: Seeded, config: Omit<AgentConfig, 'id' | 'memory'>): Agent {
  return new Agent({ id: 'faulty', memory: seed.memory, ...config });
}

const collect = (agent: Agent, options: Parameters<Agent['stream$']>[1] = {}) =>
  lastValueFrom(agent.stream$('What is my name?', { memory: THREAD, ...options }).pipe(toArray()));

/** The model without its Observable fast path: `doStream` and a ReadableStream. */
function viaDoStream(model: MockModel): LanguageModelV4 {
  const { [OBSERVABLE_STREAM]: _fast, ...rest } = model;
  return rest as LanguageModelV4;
}

function wellFormed(chunks: readonly ChunkType[]): void {
  expect(checkLifecycle(chunks, true)).toEqual([]);
  expect(checkBracketing(chunks, true)).toEqual([]);
}

const apiError = () =>
  new APICallError({ message: 'Too many requests', url: 'https://api.example.com/v1', requestBodyValues: {}, statusCode: 429, isRetryable: true });

let unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeEach(() => {
  unhandled = [];
  process.on('unhandledRejection', onUnhandled);
});
afterEach(async () => {
  await new Promise((resolve) => setTimeout(resolve, 5));
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

describe('provider faults', () => {
  it.each(['observable', 'doStream'] as const)('throws before the stream (%s): one error chunk carrying the APICallError; generate() rejects with it as cause', async (path) => {
    const seed = await seeded();
    const error = apiError();
    const model = mockModel({ error });
    const agent = agentOn(seed, { model: path === 'doStream' ? viaDoStream(model) : model });
    const chunks = await collect(agent);
    wellFormed(chunks);
    expect(types(chunks)).toEqual(['start', 'step-start', 'step-finish', 'error']);
    expect(errorOf(chunks)).toBe(error);
    const rejected = await agent.generate('again', { memory: THREAD }).catch((thrown: unknown) => thrown);
    expect(AgentRunError.isInstance(rejected)).toBe(true);
    expect((rejected as AgentRunError).cause).toBe(error);
    await seed.expectKept();
  });

  it.each([
    ['an error part', (parts: LanguageModelV4StreamPart[]) => from([...parts, { type: 'error', error: apiError() } as LanguageModelV4StreamPart])],
    ['a broken connection', (parts: LanguageModelV4StreamPart[]) => concat(from(parts), throwError(() => new TypeError('terminated')))],
  ] as const)('errors mid-stream (%s): the open part and step close, one error chunk, nothing of the attempt stored', async (_name, make) => {
    const seed = await seeded();
    const agent = agentOn(seed, { model: mockModel({ stream: () => make(textParts('Your name is')) }) });
    const chunks = await collect(agent);
    wellFormed(chunks);
    expect(types(chunks)).toEqual(['start', 'step-start', 'text-start', 'text-delta', 'text-delta', 'text-delta', 'text-end', 'step-finish', 'error']);
    await seed.expectKept();
  });

  it('errors mid-stream and an error processor recovers: the rejected attempt is marked, only the retry is stored', async () => {
    const seed = await seeded();
    const model = mockModel({
      stream: ({ callIndex }) =>
        callIndex === 0 ? concat(from(textParts('Your na')), throwError(() => apiError())) : from([...textParts('Your name is Ada.'), finishPart()]),
    });
    const recover: Processor = { id: 'recover', processAPIError: ({ retryCount }) => ({ retry: retryCount < 1 }) };
    const agent = agentOn(seed, { model, errorProcessors: [recover] });
    const chunks = await collect(agent);
    wellFormed(chunks);
    expect(chunks.filter((chunk) => chunk.type === 'step-finish').map((chunk) => (chunk as { payload: { stepResult: { reason: string } } }).payload.stepResult.reason)).toEqual(['retry', 'stop']);
    expect(terminal(chunks)).toMatchObject({ type: 'finish', payload: { output: { text: 'Your name is Ada.' } } });
    const now = await seed.expectKept(2);
    expect(JSON.stringify(now.slice(2))).not.toContain('Your na"');
    expect(JSON.stringify(now[3]?.content.parts)).toContain('Your name is Ada.');
  });

  it.each(['observable', 'doStream'] as const)('hangs (%s): the call’s abortSignal (a timeout) ends the run with abort and aborts the provider request', async (path) => {
    const seed = await seeded();
    const model = mockModel({ stream: NEVER });
    const agent = agentOn(seed, { model: path === 'doStream' ? viaDoStream(model) : model });
    const chunks = await collect(agent, { abortSignal: AbortSignal.timeout(30) });
    wellFormed(chunks);
    expect(types(chunks)).toEqual(['start', 'step-start', 'step-finish', 'abort']);
    expect(model.abortSignals[0]?.aborted).toBe(true);
    await seed.expectKept();
  });

  it('hangs in doStream itself (never resolves): the timeout still ends the run', async () => {
    const seed = await seeded();
    let signal: AbortSignal | undefined;
    const model: LanguageModelV4 = {
      ...viaDoStream(mockModel()),
      doStream: (options) => {
        signal = options.abortSignal;
        return new Promise(() => undefined);
      },
    };
    const agent = agentOn(seed, { model });
    const rejected = await agent.generate('hi', { memory: THREAD, abortSignal: AbortSignal.timeout(30), generateWith: 'doStream' }).catch((thrown: unknown) => thrown);
    expect((rejected as Error).name).toBe('AbortError');
    expect(signal?.aborted).toBe(true);
    await seed.expectKept();
  });

  it('hangs in doGenerate (generate(), nothing reads the stream): the timeout ends the run, the call is aborted, memory is kept', async () => {
    const seed = await seeded();
    let signal: AbortSignal | undefined;
    let streamed = 0;
    const model: LanguageModelV4 = {
      ...viaDoStream(mockModel()),
      doGenerate: (options) => {
        signal = options.abortSignal;
        return new Promise(() => undefined);
      },
      doStream: () => {
        streamed++;
        return new Promise(() => undefined);
      },
    };
    const rejected = await agentOn(seed, { model })
      .generate('hi', { memory: THREAD, abortSignal: AbortSignal.timeout(30) })
      .catch((thrown: unknown) => thrown);
    expect((rejected as Error).name).toBe('AbortError');
    expect(signal?.aborted).toBe(true);
    expect(streamed).toBe(0);
    await seed.expectKept();
  });

  it('a signal aborted before the run: start, abort; the model is never called', async () => {
    const seed = await seeded();
    const model = mockModel({ parts: [...textParts('never'), finishPart()] });
    const chunks = await collect(agentOn(seed, { model }), { abortSignal: AbortSignal.abort(new Error('too late')) });
    expect(types(chunks)).toEqual(['start', 'abort']);
    expect(model.calls).toHaveLength(0);
    await seed.expectKept();
  });

  it('malformed parts: unknown part types are skipped, a delta without its start is bracketed, a tool-call with invalid JSON is a tool-error the model sees', async () => {
    const seed = await seeded();
    const model = mockModel({
      parts: ({ callIndex }) =>
        callIndex === 0
          ? [
              { type: 'mystery', payload: 1 } as unknown as LanguageModelV4StreamPart,
              { type: 'text-delta', id: 'orphan', delta: 'Checking. ' },
              { type: 'tool-call', toolCallId: 'call-1', toolName: 'lookup', input: '{"name":' },
              finishPart('tool-calls'),
            ]
          : [...textParts('Ada.'), finishPart()],
    });
    let executed = 0;
    const agent = agentOn(seed, { model, tools: { lookup: { execute: () => ++executed } } });
    const chunks = await collect(agent);
    wellFormed(chunks);
    expect(types(chunks)).toEqual([
      'start',
      'step-start',
      'text-start',
      'text-delta',
      'tool-call',
      'tool-error',
      'text-end',
      'step-finish',
      'step-start',
      'text-start',
      'text-delta',
      'text-end',
      'step-finish',
      'finish',
    ]);
    expect(executed).toBe(0);
    expect(JSON.stringify(model.calls[1]?.prompt)).toContain('Invalid input for tool');
    await seed.expectKept(2);
  });
});

describe('tool faults', () => {
  const toolModel = (toolName: string) =>
    mockModel({
      parts: ({ callIndex }) => (callIndex === 0 ? [...toolCallParts(toolName, { n: 1 }), finishPart('tool-calls')] : [...textParts('done'), finishPart()]),
    });

  it('throws: a tool-error chunk, the model sees the error, the run goes on and is stored', async () => {
    const seed = await seeded();
    const model = toolModel('explode');
    const agent = agentOn(seed, {
      model,
      tools: {
        explode: {
          execute: () => {
            throw new Error('kaboom');
          },
        },
      },
    });
    const chunks = await collect(agent);
    wellFormed(chunks);
    expect(chunks.find((chunk) => chunk.type === 'tool-error')).toMatchObject({ payload: { toolCallId: 'call-explode', error: { message: 'kaboom' } } });
    expect(JSON.stringify(model.calls[1]?.prompt)).toContain('kaboom');
    expect(terminal(chunks).type).toBe('finish');
    await seed.expectKept(2);
  });

  it('hangs: unsubscribing aborts the tool’s abortSignal; no further model call; nothing stored', async () => {
    const seed = await seeded();
    const model = toolModel('wait');
    let toolSignal: AbortSignal | undefined;
    let started!: () => void;
    const toolStarted = new Promise<void>((resolve) => (started = resolve));
    const agent = agentOn(seed, {
      model,
      tools: {
        wait: {
          execute: (_input: unknown, options: { abortSignal: AbortSignal }) => {
            toolSignal = options.abortSignal;
            started();
            return new Promise(() => undefined);
          },
        },
      },
    });
    const subscription = agent.stream$('hi', { memory: THREAD }).subscribe();
    await toolStarted;
    subscription.unsubscribe();
    await waitFor(() => toolSignal?.aborted === true, 'the tool signal to abort');
    expect(toolSignal?.aborted).toBe(true);
    expect(model.calls).toHaveLength(1);
    await seed.expectKept();
  });

  it('returns non-serialisable values: a cycle is a tool-error, a BigInt becomes a string, functions are left out', async () => {
    const seed = await seeded();
    const model = mockModel({
      parts: ({ callIndex }) =>
        callIndex === 0
          ? [
              ...toolCallParts('cycle', {}, { toolCallId: 'c1' }),
              ...toolCallParts('big', {}, { toolCallId: 'c2' }),
              ...toolCallParts('fn', {}, { toolCallId: 'c3' }),
              finishPart('tool-calls'),
            ]
          : [...textParts('done'), finishPart()],
    });
    const agent = agentOn(seed, {
      model,
      tools: {
        cycle: {
          execute: () => {
            const value: Record<string, unknown> = {};
            value.self = value;
            return value;
          },
        },
        big: { execute: () => ({ count: 2n ** 70n }) },
        fn: { execute: () => ({ keep: 1, call: () => 2 }) },
      },
    });
    const chunks = await collect(agent);
    wellFormed(chunks);
    const answers = chunks.filter((chunk) => chunk.type === 'tool-result' || chunk.type === 'tool-error');
    expect(answers.map((chunk) => chunk.type)).toEqual(['tool-error', 'tool-result', 'tool-result']);
    expect(String((answers[0] as { payload: { error: Error } }).payload.error.message)).toMatch(/not serializable/);
    expect((answers[1] as { payload: { result: unknown } }).payload.result).toEqual({ count: (2n ** 70n).toString() });
    expect((answers[2] as { payload: { result: unknown } }).payload.result).toEqual({ keep: 1 });
    const stored = await seed.expectKept(2);
    expect(() => JSON.stringify(stored)).not.toThrow();
  });
});

describe('processor faults', () => {
  const textModel = () => mockModel({ parts: [...textParts('Your name is Ada.'), finishPart()] });

  it.each([
    ['processInput, sync', { id: 'p', processInput: () => { throw new Error('bug'); } } as Processor, 'input', 'processInput'],
    ['processInput, async', { id: 'p', processInput: async () => { throw new Error('bug'); } } as Processor, 'input', 'processInput'],
    ['processOutputStream, sync', { id: 'p', processOutputStream: ({ part }) => { if (part.type === 'text-delta') throw new Error('bug'); return part; } } as Processor, 'output', 'processOutputStream'],
    ['processOutputStream, async', { id: 'p', processOutputStream: async ({ part }) => { if (part.type === 'text-delta') throw new Error('bug'); return part; } } as Processor, 'output', 'processOutputStream'],
    ['processOutputResult, async', { id: 'p', processOutputResult: async () => { throw new Error('bug'); } } as Processor, 'output', 'processOutputResult'],
  ] as const)('throws (%s): the run ends with a ProcessorError naming it; no text got through; nothing stored', async (_name, processor, side, hook) => {
    const seed = await seeded();
    const agent = agentOn(seed, { model: textModel(), ...(side === 'input' ? { inputProcessors: [processor] } : { outputProcessors: [processor] }) });
    const chunks = await collect(agent);
    wellFormed(chunks);
    expect(errorOf(chunks)).toSatisfy((error: unknown) => ProcessorError.isInstance(error));
    expect(errorOf(chunks)).toMatchObject({ processorId: 'p', hook });
    if (hook !== 'processOutputResult') expect(textOf(chunks)).toBe('');
    await expect(agent.generate('again', { memory: THREAD })).rejects.toSatisfy((error: unknown) => ProcessorError.isInstance(error));
    await seed.expectKept();
  });

  it.each([
    ['a number', () => 42, /returned number/],
    ['a foreign MessageList', () => new MessageList(), /MessageList instance other than the one/],
    ['{ messages, messageList }', ({ messages, messageList }: { messages: unknown; messageList: MessageList }) => ({ messages, messageList }), /both messages and messageList/],
  ] as const)('returns the wrong shape (%s) from processInput and processOutputResult: a ProcessorError saying so', async (_name, returned, message) => {
    for (const hook of ['processInput', 'processOutputResult'] as const) {
      const seed = await seeded();
      const processor = { id: 'shape', [hook]: returned } as unknown as Processor;
      const agent = agentOn(seed, { model: textModel(), ...(hook === 'processInput' ? { inputProcessors: [processor] } : { outputProcessors: [processor] }) });
      const chunks = await collect(agent);
      wellFormed(chunks);
      const error = errorOf(chunks);
      expect(ProcessorError.isInstance(error), hook).toBe(true);
      expect(error).toMatchObject({ processorId: 'shape', hook });
      expect((error as Error).message).toMatch(message);
      await seed.expectKept();
    }
  });

  it('returns the wrong shape from processOutputStream: a ProcessorError, the chunk does not pass', async () => {
    const seed = await seeded();
    const processor: Processor = { id: 'shape', processOutputStream: ({ part }) => (part.type === 'text-delta' ? ('oops' as unknown as ChunkType) : part) };
    const chunks = await collect(agentOn(seed, { model: textModel(), outputProcessors: [processor] }));
    wellFormed(chunks);
    expect(errorOf(chunks)).toMatchObject({ processorId: 'shape', hook: 'processOutputStream' });
    expect(textOf(chunks)).toBe('');
    await seed.expectKept();
  });

  it('calls abort twice: one tripwire chunk; the first abort of the call wins (issue 15 §3), whether the second leaves the hook or is swallowed; onViolation per abort', async () => {
    const seed = await seeded();
    const reported: string[] = [];
    const twice = (swallowSecond: boolean): Processor => ({
      id: 'twice',
      onViolation: ({ message }) => {
        reported.push(message);
      },
      processOutputStream: ({ part, abort }) => {
        if (part.type !== 'text-delta') return part;
        try {
          abort('first');
        } catch {
          // a processor that catches its own abort …
        }
        if (!swallowSecond) return abort('second');
        try {
          abort('second');
        } catch {
          // … and the second one too: the first abort still stands
        }
        return part;
      },
    });
    for (const [swallow, reason] of [
      [false, 'first'],
      [true, 'first'],
    ] as const) {
      const chunks = await collect(agentOn(seed, { model: textModel(), outputProcessors: [twice(swallow)] }));
      wellFormed(chunks);
      expect(chunks.filter((chunk) => chunk.type === 'tripwire')).toHaveLength(1);
      expect(terminal(chunks)).toMatchObject({ type: 'tripwire', payload: { reason, processorId: 'twice' } });
      expect(textOf(chunks)).toBe('');
    }
    expect(reported).toEqual(['first', 'second', 'first', 'second']);
    await seed.expectKept();
  });

  it.each(['throws', 'rejects'] as const)('onViolation %s: swallowed; the abort still ends the run as a tripwire; no unhandled rejection', async (mode) => {
    const seed = await seeded();
    let called = 0;
    const guard: Processor = {
      id: 'guard',
      onViolation: () => {
        called++;
        if (mode === 'throws') throw new Error('alerting is down');
        return Promise.reject(new Error('alerting is down'));
      },
      processOutputStream: ({ part, abort }) => (part.type === 'text-delta' ? abort('blocked') : part),
    };
    const agent = agentOn(seed, { model: textModel(), outputProcessors: [guard] });
    const chunks = await collect(agent);
    wellFormed(chunks);
    expect(terminal(chunks)).toMatchObject({ type: 'tripwire', payload: { reason: 'blocked', processorId: 'guard' } });
    const result = await agent.generate('again', { memory: THREAD });
    expect(result.tripwire?.reason).toBe('blocked');
    expect(called).toBe(2);
    await seed.expectKept();
  });
});

describe('storage faults', () => {
  /** Makes `method` of the store fail while `failing` is true. */
  function failing(storage: InMemoryStorage, method: 'getThread' | 'getMessages' | 'saveMessages', error: Error) {
    const original = storage[method].bind(storage) as (...args: unknown[]) => Promise<unknown>;
    const control = { on: true, calls: 0 };
    (storage as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      if (!control.on) return original(...args);
      control.calls++;
      return Promise.reject(error);
    };
    return control;
  }

  it.each(['getThread', 'getMessages'] as const)('fails on load (%s): an error chunk (ProcessorError of message-history); the model is not called; the thread is intact', async (method) => {
    const seed = await seeded();
    const control = failing(seed.storage, method, new Error('database is down'));
    const model = mockModel({ parts: [...textParts('never'), finishPart()] });
    const chunks = await collect(agentOn(seed, { model }));
    expect(types(chunks)).toEqual(['start', 'error']);
    expect(errorOf(chunks)).toMatchObject({ processorId: 'message-history', hook: 'processInput' });
    expect((errorOf(chunks) as Error).message).toContain('database is down');
    expect(model.calls).toHaveLength(0);
    expect(control.calls).toBe(1);
    control.on = false;
    await seed.expectKept();
  });

  it('fails on save: an error chunk (ProcessorError of message-history-save) after the streamed reply; nothing partial stored; the next run sees the old history', async () => {
    const seed = await seeded();
    const control = failing(seed.storage, 'saveMessages', new Error('disk full'));
    const model = mockModel({ parts: [...textParts('Your name is Ada.'), finishPart()] });
    const agent = agentOn(seed, { model });
    const chunks = await collect(agent);
    wellFormed(chunks);
    expect(terminal(chunks).type).toBe('error');
    expect(errorOf(chunks)).toMatchObject({ processorId: 'message-history-save', hook: 'processOutputResult' });
    await expect(agent.generate('again', { memory: THREAD })).rejects.toSatisfy((error: unknown) => ProcessorError.isInstance(error));
    control.on = false;
    await seed.expectKept();
    const next = mockModel({ parts: [...textParts('Ada.'), finishPart()] });
    await agentOn(seed, { model: next }).generate('Name?', { memory: THREAD });
    const prompt = JSON.stringify(next.calls[0]?.prompt);
    expect(prompt).toContain('My name is Ada.');
    expect(prompt).not.toContain('What is my name?');
    await seed.expectKept(2);
  });

  it('fails on the tripwire save (saveOnTripwire: input): the run ends with the storage error; nothing stored', async () => {
    const storage = new InMemoryStorage();
    const memory = new Memory({ storage, saveOnTripwire: 'input' });
    await new Agent({ id: 'seed', model: mockModel({ parts: [...textParts('Hi'), finishPart()] }), memory }).generate('Hello', { memory: THREAD });
    const before = await storage.getMessages({ threadId: THREAD.thread });
    const control = failing(storage, 'saveMessages', new Error('disk full'));
    const guard: Processor = { id: 'guard', processOutputStream: ({ part, abort }) => (part.type === 'text-delta' ? abort('blocked') : part) };
    const agent = new Agent({ id: 'a', model: mockModel({ parts: [...textParts('secret'), finishPart()] }), memory, outputProcessors: [guard] });
    const chunks = await lastValueFrom(agent.stream$('tell me', { memory: THREAD }).pipe(toArray()));
    wellFormed(chunks);
    expect(terminal(chunks).type).toBe('error');
    expect((errorOf(chunks) as Error).message).toContain('disk full');
    control.on = false;
    expect(await storage.getMessages({ threadId: THREAD.thread })).toEqual(before);
  });
});

describe('cancellation mid-run keeps the store consistent', () => {
  it('unsubscribing during the stream stores nothing of the run', async () => {
    const seed = await seeded();
    const model = mockModel({
      stream: new Observable<LanguageModelV4StreamPart>((subscriber) => {
        for (const part of textParts('Your name is')) subscriber.next(part);
        // …and the rest never comes
      }),
    });
    const chunks = await lastValueFrom(agentOn(seed, { model }).stream$('x', { memory: THREAD }).pipe(take(4), toArray()));
    expect(types(chunks)).toEqual(['start', 'step-start', 'text-start', 'text-delta']);
    await waitFor(() => model.abortSignals[0]?.aborted === true, 'the model signal to abort');
    expect(model.abortSignals[0]?.aborted).toBe(true);
    await seed.expectKept();
  });
});
