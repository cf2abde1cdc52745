/**
 * `pacedCall()`: the end of an `OBSERVABLE_STREAM` call — its parts handed on while the run's demand
 * gate is open, its call's signal let go or cut when the call ends.
 */
import { Observable, type MonoTypeOperatorFunction, type Observer, type Subscriber } from 'rxjs';
import { onceOpen, type DemandGate } from '../../contract/demand-gate.js';
import type { CallAbort } from './call-abort.js';

/**
 * Hands the values of an `OBSERVABLE_STREAM` call on while `demand` is open, as the web-stream
 * read reads while it is: an Observable cannot be paused, so what it sends while the gate is held
 * waits here (not in the run: no processor, log or consumer sees it yet) and goes on in order — its
 * end after it — a microtask after the gate opens (the web read resumes after an `await`), as long
 * as the gate stays open. The call's signal is let go (`abort.release()`) when the source ended,
 * and cut (`abort.cut()`) when the result is unsubscribed before that — also when a synchronous
 * source, which runs on until it returns, ends after the unsubscription. At most `maxHeld.limit`
 * values wait: one more fails the result with `maxHeld.error()` at once (an Observable cannot be
 * paused; a consumer that never reads must not make the seam hold all it sends), the source
 * unsubscribed and the call's signal cut. Per value: a check of the result and of the gate, and
 * while held a compare with the bound; nothing is allocated unless it is held.
 *
 * ```
 * source:  --a--b--c--|        gate held after a, open at O
 * result:  --a---------O(bc|)  (b, c and the end wait; delivered in a microtask after O)
 *
 * source:  --a--b--            unsubscribed at !, gate held after a
 * result:  --a-----!           (b dropped, the waiter forgotten, the call's signal cut)
 *
 * source:  --a--b--c--d--      gate held after a, maxHeld.limit 2
 * result:  --a--------#        (# = maxHeld.error(): b, c dropped, the source unsubscribed, the signal cut)
 * ```
 *
 * @example
 * ```ts
 * // internal to the model seam: the end of `observableCall`
 * parts$.pipe(pacedCall(abort, demand));
 * ```
 */
export function pacedCall<T>(abort: CallAbort, demand: DemandGate | undefined, maxHeld: HeldLimit = NO_LIMIT): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      const paced = new PacedCall(subscriber, demand, maxHeld);
      const subscription = source.subscribe(paced);
      return () => {
        paced.close();
        subscription.unsubscribe();
        if (paced.finished) abort.release();
        else abort.cut();
      };
    });
}

/**
 * The most values that may wait for the gate, and the error the call fails with past it (made only
 * then). The source is unsubscribed and the call's signal cut: it did not end.
 */
export interface HeldLimit {
  readonly limit: number;
  error(): unknown;
}

const NO_LIMIT: HeldLimit = { limit: Number.POSITIVE_INFINITY, error: () => undefined };

/** The end of a waiting source: its error, or its completion. */
type SourceEnd = { readonly error: unknown } | { readonly complete: true };

/** One subscription of {@link pacedCall}: the observer of the source. */
class PacedCall<T> implements Observer<T> {
  /** Whether the source ended (completed or failed). */
  finished = false;
  readonly #subscriber: Subscriber<T>;
  readonly #demand: DemandGate | undefined;
  readonly #maxHeld: HeldLimit;
  /** What waits for the gate (unset while nothing does), from `#next` on. */
  #waiting: T[] | undefined;
  #next = 0;
  /** The source's end, when it came while values waited. */
  #end: SourceEnd | undefined;
  /** What makes the gate forget the wait. */
  #forget: (() => void) | undefined;

  constructor(subscriber: Subscriber<T>, demand: DemandGate | undefined, maxHeld: HeldLimit) {
    this.#subscriber = subscriber;
    this.#demand = demand;
    this.#maxHeld = maxHeld;
  }

  next(value: T): void {
    // a source that goes on after the result was unsubscribed (a synchronous one cannot be stopped
    // before it returns): nothing of it waits, and no wait is registered on the gate
    if (this.#subscriber.closed) return;
    let waiting = this.#waiting;
    if (waiting === undefined) {
      const demand = this.#demand;
      if (demand === undefined || demand.open) {
        this.#subscriber.next(value);
        return;
      }
      waiting = this.#waiting = [];
      this.#wait(demand);
    }
    // held only: one compare per value that waits. Past the bound the call fails at once (what waits
    // is dropped; the teardown unsubscribes the source and cuts the call's signal: it did not end)
    if (waiting.length - this.#next >= this.#maxHeld.limit) {
      this.#subscriber.error(this.#maxHeld.error());
      return;
    }
    waiting.push(value);
  }

  error(error: unknown): void {
    // an end after the result was unsubscribed is not the call's end: the teardown cuts its signal
    if (this.#subscriber.closed) return;
    this.finished = true;
    if (this.#waiting === undefined) this.#subscriber.error(error);
    else this.#end = { error };
  }

  complete(): void {
    if (this.#subscriber.closed) return;
    this.finished = true;
    if (this.#waiting === undefined) this.#subscriber.complete();
    else this.#end = { complete: true };
  }

  /** The result was unsubscribed (or ended): nothing waits any more, the gate keeps nothing of it. */
  close(): void {
    this.#forget?.();
    this.#forget = undefined;
    this.#waiting = undefined;
    this.#end = undefined;
  }

  /** Waits for the gate to open; then hands on what waits, in a microtask. */
  #wait(demand: DemandGate): void {
    this.#forget = onceOpen(demand, () => {
      this.#forget = undefined;
      queueMicrotask(() => this.#flush());
    });
  }

  /** Hands on what waits while the gate stays open, then the source's end if it came. */
  #flush(): void {
    const subscriber = this.#subscriber;
    const waiting = this.#waiting;
    const demand = this.#demand as DemandGate;
    if (waiting === undefined || subscriber.closed || this.#forget !== undefined) return;
    while (this.#next < waiting.length) {
      if (!demand.open) {
        waiting.splice(0, this.#next);
        this.#next = 0;
        this.#wait(demand);
        return;
      }
      subscriber.next(waiting[this.#next++] as T);
      if (subscriber.closed) return;
    }
    this.#waiting = undefined;
    this.#next = 0;
    const end = this.#end;
    this.#end = undefined;
    if (end === undefined) return;
    if ('error' in end) subscriber.error(end.error);
    else subscriber.complete();
  }
}
