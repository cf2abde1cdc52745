import { RxAgentError, hasMarker } from '../../../errors/rxagent-error.js';

const marker = Symbol.for('rxagent.error.RunNotFoundError');

/**
 * The journal holds no run with this id: it was never created, or (`reason: 'expired'`) it ended
 * long enough ago that retention removed it. HTTP readers answer 404 (410 when expired).
 *
 * @example
 * ```ts
 * import { RunNotFoundError } from 'rxagent/durable';
 * try { await journal.claim(runId, 'worker-1'); }
 * catch (error) { if (RunNotFoundError.isInstance(error)) console.error('no run', error.runId); }
 * ```
 */
export class RunNotFoundError extends RxAgentError {
  private readonly [marker] = true;
  /** The run id asked for. */
  readonly runId: string;
  /** `'expired'` when the run existed and was removed by retention. */
  readonly reason: 'expired' | undefined;

  constructor(options: { runId: string; reason?: 'expired' }) {
    const suffix = options.reason === 'expired' ? ' any more (it ended and was removed)' : '';
    super('RunNotFoundError', `Run ${JSON.stringify(options.runId)} does not exist${suffix}`);
    this.runId = options.runId;
    this.reason = options.reason;
  }

  static override isInstance(error: unknown): error is RunNotFoundError {
    return hasMarker(error, marker);
  }
}
