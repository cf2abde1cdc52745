/** Helpers that keep synchronous results synchronous: no promise unless a hook returned one. */

/** True for promises and other thenables. */
export function isPromiseLike<T>(value: unknown): value is PromiseLike<T> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/** A value now, or later. */
export type MaybePromise<T> = T | Promise<T>;

/** Applies `next` to `value`, synchronously when `value` is not a promise. */
export function thenMaybe<T, R>(value: MaybePromise<T>, next: (resolved: T) => MaybePromise<R>): MaybePromise<R> {
  return isPromiseLike<T>(value) ? Promise.resolve(value).then(next) : next(value);
}

/**
 * Runs `step(item, index, accumulated)` for each item in order, threading the accumulator,
 * staying synchronous while every step is.
 */
export function reduceMaybe<T, A>(
  items: readonly T[],
  initial: A,
  step: (accumulated: A, item: T, index: number) => MaybePromise<A>,
  startIndex = 0,
): MaybePromise<A> {
  let accumulated = initial;
  for (let index = startIndex; index < items.length; index++) {
    const result = step(accumulated, items[index] as T, index);
    if (isPromiseLike<A>(result)) {
      return Promise.resolve(result).then((resolved) => reduceMaybe(items, resolved, step, index + 1));
    }
    accumulated = result;
  }
  return accumulated;
}
