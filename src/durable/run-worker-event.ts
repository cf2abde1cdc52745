/** What a `RunWorker` reports about the runs it executes (`events$`). */
import type { RunCommitKind, RunStatus } from '../storage/index.js';

/**
 * One event of a worker's runs, in order per run:
 *
 * - `claimed`: this worker took the run (its epoch is the new owner's);
 * - `committed`: a commit was written (`commit`: `input`, `model`, `step`, `rejected`, `final`);
 * - `completed`: the run's `final` commit was written (`status`: `completed`, `failed` — it ended
 *   with an `error` chunk — or `cancelled`);
 * - `fenced`: the run stopped here because another worker owns it now (a lost lease: pg-boss
 *   failed this worker's job, or another claim moved the epoch). Never the run's error; this
 *   worker wrote nothing after it;
 * - `released`: handed over (`close({ handover: true })`) at a step commit, for another worker;
 * - `failed`: this worker could not go on with the run (a storage failure, …): nothing more was
 *   written, and its job goes back to pg-boss, which hands it to a worker again.
 *
 * @example
 * ```ts
 * import type { RunWorkerEvent } from 'rxagent/durable';
 * worker.events$.subscribe((event: RunWorkerEvent) => {
 *   if (event.type === 'fenced') console.warn(`run ${event.runId} continues elsewhere`);
 * });
 * ```
 */
export type RunWorkerEvent =
  | { readonly type: 'claimed'; readonly runId: string; readonly epoch: number }
  | { readonly type: 'committed'; readonly runId: string; readonly epoch: number; readonly commit: RunCommitKind; readonly lastSeq: number }
  | { readonly type: 'completed'; readonly runId: string; readonly epoch: number; readonly status: RunStatus }
  | { readonly type: 'fenced'; readonly runId: string; readonly epoch: number; readonly error?: unknown }
  | { readonly type: 'released'; readonly runId: string; readonly epoch: number }
  | { readonly type: 'failed'; readonly runId: string; readonly epoch: number; readonly error: unknown };
