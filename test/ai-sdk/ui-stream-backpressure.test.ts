/** toUIMessageStream reads the run only as fast as its reader pulls. Also run on RxJS 8 (vitest project `rxjs8`). */
import { describe, expect, it } from 'vitest';
import { filter, from, map, pipe, takeWhile, type Observable } from 'rxjs';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { toUIMessageStream, toUIMessageStreamResponse } from '../../src/ai-sdk/index.js';
import { Agent, DemandGate } from '../../src/index.js';
import { countingModel as countingModelOf, settle } from '../loop/support/counting-model.js';
import { waitFor } from '../support/wait-for.js';

const TOTAL = 5_000;
const countingModel = (): ReturnType<typeof countingModelOf> => countingModelOf(TOTAL);

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

  it('stream$() given demand: undefined is the run itself too, paced by the stream', async () => {
    const { model, pulls } = countingModel();
    const agent = new Agent({ id: 'a', instructions: 'x', model });
    const reader = toUIMessageStream(agent.stream$('Hi', { demand: undefined })).getReader();
    await reader.read();
    await settle();
    expect(pulls()).toBeLessThan(40);
    await reader.cancel();
  });

  it('from(run$) is the run itself, and paced without a gate', async () => {
    const { model, pulls } = countingModel();
    const agent = new Agent({ id: 'a', instructions: 'x', model });
    const reader = toUIMessageStream(from(agent.stream$('Hi'))).getReader();
    await reader.read();
    await settle();
    expect(pulls()).toBeLessThan(40);
    await reader.cancel();
  });

  it.each([
    ['run$.pipe(…)', (run$: Observable<ChunkType>) => run$.pipe(map((chunk) => chunk), takeWhile(() => true, true))],
    ['pipe(…)(run$): the function form of pipe', (run$: Observable<ChunkType>) => pipe(map((chunk: ChunkType) => chunk), filter(() => true))(run$)],
    ['an operator applied directly: map(…)(run$)', (run$: Observable<ChunkType>) => map((chunk: ChunkType) => chunk)(run$)],
  ])('%s is paced by the demand gate given to stream$() and toUIMessageStream, and delivers the whole run', async (_name, derive) => {
    const { model, pulls } = countingModel();
    const agent = new Agent({ id: 'a', instructions: 'x', model });
    const demand = new DemandGate();
    const reader = toUIMessageStream(derive(agent.stream$('Hi', { demand })), { demand }).getReader();
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

  it('through toUIMessageStreamResponse, a piped copy is paced by the gate given in its options', async () => {
    const { model, pulls } = countingModel();
    const agent = new Agent({ id: 'a', instructions: 'x', model });
    const demand = new DemandGate();
    const response = toUIMessageStreamResponse(agent.stream$('Hi', { demand }).pipe(map((chunk) => chunk)), { demand });
    const reader = response.body!.getReader();
    await reader.read();
    await settle();
    expect(pulls()).toBeLessThan(60);
    await reader.cancel();
  });

  it('a piped copy without a gate is not paced (documented): the reply is read at its own speed into the queue', async () => {
    const { model, pulls } = countingModel();
    const agent = new Agent({ id: 'a', instructions: 'x', model });
    const reader = toUIMessageStream(agent.stream$('Hi').pipe(map((chunk) => chunk))).getReader();
    await reader.read();
    // the whole reply is pulled while the reader still waits after its first chunk
    await waitFor(() => pulls() === TOTAL + 4, 'the whole reply read with no reader');
    await reader.cancel();
  });

  it('a demand that is not a DemandGate is a TypeError thrown at once', () => {
    const { model } = countingModel();
    const agent = new Agent({ id: 'a', instructions: 'x', model });
    expect(() => toUIMessageStream(agent.stream$('Hi'), { demand: {} as DemandGate })).toThrow(/options\.demand must be a DemandGate/);
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
