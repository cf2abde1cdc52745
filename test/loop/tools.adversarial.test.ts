/**
 * Tool execution under attack: a hostile model (its calls steered by prompt injection) and a
 * careless tool author. The run never hangs, never throws an untyped error, never pollutes
 * `Object.prototype`, never runs a tool the agent does not have; a tool's failure is a `tool-error`
 * chunk the model sees next step, and memory and the next prompt get what the stream showed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { EMPTY, lastValueFrom, of, toArray } from 'rxjs';
import { z } from 'zod';
import type { LanguageModelV4Prompt, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { Agent } from '../../src/loop/agent.js';
import type { AgentToolSet } from '../../src/contract/tool-types.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { Processor } from '../../src/contract/processor-types.js';
import type { ToolLedger } from '../../src/loop/data/run-durability.js';
import { executeWithLedger } from '../../src/loop/tools/execute-tool-call.js';
import { ToolExecutionError } from '../../src/loop/tools/tool-execution-error.js';
import { Memory } from '../../src/memory/memory.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import { mockModel, type MockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';

const THREAD = { thread: 't1', resource: 'u1' };

/** A model whose first step is `calls`, then a text answer. */
function callingModel(calls: LanguageModelV4StreamPart[]): MockModel {
  return mockModel({ parts: ({ callIndex }) => (callIndex === 0 ? [...calls, finishPart('tool-calls')] : [...textParts('done'), finishPart()]) });
}

const collect = (agent: Agent, options: Parameters<Agent['stream$']>[1] = {}) => lastValueFrom(agent.stream$('go', options).pipe(toArray()));

type ToolAnswer = Extract<ChunkType, { type: 'tool-result' | 'tool-error' }>;
const answersOf = (chunks: readonly ChunkType[]): ToolAnswer[] =>
  chunks.filter((chunk): chunk is ToolAnswer => chunk.type === 'tool-result' || chunk.type === 'tool-error');

/** The tool results of a prompt, by call id. */
function promptResults(prompt: LanguageModelV4Prompt | undefined): Map<string, unknown> {
  const results = new Map<string, unknown>();
  for (const message of prompt ?? []) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) if (part.type === 'tool-result') results.set(part.toolCallId, part.output);
  }
  return results;
}

/** Asserts `chunk` is a tool-error whose error is a `ToolExecutionError` naming the tool and the call; returns its message. */
function expectToolError(chunk: ChunkType | undefined, toolName: string, toolCallId: string): string {
  expect(chunk?.type).toBe('tool-error');
  const error = chunk?.type === 'tool-error' ? chunk.payload.error : undefined;
  expect(ToolExecutionError.isInstance(error)).toBe(true);
  expect(error).toMatchObject({ toolName, toolCallId });
  return (error as Error).message;
}

afterEach(() => {
  // a failing pollution test must not leak into the others
  for (const key of ['polluted', 'execute']) delete (Object.prototype as Record<string, unknown>)[key];
});

