/**
 * Call options from a careless or hostile caller (an app that forwards request fields into
 * `stream$()` / `stream()` / `generate()` options): a bad value is a `TypeError` naming the option,
 * before the model is called; or the documented behaviour. Never an untyped error from deep in the
 * loop, never a header with CR/LF reaching the provider, never `Object.prototype` polluted.
 * (Unknown keys, `maxSteps: -1`/`0`, a numeric `runId` and `null` options: strict-options.test.ts.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { Agent } from '../../src/loop/agent.js';
import type { AgentCallOptions } from '../../src/loop/agent-types.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { RequestContext } from '../../src/contract/request-context.js';
import { AgentRunError } from '../../src/loop/run/agent-run-error.js';
import { mockModel, type MockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';

const answer = (): MockModel => mockModel({ parts: [...textParts('ok'), finishPart()] });
const types = (chunks: readonly ChunkType[]) => chunks.map((chunk) => chunk.type);
const errorOf = (chunks: readonly ChunkType[]): unknown => {
  const last = chunks[chunks.length - 1];
  return last?.type === 'error' ? last.payload.error : undefined;
};
const weather = { inputSchema: z.object({ city: z.string() }), execute: async ({ city }: { city: string }) => ({ city }) };

/** Each entry point refuses `options` with a TypeError matching `message`; the model is never called. */
async function expectRefused(options: unknown, message: RegExp): Promise<void> {
  const model = answer();
  const agent = new Agent({ id: 'a', model, tools: { weather } });
  const chunks = await lastValueFrom(agent.stream$('hi', options as AgentCallOptions).pipe(toArray()));
  expect(types(chunks)).toEqual(['start', 'error']);
  expect(errorOf(chunks)).toBeInstanceOf(TypeError);
  expect((errorOf(chunks) as Error).message).toMatch(message);
  const rejected = await agent.generate('hi', options as AgentCallOptions).catch((thrown: unknown) => thrown);
  expect(rejected).toBeInstanceOf(TypeError);
  expect((rejected as Error).message).toMatch(message);
  const output = await agent.stream('hi', options as AgentCallOptions);
  await expect(output.text).rejects.toThrow(message);
  expect(model.calls).toHaveLength(0);
}

afterEach(() => {
  expect(Object.prototype).not.toHaveProperty('polluted');
});

describe('numbers out of range', () => {
  it.each([1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, '3', null])('maxSteps %s is a TypeError naming options.maxSteps', async (value) => {
    await expectRefused({ maxSteps: value }, /options\.maxSteps must be a whole number ≥ 1/);
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '2', null])('maxProcessorRetries %s is a TypeError naming options.maxProcessorRetries', async (value) => {
    await expectRefused({ maxProcessorRetries: value }, /options\.maxProcessorRetries must be a whole number ≥ 0/);
  });

  it('maxSteps 1e9 and maxProcessorRetries 1e9 are valid: a one-step run answers', async () => {
    const model = answer();
    const result = await new Agent({ id: 'a', model }).generate('hi', { maxSteps: 1e9, maxProcessorRetries: 1e9 });
    expect(result.text).toBe('ok');
    expect(model.calls).toHaveLength(1);
  });
});

