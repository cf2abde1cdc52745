import { RxAgentError, hasMarker } from '../../../errors/rxagent-error.js';

const marker = Symbol.for('rxagent.error.JournalCursorError');

/**
 * A read cursor the run's journal cannot serve: not an integer, negative, malformed (a UI cursor
 * is `<seq>:<k>`), or past the run's `lastSeq`. Nothing is read; HTTP readers answer 400.
 *
 * @example
 * ```ts
 * import { JournalCursorError } from 'rxagent/durable';
 * journal.read$(runId, { after: 10 }).subscribe({
 *   error: (error) => { if (JournalCursorError.isInstance(error)) console.error(error.after, error.lastSeq); },
 * });
 * ```
 */
export class JournalCursorError extends RxAgentError {
  private readonly [marker] = true;
  /** The run that was read. */
  readonly runId: string;
  /** The cursor as it was given (a number, or the header / query text). */
  readonly after: unknown;
  /** The run's last sequence number when the cursor was checked. */
  readonly lastSeq: number;

  constructor(options: { runId: string; after: unknown; lastSeq: number; problem?: string }) {
    const shown = typeof options.after === 'string' ? JSON.stringify(options.after) : String(options.after);
    const problem = options.problem ?? `must be an integer from 0 to ${options.lastSeq}`;
    super('JournalCursorError', `Cursor ${shown} for run ${JSON.stringify(options.runId)} ${problem} (lastSeq ${options.lastSeq})`);
    this.runId = options.runId;
    this.after = options.after;
    this.lastSeq = options.lastSeq;
  }

  static override isInstance(error: unknown): error is JournalCursorError {
    return hasMarker(error, marker);
  }
}
