import { Observable, Subscription, defer, type ObservableInput, type OperatorFunction, type Subscriber } from 'rxjs';
import { subscribeLinked } from '../internal/subscribe-linked.js';

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
 *
 * A project's error errors the result (the projects in flight are unsubscribed), and so does a
 * project that throws; a project that completes empty emits nothing for its value. For projects of
 * many values use `concatMap`.
 *
 * @param project Makes the Observable of one value (its last value is emitted; `index` counts from 0).
 * @param concurrency Most projects subscribed at once: at least 1 (`Infinity` for no bound), else a `RangeError`.
 *
 * @example
 * ```ts
 * import { from } from 'rxjs';
 * import { orderedMergeMap } from 'rxagent/loop';
 *
 * // up to 4 lookups at once, answers in the order of the ids
 * const answers$ = from(ids).pipe(orderedMergeMap((id) => fetch(`/items/${id}`).then((response) => response.json()), 4));
 * ```
 */
export function orderedMergeMap<T, R>(project: (value: T, index: number) => ObservableInput<R>, concurrency: number): OperatorFunction<T, R> {
  // a bound below 1 would start nothing and never complete
  if (!(concurrency >= 1)) throw new RangeError(`orderedMergeMap(): concurrency must be at least 1, got ${String(concurrency)}`);
  return (source) =>
    new Observable<R>((subscriber) => {
      const merge = new OrderedMerge(subscriber, project, concurrency);
      // linked to the consumer before the source starts: a consumer that leaves (or a result that
      // errors) during a synchronous source stops it there
      const outer = subscribeLinked(source, subscriber, merge);
      return () => {
        outer.unsubscribe();
        merge.inner.unsubscribe();
      };
    });
}

/** One subscription's state, and the source's observer. */
class OrderedMerge<T, R> {
  readonly inner = new Subscription();
  /** Source values waiting for a slot, from `pendingHead` on (no `shift`: it copies a long array on every call). */
  private readonly pending: Array<{ value: T; index: number }> = [];
  private pendingHead = 0;
  private readonly results = new Map<number, { value: R } | undefined>();
  private sourceIndex = 0;
  private nextToEmit = 0;
  private active = 0;
  private sourceDone = false;
  /** Whether `start()` is running: a project that completes inside it frees its slot to that loop (no recursion per project). */
  private starting = false;

  constructor(
    private readonly subscriber: Subscriber<R>,
    private readonly project: (value: T, index: number) => ObservableInput<R>,
    private readonly concurrency: number,
  ) {}

  next(value: T): void {
    this.pending.push({ value, index: this.sourceIndex++ });
    this.start();
  }

  error(error: unknown): void {
    this.subscriber.error(error);
  }

  complete(): void {
    this.sourceDone = true;
    this.flush();
  }

  private flush(): void {
    const { results, subscriber } = this;
    while (results.has(this.nextToEmit)) {
      const result = results.get(this.nextToEmit);
      results.delete(this.nextToEmit);
      this.nextToEmit++;
      if (result !== undefined) subscriber.next(result.value);
    }
    if (this.sourceDone && this.active === 0 && this.pendingHead === this.pending.length && this.nextToEmit === this.sourceIndex) subscriber.complete();
  }

  /** The oldest waiting value; the taken ones are dropped in blocks. */
  private takePending(): { value: T; index: number } {
    const next = this.pending[this.pendingHead++] as { value: T; index: number };
    if (this.pendingHead === this.pending.length || this.pendingHead === 1024) {
      this.pending.splice(0, this.pendingHead);
      this.pendingHead = 0;
    }
    return next;
  }

  private start(): void {
    if (this.starting) return;
    this.starting = true;
    try {
      // `active + 1 <= concurrency`: a fractional bound (1.5) allows no more than its whole part
      while (this.active + 1 <= this.concurrency && this.pendingHead < this.pending.length && !this.subscriber.closed) {
        const { value, index } = this.takePending();
        this.active++;
        const child = new Subscription();
        this.inner.add(child);
        // defer: a project that throws (or returns no ObservableInput) errors like one that errors
        child.add(defer(() => this.project(value, index)).subscribe(new ProjectObserver(this, child, index)));
      }
    } finally {
      this.starting = false;
    }
  }

  /** A project ended with `last` (its one value, or none). */
  settle(child: Subscription, index: number, last: { value: R } | undefined): void {
    this.active--;
    this.inner.remove(child);
    this.results.set(index, last);
    this.flush();
    this.start();
  }
}

/** The observer of one project's result. */
class ProjectObserver<T, R> {
  private last: { value: R } | undefined;

  constructor(
    private readonly merge: OrderedMerge<T, R>,
    private readonly child: Subscription,
    private readonly index: number,
  ) {}

  next(result: R): void {
    this.last = { value: result };
  }

  error(error: unknown): void {
    this.merge.error(error);
  }

  complete(): void {
    this.merge.settle(this.child, this.index, this.last);
  }
}
