import { RxAgentError, hasMarker } from '../../../errors/rxagent-error.js';
import type { RunStatus } from '../types.js';

const marker = Symbol.for('rxagent.error.RunOpenError');

/**
 * `deleteRun` of a run that is still `queued` or `running`, without `force`: erasing it would pull
 * the journal from under its owner. Nothing is erased. Cancel the run first (and erase it once it
 * ended), or pass `{ force: true }`.
 *
 * @example
 * ```ts
 * import { RunOpenError } from 'rxagent/durable';
 * try { await journal.deleteRun(runId); }
 * catch (error) { if (RunOpenError.isInstance(error)) await journal.deleteRun(runId, { force: true }); }
 * ```
 */
export class RunOpenError extends RxAgentError {
  private readonly [marker] = true;
  /** The run asked to be erased. */
  readonly runId: string;
  /** Its status (`queued` or `running`). */
  readonly status: RunStatus;

  constructor(options: { runId: string; status: RunStatus }) {
    super('RunOpenError', `Run ${JSON.stringify(options.runId)} is still ${options.status}: deleteRun erases an ended run (cancel it first, or pass { force: true })`);
    this.runId = options.runId;
    this.status = options.status;
  }

  static override isInstance(error: unknown): error is RunOpenError {
    return hasMarker(error, marker);
  }
}
