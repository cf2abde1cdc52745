/** What a `RunWorker` reports about the runs it executes (`events$`). */
import type { RunCommitKind, RunStatus } from '../storage/index.js';

/**
 * One event of a worker's runs, in order per run:
 *
 * - `claimed`: this worker took the run (its epoch is the new owner's);
 * - `committed`: a commit was written (`commit`: `input`, `model`, `step`, `rejected`, `final`);
 * - `completed`: the run's `final` commit was written (`status`: `completed`, `failed` — it ended
 *   with an `error` chunk — or `cancelled`); also from the worker that gave a run up when its job
 *   had no attempt left (`failed`, with `RunAttemptsExhaustedError`; no `claimed` before it);
 * - `fenced`: the run stopped here because another worker owns it now (a lost lease: pg-boss
 *   failed this worker's job, or another claim moved the epoch). Never the run's error; this
 *   worker wrote nothing after it;
 * - `released`: handed over (`close({ handover: true })`) at a step commit, for another worker;
 * - `failed`: this worker could not go on with the run (a storage failure, …): nothing more was
 *   written, and its job goes back to pg-boss, which hands it to a worker again — except for a
 *   journal row this build cannot go on from (`MalformedJournalEntryError`, naming row and field):
 *   a row the claim gave (the ledger, the last commit, the stored call, the agent) or one met on the
 *   way (a chunk of the open step, a signal) ends the run `failed` at once (`completed` follows),
 *   and a run row that cannot be claimed (epoch `0` here) is left as it was; neither is retried.
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
  | {
      /** This worker took the run. */
      readonly type: 'claimed';
      /** The run. */
      readonly runId: string;
      /** The epoch of this worker's claim on the run. */
      readonly epoch: number;
    }
  | {
      /** A commit was written. */
      readonly type: 'committed';
      /** The run. */
      readonly runId: string;
      /** The epoch of this worker's claim on the run. */
      readonly epoch: number;
      /** The commit point written. */
      readonly commit: RunCommitKind;
      /** The run's last seq after the commit's write. */
      readonly lastSeq: number;
    }
  | {
      /** The run's `final` commit was written. */
      readonly type: 'completed';
      /** The run. */
      readonly runId: string;
      /** The epoch of this worker's claim on the run. */
      readonly epoch: number;
      /** The run's status from its terminal chunk. */
      readonly status: RunStatus;
    }
  | {
      /** Another worker owns the run now; this one stopped. */
      readonly type: 'fenced';
      /** The run. */
      readonly runId: string;
      /** The epoch of this worker's claim on the run. */
      readonly epoch: number;
      /** The failure that showed the lease was lost, when there was one. */
      readonly error?: unknown;
    }
  | {
      /** Handed over at a step commit, for another worker. */
      readonly type: 'released';
      /** The run. */
      readonly runId: string;
      /** The epoch of this worker's claim on the run. */
      readonly epoch: number;
    }
  | {
      /** This worker could not go on with the run. */
      readonly type: 'failed';
      /** The run. */
      readonly runId: string;
      /** The epoch of this worker's claim on the run (0: the run could not be claimed). */
      readonly epoch: number;
      /** Why (a storage failure, a `MalformedJournalEntryError`, …). */
      readonly error: unknown;
    };
