import { describe, expect, it } from 'vitest';
import { from, lastValueFrom, of, toArray } from 'rxjs';
import { orderedMergeMap } from '../../src/loop/tools/ordered-merge.js';
import { createTestScheduler } from '../../src/testing/test-scheduler.js';

describe('orderedMergeMap', () => {
  it('runs projects concurrently (bounded) and emits in source order', () => {
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      const durations: Record<string, string> = { a: '----A|', b: '-B|', c: '--C|' };
      const result = cold('(abc|)').pipe(orderedMergeMap((value: string) => cold(durations[value] as string), 2));
      // a and b start at 0; b completes at 2 (c starts), c completes at 5, a completes at 5 → all at 5, in order
      expectObservable(result).toBe('-----(ABC|)');
    });
  });

  it('copes with projects that complete synchronously (regression: a synchronous tool-error hung the step)', async () => {
    const values = await lastValueFrom(from([1, 2, 3]).pipe(orderedMergeMap((value) => of(value * 10), 2), toArray()));
    expect(values).toEqual([10, 20, 30]);
  });
});