describe('a hostile model', () => {
  const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];

  it.each(PROTOTYPE_NAMES)('a call to %s (an Object.prototype name): a "not found" ToolExecutionError, nothing runs', async (toolName) => {
    let executed = 0;
    const model = callingModel(toolCallParts(toolName, {}, { toolCallId: 'c1' }));
    const agent = new Agent({ id: 'a', model, tools: { weather: { execute: () => ++executed } } });
    const chunks = await collect(agent);
    expect(expectToolError(answersOf(chunks)[0], toolName, 'c1')).toBe(`Tool "${toolName}" not found.`);
    expect(executed).toBe(0);
    expect(chunks.at(-1)?.type).toBe('finish');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  // `mayContinue` (src/loop/data/attempt-state.ts) looked up `tools?.[call.toolName]`, found
  // Object.prototype's `toString` & co. and took it for "a tool without execute", so the loop
  // stopped after the step instead of letting the model see the error: own names only now.
  it.each(PROTOTYPE_NAMES)('a call to %s: the model sees the error in its next step, as for any unknown tool', async (toolName) => {
    const model = callingModel(toolCallParts(toolName, {}, { toolCallId: 'c1' }));
    const agent = new Agent({ id: 'a', model, tools: { weather: { execute: () => 'sunny' } } });
    const result = await agent.generate('go');
    expect(model.calls).toHaveLength(2);
    expect(JSON.stringify(promptResults(model.calls[1]?.prompt).get('c1'))).toContain('not found');
    expect(result.text).toBe('done');
  });

  it('a tool inherited through the tool set\'s prototype is not run', async () => {
    let executed = 0;
    const tools = Object.create({ inherited: { execute: () => ++executed } }) as AgentToolSet;
    tools.own = { execute: () => 'own' };
    const model = callingModel(toolCallParts('inherited', {}, { toolCallId: 'c1' }));
    const chunks = await collect(new Agent({ id: 'a', model, tools }));
    expect(expectToolError(answersOf(chunks)[0], 'inherited', 'c1')).toBe('Tool "inherited" not found.');
    expect(executed).toBe(0);
  });

  it.each([
    ['no schema', undefined],
    ['a zod schema', z.object({}).passthrough()],
    ['a JSON schema', { type: 'object', additionalProperties: true }],
  ])('__proto__ / constructor.prototype keys in the input (%s) pollute nothing', async (_label, inputSchema) => {
    const input = '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"a":{"__proto__":{"polluted":"yes"}}}';
    const seen: unknown[] = [];
    const storage = new InMemoryStorage();
    const model = callingModel(toolCallParts('echo', input, { toolCallId: 'c1' }));
    const agent = new Agent({
      id: 'a',
      model,
      memory: new Memory({ storage }),
      tools: {
        echo: {
          inputSchema,
          execute: (value: unknown) => {
            seen.push(value);
            return value;
          },
        },
      },
    });
    const chunks = await collect(agent, { memory: THREAD });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(seen).toHaveLength(1);
    expect(answersOf(chunks).map((chunk) => chunk.type)).toEqual(['tool-result']);
    await storage.getMessages({ threadId: THREAD.thread });
    await agent.generate('again', { memory: THREAD });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a 5 MB input: validated, executed, echoed to the next prompt', async () => {
    const big = 'x'.repeat(5 * 1024 * 1024);
    const model = callingModel(toolCallParts('size', { big }, { toolCallId: 'c1' }));
    const agent = new Agent({ id: 'a', model, tools: { size: { inputSchema: z.object({ big: z.string() }), execute: ({ big: text }: { big: string }) => text.length } } });
    const result = await agent.generate('go');
    expect(result.toolResults.map((entry) => entry.result)).toEqual([big.length]);
    expect(result.text).toBe('done');
  });

  it('an input nested 100,000 levels deep: the run ends (a result or a tool-error), no untyped throw', async () => {
    let deep = '1';
    for (let level = 0; level < 100_000; level++) deep = `{"d":${deep}}`;
    let executed = 0;
    const model = callingModel([{ type: 'tool-call', toolCallId: 'c1', toolName: 'echo', input: deep }]);
    const agent = new Agent({ id: 'a', model, tools: { echo: { execute: () => ++executed } } });
    const chunks = await collect(agent);
    expect(chunks.at(-1)?.type).toBe('finish');
    expect(answersOf(chunks)).toHaveLength(1);
    const result = await agent.generate('go');
    expect(result.text).toBe('done');
  });

  it('500 calls in one step: 500 answers in call order, all in the next prompt', async () => {
    const calls = Array.from({ length: 500 }, (_, index) => toolCallParts('echo', { n: index }, { toolCallId: `c${index}`, streamInput: false })).flat();
    const model = callingModel(calls);
    let active = 0;
    let most = 0;
    const agent = new Agent({
      id: 'a',
      model,
      tools: {
        echo: {
          inputSchema: z.object({ n: z.number() }),
          execute: async ({ n }: { n: number }) => {
            most = Math.max(most, ++active);
            await Promise.resolve();
            active--;
            return n;
          },
        },
      },
    });
    const chunks = await collect(agent);
    expect(answersOf(chunks).map((chunk) => (chunk.type === 'tool-result' ? chunk.payload.result : chunk.type))).toEqual(Array.from({ length: 500 }, (_, index) => index));
    expect(most).toBeLessThanOrEqual(8);
    expect(promptResults(model.calls[1]?.prompt).size).toBe(500);
  });
});

describe('a careless tool author: what execute throws', () => {
  const proxyThrowingOnGet = (target: object) =>
    new Proxy(target, {
      get() {
        throw new Error('trap');
      },
    });
  const revoked = () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    return proxy;
  };
  const thrown: Array<[string, () => unknown]> = [
    ['a string', () => 'plain string'],
    ['undefined', () => undefined],
    ['null', () => null],
    ['a Symbol', () => Symbol('boom')],
    ['a Proxy (plain object) throwing on every get', () => proxyThrowingOnGet({})],
    ['a Proxy (of an Error) throwing on every get', () => proxyThrowingOnGet(new Error('hidden'))],
    ['a revoked Proxy', revoked],
    ['an object whose toString throws', () => ({ toString: () => { throw new Error('no'); } })],
    ['an object with a null prototype', () => Object.create(null) as object],
  ];

  it.each(thrown)('throws %s synchronously: a ToolExecutionError naming tool and call; the model sees it', async (_label, make) => {
    const model = callingModel(toolCallParts('bad', {}, { toolCallId: 'c1' }));
    const agent = new Agent({
      id: 'a',
      model,
      tools: {
        bad: {
          execute: () => {
            throw make();
          },
        },
      },
    });
    const chunks = await collect(agent);
    expectToolError(answersOf(chunks)[0], 'bad', 'c1');
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', payload: { output: { text: 'done' } } });
    expect(promptResults(model.calls[1]?.prompt).has('c1')).toBe(true);
  });

  it.each(thrown)('rejects with %s: a ToolExecutionError naming tool and call; generate() resolves', async (_label, make) => {
    const model = callingModel(toolCallParts('bad', {}, { toolCallId: 'c1' }));
    const agent = new Agent({ id: 'a', model, tools: { bad: { execute: () => Promise.reject(make()) } } });
    const result = await agent.generate('go');
    expect(result.text).toBe('done');
    expectToolError(answersOf(result.chunks)[0], 'bad', 'c1');
  });
});

