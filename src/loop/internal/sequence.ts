/**
 * `sequence(parts)`: `concat` of parts made when their turn comes (`concat(defer(a), defer(b), …)`)
 * in one Observable — no `from(parts)`, `concatAll` or `defer` subscriber per part; a run's
 * skeleton subscribes it once per run.
 */
import { Observable, type Observer, type Subscriber } from 'rxjs';

/**
 * A part of a {@link sequence}: an Observable, or a function making it when its turn comes — or
 * returning the part's values as an array (emitted at once, nothing subscribed).
 */
export type SequencePart<T> = Observable<T> | (() => Observable<T> | readonly T[]);

/**
 * The values of each part in turn, each part subscribed when the one before completed (a function
 * part is called then, so it sees what the parts before it did). An error — of a part, or thrown
 * by a function part — ends the sequence with it. Each part's subscription is linked to the
 * consumer before the part starts: a consumer that leaves while a synchronous part is still
 * emitting stops it at once (as `concat` does), and nothing after it starts.
 *
 * ```
 * parts:   a: --1--|   b: (made after a) --2--|   c: () => [3]
 * result:  --1----2--3|
 * ```
 *
 * @example
 * ```ts
 * sequence([() => [start], () => runSteps(run), () => finalize(run)]);
 * ```
 */
export function sequence<T>(parts: ReadonlyArray<SequencePart<T>>): Observable<T> {
  return new Observable<T>((subscriber) => new SequenceRun(parts, subscriber).advance());
}

/**
 * One subscription of a {@link sequence}, and the observer of its current part: methods, not
 * closures, so a `keepNames` build (tsup, tsx) names nothing per run.
 */
class SequenceRun<T> implements Observer<T> {
  private index = 0;
  private running = false;
  private again = false;
  /**
   * This run: `complete` advances it through this field, so the state stays one object even when
   * rxjs calls the observer on a copy (`config.useDeprecatedNextContext`).
   */
  private readonly owner: SequenceRun<T> = this;

  constructor(
    private readonly parts: ReadonlyArray<SequencePart<T>>,
    private readonly subscriber: Subscriber<T>,
  ) {}

  next(value: T): void {
    this.subscriber.next(value);
  }

  error(error: unknown): void {
    this.subscriber.error(error);
  }

  complete(): void {
    this.owner.advance();
  }

  /**
   * Starts the next part, or completes. A part that completes synchronously asks for the next one
   * from inside this loop: the loop takes it (no recursion per part).
   */
  advance(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    const { parts, subscriber } = this;
    this.running = true;
    do {
      this.again = false;
      if (subscriber.closed) break;
      if (this.index === parts.length) {
        subscriber.complete();
        break;
      }
      const part = parts[this.index++] as SequencePart<T>;
      let source: Observable<T> | readonly T[];
      try {
        source = typeof part === 'function' ? part() : part;
      } catch (error) {
        subscriber.error(error);
        break;
      }
      if (Array.isArray(source)) {
        for (const value of source as readonly T[]) {
          if (subscriber.closed) break;
          subscriber.next(value);
        }
        this.again = true;
        continue;
      }
      subscribeLinked(source as Observable<T>, subscriber, this);
    } while (this.again);
    this.running = false;
  }
}

/** `source.subscribe(observer)`, its subscriber added to `consumer` before `source` starts. */
function subscribeLinked<T>(source: Observable<T>, consumer: Subscriber<T>, observer: Observer<T>): void {
  new Observable<T>((link) => {
    consumer.add(link);
    return source.subscribe(link);
  }).subscribe(observer);
}
