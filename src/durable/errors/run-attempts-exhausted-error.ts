import { RxAgentError, hasMarker } from '../../contract/index.js';

const marker = Symbol.for('rxagent.error.RunAttemptsExhaustedError');

/** What pg-boss writes as the output of an attempt it failed itself, in words. */
const pgBossFailures: Record<string, string> = {
  'job heartbeat timeout': 'its worker stopped sending heartbeats (it died, hung or lost the database)',
  'job timed out': 'it ran past queue.expireInSeconds',
  // written by a surviving worker (lostOwnerSweep), not pg-boss: the owner's database session ended
  'owner session ended': "its worker's database session ended (the process died or lost the database)",
};

/**
 * A durable run its queue gave up on: its job went through every attempt `queue.retryLimit`
 * allows (takeovers after a dead or silent worker, attempts that failed, claims that expired) and
 * the last one failed too. The run ends `failed` with this error as its terminal `error` chunk,
 * written under a fresh claim (an owner still running it is fenced), so every reader of the run
 * sees it end. `attempts` counts the attempts the run spent since it was submitted or last handed
 * over (`close({ handover: true })` does not spend attempts, nor do attempts the infrastructure
 * failed, refunded when their owner noted them); `lastFailure` is why the last attempt failed, as
 * pg-boss recorded it.
 *
 * @example
 * The journal holds it as data (`{ name: 'RunAttemptsExhaustedError', message, runId, attempts,
 * lastFailure }`), so a reader checks its `name`:
 *
 * ```ts
 * import type { RunAttemptsExhaustedError } from 'rxagent/durable';
 * journal.read$(runId).subscribe(({ chunk }) => {
 *   const error = chunk.type === 'error' ? (chunk.payload.error as Partial<RunAttemptsExhaustedError>) : undefined;
 *   if (error?.name === 'RunAttemptsExhaustedError') console.error(`run ${runId} given up after ${error.attempts} attempts`);
 * });
 * ```
 */
export class RunAttemptsExhaustedError extends RxAgentError {
  private readonly [marker] = true;
  /** The run given up on. */
  readonly runId: string;
  /** How many of its attempts failed for reasons of the run (the first attempt and every retry, less those the infrastructure failed). */
  readonly attempts: number;
  /** Why the last attempt failed (`job heartbeat timeout`, `job timed out`, or the worker's error message), when known. */
  readonly lastFailure: string | undefined;

  constructor(options: { runId: string; attempts: number; lastFailure?: string }) {
    const last = options.lastFailure === undefined ? '' : `; the last failed: ${pgBossFailures[options.lastFailure] ?? options.lastFailure}`;
    super(
      'RunAttemptsExhaustedError',
      `Run ${JSON.stringify(options.runId)} was given up after ${options.attempts} attempt${options.attempts === 1 ? '' : 's'} ` +
        `(its job's queue.retryLimit is spent${last}); it ends failed`,
    );
    this.runId = options.runId;
    this.attempts = options.attempts;
    this.lastFailure = options.lastFailure;
  }

  static override isInstance(error: unknown): error is RunAttemptsExhaustedError {
    return hasMarker(error, marker);
  }
}
