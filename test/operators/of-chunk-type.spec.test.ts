import { describe, expect, expectTypeOf, it } from 'vitest';
import { ofChunkType } from '../../src/operators/of-chunk-type.js';
import type { AgentChunk, ChunkType, DataChunkType } from '../../src/contract/chunk-types.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { createTestScheduler } from '../../src/testing/test-scheduler.js';

const s = chunk.start();
const d = chunk.textDelta('hi');
const e = chunk.textDelta('there');
const r = chunk.reasoningDelta('hmm');
const x = chunk.data('data-progress', { pct: 50 });
const f = chunk.finish();

describe('ofChunkType (marbles)', () => {
  it('completes on empty and stays silent on never', () => {
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold<ChunkType>('|').pipe(ofChunkType('text-delta'))).toBe('|');
      expectObservable(cold<ChunkType>('-').pipe(ofChunkType('text-delta'))).toBe('-');
    });
  });

  it('keeps only the chunks of one type', () => {
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('s-d-r-e-(f|)', { s, d, r, e, f }).pipe(ofChunkType('text-delta'))).toBe('--d---e-|', { d, e });
    });
  });

  it('keeps the chunks of several types, data chunks included', () => {
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('s-d-x-r-(f|)', { s, d, x, r, f }).pipe(ofChunkType('data-progress', 'reasoning-delta'))).toBe('----x-r-|', { x, r });
    });
  });

  it('forwards errors and unsubscribes early', () => {
    const failure = new Error('down');
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      expectObservable(cold('-d-#', { d }, failure).pipe(ofChunkType('text-delta'))).toBe('-d-#', { d }, failure);
      const source = cold('-d--e|', { d, e });
      expectObservable(source.pipe(ofChunkType('text-delta')), '^--!').toBe('-d--', { d });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('narrows the chunk type', () => {
    expectTypeOf(ofChunkType('text-delta')).returns.toEqualTypeOf<import('rxjs').Observable<AgentChunk<'text-delta'>>>();
    expectTypeOf(ofChunkType('data-progress')).returns.toEqualTypeOf<import('rxjs').Observable<DataChunkType<'data-progress'>>>();
  });
});
