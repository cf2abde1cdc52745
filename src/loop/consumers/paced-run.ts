/**
 * How a consumer outside the loop (the UI message stream) paces a run it was handed as
 * `agent.stream$(…)`: the run's Observable is a {@link PacedRun}, which can make the same run
 * reading its provider only while a gate the consumer holds is open. Nothing here touches RxJS's
 * `lift`, `source` or `operator` (gone from RxJS 8's public API): an operator applied to the run
 * returns a plain Observable, and a consumer of such a copy is paced only through a gate handed
 * to both ends (`agent.stream$(input, { demand })`, `toUIMessageStream(copy$, { demand })`).
 */
import { Observable } from 'rxjs';
import type { DemandGate } from '../../contract/demand-gate.js';

/** The run subscribed with a consumer's gate (`undefined`: a gate of its own that nobody holds). */
export type RunWithDemand<T> = (demand: DemandGate | undefined) => Observable<T>;

/**
 * A run's Observable that can also be subscribed with a consumer's demand gate. Subscribed as it
 * is, the run has a gate of its own that nobody holds (nothing is paced when nobody asks).
 *
 * @example
 * ```ts
 * const run$ = new PacedRun((demand) => createRun(config, input, options, { demand, results: false }));
 * const gate = new DemandGate();
 * pacedRunOf(run$)?.(gate).subscribe(reader); // hold `gate` while the reader is full
 * ```
 */
export class PacedRun<T> extends Observable<T> {
  readonly #run: RunWithDemand<T>;

  constructor(run: RunWithDemand<T>) {
    const plain$ = run(undefined);
    super((subscriber) => plain$.subscribe(subscriber));
    this.#run = run;
  }

  /** The same run, reading its provider only while `demand` is open. */
  withDemand(demand: DemandGate): Observable<T> {
    return this.#run(demand);
  }
}

/**
 * The run of `chunks$` subscribed with a gate, when `chunks$` is a run's own Observable
 * (`agent.stream$(…)` itself, not a copy made by operators).
 *
 * @example
 * ```ts
 * const withDemand = pacedRunOf(agent.stream$('Hi'));
 * const source$ = withDemand === undefined ? chunks$ : withDemand(gate);
 * ```
 */
export function pacedRunOf<T>(chunks$: Observable<T>): ((demand: DemandGate) => Observable<T>) | undefined {
  return chunks$ instanceof PacedRun ? (demand) => (chunks$ as PacedRun<T>).withDemand(demand) : undefined;
}