describe('toolChoice', () => {
  it.each([
    ['an unknown string', 'bogus'],
    ['a number', 42],
    ['null', null],
    ['an array', ['auto']],
    ['a tool choice without toolName', { type: 'tool' }],
    ['a tool choice with an empty toolName', { type: 'tool', toolName: '' }],
    ['a tool choice with a numeric toolName', { type: 'tool', toolName: 7 }],
    ['a tool choice of another type', { type: 'function', toolName: 'weather' }],
  ])('%s is a TypeError naming options.toolChoice', async (_name, value) => {
    await expectRefused({ toolChoice: value }, /options\.toolChoice(\.toolName)? must be/);
  });

  it.each(['auto', 'none', 'required'] as const)("'%s' reaches the provider as { type }", async (choice) => {
    const model = answer();
    await new Agent({ id: 'a', model, tools: { weather } }).generate('hi', { toolChoice: choice });
    expect(model.calls[0]?.toolChoice).toEqual({ type: choice });
  });

  it.each(['nope', '__proto__', 'constructor'])('{ type: "tool", toolName: %j } naming no tool of the agent is a TypeError; the model is never called', async (toolName) => {
    await expectRefused({ toolChoice: { type: 'tool', toolName } }, new RegExp(`toolChoice\\.toolName "${toolName}" names no tool offered to the model \\(offered: weather\\)`));
  });

  it('{ type: "tool", toolName } naming a tool that activeTools switched off is a TypeError', async () => {
    await expectRefused({ toolChoice: { type: 'tool', toolName: 'weather' }, activeTools: ['weather-2'] }, /toolChoice\.toolName "weather" names no tool offered to the model \(offered: none\)/);
  });
});

describe('activeTools', () => {
  const tools = { weather, time: { inputSchema: z.object({}), execute: async () => 'noon' } };

  it('unknown names, duplicates and inherited names offer only the known tools, once each', async () => {
    const model = answer();
    await new Agent({ id: 'a', model, tools }).generate('hi', { activeTools: ['weather', 'weather', 'nope', '__proto__', 'constructor', 'toString'] });
    expect(model.calls[0]?.tools?.map((tool) => tool.name)).toEqual(['weather']);
  });

  it('100,000 names: the one known tool is offered, and a call of another tool never runs', async () => {
    let timeRan = false;
    const model = mockModel({
      parts: ({ callIndex }) => (callIndex === 0 ? [...toolCallParts('time', {}), finishPart('tool-calls')] : [...textParts('done'), finishPart()]),
    });
    const names = Array.from({ length: 100_000 }, (_, index) => `tool-${index}`).concat('weather');
    const agent = new Agent({ id: 'a', model, tools: { ...tools, time: { ...tools.time, execute: async () => ((timeRan = true), 'noon') } } });
    const result = await agent.generate('hi', { activeTools: names });
    expect(model.calls[0]?.tools?.map((tool) => tool.name)).toEqual(['weather']);
    expect(timeRan).toBe(false);
    expect(result.text).toBe('done');
  });

  it.each([
    ['a string', 'weather'],
    ['an object', { weather: true }],
    ['an array with a number', ['weather', 1]],
  ])('%s is a TypeError naming options.activeTools', async (_name, value) => {
    await expectRefused({ activeTools: value }, /options\.activeTools must be an array of tool names/);
  });
});

