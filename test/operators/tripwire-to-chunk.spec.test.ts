import { describe, expect, it } from 'vitest';
import { processOutputStream } from '../../src/operators/process-output-stream.js';
import { toTripwireChunk, tripwireToChunk } from '../../src/operators/tripwire-to-chunk.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { createTestScheduler } from '../../src/testing/test-scheduler.js';

const a = chunk.textDelta('a');
const b = chunk.textDelta('b');

describe('tripwireToChunk (marbles)', () => {
  it('completes on empty, stays silent on never, passes values without frames', () => {
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold<ChunkType>('|').pipe(tripwireToChunk('test-run'))).toBe('|');
      expectObservable(cold<ChunkType>('-').pipe(tripwireToChunk('test-run'))).toBe('-');
      expectObservable(cold('a|', { a }).pipe(tripwireToChunk('test-run'))).toBe('a|', { a });
      expectObservable(cold('a-(b|)', { a, b }).pipe(tripwireToChunk('test-run'))).toBe('a-(b|)', { a, b });
    });
  });

  it('turns a TripWire error into one terminal tripwire chunk and completes', () => {
    const tripwire = new TripWire('PII found', { retry: false, metadata: { kind: 'email' } }, 'pii');
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-#', { a }, tripwire);
      expectObservable(source.pipe(tripwireToChunk('test-run'))).toBe('-a-(t|)', {
        a,
        t: chunk.tripwire({ reason: 'PII found', retry: false, metadata: { kind: 'email' }, processorId: 'pii' }),
      });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('lets other errors through', () => {
    const failure = new Error('provider down');
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-a-#', { a }, failure).pipe(tripwireToChunk('test-run'))).toBe('-a-#', { a }, failure);
    });
  });

  it('ends a processOutputStream abort with the tripwire chunk of the processor that aborted', () => {
    const guard: Processor = { id: 'guard', processOutputStream: ({ part, abort }) => (part === b ? abort() : part) };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      const result = cold('-a-b-a|', { a, b }).pipe(processOutputStream([guard]), tripwireToChunk('test-run'));
      expectObservable(result).toBe('-a-(t|)', {
        a,
        t: chunk.tripwire({ reason: 'Stream part blocked by guard', retry: false, processorId: 'guard' }),
      });
    });
  });

  it('unsubscribes the source on early unsubscription', () => {
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a--b|', { a, b });
      expectObservable(source.pipe(tripwireToChunk('test-run')), '^--!').toBe('-a--', { a });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('toTripwireChunk stamps runId and from, and omits undefined metadata', () => {
    expect(toTripwireChunk(new TripWire('no', {}, 'p'), 'run-7')).toEqual({
      type: 'tripwire',
      runId: 'run-7',
      from: 'AGENT',
      payload: { reason: 'no', retry: false, processorId: 'p' },
    });
  });
});
