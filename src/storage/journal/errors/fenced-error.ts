import { RxAgentError, hasMarker } from '../../../errors/rxagent-error.js';

const marker = Symbol.for('rxagent.error.FencedError');

/**
 * A write with a lease that no longer owns the run: another worker claimed it since
 * (`reason: 'epoch'`, also for a forged lease), or the run already ended (`reason: 'ended'`).
 * Nothing was written. The writer stops and retries nothing; the run goes on with its new owner.
 *
 * @example
 * ```ts
 * import { FencedError } from 'rxagent/durable';
 * try { await journal.append(lease, chunks); }
 * catch (error) { if (FencedError.isInstance(error)) console.warn(`lost run ${error.runId}: epoch ${error.epoch} < ${error.currentEpoch}`); }
 * ```
 */
export class FencedError extends RxAgentError {
  private readonly [marker] = true;
  /** The run the refused write was for. */
  readonly runId: string;
  /** The epoch the writer held. */
  readonly epoch: number;
  /** The run's epoch when the write was refused. */
  readonly currentEpoch: number;
  /** Why: `'epoch'` (another claim since, or a lease the journal did not issue) or `'ended'` (the run has ended). */
  readonly reason: 'epoch' | 'ended';

  constructor(options: { runId: string; epoch: number; currentEpoch: number; reason: 'epoch' | 'ended'; what?: string }) {
    const what = options.what ?? 'write';
    const why =
      options.reason === 'ended'
        ? 'the run has ended'
        : `the run's epoch is ${options.currentEpoch} (another owner claimed it, or the lease is not one the journal issued)`;
    super('FencedError', `Run ${JSON.stringify(options.runId)}: ${what} with epoch ${options.epoch} refused, ${why}; nothing was written`);
    this.runId = options.runId;
    this.epoch = options.epoch;
    this.currentEpoch = options.currentEpoch;
    this.reason = options.reason;
  }

  static override isInstance(error: unknown): error is FencedError {
    return hasMarker(error, marker);
  }
}