describe('modelSettings', () => {
  it.each([
    ['temperature NaN', { temperature: Number.NaN }, /options\.modelSettings\.temperature must be/],
    ['temperature a string', { temperature: '0.2' }, /options\.modelSettings\.temperature must be/],
    ['topP Infinity', { topP: Number.POSITIVE_INFINITY }, /options\.modelSettings\.topP must be/],
    ['maxOutputTokens -5', { maxOutputTokens: -5 }, /options\.modelSettings\.maxOutputTokens must be a whole number ≥ 1/],
    ['maxOutputTokens 1.5', { maxOutputTokens: 1.5 }, /options\.modelSettings\.maxOutputTokens must be a whole number ≥ 1/],
    ['topK 0.5', { topK: 0.5 }, /options\.modelSettings\.topK must be a whole number/],
    ['seed NaN', { seed: Number.NaN }, /options\.modelSettings\.seed must be a whole number/],
    ['maxRetries -1', { maxRetries: -1 }, /options\.modelSettings\.maxRetries must be a whole number ≥ 0/],
    ['stopSequences a string', { stopSequences: 'STOP' }, /options\.modelSettings\.stopSequences must be an array of strings/],
    ['stopSequences with a number', { stopSequences: ['a', 1] }, /options\.modelSettings\.stopSequences must be an array of strings/],
    ['headers an array', { headers: ['x'] }, /options\.modelSettings\.headers must be an object/],
    ['a header that is a number', { headers: { 'x-user': 42 } }, /options\.modelSettings\.headers\["x-user"\] must be a string/],
    ['a header that is an object', { headers: { 'x-user': { toString: () => 'a' } } }, /options\.modelSettings\.headers\["x-user"\] must be a string/],
    ['a header value with CR/LF', { headers: { 'x-user': 'a\r\nx-admin: 1' } }, /options\.modelSettings\.headers\["x-user"\] must not hold CR, LF or NUL/],
    ['a header value with a lone LF', { headers: { 'x-user': 'a\nb' } }, /options\.modelSettings\.headers\["x-user"\] must not hold CR, LF or NUL/],
    ['a header name with CR/LF', { headers: { 'x-a\r\nx-admin': '1' } }, /options\.modelSettings\.headers: .* is not a valid header name/],
    ['a header name with a colon', { headers: { 'x-a: b': '1' } }, /options\.modelSettings\.headers: .* is not a valid header name/],
  ])('%s is a TypeError naming it; nothing reaches the provider', async (_name, modelSettings, message) => {
    await expectRefused({ modelSettings }, message);
  });

  it('valid settings (an undefined header too) reach the provider as given', async () => {
    const model = answer();
    const modelSettings = { temperature: 0, maxOutputTokens: 100, topK: 1, seed: -3, stopSequences: ['END'], headers: { 'x-user': 'u-1', 'x-unset': undefined } };
    await new Agent({ id: 'a', model }).generate('hi', { modelSettings });
    expect(model.calls[0]).toMatchObject({ temperature: 0, maxOutputTokens: 100, topK: 1, seed: -3, stopSequences: ['END'], headers: { 'x-user': 'u-1' } });
  });
});

