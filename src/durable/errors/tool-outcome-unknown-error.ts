import { RxAgentError, hasMarker } from '../../contract/index.js';

const marker = Symbol.for('rxagent.error.ToolOutcomeUnknownError');

/**
 * A tool call whose owner died inside `execute`: the ledger says it started, nothing says how it
 * ended, and the tool is not `idempotent`, so it is not run again (that could do its effect
 * twice). The model gets this error as the call's `tool-error` and decides what to do (ask, check,
 * or call again with a new call). Mark a tool `idempotent: true` (it dedupes on
 * `idempotencyKey`) to have it re-run instead.
 *
 * @example
 * ```ts
 * import { ToolOutcomeUnknownError } from 'rxagent/durable';
 * if (chunk.type === 'tool-error' && ToolOutcomeUnknownError.isInstance(chunk.payload.error)) console.warn('check', chunk.payload.toolCallId);
 * ```
 */
export class ToolOutcomeUnknownError extends RxAgentError {
  private readonly [marker] = true;
  /** The name of the tool called. */
  readonly toolName: string;
  /** The id of the call whose outcome is unknown. */
  readonly toolCallId: string;

  constructor(options: { toolName: string; toolCallId: string }) {
    super(
      'ToolOutcomeUnknownError',
      `Tool call ${JSON.stringify(options.toolCallId)} (${options.toolName}) was running when its worker stopped; whether it took effect is unknown, ` +
        'and the tool is not idempotent, so it was not run again',
    );
    this.toolName = options.toolName;
    this.toolCallId = options.toolCallId;
  }

  static override isInstance(error: unknown): error is ToolOutcomeUnknownError {
    return hasMarker(error, marker);
  }
}
