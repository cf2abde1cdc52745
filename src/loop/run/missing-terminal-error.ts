import { RxAgentError, hasMarker } from '../../errors/rxagent-error.js';

const marker = Symbol.for('rxagent.error.MissingTerminalError');

/**
 * The error of a run's source that completed without a terminal chunk (`finish`, `tripwire`,
 * `error` or `abort`): a bug upstream, which `endWithTerminal()` reports as the run's `error`
 * chunk rather than ending the stream without one.
 *
 * @example
 * ```ts
 * if (isErrorChunk(last) && MissingTerminalError.isInstance(last.payload.error)) reportBug(last);
 * ```
 */
export class MissingTerminalError extends RxAgentError {
  private readonly [marker] = true;

  constructor() {
    super('MissingTerminalError', 'the run ended without a terminal chunk (finish, tripwire, error or abort)');
  }

  static override isInstance(error: unknown): error is MissingTerminalError {
    return hasMarker(error, marker);
  }
}
