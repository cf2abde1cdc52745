/**
 * Where the `data-signal` chunk of a retried step goes (documented in docs/processors.md, "Sending a
 * signal to the next request"): at the start of the attempt it is for — after the failed attempt's
 * step-finish (reason 'retry') and the new step-start, before the new attempt's first part.
 */
import { describe, expect, it } from 'vitest';
import { APICallError, type LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { lastValueFrom, toArray } from 'rxjs';
import { Agent } from '../../src/loop/agent.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { PrefillErrorHandler } from '../../src/processors/prefill-error-handler.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';

const prefillRejection = () =>
  new APICallError({
    message: 'Bad request',
    url: 'https://api.anthropic.com/v1/messages',
    requestBodyValues: {},
    statusCode: 400,
    responseBody: '{"error":{"message":"This model does not support assistant message prefill."}}',
  });
const label = (chunk: ChunkType) =>
  chunk.type === 'step-finish' ? `step-finish(${String((chunk.payload as { stepResult?: { reason?: string } }).stepResult?.reason)})` : chunk.type;
const run = async (model: ReturnType<typeof mockModel>) => {
  const agent = new Agent({ id: 'a', model, errorProcessors: [new PrefillErrorHandler()] });
  const chunks = await lastValueFrom(agent.stream$([{ role: 'user', content: 'Write a poem' }, { role: 'assistant', content: 'Roses are' }]).pipe(toArray()));
  return chunks.map(label);
};

describe('the data-signal chunk of a retried step', () => {
  it('a thrown API error: after the failed attempt’s step-finish(retry) and the new step-start', async () => {
    const model = mockModel({ error: ({ callIndex }: { callIndex: number }) => (callIndex === 0 ? prefillRejection() : undefined), parts: [...textParts('red'), finishPart()] });
    expect(await run(model)).toEqual(['start', 'step-start', 'step-finish(retry)', 'step-start', 'data-signal', 'text-start', 'text-delta', 'text-end', 'step-finish(stop)', 'finish']);
  });

  it('an error part after streamed text: the failed attempt’s text stays before its step-finish(retry); the signal opens the next attempt', async () => {
    const failing: LanguageModelV4StreamPart[] = [{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'x' }, { type: 'error', error: prefillRejection() }];
    const model = mockModel({ parts: ({ callIndex }) => (callIndex === 0 ? failing : [...textParts('red'), finishPart()]) });
    expect(await run(model)).toEqual([
      'start', 'step-start', 'text-start', 'text-delta', 'text-end', 'step-finish(retry)',
      'step-start', 'data-signal', 'text-start', 'text-delta', 'text-end', 'step-finish(stop)', 'finish',
    ]);
  });
});
