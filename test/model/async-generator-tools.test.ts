/** Tools written as async generators stop being pulled when the run is cancelled. */
import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { Agent, type ChunkType } from '../../src/index.js';
import { finishPart, mockModel, textParts, toolCallParts } from '../../src/testing/index.js';
import { failOnProcessLevelErrors } from './process-guard.js';

failOnProcessLevelErrors();

const tick = (ms = 2): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function toolCallingModel() {
  let call = 0;
  return mockModel({
    parts: () => (call++ === 0 ? [...toolCallParts('progress', {}, { toolCallId: 'call_1' }), finishPart('tool-calls')] : [...textParts('done'), finishPart()]),
  });
}

/** An async iterable that counts `next()` calls (and those made after `signal` aborted). */
function countingIterable(signal: () => AbortSignal | undefined, values = Number.POSITIVE_INFINITY) {
  const state = { nexts: 0, nextsAfterAbort: 0, returned: 0 };
  let index = 0;
  const iterable: AsyncIterable<unknown> = {
    [Symbol.asyncIterator]: () => ({
      async next() {
        state.nexts++;
        if (signal()?.aborted === true) state.nextsAfterAbort++;
        await tick();
        return index < values ? { done: false, value: { step: index++ } } : { done: true, value: undefined };
      },
      async return() {
        state.returned++;
        return { done: true, value: undefined };
      },
    }),
  };
  return { iterable, state };
}

describe('async generator tools and cancellation', () => {
  it("the call's abortSignal: return() is called and nothing is pulled after the abort", async () => {
    const controller = new AbortController();
    const { iterable, state } = countingIterable(() => controller.signal);
    const agent = new Agent({
      id: 'a',
      instructions: 'x',
      model: toolCallingModel(),
      tools: { progress: { description: 'streams progress', inputSchema: z.object({}), execute: () => iterable } },
    });
    const done = lastValueFrom(agent.stream$('Go', { abortSignal: controller.signal }).pipe(toArray()));
    while (state.nexts < 3) await tick(1);
    controller.abort('user left');
    const chunks: ChunkType[] = await done;
    await tick(20);
    expect(chunks.at(-1)?.type).toBe('abort');
    expect(state.returned).toBe(1);
    expect(state.nextsAfterAbort).toBe(0);
    const pulledAtAbort = state.nexts;
    await tick(20);
    expect(state.nexts).toBe(pulledAtAbort);
  });

  it('unsubscribing: a real async function* runs its finally, and no code after a yield runs after the unsubscribe', async () => {
    const events: string[] = [];
    let unsubscribed = false;
    async function* progress(): AsyncGenerator<{ step: number }> {
      try {
        for (let step = 0; ; step++) {
          yield { step };
          events.push(unsubscribed ? 'resumed-after-unsubscribe' : 'resumed');
          await tick();
        }
      } finally {
        events.push('finally');
      }
    }
    const agent = new Agent({
      id: 'a',
      instructions: 'x',
      model: toolCallingModel(),
      tools: { progress: { description: 'streams progress', inputSchema: z.object({}), execute: () => progress() } },
    });
    const subscription = agent.stream$('Go').subscribe();
    while (events.length < 3) await tick(1);
    unsubscribed = true;
    subscription.unsubscribe();
    await tick(30);
    expect(events).not.toContain('resumed-after-unsubscribe');
    expect(events.at(-1)).toBe('finally');
  });

  it('a generator that finishes still gives its last value as the result (preliminary results)', async () => {
    const { iterable, state } = countingIterable(() => undefined, 3);
    const agent = new Agent({
      id: 'a',
      instructions: 'x',
      model: toolCallingModel(),
      tools: { progress: { description: 'streams progress', inputSchema: z.object({}), execute: () => iterable } },
    });
    const result = await agent.generate('Go');
    expect(result.toolResults.map((toolResult) => toolResult.result)).toEqual([{ step: 2 }]);
    expect(state.nexts).toBe(4);
    expect(state.returned).toBe(0);
  });

  it('a return() that throws does not escape', async () => {
    const controller = new AbortController();
    let nexts = 0;
    const iterable: AsyncIterable<unknown> = {
      [Symbol.asyncIterator]: () => ({
        next: async () => {
          nexts++;
          await tick();
          return { done: false, value: nexts };
        },
        return: () => {
          throw new Error('return exploded');
        },
      }),
    };
    const agent = new Agent({
      id: 'a',
      instructions: 'x',
      model: toolCallingModel(),
      tools: { progress: { description: 'p', inputSchema: z.object({}), execute: () => iterable } },
    });
    const done = lastValueFrom(agent.stream$('Go', { abortSignal: controller.signal }).pipe(toArray()));
    while (nexts < 2) await tick(1);
    controller.abort();
    expect((await done).at(-1)?.type).toBe('abort');
  });
});
