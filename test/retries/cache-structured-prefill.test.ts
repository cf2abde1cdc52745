import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { APICallError } from '@ai-sdk/provider';
import { Agent } from '../../src/loop/agent.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { Processor, ProcessOutputStepArgs } from '../../src/contract/processor-types.js';
import { PrefillErrorHandler, isPrefillRejection } from '../../src/processors/prefill-error-handler.js';
import { ResponseCache, InMemoryResponseCacheStore } from '../../src/processors/response-cache.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { mockModel } from '../../src/testing/mock-model.js';

const contentOf = (chunks: ChunkType[]) =>
  chunks.filter((chunk) => !['start', 'step-start', 'step-finish', 'finish'].includes(chunk.type)).map((chunk) => JSON.stringify([chunk.type, (chunk as { payload?: unknown }).payload]));

describe('ResponseCache', () => {
  it('a second identical run makes no model call and streams the same chunks through the output processors', async () => {
    const model = mockModel({ parts: [...textParts('cached answer', { chunkSize: 4 }), finishPart('stop')] });
    const fromCache: boolean[] = [];
    const spy: Processor = { id: 'spy', processLLMResponse: ({ fromCache: cached }) => void fromCache.push(cached) };
    const seenByOutput: string[][] = [[], []];
    let run = 0;
    const output: Processor = {
      id: 'output-spy',
      processOutputStream: ({ part }) => {
        if (part.type === 'text-delta') seenByOutput[run]?.push(part.payload.text);
        return part;
      },
    };
    const cache = new ResponseCache();
    const agent = new Agent({ id: 'a', model, inputProcessors: [cache, spy], outputProcessors: [output] });
    const first = await lastValueFrom(agent.stream$('same question').pipe(toArray()));
    run = 1;
    const second = await lastValueFrom(agent.stream$('same question').pipe(toArray()));
    expect(model.calls).toHaveLength(1);
    expect(fromCache).toEqual([false, true]);
    expect(seenByOutput[1]).toEqual(seenByOutput[0]);
    expect(seenByOutput[0]?.join('')).toBe('cached answer');
    expect(contentOf(second)).toEqual(contentOf(first));
    await agent.generate('another question');
    expect(model.calls).toHaveLength(2);
  });

  it('entries expire after their TTL and the LRU keeps at most maxEntries', () => {
    let now = 0;
    const store = new InMemoryResponseCacheStore({ maxEntries: 2, now: () => now });
    store.set('a', { chunks: [] }, 100);
    store.set('b', { chunks: [] }, 100);
    store.get('a');
    store.set('c', { chunks: [] }, 100);
    expect(store.get('b')).toBeUndefined();
    expect(store.get('a')).toBeDefined();
    now = 150;
    expect(store.get('a')).toBeUndefined();
  });
});

describe('structured output', () => {
  const schema = z.object({ name: z.string(), age: z.number() });

  it('streams partial objects, validates the final one and asks the provider for JSON', async () => {
    const model = mockModel({ parts: [...textParts('{"name": "Ada", "age": 36}', { chunkSize: 5 }), finishPart()] });
    const chunks = await lastValueFrom(new Agent({ id: 'a', model }).stream$('who?', { structuredOutput: { schema } }).pipe(toArray()));
    const objects = chunks.flatMap((chunk) => (chunk.type === 'object' ? [chunk.payload.object] : []));
    expect(objects.length).toBeGreaterThan(1);
    expect(objects.at(-1)).toEqual({ name: 'Ada', age: 36 });
    expect(chunks.find((chunk) => chunk.type === 'object-result')).toMatchObject({ payload: { object: { name: 'Ada', age: 36 } } });
    expect(model.calls[0]?.responseFormat).toMatchObject({ type: 'json', schema: { type: 'object' } });
    const result = await new Agent({ id: 'a', model }).generate('who?', { structuredOutput: { schema } });
    expect(result.object).toEqual({ name: 'Ada', age: 36 });
  });

  it('a schema mismatch is retried with a budget, and the rejected attempt never reports its object', async () => {
    const answers = ['{"name": "Ada", "age": "old"}', '{"name": "Ada", "age": 36}'];
    const model = mockModel({ parts: ({ callIndex }) => [...textParts(answers[callIndex] ?? '{}'), finishPart()] });
    const result = await new Agent({ id: 'a', model, maxProcessorRetries: 1 }).generate('who?', { structuredOutput: { schema } });
    expect(model.calls).toHaveLength(2);
    expect(result.object).toEqual({ name: 'Ada', age: 36 });
    expect(result.steps[0]?.tripwire?.processorId).toBe('structured-output');
    expect(JSON.stringify(model.calls[1]?.prompt)).toContain('does not match the schema');
  });

  it('without a budget a mismatch ends in a tripwire', async () => {
    const model = mockModel({ parts: [...textParts('not json'), finishPart()] });
    const result = await new Agent({ id: 'a', model }).generate('who?', { structuredOutput: { schema } });
    expect(result.tripwire?.processorId).toBe('structured-output');
    expect(result.object).toBeUndefined();
  });
});

