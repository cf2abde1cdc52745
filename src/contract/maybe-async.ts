/**
 * Helpers that keep synchronous results synchronous: no promise unless a hook returned one, no
 * Observable unless a hook returned one that did not settle at once.
 */
import { concatMap, firstValueFrom, from, isObservable, observable as observableSymbol, of, type InteropObservable, type Observable } from 'rxjs';

/** True for promises and other thenables. */
export function isPromiseLike<T>(value: unknown): value is PromiseLike<T> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/**
 * True for what a hook may return as an Observable result: an RxJS `Observable` (`isObservable`) or
 * an interop observable (`Symbol.observable`, e.g. another RxJS copy's). Arrays, promises,
 * iterables and plain objects are not: they keep the meaning the contract gives them.
 */
export function isObservableResult<T>(value: unknown): value is Observable<T> | InteropObservable<T> {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return false;
  if (isObservable(value)) return true;
  return typeof (value as Record<string | symbol, unknown>)[observableSymbol] === 'function';
}

/** A value now, or later. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * A value now, a promise of it, or an Observable of it (exactly one value, or an error): what the
 * operators pass around once a hook returned an Observable that did not settle at once.
 */
export type MaybeAsync<T> = T | Promise<T> | Observable<T>;

/** `value` as an Observable (synchronous when it is a plain value). */
function asObservable<T>(value: MaybeAsync<T>): Observable<T> {
  if (isObservable(value)) return value as Observable<T>;
  return isPromiseLike<T>(value) ? from(value) : of(value);
}

/**
 * `value` as a value or a promise: an Observable becomes the promise of its first value
 * (`undefined` when it completes without one). For entry points that promise `T | Promise<T>`.
 */
export function toMaybePromise<T>(value: MaybeAsync<T>): MaybePromise<T> {
  if (isObservable(value)) return firstValueFrom(value as Observable<T>, { defaultValue: undefined as T });
  return value as MaybePromise<T>;
}

/** Applies `next` to `value`, synchronously when `value` is not a promise or an Observable. */
export function thenMaybe<T, R>(value: MaybePromise<T>, next: (resolved: T) => MaybePromise<R>): MaybePromise<R>;
/**
 * Applies `next` to `value`: over an Observable, an Observable (virtual time is kept); after a
 * promise, a promise (an Observable `next` returns is awaited: virtual time was left already).
 */
export function thenMaybe<T, R>(value: MaybeAsync<T>, next: (resolved: T) => MaybeAsync<R>): MaybeAsync<R>;
export function thenMaybe<T, R>(value: MaybeAsync<T>, next: (resolved: T) => MaybeAsync<R>): MaybeAsync<R> {
  if (isObservable(value)) return (value as Observable<T>).pipe(concatMap((resolved) => asObservable(next(resolved))));
  if (isPromiseLike<T>(value)) return Promise.resolve(value).then((resolved) => toMaybePromise(next(resolved)));
  return next(value);
}

/**
 * Runs `step(item, index, accumulated)` for each item in order, threading the accumulator,
 * staying synchronous while every step is (an Observable step continues as an Observable, a
 * promise step as a promise; see {@link thenMaybe}).
 */
export function reduceMaybe<T, A>(
  items: readonly T[],
  initial: A,
  step: (accumulated: A, item: T, index: number) => MaybePromise<A>,
  startIndex?: number,
): MaybePromise<A>;
export function reduceMaybe<T, A>(
  items: readonly T[],
  initial: A,
  step: (accumulated: A, item: T, index: number) => MaybeAsync<A>,
  startIndex?: number,
): MaybeAsync<A>;
export function reduceMaybe<T, A>(
  items: readonly T[],
  initial: A,
  step: (accumulated: A, item: T, index: number) => MaybeAsync<A>,
  startIndex = 0,
): MaybeAsync<A> {
  let accumulated = initial;
  for (let index = startIndex; index < items.length; index++) {
    const result = step(accumulated, items[index] as T, index);
    if (isObservable(result) || isPromiseLike<A>(result)) {
      return thenMaybe(result, (resolved) => reduceMaybe(items, resolved, step, index + 1));
    }
    accumulated = result;
  }
  return accumulated;
}
