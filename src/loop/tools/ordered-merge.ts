import { Observable, Subscription, from, type ObservableInput, type OperatorFunction } from 'rxjs';

/**
 * Like `mergeMap(project, concurrency)` for projects that emit (at most) one value, but emits the
 * results in source order — a later result waits for the earlier ones — so a step's tool calls run
 * concurrently while their results stream in call order. Projects may complete synchronously.
 *
 * ```
 * source:    (abc|)                 concurrency 2
 * project:   a → ----A|  b → -B|  c → --C|
 * result:    ------A-(BC|)
 * ```
 */
export function orderedMergeMap<T, R>(project: (value: T, index: number) => ObservableInput<R>, concurrency: number): OperatorFunction<T, R> {
  return (source) =>
    new Observable<R>((subscriber) => {
      const pending: Array<{ value: T; index: number }> = [];
      const results = new Map<number, { value: R } | undefined>();
      const inner = new Subscription();
      let sourceIndex = 0;
      let nextToEmit = 0;
      let active = 0;
      let sourceDone = false;

      const flush = (): void => {
        while (results.has(nextToEmit)) {
          const result = results.get(nextToEmit);
          results.delete(nextToEmit);
          nextToEmit++;
          if (result !== undefined) subscriber.next(result.value);
        }
        if (sourceDone && active === 0 && pending.length === 0 && nextToEmit === sourceIndex) subscriber.complete();
      };
      const start = (): void => {
        while (active < concurrency && pending.length > 0 && !subscriber.closed) {
          const { value, index } = pending.shift() as { value: T; index: number };
          active++;
          let last: { value: R } | undefined;
          const child = new Subscription();
          inner.add(child);
          child.add(
            from(project(value, index)).subscribe({
              next: (result) => {
                last = { value: result };
              },
              error: (error: unknown) => subscriber.error(error),
              complete: () => {
                active--;
                inner.remove(child);
                results.set(index, last);
                flush();
                start();
              },
            }),
          );
        }
      };
      const outer = source.subscribe({
        next: (value) => {
          pending.push({ value, index: sourceIndex++ });
          start();
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => {
          sourceDone = true;
          flush();
        },
      });
      return () => {
        outer.unsubscribe();
        inner.unsubscribe();
      };
    });
}
