/**
 * `AgentOutput`'s sink is the consumer at the end of the run's pipeline. A throw while it takes a
 * chunk (injected here into its chunk log) must end `fullStream`, `textStream` and `result` with
 * that error and stop the run — not become an error RxJS only reports, with the streams left open.
 */
import { NEVER, Observable, concat, finalize, from, interval, map, take } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChunkLog } from '../../src/contract/chunk-log.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { Agent } from '../../src/loop/agent.js';
import { AgentOutput } from '../../src/loop/consumers/agent-output.js';
import type { RunItem } from '../../src/loop/run/run-events.js';
import { makeChunk } from '../../src/contract/make-chunk.js';
import { textParts } from '../../src/testing/model-parts.js';
import { mockModel } from '../../src/testing/mock-model.js';

const boom = new Error('the sink broke');

/** Makes the chunk log throw on its `nth` push (1-based). */
function breakChunkLogAt(nth: number): void {
  const push = ChunkLog.prototype.push;
  let pushes = 0;
  vi.spyOn(ChunkLog.prototype, 'push').mockImplementation(function (this: ChunkLog, value: ChunkType) {
    pushes += 1;
    if (pushes === nth) throw boom;
    push.call(this, value);
  });
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('AgentOutput: a throw inside its sink', () => {
  it('ends fullStream, textStream and result with the error, and stops the provider stream', async () => {
    let providerStopped = false;
    // the provider keeps its stream open after six deltas: only the run's unsubscription ends it
    const model = mockModel({ stream: concat(from(textParts('one two three four five six')), NEVER).pipe(finalize(() => (providerStopped = true))) });
    const agent = new Agent({ id: 'a', instructions: 'x', model });
    breakChunkLogAt(4);
    const unhandled: unknown[] = [];
    const onUnhandled = (error: unknown): void => void unhandled.push(error);
    process.on('uncaughtException', onUnhandled);
    try {
      const output = await agent.stream('hi');
      const text = output.textStream;
      const read: ChunkType[] = [];
      const streamError = await rejection(
        (async () => {
          for await (const value of output.fullStream) read.push(value);
        })(),
      );
      expect(streamError).toBe(boom);
      expect(read.length).toBeLessThan(4);
      expect(await rejection(output.result)).toBe(boom);
      expect(await rejection(text.getReader().read())).toBe(boom);
      expect(providerStopped).toBe(true);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('uncaughtException', onUnhandled);
    }
  });

  it('a run that emits synchronously inside subscribe is unsubscribed once the constructor can', async () => {
    let emitted = 0;
    let unsubscribed = false;
    const values: RunItem[] = Array.from({ length: 5 }, (_, index) => makeChunk('r', 'text-delta', { id: 't', text: `${index}` }));
    const run = concat(
      new Observable<RunItem>((subscriber) => {
        for (const value of values) {
          if (subscriber.closed) return;
          emitted += 1;
          subscriber.next(value);
        }
        subscriber.complete();
      }),
      interval(1).pipe(
        take(1000),
        map(() => values[0] as RunItem),
      ),
    ).pipe(finalize(() => (unsubscribed = true)));
    breakChunkLogAt(2);
    const output = new AgentOutput(run);
    expect(unsubscribed).toBe(true);
    expect(emitted).toBe(5); // a synchronous source cannot see the unsubscription before it returns
    expect(await rejection(output.result)).toBe(boom);
    expect(await rejection(output.fullStream.getReader().read())).toBe(boom);
  });
});
