/**
 * A model without the `OBSERVABLE_STREAM` fast path is read through `doStream` by the step's fused
 * output (read, convert, processors, fence, accumulate in one subscriber). The same parts must give
 * the same run as through the Observable path: chunks, errors, retries, tools, and the provider's
 * stream cancelled when the run stops early.
 */
import { describe, expect, it } from 'vitest';
import { firstValueFrom, lastValueFrom, take, toArray } from 'rxjs';
import { z } from 'zod';
import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { Agent } from '../../src/loop/agent.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { mockModel, type MockModel, type MockModelOptions } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { waitFor } from '../support/wait-for.js';

/** The same mock model without its Observable fast path: `doStream` and its ReadableStream only. */
function plain(model: MockModel): LanguageModelV4 {
  return {
    specificationVersion: 'v4',
    provider: model.provider,
    modelId: model.modelId,
    supportedUrls: {},
    doStream: (options) => model.doStream(options),
    doGenerate: (options) => model.doGenerate(options),
  };
}

/** A chunk without what differs between runs (ids, dates). */
function shape(chunk: ChunkType): unknown {
  const { runId: _runId, ...rest } = chunk as ChunkType & { runId?: string };
  return JSON.parse(JSON.stringify(rest, (key, value: unknown) => (key === 'messageId' || key === 'timestamp' || key === 'id' && typeof value === 'string' && value.length > 20 ? '…' : value)));
}

async function both(
  options: MockModelOptions,
  config: () => Omit<ConstructorParameters<typeof Agent>[0], 'id' | 'model'>,
): Promise<{ live: unknown[]; observable: unknown[]; liveModel: MockModel }> {
  const observableModel = mockModel(options);
  const liveModel = mockModel(options);
  // fresh processors per run (a processor may count what it saw)
  const run = (model: LanguageModelV4 | MockModel) =>
    lastValueFrom(new Agent({ id: 'a', model, ...config() }).stream$('Hi').pipe(toArray()));
  const [observable, live] = [await run(observableModel), await run(plain(liveModel))];
  return { live: live.map(shape), observable: observable.map(shape), liveModel };
}

const upper: Processor = {
  id: 'upper',
  processOutputStream: ({ part }) => (part.type === 'text-delta' ? { ...part, payload: { ...part.payload, text: part.payload.text.toUpperCase() } } : part),
};
function dropSecond(): Processor {
  let deltas = 0;
  return { id: 'drop-second', processOutputStream: ({ part }) => (part.type === 'text-delta' && ++deltas === 2 ? null : part) };
}
const later: Processor = { id: 'later', processOutputStream: async ({ part }) => part };

describe('the live doStream path gives the run the Observable path gives', () => {
  it('text through synchronous and async processors (rewrite, drop, await)', async () => {
    const { live, observable } = await both({ parts: [...textParts('one two three', { chunkSize: 3 }), finishPart()] }, () => ({
      outputProcessors: [upper, later],
    }));
    expect(live).toEqual(observable);
    expect(live.filter((chunk) => (chunk as ChunkType).type === 'text-delta').map((chunk) => (chunk as { payload: { text: string } }).payload.text).join('')).toBe('ONE TWO THREE');
  });

  it('a dropped chunk is left out the same way', async () => {
    const { live, observable } = await both({ parts: [...textParts('abc', { chunkSize: 1 }), finishPart()] }, () => ({ outputProcessors: [dropSecond()] }));
    expect(live).toEqual(observable);
    expect(live.filter((chunk) => (chunk as ChunkType).type === 'text-delta')).toHaveLength(2);
  });

  it('an error part ends the run with an error chunk', async () => {
    const parts: LanguageModelV4StreamPart[] = [...textParts('ab', { chunkSize: 1 }).slice(0, 2), { type: 'error', error: new Error('boom') }];
    const { live, observable } = await both({ parts }, () => ({ outputProcessors: [upper] }));
    expect(live).toEqual(observable);
    expect((live.at(-1) as ChunkType).type).toBe('error');
  });

  it('processAPIError retries the call, with the same chunks', async () => {
    const parts = ({ callIndex }: { callIndex: number }): LanguageModelV4StreamPart[] =>
      callIndex === 0 ? [{ type: 'error', error: new Error('overloaded') }] : [...textParts('ok'), finishPart()];
    const retry: Processor = { id: 'retry', processAPIError: () => ({ retry: true }) };
    const { live, observable, liveModel } = await both({ parts }, () => ({ errorProcessors: [retry], outputProcessors: [upper] }));
    expect(live).toEqual(observable);
    expect(liveModel.calls).toHaveLength(2);
    expect((live.at(-1) as ChunkType).type).toBe('finish');
  });

  it('a tripwire retry re-runs the step', async () => {
    const guard = (): Processor => {
      let attempts = 0;
      return {
        id: 'guard',
        processOutputStream: ({ part, abort }) => {
          if (part.type === 'text-delta' && attempts++ === 0) abort('try again', { retry: true });
          return part;
        },
      };
    };
    const { live, observable } = await both({ parts: [...textParts('fine'), finishPart()] }, () => ({ outputProcessors: [guard()], maxProcessorRetries: 1 }));
    expect(live).toEqual(observable);
    expect((live.at(-1) as ChunkType).type).toBe('finish');
  });

  it('a tool step, then the answer', async () => {
    const parts = ({ callIndex }: { callIndex: number }): LanguageModelV4StreamPart[] =>
      callIndex === 0 ? [...toolCallParts('add', { a: 1, b: 2 }), finishPart('tool-calls')] : [...textParts('3'), finishPart()];
    const tools = { add: { inputSchema: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }: { a: number; b: number }) => a + b } };
    const { live, observable } = await both({ parts }, () => ({ tools, outputProcessors: [upper] }));
    expect(live).toEqual(observable);
    expect(live.map((chunk) => (chunk as ChunkType).type)).toContain('tool-result');
  });

  it('a processor that throws ends the run and cancels the provider stream', async () => {
    const model = mockModel({ parts: [...textParts('abcdef', { chunkSize: 1 }), finishPart()] });
    const thrower: Processor = {
      id: 'thrower',
      processOutputStream: ({ part }) => {
        if (part.type === 'text-delta' && part.payload.text === 'c') throw new Error('no c');
        return part;
      },
    };
    const chunks = await lastValueFrom(new Agent({ id: 'a', model: plain(model), outputProcessors: [thrower] }).stream$('Hi').pipe(toArray()));
    expect(chunks.at(-1)?.type).toBe('error');
    expect(chunks.filter((chunk) => chunk.type === 'text-delta')).toHaveLength(2);
    expect(model.abortSignals[0]?.aborted).toBe(true);
  });

  it('a consumer that leaves mid-stream aborts the call', async () => {
    const model = mockModel({ parts: [...textParts('abcdef', { chunkSize: 1 }), finishPart()] });
    const agent = new Agent({ id: 'a', model: plain(model), outputProcessors: [upper] });
    const five = await firstValueFrom(agent.stream$('Hi').pipe(take(5), toArray()));
    expect(five.map((chunk) => chunk.type)).toEqual(['start', 'step-start', 'text-start', 'text-delta', 'text-delta']);
    await waitFor(() => model.abortSignals[0]?.aborted === true, 'the call to be aborted');
    expect(model.abortSignals[0]?.aborted).toBe(true);
  });
});
