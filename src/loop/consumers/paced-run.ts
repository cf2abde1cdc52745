/**
 * How a consumer outside the loop (the UI message stream, a web stream over `stream$()`) paces a
 * run: `agent.stream$()` returns a {@link PacedRun}, an Observable that can also be subscribed with
 * the run's demand gate handed to the consumer. While the consumer holds the gate the loop stops
 * reading the provider, so a slow reader never makes the run buffer the reply.
 */
import { Observable, type Operator, type Subscriber, type TeardownLogic } from 'rxjs';
import type { DemandGate } from '../../contract/demand-gate.js';

/** Subscribes a run with demand: `attach` receives the run's gate once the run is set up. */
export type PacedSubscribe<T> = (attach: (demand: DemandGate) => void) => Observable<T>;

/**
 * A run's Observable that keeps its paced variant through operators: each operator applied to it
 * (`run$.pipe(map(…))`, `pipe(map(…))(run$)`, `filter(…)(run$)`) is applied to the paced variant
 * too, so the result is still a `PacedRun`. `from(run$)` is `run$` itself.
 *
 * @example
 * ```ts
 * const chunks$ = agent.stream$('Hi').pipe(map((chunk) => chunk)); // still paced
 * const paced = pacedRunOf(chunks$);                               // (attach) => Observable
 * ```
 */
export class PacedRun<T> extends Observable<T> {
  readonly #paced: PacedSubscribe<T>;

  constructor(subscribe: ((subscriber: Subscriber<T>) => TeardownLogic) | undefined, paced: PacedSubscribe<T>) {
    super(subscribe);
    this.#paced = paced;
  }

  /** The same run, subscribed with demand. */
  paced(attach: (demand: DemandGate) => void): Observable<T> {
    return this.#paced(attach);
  }

  /** RxJS's operator hook: the operator applied to the plain and the paced variant alike. */
  override lift<R>(operator?: Operator<T, R>): Observable<R> {
    const lifted = new PacedRun<R>(undefined, (attach) => this.#paced(attach).lift(operator));
    lifted.source = this;
    lifted.operator = operator;
    return lifted;
  }
}

/**
 * `run$` (an Observable of a run's chunks) with `paced`, its variant subscribed with demand.
 *
 * @example
 * ```ts
 * const run$ = withPacedRun(chunks$, (attach) => chunksWithDemand$(attach));
 * ```
 */
export function withPacedRun<T>(run$: Observable<T>, paced: PacedSubscribe<T>): PacedRun<T> {
  return new PacedRun<T>((subscriber) => run$.subscribe(subscriber), paced);
}

/** The paced variant of `chunks$`, when it is a run's Observable (or one made from it by operators). */
export function pacedRunOf<T>(chunks$: Observable<T>): PacedSubscribe<T> | undefined {
  return chunks$ instanceof PacedRun ? (attach) => chunks$.paced(attach) : undefined;
}
