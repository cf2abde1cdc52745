import { describe, expect, it } from 'vitest';
import { from, lastValueFrom, of, retry, toArray } from 'rxjs';
import { orderedMergeMap } from 'rxagent/loop';
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

describe('orderedMergeMap: marble checklist', () => {
  const scheduler = () => createTestScheduler(expect);

  it('an empty source completes at once, projecting nothing', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<string>('|').pipe(orderedMergeMap((value) => cold(`-${value}|`), 2))).toBe('|');
    });
  });

  it('a never source stays silent', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<string>('-').pipe(orderedMergeMap((value) => cold(`-${value}|`), 2))).toBe('-');
    });
  });

  it('one value: its project’s value when the project completes', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('a|').pipe(orderedMergeMap(() => cold('--A|'), 2))).toBe('---(A|)');
    });
  });

  it('a project that completes empty emits nothing for its value and holds no later one', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const projects: Record<string, string> = { a: '---|', b: '-B|' };
      expectObservable(cold('(ab|)').pipe(orderedMergeMap((value: string) => cold(projects[value] as string), 2))).toBe('---(B|)');
    });
  });

  it('the bound: a value waits for a free slot', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a = cold('---A|');
      const b = cold('-B|');
      const projects: Record<string, typeof a> = { a, b };
      expectObservable(cold('(ab|)').pipe(orderedMergeMap((value: string) => projects[value] as typeof a, 1))).toBe('----A-(B|)');
      expectSubscriptions(b.subscriptions).toBe('----^-!');
    });
  });

  it('a source error errors the result (projects in flight are unsubscribed)', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const slow = cold('-----A|');
      expectObservable(cold('a-#').pipe(orderedMergeMap(() => slow, 2))).toBe('--#');
      expectSubscriptions(slow.subscriptions).toBe('^-!');
    });
  });

  it('a project error errors the result', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const projects: Record<string, string> = { a: '---A|', b: '-#' };
      expectObservable(cold('(ab|)').pipe(orderedMergeMap((value: string) => cold(projects[value] as string), 2))).toBe('-#');
    });
  });

  it('early unsubscription unsubscribes the source and every project in flight', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('ab---|');
      const a = cold('----A|');
      const b = cold('----B|');
      const projects: Record<string, typeof a> = { a, b };
      expectObservable(source.pipe(orderedMergeMap((value: string) => projects[value] as typeof a, 2)), '^--!').toBe('---');
      expectSubscriptions(source.subscriptions).toBe('^--!');
      expectSubscriptions(a.subscriptions).toBe('^--!');
      expectSubscriptions(b.subscriptions).toBe('-^-!');
    });
  });

  it('resubscription on retry starts clean: indexes and order restart with the source', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('a-b-#');
      const result = source.pipe(
        orderedMergeMap((value: string, index) => of(`${value.toUpperCase()}${index}`), 2),
        retry(1),
      );
      expectObservable(result).toBe('a-b-a-b-#', { a: 'A0', b: 'B1' });
      expectSubscriptions(source.subscriptions).toBe(['^---!', '----^---!']);
    });
  });

  it('a bound below 1 is a RangeError (it would start nothing and never complete)', () => {
    expect(() => orderedMergeMap((value: number) => of(value), 0)).toThrow(RangeError);
    expect(() => orderedMergeMap((value: number) => of(value), Number.NaN)).toThrow(RangeError);
    expect(() => orderedMergeMap((value: number) => of(value), Number.POSITIVE_INFINITY)).not.toThrow();
  });
});