describe('a careless tool author: what execute returns', () => {
  const run = async (execute: () => unknown, storage = new InMemoryStorage()) => {
    const model = callingModel(toolCallParts('odd', {}, { toolCallId: 'c1' }));
    const agent = new Agent({ id: 'a', model, memory: new Memory({ storage }), tools: { odd: { execute } } });
    const chunks = await collect(agent, { memory: THREAD });
    const stored = await storage.getMessages({ threadId: THREAD.thread });
    const invocations = stored.flatMap((message) => message.content.parts.flatMap((part) => (part.type === 'tool-invocation' ? [part.toolInvocation] : [])));
    return { chunks, answer: answersOf(chunks)[0], prompt: promptResults(model.calls[1]?.prompt).get('c1'), stored: invocations[0] };
  };

  it.each<[string, () => unknown, unknown]>([
    ['undefined', () => undefined, null],
    ['a Symbol key', () => ({ [Symbol('hidden')]: 1, shown: 2 }), { shown: 2 }],
    ['a Symbol', () => Symbol('s'), null],
    ['a function', () => () => 1, null],
    ['a Date', () => new Date(0), '1970-01-01T00:00:00.000Z'],
    ['a Map', () => new Map([['k', 1]]), {}],
    ['NaN', () => Number.NaN, null],
    ['a nested BigInt', () => ({ a: [1n] }), { a: ['1'] }],
  ])('%s: the stream, the next prompt and memory hold the same value', async (_label, execute, expected) => {
    const { answer, prompt, stored } = await run(execute);
    expect(answer?.type).toBe('tool-result');
    expect(answer?.type === 'tool-result' ? answer.payload.result : 'missing').toEqual(expected);
    expect(JSON.stringify(prompt)).toContain(JSON.stringify(expected));
    expect(stored).toMatchObject({ state: 'result', result: expected });
  });

  it.each<[string, () => unknown]>([
    ['a Proxy throwing on every get', () => new Proxy({}, { get: () => { throw new Error('trap'); } })],
    ['a revoked Proxy', () => { const { proxy, revoke } = Proxy.revocable({}, {}); revoke(); return proxy; }],
    ['a toJSON that throws a string', () => ({ toJSON: () => { throw 'nope'; } })],
    ['a getter that throws a Proxy', () => ({ get bad() { throw new Proxy({}, { get: () => { throw new Error('trap'); } }); } })],
    ['a cycle through an array', () => { const list: unknown[] = []; list.push({ list }); return list; }],
  ])('%s: a ToolExecutionError naming the tool, the run goes on', async (_label, execute) => {
    const { chunks, answer, prompt, stored } = await run(execute);
    const message = expectToolError(answer, 'odd', 'c1');
    expect(message).toMatch(/Tool "odd" returned a value that is not serializable/);
    expect(JSON.stringify(prompt)).toContain('not serializable');
    expect(stored).toMatchObject({ state: 'output-error' });
    expect(chunks.at(-1)?.type).toBe('finish');
  });

  it('a 10 MB string: whole in the stream, the prompt and memory', async () => {
    const big = 'z'.repeat(10 * 1024 * 1024);
    const { answer, prompt, stored } = await run(() => big);
    expect(answer?.type === 'tool-result' ? answer.payload.result : undefined).toBe(big);
    expect(JSON.stringify(prompt)).toContain(big);
    expect(stored).toMatchObject({ state: 'result', result: big });
  });

  it('an Observable result: the stream, the prompt and memory agree (whatever it becomes)', async () => {
    const { answer, prompt, stored } = await run(() => of(1, 2, 3));
    const shown = answer?.type === 'tool-result' ? answer.payload.result : answer?.type;
    expect(stored).toMatchObject({ result: shown });
    expect(prompt).toBeDefined();
  });

  it.each<[string, () => Promise<unknown>]>([
    ['null', () => Promise.resolve(null)],
    ['with a throwing done getter', () => Promise.resolve({ get done(): boolean { throw new Error('unreadable step'); } })],
  ])('an async iterator whose next() step is %s: a tool-error, no hang', async (_label, next) => {
    const { answer, chunks } = await run(() => ({ [Symbol.asyncIterator]: () => ({ next }) }));
    expect(answer?.type).toBe('tool-error');
    expect(answer?.type === 'tool-error' ? answer.payload.toolCallId : undefined).toBe('c1');
    expect(chunks.at(-1)?.type).toBe('finish');
  });

  it('an async iterable that throws a non-Error: a ToolExecutionError', async () => {
    const { answer } = await run(() => ({
      [Symbol.asyncIterator]: () => ({
        next: () => Promise.reject(Symbol('nope')),
      }),
    }));
    expectToolError(answer, 'odd', 'c1');
  });
});

