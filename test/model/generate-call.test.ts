/**
 * `generateCall`: a `doGenerate` answer as the events of a streamed call, and what a broken or
 * slow provider does to it.
 */
import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { APICallError, type LanguageModelV4, type LanguageModelV4CallOptions, type LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { generateCall, generateResultParts } from '../../src/model/generate-call.js';
import { InvalidModelResponseError } from '../../src/model/errors/invalid-model-response-error.js';
import { usage } from '../../src/testing/model-parts.js';

const stop = { unified: 'stop', raw: 'stop' } as const;
const prompt: LanguageModelV4CallOptions = { prompt: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }] };

function answering(doGenerate: LanguageModelV4['doGenerate']): LanguageModelV4 {
  return {
    specificationVersion: 'v4',
    provider: 'acme',
    modelId: 'one',
    supportedUrls: {},
    doGenerate,
    doStream: () => Promise.reject(new Error('doStream must not be called')),
  };
}

/** A model whose `doGenerate` never answers, and the signal it was called with. */
function pending() {
  const called: { signal?: AbortSignal | undefined } = {};
  const model = answering((options) => {
    called.signal = options.abortSignal;
    return new Promise(() => undefined);
  });
  return { model, called };
}

const result = (content: LanguageModelV4GenerateResult['content'], extra: Partial<LanguageModelV4GenerateResult> = {}): LanguageModelV4GenerateResult => ({
  content,
  finishReason: stop,
  usage: usage({ inputTokens: 3, outputTokens: 2 }),
  warnings: [],
  ...extra,
});

describe('generateResultParts', () => {
  it('each text and reasoning block becomes one start/delta/end bracket; other content parts stay as they are; finish last', () => {
    const parts = generateResultParts(
      result(
        [
          { type: 'reasoning', text: 'Think.', providerMetadata: { anthropic: { signature: 'sig' } } },
          { type: 'text', text: 'Hello', providerMetadata: { openai: { itemId: 'msg_1' } } },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'lookup', input: '{"id":1}' },
          { type: 'source', sourceType: 'url', id: 's1', url: 'https://example.com' },
          { type: 'text', text: '' },
        ],
        { providerMetadata: { acme: { cost: 1 } }, warnings: [{ type: 'other', message: 'w' }] },
      ),
      { provider: 'acme' },
    );
    expect(parts).toEqual([
      { type: 'stream-start', warnings: [{ type: 'other', message: 'w' }] },
      { type: 'reasoning-start', id: 'reasoning-0' },
      { type: 'reasoning-delta', id: 'reasoning-0', delta: 'Think.' },
      { type: 'reasoning-end', id: 'reasoning-0', providerMetadata: { anthropic: { signature: 'sig' } } },
      { type: 'text-start', id: 'text-1' },
      { type: 'text-delta', id: 'text-1', delta: 'Hello' },
      { type: 'text-end', id: 'text-1', providerMetadata: { openai: { itemId: 'msg_1' } } },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'lookup', input: '{"id":1}' },
      { type: 'source', sourceType: 'url', id: 's1', url: 'https://example.com' },
      { type: 'text-start', id: 'text-4' },
      { type: 'text-end', id: 'text-4' },
      { type: 'finish', finishReason: stop, usage: usage({ inputTokens: 3, outputTokens: 2 }), providerMetadata: { acme: { cost: 1 } } },
    ]);
  });

  it('the response id, timestamp and model id become a response-metadata part', () => {
    const timestamp = new Date(0);
    const parts = generateResultParts(result([], { response: { id: 'resp_1', timestamp, modelId: 'one-2026', headers: { 'x-id': '1' } } }), {});
    expect(parts[1]).toEqual({ type: 'response-metadata', id: 'resp_1', timestamp, modelId: 'one-2026' });
  });

  it.each([
    ['null', null, /acme.*one.*resolved with null/],
    ['a string', 'ok', /resolved with string/],
    ['no content', { finishReason: stop, usage: usage() }, /without a content array/],
    ['no finishReason', { content: [], usage: usage() }, /without finishReason/],
    ['a content part without a type', { content: [{ text: 'x' }], finishReason: stop, usage: usage() }, /content\[0\] is not a content part/],
    ['a null content part', { content: ['x', null], finishReason: stop, usage: usage() }, /content\[0\]/],
  ])('a result with %s is an InvalidModelResponseError naming the provider and the problem', (_name, broken, problem) => {
    let thrown: unknown;
    try {
      generateResultParts(broken, { provider: 'acme', modelId: 'one' });
    } catch (error) {
      thrown = error;
    }
    expect(InvalidModelResponseError.isInstance(thrown)).toBe(true);
    expect((thrown as Error).message).toMatch(problem);
  });
});

