import { from, isObservable, of, type Observable } from 'rxjs';
import { isPromiseLike, type MaybeAsync } from './maybe-async.js';

/**
 * An Observable of a value that may be a promise or already an Observable (synchronous when it is
 * a plain value; an Observable is returned as it is).
 */
export function toObservable<T>(value: MaybeAsync<T>): Observable<T> {
  if (isObservable(value)) return value as Observable<T>;
  return isPromiseLike<T>(value) ? from(value) : of(value);
}