describe('abort while a tool never settles', () => {
  it('the run ends with an abort chunk, the tool sees the abort, the model is not called again', async () => {
    const controller = new AbortController();
    let toolSignal: AbortSignal | undefined;
    const model = callingModel(toolCallParts('wait', {}, { toolCallId: 'c1' }));
    const agent = new Agent({
      id: 'a',
      model,
      tools: {
        wait: {
          execute: (_input: unknown, options: { abortSignal: AbortSignal }) => {
            toolSignal = options.abortSignal;
            queueMicrotask(() => controller.abort(new Error('stop')));
            return new Promise(() => undefined);
          },
        },
      },
    });
    const chunks = await collect(agent, { abortSignal: controller.signal });
    expect(chunks.at(-1)?.type).toBe('abort');
    expect(toolSignal?.aborted).toBe(true);
    expect(model.calls).toHaveLength(1);
  });

  it('generate(): rejects or resolves with the abort, never hangs', async () => {
    const controller = new AbortController();
    const model = callingModel(toolCallParts('wait', {}, { toolCallId: 'c1' }));
    const agent = new Agent({
      id: 'a',
      model,
      tools: {
        wait: {
          execute: () => {
            queueMicrotask(() => controller.abort(new Error('stop')));
            return new Promise(() => undefined);
          },
        },
      },
    });
    const outcome = await agent.generate('go', { abortSignal: controller.signal }).then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    );
    expect(outcome).toBeDefined();
  });
});

describe('what a processor puts in a tool-error', () => {
  it.each<[string, () => unknown]>([
    ['an object with a BigInt', () => ({ code: 1n })],
    ['a cycle', () => { const value: Record<string, unknown> = {}; value.self = value; return value; }],
  ])('%s as the error: the run goes on, the model gets a text for the call', async (_label, make) => {
    const model = callingModel(toolCallParts('bad', {}, { toolCallId: 'c1' }));
    const replaceError: Processor = {
      id: 'replace-error',
      processOutputStream: ({ part }) => (part.type === 'tool-error' ? { ...part, payload: { ...part.payload, error: make() } } : part),
    };
    const agent = new Agent({
      id: 'a',
      model,
      outputProcessors: [replaceError],
      tools: {
        bad: {
          execute: () => {
            throw new Error('raw');
          },
        },
      },
    });
    const chunks = await collect(agent);
    expect(chunks.at(-1)?.type).toBe('finish');
    expect(answersOf(chunks).map((chunk) => chunk.type)).toEqual(['tool-error']);
    expect(promptResults(model.calls[1]?.prompt).has('c1')).toBe(true);
  });
});