describe('providerOptions and Object.prototype', () => {
  it('a JSON "__proto__" key in providerOptions reaches the provider as an own key and pollutes nothing', async () => {
    const model = answer();
    const providerOptions = JSON.parse('{"openai":{"user":"u"},"__proto__":{"polluted":true}}') as AgentCallOptions['providerOptions'];
    await new Agent({ id: 'a', model, defaultOptions: { providerOptions: { anthropic: {} } } }).generate('hi', { providerOptions });
    expect(Object.hasOwn(model.calls[0]?.providerOptions ?? {}, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('a JSON "__proto__" key at the top of the options is an unknown option, not a prototype', async () => {
    await expectRefused(JSON.parse('{"__proto__":{"maxSteps":0,"polluted":true}}'), /options\.__proto__ is not an option/);
  });
});

describe('runId', () => {
  it.each([
    ['empty', '', /options\.runId must be a non-empty string/],
    ['with a NUL', 'run\u0000x', /options\.runId must be .*control characters/],
    ['with a CR/LF', 'run\r\nx', /options\.runId must be .*control characters/],
  ])('%s is a TypeError naming options.runId', async (_name, runId, message) => {
    await expectRefused({ runId }, message);
  });

  it('10 KB of printable text is a run id like another (documented: any string)', async () => {
    const runId = 'r'.repeat(10_240);
    const result = await new Agent({ id: 'a', model: answer() }).generate('hi', { runId });
    expect(result.runId).toBe(runId);
  });
});

describe('requestContext', () => {
  it.each([
    ['a plain object', { tenant: 'acme' }],
    ['a string', 'acme'],
    ['get and set only (no has / entries: the run reads through those)', { get: () => 'x', set: () => undefined }],
  ])('%s is a TypeError naming options.requestContext', async (_name, requestContext) => {
    await expectRefused({ requestContext }, /options\.requestContext must be a RequestContext/);
  });

  it('a Map is read through (documented: another context with the same methods)', async () => {
    let seen: unknown;
    const model = answer();
    const agent = new Agent({ id: 'a', model, inputProcessors: [{ id: 'p', processInput: ({ requestContext }) => void (seen = requestContext.get('tenant')) }] });
    await agent.generate('hi', { requestContext: new Map([['tenant', 'acme']]) as unknown as RequestContext });
    expect(seen).toBe('acme');
  });
});

describe('abortSignal', () => {
  it('already aborted: the run ends with an abort chunk, generate() rejects with an AbortError, the model is never called', async () => {
    const model = answer();
    const agent = new Agent({ id: 'a', model });
    const controller = new AbortController();
    controller.abort();
    const chunks = await lastValueFrom(agent.stream$('hi', { abortSignal: controller.signal }).pipe(toArray()));
    expect(types(chunks)).toEqual(['start', 'abort']);
    await expect(agent.generate('hi', { abortSignal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(model.calls).toHaveLength(0);
  });

  it('a look-alike object is a TypeError naming options.abortSignal', async () => {
    await expectRefused({ abortSignal: { aborted: false, addEventListener: () => undefined, removeEventListener: () => undefined } }, /options\.abortSignal must be an AbortSignal/);
  });
});

describe('instructions', () => {
  it('a 5 MB override reaches the model as the system message', async () => {
    const model = answer();
    const instructions = 'x'.repeat(5 * 1024 * 1024);
    await new Agent({ id: 'a', model, instructions: 'default' }).generate('hi', { instructions });
    expect(model.calls[0]?.prompt[0]).toEqual({ role: 'system', content: instructions });
  });
});

describe('options objects that are not plain', () => {
  it('frozen options (and frozen nested settings) run as given', async () => {
    const model = answer();
    const options = Object.freeze({ maxSteps: 2, modelSettings: Object.freeze({ temperature: 0, headers: Object.freeze({ 'x-user': 'u' }) }), activeTools: Object.freeze(['weather']) });
    const result = await new Agent({ id: 'a', model, tools: { weather } }).generate('hi', options as unknown as AgentCallOptions);
    expect(result.text).toBe('ok');
    expect(model.calls[0]).toMatchObject({ temperature: 0, headers: { 'x-user': 'u' } });
  });

  it('a Proxy that throws on get: stream$() is start, error (the thrown error) — not an Observable error; generate() rejects with it', async () => {
    const hostile = new Error('no reads');
    const options = new Proxy({ maxSteps: 1 }, { get: () => { throw hostile; } });
    const model = answer();
    const agent = new Agent({ id: 'a', model });
    const chunks = await lastValueFrom(agent.stream$('hi', options as AgentCallOptions).pipe(toArray()));
    expect(types(chunks)).toEqual(['start', 'error']);
    expect(errorOf(chunks)).toBe(hostile);
    // generate(): the documented AgentRunError, the thrown error as its cause
    const rejected = await agent.generate('hi', options as AgentCallOptions).catch((thrown: unknown) => thrown);
    expect(AgentRunError.isInstance(rejected) && rejected.cause).toBe(hostile);
    expect(model.calls).toHaveLength(0);
  });

  it('getters that change between reads: the value checked is the value used (read once)', async () => {
    const reads = { maxSteps: 0, modelSettings: 0, headers: 0 };
    const headers = {
      get ['x-user']() {
        return reads.headers++ === 0 ? 'u' : 'u\r\nx-admin: 1';
      },
    };
    const options = {
      get maxSteps() {
        return reads.maxSteps++ === 0 ? 1 : Number.NaN;
      },
      get modelSettings() {
        return reads.modelSettings++ === 0 ? { headers } : { temperature: Number.NaN };
      },
    };
    const model = answer();
    const result = await new Agent({ id: 'a', model }).generate('hi', options as unknown as AgentCallOptions);
    expect(result.text).toBe('ok');
    expect(model.calls).toHaveLength(1);
    expect(model.calls[0]?.temperature).toBeUndefined();
    expect(model.calls[0]?.headers).toEqual({ 'x-user': 'u' });
  });
});
