import { RxAgentError, hasMarker } from '../../../errors/rxagent-error.js';

const marker = Symbol.for('rxagent.error.MalformedJournalEntryError');

/**
 * A journal row a reader cannot serve: not JSON, not a chunk, a chunk missing a field its kind
 * needs, a chunk type this build does not know (written by a newer format), or a value the
 * encoder cannot handle. The reader ends that response with an error frame (the SSE
 * `event: error`, or the end of a UI stream) and the process goes on.
 *
 * @example
 * ```ts
 * import { MalformedJournalEntryError } from 'rxagent/durable';
 * if (MalformedJournalEntryError.isInstance(error)) console.error(error.runId, error.seq, error.problem);
 * ```
 */
export class MalformedJournalEntryError extends RxAgentError {
  private readonly [marker] = true;
  /** The run read. */
  readonly runId: string;
  /** The seq of the row. */
  readonly seq: number;
  /** What is wrong with it. */
  readonly problem: string;

  constructor(options: { runId: string; seq: number; problem: string }) {
    super('MalformedJournalEntryError', `Journal entry ${options.seq} of run ${JSON.stringify(options.runId)} cannot be served: ${options.problem}`);
    this.runId = options.runId;
    this.seq = options.seq;
    this.problem = options.problem;
  }

  static override isInstance(error: unknown): error is MalformedJournalEntryError {
    return hasMarker(error, marker);
  }
}