describe('generateCall', () => {
  it('emits call-info (request, response headers), then the parts, then completes', async () => {
    const model = answering(async () => result([{ type: 'text', text: 'Hi' }], { request: { body: { n: 1 } }, response: { id: 'r', headers: { 'x-id': '1' }, body: { big: true } } }));
    const events = await lastValueFrom(generateCall(model, prompt).pipe(toArray()));
    expect(events.map((event) => event.type)).toEqual(['call-info', 'stream-start', 'response-metadata', 'text-start', 'text-delta', 'text-end', 'finish']);
    expect(events[0]).toEqual({ type: 'call-info', request: { body: { n: 1 } }, response: { headers: { 'x-id': '1' } } });
  });

  it('the provider gets its own signal, aborted when the subscriber leaves before the answer (the caller’s stays untouched)', async () => {
    const { model, called } = pending();
    const caller = new AbortController();
    const subscription = generateCall(model, { ...prompt, abortSignal: caller.signal }).subscribe();
    expect(called.signal?.aborted).toBe(false);
    subscription.unsubscribe();
    expect(called.signal?.aborted).toBe(true);
    expect(caller.signal.aborted).toBe(false);
  });

  it('the caller’s abort reaches the provider’s signal with its reason', async () => {
    const { model, called } = pending();
    const caller = new AbortController();
    generateCall(model, { ...prompt, abortSignal: caller.signal }).subscribe({ error: () => undefined });
    caller.abort('stop now');
    expect(called.signal?.aborted).toBe(true);
    expect(called.signal?.reason).toBe('stop now');
  });

  it('an answer after the subscriber left emits nothing', async () => {
    let answer: (value: LanguageModelV4GenerateResult) => void = () => undefined;
    const model = answering(() => new Promise((resolve) => (answer = resolve)));
    const seen: string[] = [];
    const subscription = generateCall(model, prompt).subscribe({ next: (event) => seen.push(event.type), error: (error) => seen.push(`error ${String(error)}`) });
    subscription.unsubscribe();
    answer(result([{ type: 'text', text: 'late' }]));
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([]);
  });

  it('a rejected doGenerate is the error notification, unchanged', async () => {
    const failure = new APICallError({ message: 'overloaded', url: 'https://acme', requestBodyValues: {}, statusCode: 529, isRetryable: true });
    const error = await lastValueFrom(generateCall(answering(() => Promise.reject(failure)), prompt)).catch((caught: unknown) => caught);
    expect(error).toBe(failure);
  });

  it('a doGenerate that throws before returning a promise is the error notification', async () => {
    const failure = new Error('bad options');
    const model = answering(() => {
      throw failure;
    });
    expect(await lastValueFrom(generateCall(model, prompt)).catch((caught: unknown) => caught)).toBe(failure);
  });

  it('a malformed answer is an InvalidModelResponseError, with nothing emitted before it', async () => {
    const seen: string[] = [];
    const model = answering(async () => ({ content: 'Hi' }) as unknown as LanguageModelV4GenerateResult);
    const error = await new Promise((resolve) => generateCall(model, prompt).subscribe({ next: (event) => seen.push(event.type), error: resolve }));
    expect(InvalidModelResponseError.isInstance(error)).toBe(true);
    expect(seen).toEqual([]);
  });

  it('a doGenerate that returns a plain value (no promise) is taken as the answer', async () => {
    const model = answering((() => result([{ type: 'text', text: 'sync' }])) as unknown as LanguageModelV4['doGenerate']);
    const events = await lastValueFrom(generateCall(model, prompt).pipe(toArray()));
    expect(events.some((event) => event.type === 'text-delta' && event.delta === 'sync')).toBe(true);
  });
});
