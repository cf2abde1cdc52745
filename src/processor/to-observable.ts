import { from, of, type Observable } from 'rxjs';
import { isPromiseLike, type MaybePromise } from './maybe-async.js';

/** An Observable of a value that may be a promise (synchronous when it is not). */
export function toObservable<T>(value: MaybePromise<T>): Observable<T> {
  return isPromiseLike<T>(value) ? from(value) : of(value);
}
