/**
 * `concat` of parts made when their turn comes (`concat(defer(a), defer(b), …)`) in one
 * subscriber: no `from(parts)`, `concatAll` or `defer` hop per part, no hop per value. The run's
 * skeleton, an attempt's phases and the run's steps are built on it, each with a plan object
 * ({@link SequencePlan}: the next part depends on what the parts before it emitted).
 *
 * ```
 * parts:   a: --1--|   b: (made after a) --2--|   c: [3]
 * result:  --1----2--3|
 * ```
 */
import { Observable, type Observer, type Subscriber } from 'rxjs';
import { subscribeLinked } from './subscribe-linked.js';

/**
 * A part of a {@link Sequence}: an Observable, or a function making it when its turn comes — or
 * returning the part's values as an array (emitted at once, nothing subscribed).
 */
export type SequencePart<T> = Observable<T> | (() => Observable<T> | readonly T[]);

/**
 * What a {@link Sequence} runs: `following` gives the next part when the one before completed
 * (`undefined`: the sequence is over; an array: values emitted at once, nothing subscribed), each
 * part's values go to `next`, `complete` when it is over, `error` for an error of a part or thrown
 * by `following` or a function part. An object with methods (one per sequence, not a closure each).
 */
export interface SequencePlan<T> {
  following(): SequencePart<T> | readonly T[] | undefined;
  next(value: T): void;
  error(error: unknown): void;
  complete(): void;
}

/**
 * One subscription of a sequence whose parts and sink are `plan` (see {@link SequencePlan}).
 * `subscriber` is the consumer each part is linked to. Methods, not closures, so a `keepNames`
 * build (tsup, tsx) names nothing per run.
 *
 * @example
 * ```ts
 * new Sequence(subscriber, {
 *   following: () => (end?.continues ? modelStep(env, end.nextStepNumber) : undefined),
 *   next: (item) => (isStepEnd(item) ? (end = item) : subscriber.next(item)),
 *   error: (error) => subscriber.error(error),
 *   complete: () => subscriber.complete(),
 * }).advance();
 * ```
 */
export class Sequence<T> implements Observer<T> {
  private running = false;
  private again = false;
  /**
   * This run: `complete` advances it through this field, so the state stays one object even when
   * rxjs calls the observer on a copy (`config.useDeprecatedNextContext`).
   */
  private readonly owner: Sequence<T> = this;

  constructor(
    private readonly subscriber: Subscriber<unknown>,
    private readonly plan: SequencePlan<T>,
  ) {}

  next(value: T): void {
    this.plan.next(value);
  }

  error(error: unknown): void {
    this.plan.error(error);
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
    const { subscriber, plan: sink } = this;
    this.running = true;
    do {
      this.again = false;
      if (subscriber.closed) break;
      let source: Observable<T> | readonly T[] | undefined;
      try {
        const part = sink.following();
        source = typeof part === 'function' ? part() : part;
      } catch (error) {
        sink.error(error);
        break;
      }
      if (source === undefined) {
        sink.complete();
        break;
      }
      if (Array.isArray(source)) {
        for (const value of source as readonly T[]) {
          if (subscriber.closed) break;
          sink.next(value);
        }
        this.again = true;
        continue;
      }
      subscribeLinked(source as Observable<T>, subscriber, this);
    } while (this.again);
    this.running = false;
  }
}
