/** toUIMessageStream reads the run only as fast as its reader pulls. */
import { describe, expect, it } from 'vitest';
import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { filter, from, map, pipe, type Observable } from 'rxjs';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { toUIMessageStream, toUIMessageStreamResponse } from '../../src/ai-sdk/index.js';
import { Agent } from '../../src/index.js';

const TOTAL = 5_000;

/** A V4 model over a pull-based stream of TOTAL text deltas that counts every pull. */
function countingModel(): { model: LanguageModelV4; pulls: () => number } {
  let pulls = 0;
  const model: LanguageModelV4 = {
    specificationVersion: 'v4',
    provider: 'test.counting',
    modelId: 'counting',
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('not used')),
    async doStream() {
      let sent = 0;
      const stream = new ReadableStream<LanguageModelV4StreamPart>(
        {
          pull(controller) {
            pulls++;
            if (sent === 0) controller.enqueue({ type: 'text-start', id: 't' });
            else if (sent <= TOTAL) controller.enqueue({ type: 'text-delta', id: 't', delta: 'x' });
            else if (sent === TOTAL + 1) controller.enqueue({ type: 'text-end', id: 't' });
            else if (sent === TOTAL + 2) {
              controller.enqueue({
                type: 'finish',
                finishReason: { unified: 'stop', raw: 'stop' },
                usage: {
                  inputTokens: { total: 1, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
                  outputTokens: { total: TOTAL, text: undefined, reasoning: undefined },
                },
              });
            } else controller.close();
            sent++;
          },
        },
        { highWaterMark: 0 },
      );
      return { stream };
    },
  };
  return { model, pulls: () => pulls };
}

const settle = (ms = 30): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('toUIMessageStream backpressure', () => {
  it('pulls a bounded number of provider parts while the reader waits, then delivers everything', async () => {
    const { model, pulls } = countingModel();
    const agent = new Agent({ id: 'a', instructions: 'x', model });
    const stream = toUIMessageStream(agent.stream$('Hi'));
    const reader = stream.getReader();
    const first = await reader.read();
    expect(first.value?.type).toBe('start');
    await settle();
    const whileWaiting = pulls();
    // the same bound agent.stream() has: a queue of 16 plus what is in flight
    expect(whileWaiting).toBeGreaterThan(0);
    expect(whileWaiting).toBeLessThan(40);
    await settle();
    expect(pulls()).toBe(whileWaiting);
    // reading some lets the run go on, a little
    for (let index = 0; index < 20; index++) await reader.read();
    await settle();
    expect(pulls()).toBeGreaterThan(whileWaiting);
    expect(pulls()).toBeLessThan(whileWaiting + 60);
    let deltas = 0;
    let last: string | undefined;
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      if (next.value.type === 'text-delta') deltas++;
      last = next.value.type;
    }
    expect(deltas).toBeGreaterThan(TOTAL - 40);
    expect(last).toBe('finish');
    expect(pulls()).toBe(TOTAL + 4);
  });

  it('through toUIMessageStreamResponse (SSE body), the provider is paced by the body reader', async () => {
    const { model, pulls } = countingModel();
    const agent = new Agent({ id: 'a', instructions: 'x', model });
    const response = toUIMessageStreamResponse(agent.stream$('Hi'));
    const reader = response.body!.getReader();
    await reader.read();
    await settle();
    expect(pulls()).toBeLessThan(60);
    await reader.cancel();
  });

  it('a piped copy of stream$() is paced too (pipe keeps the paced variant), and delivers the whole run', async () => {
    const { model, pulls } = countingModel();
    const agent = new Agent({ id: 'a', instructions: 'x', model });
    const reader = toUIMessageStream(agent.stream$('Hi').pipe(map((chunk) => chunk))).getReader();
    await reader.read();
    await settle();
    expect(pulls()).toBeLessThan(40);
    const types: string[] = [];
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      types.push(next.value.type);
    }
    expect(types.at(-1)).toBe('finish');
    expect(pulls()).toBe(TOTAL + 4);
  });

  it.each([
    ['pipe(…)(run$): the function form of pipe', (run$: Observable<ChunkType>) => pipe(map((chunk: ChunkType) => chunk), filter(() => true))(run$)],
    ['an operator applied directly: map(…)(run$)', (run$: Observable<ChunkType>) => map((chunk: ChunkType) => chunk)(run$)],
    ['from(run$)', (run$: Observable<ChunkType>) => from(run$)],
  ])('%s is paced too, and delivers the whole run', async (_name, derive) => {
    const { model, pulls } = countingModel();
    const agent = new Agent({ id: 'a', instructions: 'x', model });
    const reader = toUIMessageStream(derive(agent.stream$('Hi'))).getReader();
    await reader.read();
    await settle();
    expect(pulls()).toBeLessThan(40);
    let last: string | undefined;
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      last = next.value.type;
    }
    expect(last).toBe('finish');
    expect(pulls()).toBe(TOTAL + 4);
  });

  it('cancelling the reader while the run is held ends the run (no further pulls)', async () => {
    const { model, pulls } = countingModel();
    const agent = new Agent({ id: 'a', instructions: 'x', model });
    const reader = toUIMessageStream(agent.stream$('Hi')).getReader();
    await reader.read();
    await settle();
    await reader.cancel();
    const atCancel = pulls();
    await settle();
    expect(pulls()).toBe(atCancel);
    expect(atCancel).toBeLessThan(40);
  });
});
