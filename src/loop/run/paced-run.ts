/**
 * How a consumer outside the loop (the UI message stream, a web stream over `stream$()`) paces a
 * run: the Observable `agent.stream$()` returns carries, under {@link PACED_RUN}, a function that
 * starts the same run and hands the consumer the run's demand gate. While the consumer holds the
 * gate the loop stops reading the provider, so a slow reader never makes the run buffer the reply.
 */
import type { Observable, OperatorFunction } from 'rxjs';
import type { ChunkType } from '../../contract/chunk-types.js';

/** The run's demand gate as a consumer sees it: hold it while full, release it when pulled. */
export interface RunDemand {
  hold(holder: object): void;
  release(holder: object): void;
}

/** Property key of the paced variant on a run Observable. */
export const PACED_RUN: unique symbol = Symbol.for('rxagent.run.paced');

/** A run Observable that can also be subscribed with demand (see {@link PACED_RUN}). */
export interface PacedRun extends Observable<ChunkType> {
  /** The same run; `attach` receives the run's demand gate once the run is set up. */
  [PACED_RUN]: (attach: (demand: RunDemand) => void) => Observable<ChunkType>;
}

/**
 * `run$` with its paced variant attached (the Observable is ours: the property is not on a user
 * object). `pipe` keeps it: `run$.pipe(op1, op2)` carries a paced variant that pipes the paced run
 * through the same operators, so `toUIMessageStream(agent.stream$(…).pipe(map(…)))` is still read
 * only as fast as its reader.
 */
export function withPacedRun<T>(
  run$: Observable<T>,
  paced: (attach: (demand: RunDemand) => void) => Observable<T>,
): Observable<T> & { [PACED_RUN]: (attach: (demand: RunDemand) => void) => Observable<T> } {
  const plainPipe = run$.pipe.bind(run$) as (...operations: Array<OperatorFunction<unknown, unknown>>) => Observable<unknown>;
  const pacedPipe = (...operations: Array<OperatorFunction<unknown, unknown>>): Observable<unknown> =>
    withPacedRun(plainPipe(...operations), (attach) => (paced(attach).pipe as (...ops: Array<OperatorFunction<unknown, unknown>>) => Observable<unknown>)(...operations));
  return Object.assign(run$, { [PACED_RUN]: paced, pipe: pacedPipe as Observable<T>['pipe'] });
}

/** The paced variant of `chunks$`, when it is a run Observable straight from `agent.stream$()`. */
export function pacedRunOf(
  chunks$: Observable<ChunkType>,
): ((attach: (demand: RunDemand) => void) => Observable<ChunkType>) | undefined {
  const paced = (chunks$ as Partial<PacedRun>)[PACED_RUN];
  return typeof paced === 'function' ? paced : undefined;
}
