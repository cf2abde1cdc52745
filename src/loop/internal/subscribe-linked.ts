/** Subscribing inside a custom operator so that the consumer's unsubscription reaches the source at once. */
import { Observable, from, type ObservableInput, type Observer, type Subscriber, type Subscription } from 'rxjs';

/**
 * `from(input).subscribe(observer)`, with the subscription added to `subscriber` (the operator's
 * consumer) *before* the source starts. A plain `return source.subscribe({ … })` is linked only
 * when `subscribe` returns: a synchronous source (a mock model's parts, a synchronous tool, a
 * whole run without a promise hop) would run on to its end after a consumer that left during the
 * first chunks (`take(2)`), starting model calls and tools nobody listens to.
 *
 * ```
 * source (synchronous):  (abcdef|)
 * consumer:              take(2)
 * source ran:            (ab)          (not a, b, c, d, e, f)
 * ```
 *
 * @example
 * ```ts
 * new Observable<number>((subscriber) => subscribeLinked(source$, subscriber, { next: (value) => subscriber.next(value * 2) }));
 * ```
 */
export function subscribeLinked<T>(input: ObservableInput<T>, subscriber: Subscriber<unknown>, observer: Partial<Observer<T>>): Subscription {
  return new Observable<T>((link) => {
    // `link` is a Subscriber: operators subscribed with it are chained to it, so closing the
    // consumer closes the whole source chain, even in the middle of its synchronous subscribe
    subscriber.add(link);
    return from(input).subscribe(link);
  }).subscribe(observer);
}