describe('an Observable from execute (its last value, as an async iterable\'s)', () => {
  it('EMPTY: the call still gets its (null) result; the next prompt pairs it', async () => {
    const model = callingModel(toolCallParts('obs', {}, { toolCallId: 'c1' }));
    const chunks = await collect(new Agent({ id: 'a', model, tools: { obs: { execute: () => EMPTY } } }));
    expect(answersOf(chunks).map((chunk) => [chunk.type, chunk.type === 'tool-result' ? chunk.payload.result : undefined])).toEqual([['tool-result', null]]);
    expect(promptResults(model.calls[1]?.prompt).has('c1')).toBe(true);
    expect(chunks.at(-1)?.type).toBe('finish');
  });

  it('several values: one result, the last; a durable ledger is told once', async () => {
    const model = callingModel(toolCallParts('obs', {}, { toolCallId: 'c1' }));
    const ends: unknown[] = [];
    const chunks = await collect(new Agent({ id: 'a', model, tools: { obs: { execute: () => of(1, 2, 3) } } }));
    expect(answersOf(chunks).map((chunk) => (chunk.type === 'tool-result' ? chunk.payload.result : chunk.type))).toEqual([3]);
    const environment = { runId: 'r', abortSignal: new AbortController().signal, writer: undefined as never, requestContext: undefined as never, messages: () => [] };
    const ledger: ToolLedger = { begin: () => ({ kind: 'execute' }), end: (_entry, outcome) => void ends.push(outcome) };
    const outcomes = await lastValueFrom(
      executeWithLedger({ toolCallId: 'c1', toolName: 'obs', args: {} }, { execute: () => of(1, 2, 3) }, environment, ledger).pipe(toArray()),
    );
    expect(outcomes.map((outcome) => (outcome.kind === 'result' ? outcome.result : outcome.kind))).toEqual([3]);
    expect(ends).toEqual([{ result: 3 }]);
  });
});

describe('tools outside activeTools', () => {
  // the tool phase got the step's whole tool set, not the `activeTools` the model was offered, so a
  // steered model could call a tool the caller switched off for this call (the AI SDK parses calls
  // against the active tools only): the attempt's tools are the active ones now (active-tools.ts).
  it('a call to a tool the caller switched off does not run it', async () => {
    let executed = 0;
    const model = callingModel(toolCallParts('dangerous', {}, { toolCallId: 'c1' }));
    const agent = new Agent({ id: 'a', model, tools: { safe: { execute: () => 'ok' }, dangerous: { execute: () => ++executed } } });
    const chunks = await collect(agent, { activeTools: ['safe'] });
    expect(model.calls[0]?.tools?.map((tool) => tool.name)).toEqual(['safe']);
    expect(executed).toBe(0);
    expectToolError(answersOf(chunks)[0], 'dangerous', 'c1');
  });
});

describe('a processor that swaps a tool-error for what cannot be read', () => {
  it('a revoked Proxy as the error: a ProcessorError naming the processor, no crash inside the loop', async () => {
    const model = callingModel(toolCallParts('weather', {}, { toolCallId: 'c1' }));
    const swapper: Processor = {
      id: 'swapper',
      processOutputStream: ({ part }) => {
        if (part.type !== 'tool-error') return part;
        const { proxy, revoke } = Proxy.revocable({}, {});
        revoke();
        return { ...part, payload: { ...part.payload, error: proxy } };
      },
    };
    const agent = new Agent({
      id: 'a',
      model,
      tools: {
        weather: {
          execute: () => {
            throw new Error('down');
          },
        },
      },
      outputProcessors: [swapper],
    });
    const chunks = await collect(agent);
    const last = chunks.at(-1) as Extract<ChunkType, { type: 'error' }>;
    expect(last.type).toBe('error');
    expect(last.payload.error).toMatchObject({ name: 'ProcessorError', processorId: 'swapper' });
  });
});
