/**
 * Bad input at the public surface: malformed messages, wrong option types, tools the model
 * invents, huge inputs. The rule: a typed error (or a correct result), never a hang or a crash.
 *
 * Decisions (src/loop/run/validate-options.ts):
 * - `new Agent(config)` throws a `TypeError` naming the first wrong option;
 * - a call's options are checked when the run starts: the stream is `start`, `error` carrying
 *   that `TypeError`, and `generate()` rejects with it (as it does with an `InvalidMessageError`);
 *   so are processor lists and tools that a function form returned;
 * - tolerated: `undefined` options and option values; an unknown key is a `TypeError` naming the
 *   closest known one, and an empty message array an `InvalidMessageError` like `''`
 *   (test/options/strict-options.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { from, lastValueFrom, toArray } from 'rxjs';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { Agent } from '../../src/loop/agent.js';
import type { AgentCallOptions, AgentConfig } from '../../src/loop/agent-types.js';
import { OBSERVABLE_STREAM } from '../../src/model/observable-stream.js';
import { InvalidMessageError } from '../../src/message-list/errors/invalid-message-error.js';
import type { InboundMessage } from '../../src/message-list/types.js';
import { Memory } from '../../src/memory/memory.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { checkBracketing, checkLifecycle } from './support/invariants.js';

const types = (chunks: readonly ChunkType[]) => chunks.map((chunk) => chunk.type);
const errorOf = (chunks: readonly ChunkType[]): unknown => {
  const last = chunks[chunks.length - 1];
  return last?.type === 'error' ? last.payload.error : undefined;
};
const answer = () => mockModel({ parts: [...textParts('ok'), finishPart()] });

describe('malformed messages', () => {
  it.each([
    ['content is a number', { role: 'user', content: 42 }, ['content']],
    ['an unknown role', [{ role: 'wizard', content: 'hi' }], [0, 'role']],
    ['a text part without text', [{ role: 'user', content: [{ type: 'text' }] }], [0, 'content', 0, 'text']],
    ['null in the array', ['hi', null], [1]],
    ['null', null, []],
    ['a number', 42, []],
    ['undefined', undefined, []],
    ['an empty string', '', []],
    ['an empty array', [], []],
    ['a message nested too deeply to validate', { role: 'user', content: 'hi', providerOptions: { deep: nest(20_000) } }, []],
  ])('%s: an InvalidMessageError naming the path, as the error chunk and generate()’s rejection; no model call; memory untouched', async (_name, input, path) => {
    const storage = new InMemoryStorage();
    const memory = new Memory({ storage });
    const model = answer();
    const agent = new Agent({ id: 'a', model, memory });
    await agent.generate('first', { memory: { thread: 't', resource: 'r' } });
    const before = await storage.getMessages({ threadId: 't' });
    const callsBefore = model.calls.length;

    const chunks = await lastValueFrom(agent.stream$(input as never, { memory: { thread: 't', resource: 'r' } }).pipe(toArray()));
    expect(types(chunks)).toEqual(['start', 'error']);
    const error = errorOf(chunks);
    expect(InvalidMessageError.isInstance(error)).toBe(true);
    expect((error as InvalidMessageError).path).toEqual(path);
    const rejected = await agent.generate(input as never).catch((thrown: unknown) => thrown);
    expect(InvalidMessageError.isInstance(rejected)).toBe(true);
    expect(model.calls.length).toBe(callsBefore);
    expect(await storage.getMessages({ threadId: 't' })).toEqual(before);
  });

});

function nest(depth: number): unknown {
  let value: unknown = {};
  for (let level = 0; level < depth; level++) value = { inner: value };
  return value;
}

describe('wrong option types', () => {
  const base = (): AgentConfig => ({ id: 'a', model: answer() });
  it.each([
    ['no config', undefined, /config\.id must be a non-empty string/],
    ['{}', {}, /config\.id must be a non-empty string/],
    ['a numeric id', { id: 5, model: answer() }, /config\.id/],
    ['no model', { id: 'a' }, /config\.model is required/],
    ['model: 5', { id: 'a', model: 5 }, /config\.model must be/],
    ["tools: 'x'", { ...base(), tools: 'x' }, /config\.tools must be an object of tools/],
    ['tools: [tool]', { ...base(), tools: [{ execute: () => 1 }] }, /config\.tools must be an object/],
    ['tools: { a: 5 }', { ...base(), tools: { a: 5 } }, /config\.tools\.a must be a tool object/],
    ['maxSteps: -1', { ...base(), maxSteps: -1 }, /config\.maxSteps must be a whole number ≥ 1/],
    ['maxSteps: 0', { ...base(), maxSteps: 0 }, /config\.maxSteps/],
    ['maxSteps: 2.5', { ...base(), maxSteps: 2.5 }, /config\.maxSteps/],
    ["maxProcessorRetries: '3'", { ...base(), maxProcessorRetries: '3' }, /config\.maxProcessorRetries must be a whole number ≥ 0/],
    ['maxProcessorRetries: NaN', { ...base(), maxProcessorRetries: Number.NaN }, /config\.maxProcessorRetries/],
    ['toolConcurrency: 0', { ...base(), toolConcurrency: 0 }, /config\.toolConcurrency/],
    ["outputProcessors: 'x'", { ...base(), outputProcessors: 'x' }, /config\.outputProcessors must be an array of processors/],
    ['outputProcessors: [null]', { ...base(), outputProcessors: [null] }, /config\.outputProcessors\[0\] must be a processor object/],
    ['inputProcessors: [{}]', { ...base(), inputProcessors: [{}] }, /config\.inputProcessors\[0\]\.id must be a non-empty string/],
    ['instructions: 5', { ...base(), instructions: 5 }, /config\.instructions must be a string/],
    ['memory: {}', { ...base(), memory: {} }, /config\.memory must be a Memory/],
    ['defaultOptions.maxSteps: -1', { ...base(), defaultOptions: { maxSteps: -1 } }, /config\.defaultOptions\.maxSteps/],
  ])('new Agent(%s) throws a TypeError naming the option', (_name, config, message) => {
    expect(() => new Agent(config as AgentConfig)).toThrow(TypeError);
    expect(() => new Agent(config as AgentConfig)).toThrow(message);
  });

  it.each([
    ['null', null, /options must be an object/],
    ['a number', 5, /options must be an object/],
    ['maxSteps: -1', { maxSteps: -1 }, /options\.maxSteps must be a whole number ≥ 1 \(got number -1\)/],
    ["maxSteps: '3'", { maxSteps: '3' }, /options\.maxSteps/],
    ['maxProcessorRetries: -1', { maxProcessorRetries: -1 }, /options\.maxProcessorRetries/],
    ['abortSignal: {}', { abortSignal: {} }, /options\.abortSignal must be an AbortSignal/],
    ['memory without a thread', { memory: { resource: 'r' } }, /options\.memory\.thread/],
    ['memory without a resource', { memory: { thread: 't' } }, /options\.memory\.resource/],
    ["activeTools: 'x'", { activeTools: 'x' }, /options\.activeTools/],
    ['outputProcessors: {}', { outputProcessors: {} }, /options\.outputProcessors must be an array/],
    ['outputProcessors: [{}]', { outputProcessors: [{}] }, /options\.outputProcessors\[0\]\.id/],
    ['requestContext: 5', { requestContext: 5 }, /options\.requestContext/],
    ['prepareStep: true', { prepareStep: true }, /options\.prepareStep must be a function/],
  ])('call options %s: start, error(TypeError); generate() rejects with the same TypeError; the model is never called', async (_name, options, message) => {
    const model = answer();
    const agent = new Agent({ id: 'a', model });
    const chunks = await lastValueFrom(agent.stream$('hi', options as AgentCallOptions).pipe(toArray()));
    expect(types(chunks)).toEqual(['start', 'error']);
    expect(errorOf(chunks)).toBeInstanceOf(TypeError);
    expect((errorOf(chunks) as Error).message).toMatch(message);
    const rejected = await agent.generate('hi', options as AgentCallOptions).catch((thrown: unknown) => thrown);
    expect(rejected).toBeInstanceOf(TypeError);
    expect((rejected as Error).message).toMatch(message);
    expect(model.calls).toHaveLength(0);
  });

  it('a function form returning the wrong type is the same TypeError, at run time', async () => {
    const agent = new Agent({ id: 'a', model: answer(), outputProcessors: () => 'x' as unknown as Processor[], tools: async () => ({ broken: null }) as never });
    const chunks = await lastValueFrom(agent.stream$('hi').pipe(toArray()));
    expect(types(chunks)).toEqual(['start', 'error']);
    expect((errorOf(chunks) as Error).message).toMatch(/config\.tools\.broken must be a tool object/);
    await expect(agent.generate('hi')).rejects.toThrow(TypeError);
  });

  it('tolerated: undefined values', async () => {
    const config: AgentConfig = { id: 'a', model: answer(), tools: undefined, maxSteps: undefined };
    const result = await new Agent(config).generate('hi', { maxProcessorRetries: undefined, runId: undefined });
    expect(result.text).toBe('ok');
  });
});

describe('tools the model invents', () => {
  it('an unknown tool name is a tool-error the model sees; the run goes on', async () => {
    const model = mockModel({
      parts: ({ callIndex }) =>
        callIndex === 0 ? [...toolCallParts('launchRockets', { count: 3 }), finishPart('tool-calls')] : [...textParts('I cannot do that.'), finishPart()],
    });
    let executed = 0;
    const agent = new Agent({ id: 'a', model, tools: { weather: { execute: () => ++executed } } });
    const chunks = await lastValueFrom(agent.stream$('hi').pipe(toArray()));
    expect(checkLifecycle(chunks, true)).toEqual([]);
    const toolError = chunks.find((chunk) => chunk.type === 'tool-error');
    expect(toolError).toMatchObject({ payload: { toolCallId: 'call-launchRockets', toolName: 'launchRockets' } });
    expect(String((toolError as { payload: { error: Error } }).payload.error.message)).toMatch(/Tool "launchRockets" not found/);
    expect(JSON.stringify(model.calls[1]?.prompt)).toMatch(/launchRockets\\" not found/);
    expect(executed).toBe(0);
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', payload: { output: { text: 'I cannot do that.' } } });
  });
});

describe('huge inputs', () => {
  it('a 1 MB message reaches the model intact and the run finishes (memory stores it whole)', async () => {
    const big = `start ${'lorem ipsum '.repeat(87_382)}end`;
    expect(big.length).toBeGreaterThanOrEqual(1024 * 1024);
    const storage = new InMemoryStorage();
    const model = answer();
    const agent = new Agent({ id: 'a', model, memory: new Memory({ storage }) });
    const result = await agent.generate(big, { memory: { thread: 't', resource: 'r' } });
    expect(result.text).toBe('ok');
    const prompt = model.calls[0]?.prompt ?? [];
    const user = prompt.find((message) => message.role === 'user');
    expect(user?.content).toEqual([{ type: 'text', text: big }]);
    const stored = await storage.getMessages({ threadId: 't' });
    expect(stored[0]?.content.parts).toEqual([{ type: 'text', text: big }]);
  });

  it('a 1 MB tool result and a tool call nested 5,000 levels deep: the big result whole; the deep input refused by the tool\'s input check (no consumer can encode it), a tool error, the run goes on', async () => {
    const big = 'y'.repeat(1024 * 1024);
    let deepInput = '1';
    for (let level = 0; level < 5000; level++) deepInput = `{"d":${deepInput}}`;
    const model = mockModel({
      parts: ({ callIndex }) =>
        callIndex === 0
          ? [...toolCallParts('big', {}), { type: 'tool-call', toolCallId: 'deep', toolName: 'echo', input: deepInput }, finishPart('tool-calls')]
          : [...textParts('done'), finishPart()],
    });
    const agent = new Agent({ id: 'a', model, tools: { big: { execute: () => big }, echo: { execute: () => 'echoed' } } });
    const result = await agent.generate('hi');
    expect(result.text).toBe('done');
    // past 500 levels tool input stays its text (src/model/checked-part.ts): not an object, refused
    const [bigResult, deepResult] = result.toolResults;
    expect(bigResult?.result).toBe(big);
    expect(deepResult?.toolCallId).toBe('deep');
    expect(String(deepResult?.result).slice(0, 200)).toMatch(/^Invalid input for tool "echo"/);
    expect(String(deepResult?.result)).toMatch(/expected a JSON object, received the text/);
    const toolMessage = model.calls[1]?.prompt.find((message) => message.role === 'tool');
    const outputs = toolMessage?.role === 'tool' ? toolMessage.content.map((part) => (part.type === 'tool-result' ? JSON.stringify(part.output) : '')) : [];
    expect(outputs.some((output) => output.includes(big))).toBe(true);
  });

  it.each(['observable', 'doStream'] as const)('10,000 chunks (%s): every delta, in order, one well-formed step', async (path) => {
    const deltas = Array.from({ length: 10_000 }, (_, index) => `w${index} `);
    const parts: LanguageModelV4StreamPart[] = [
      { type: 'text-start', id: 't' },
      ...deltas.map((delta): LanguageModelV4StreamPart => ({ type: 'text-delta', id: 't', delta })),
      { type: 'text-end', id: 't' },
      finishPart(),
    ];
    const mock = mockModel({ stream: () => from(parts) });
    const { [OBSERVABLE_STREAM]: _fast, ...withoutFastPath } = mock;
    const counter: Processor = {
      id: 'counter',
      processOutputStream: ({ part, state }) => {
        state.count = ((state.count as number | undefined) ?? 0) + 1;
        return part;
      },
      processOutputResult: ({ state }) => {
        expect(state.count).toBe(10_005); // step-start, text-start, 10,000 deltas, text-end, finish (the end of the output), step-finish
        return undefined;
      },
    };
    const agent = new Agent({ id: 'a', model: path === 'observable' ? mock : (withoutFastPath as never), outputProcessors: [counter] });
    const chunks = await lastValueFrom(agent.stream$('hi').pipe(toArray()));
    expect(checkLifecycle(chunks, true)).toEqual([]);
    expect(checkBracketing(chunks, true)).toEqual([]);
    const text = chunks.map((chunk) => (chunk.type === 'text-delta' ? chunk.payload.text : '')).join('');
    expect(text).toBe(deltas.join(''));
    expect(chunks).toHaveLength(10_000 + 6); // start, step-start, text-start, …, text-end, step-finish, finish
    const result = await agent.generate('hi');
    expect(result.text).toBe(deltas.join(''));
  });

  it('10,000 input messages: accepted, all of them reach the model', async () => {
    const messages: InboundMessage[] = Array.from({ length: 10_000 }, (_, index) =>
      index % 2 === 0 ? { role: 'user' as const, content: `m${index}` } : { role: 'assistant' as const, content: `m${index}` },
    );
    const model = answer();
    const result = await new Agent({ id: 'a', model }).generate(messages);
    expect(result.text).toBe('ok');
    expect(model.calls[0]?.prompt.filter((message) => message.role !== 'system')).toHaveLength(10_000);
  });
});