describe('PrefillErrorHandler', () => {
  const prefillError = () =>
    new APICallError({
      message: 'Bad request',
      url: 'https://api.anthropic.com/v1/messages',
      requestBodyValues: {},
      statusCode: 400,
      responseBody: '{"error":{"message":"This model does not support assistant message prefill."}}',
    });

  it('recognises the provider prefill rejections', () => {
    expect(isPrefillRejection(prefillError())).toBe(true);
    expect(isPrefillRejection(new Error('Assistant response prefill is incompatible with enable_thinking'))).toBe(true);
    expect(isPrefillRejection(new Error('Requests ending with a model turn are not supported'))).toBe(true);
    expect(isPrefillRejection(new Error('rate limited'))).toBe(false);
  });

  it('retries once with a continuation user turn', async () => {
    const model = mockModel({ error: ({ callIndex }: { callIndex: number }) => (callIndex === 0 ? prefillError() : undefined), parts: [...textParts('continued'), finishPart()] });
    const agent = new Agent({ id: 'a', model, errorProcessors: [new PrefillErrorHandler()] });
    const result = await agent.generate([
      { role: 'user', content: 'Write a poem' },
      { role: 'assistant', content: 'Roses are' },
    ]);
    expect(result.text).toBe('continued');
    expect(model.calls).toHaveLength(2);
    const last = model.calls[1]?.prompt.at(-1);
    expect(last?.role).toBe('user');
    // sent with sendSignal (the reference's signal): this request only, never stored
    expect(JSON.stringify(last)).toContain('<system-reminder type=\\"anthropic-prefill-processor-retry\\">continue</system-reminder>');
    expect(result.steps.flatMap((step) => step.text)).not.toContain('continue');
  });

  it('does not retry a second time', async () => {
    const model = mockModel({ error: prefillError() });
    await new Agent({ id: 'a', model, errorProcessors: [new PrefillErrorHandler()] }).generate('x').catch(() => undefined);
    expect(model.calls).toHaveLength(2);
  });
});

describe("the specification's QualityGuardrail", () => {
  class QualityGuardrail implements Processor {
    id = 'quality-guardrail';
    async processOutputStep({ text, abort, retryCount }: ProcessOutputStepArgs) {
      const score = await evaluateResponseQuality(text);
      if (score < 0.7) {
        if (retryCount < 3) {
          abort('Response quality too low. Please provide more detail.', { retry: true, metadata: { qualityScore: score } });
        } else {
          abort('Response quality too low after multiple attempts.');
        }
      }
      return [];
    }
  }
  async function evaluateResponseQuality(text: string): Promise<number> {
    return Math.min(1, text.split(/\s+/).length / 10);
  }

  it('retries and ends with the improved text', async () => {
    const answers = ['Too short.', 'Still short here.', 'This answer explains the topic with enough words to pass the check.'];
    const model = mockModel({ parts: ({ callIndex }) => [...textParts(answers[callIndex] ?? ''), finishPart()] });
    const agent = new Agent({ id: 'a', model, outputProcessors: [new QualityGuardrail()], maxProcessorRetries: 3 });
    const result = await agent.generate('Explain');
    expect(result.text).toBe(answers[2]);
    expect(model.calls).toHaveLength(3);
    expect(result.steps.map((step) => step.tripwire?.metadata)).toEqual([{ qualityScore: 0.2 }, { qualityScore: 0.3 }, undefined]);
    expect(JSON.stringify(model.calls[2]?.prompt)).toContain('Response quality too low. Please provide more detail.');
    expect(JSON.stringify(model.calls[2]?.prompt)).not.toContain('Still short here.');
  });
});
