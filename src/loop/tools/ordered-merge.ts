import { Observable, type ObservableInput, type OperatorFunction, from } from 'rxjs';

/**
 * Like `mergeMap(project, concurrency)` for projects that emit one value, but emits results in
 * source order (a later result waits for earlier ones), so tool calls run concurrently while their
 * results stream in call order.
 */
export function orderedMergeMap<T, R>(project: (value: T, index: number) => ObservableInput<R>, concurrency: number): OperatorFunction<T, R> {
  return (source) =>
    new Observable<R>((subscriber) => {
      const pending: T[] = [];
      const results = new Map<number, R>();
      let nextToStart = 0;
      let nextToEmit = 0;
      let active = 0;
      let sourceDone = false;
      const inner = new Set<{ unsubscribe(): void }>();

      const flush = (): void => {
        while (results.has(nextToEmit)) {
          const value = results.get(nextToEmit) as R;
          results.delete(nextToEmit);
          nextToEmit++;
          subscriber.next(value);
        }
        if (sourceDone && active === 0 && pending.length === 0 && results.size === 0) subscriber.complete();
      };
      const start = (): void => {
        while (active < concurrency && pending.length > 0) {
          const value = pending.shift() as T;
          const index = nextToStart++;
          active++;
          let last: { value: R } | undefined;
          const subscription = from(project(value, index)).subscribe({
            next: (result) => {
              last = { value: result };
            },
            error: (error: unknown) => subscriber.error(error),
            complete: () => {
              inner.delete(subscription);
              active--;
              if (last !== undefined) results.set(index, last.value);
              else results.set(index, undefined as R);
              flush();
              start();
            },
          });
          if (!subscription.closed) inner.add(subscription);
        }
      };
      const outer = source.subscribe({
        next: (value) => {
          pending.push(value);
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
        for (const subscription of inner) subscription.unsubscribe();
      };
    });
}
