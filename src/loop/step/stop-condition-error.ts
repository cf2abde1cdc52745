import { RxAgentError, hasMarker } from '../../errors/rxagent-error.js';
import { thrownMessage } from '../../errors/thrown-message.js';

const marker = Symbol.for('rxagent.error.StopConditionError');

/**
 * Options of {@link StopConditionError}.
 *
 * @example
 * ```ts
 * import type { StopConditionErrorOptions } from 'rxagent';
 * const options: StopConditionErrorOptions = { index: 0, message: 'stopWhen[0] returned "yes"; expected a boolean.' };
 * ```
 */
export interface StopConditionErrorOptions {
  /** The condition's position in `stopWhen` (0 for a single condition). */
  index: number;
  /** Default: `stopWhen[<index>] failed: <cause's message>`. */
  message?: string;
  /** What the condition threw or rejected with. */
  cause?: unknown;
}

/**
 * A `stopWhen` condition threw, rejected, returned something other than a boolean, or left a step's
 * token usage unaddable (`stopWhen[0] left steps[0].usage.inputTokens = number NaN; …`): the run ends
 * with an `error` chunk carrying this (and `generate()` rejects with it). The steps before it are
 * kept, as for any run that ends in an error.
 *
 * @example
 * ```ts
 * import { StopConditionError } from 'rxagent';
 * await agent.generate('Plan my trip').catch((error) => {
 *   if (StopConditionError.isInstance(error)) console.error(`stopWhen[${error.index}]`, error.cause);
 * });
 * ```
 */
export class StopConditionError extends RxAgentError {
  private readonly [marker] = true;
  /** Its position. */
  readonly index: number;

  constructor({ index, message, cause }: StopConditionErrorOptions) {
    const text = thrownMessage(cause) ?? 'a value that cannot be read';
    super('StopConditionError', message ?? `stopWhen[${index}] failed: ${text}`, { cause });
    this.index = index;
  }

  static override isInstance(error: unknown): error is StopConditionError {
    return hasMarker(error, marker);
  }
}
