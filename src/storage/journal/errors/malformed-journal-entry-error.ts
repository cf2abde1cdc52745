import { RxAgentError, hasMarker } from '../../../errors/rxagent-error.js';

const marker = Symbol.for('rxagent.error.MalformedJournalEntryError');

/**
 * A journal row that cannot be used as it is stored: a chunk row a reader cannot serve (not JSON,
 * not a chunk, a chunk missing a field its kind needs, a chunk type this build does not know, a
 * value the encoder cannot handle, a seq missing from the run's dense sequence), or — with `row`
 * and `field` — another row of the run written by another build or edited in the database: the
 * run's row (`runs`: a status, epoch, format or terminal this build does not know, a `last_seq`
 * that is not its chunks' end, a stored call that is not one, an agent the worker does not run), a
 * commit (`run_commits[no]`), a tool ledger row (`run_tool_calls[toolCallId]`: an unknown status, a
 * completed call without its output, a row of another tool, a row missing or twice) or a signal
 * (`run_signals[id]`: an unknown kind). A reader ends that response with an error frame; a worker
 * fails the run closed (one `error` chunk carrying this error, no tool run again) or, when the run
 * row itself cannot be claimed, leaves it as it was; the process goes on either way.
 *
 * @example
 * ```ts
 * import { MalformedJournalEntryError } from 'rxagent/durable';
 * if (MalformedJournalEntryError.isInstance(error)) console.error(error.runId, error.row ?? `seq ${error.seq}`, error.field, error.problem);
 * ```
 */
export class MalformedJournalEntryError extends RxAgentError {
  private readonly [marker] = true;
  /** The run read. */
  readonly runId: string;
  /** The seq of the chunk row (0 for a row that is not a chunk: see `row`). */
  readonly seq: number;
  /** What is wrong with it. */
  readonly problem: string;
  /** The row that is not a chunk, as `table` or `table[key]` (`runs`, `run_tool_calls[call-1]`, `run_commits[3]`, `run_signals[7]`); absent for a chunk row. */
  readonly row?: string;
  /** The row's field (its column) that is wrong (`status`, `output`, `seq_end`…); absent for a chunk row. */
  readonly field?: string;

  constructor(options: { runId: string; seq: number; problem: string; row?: string; field?: string }) {
    super(
      'MalformedJournalEntryError',
      options.row === undefined
        ? `Journal entry ${options.seq} of run ${JSON.stringify(options.runId)} cannot be served: ${options.problem}`
        : `Journal row ${options.row}${options.field === undefined ? '' : `.${options.field}`} of run ${JSON.stringify(options.runId)} cannot be used: ${options.problem}`,
    );
    this.runId = options.runId;
    this.seq = options.seq;
    this.problem = options.problem;
    if (options.row !== undefined) this.row = options.row;
    if (options.field !== undefined) this.field = options.field;
  }

  static override isInstance(error: unknown): error is MalformedJournalEntryError {
    return hasMarker(error, marker);
  }
}
