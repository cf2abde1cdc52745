import { RxAgentError, hasMarker } from '../../errors/rxagent-error.js';

const marker = Symbol.for('rxagent.error.InvalidProcessorOptionError');

/**
 * A processor was constructed with an option value it does not know (a misspelt strategy, a
 * negative bound): thrown by the constructor, naming the processor, the option and what was given,
 * so a typo never silently picks a default.
 *
 * @example
 * ```ts
 * import { InvalidProcessorOptionError } from 'rxagent';
 * try { new ModerationProcessor({ model, errorStrategy: 'fail-opn' as never }); } catch (error) {
 *   if (InvalidProcessorOptionError.isInstance(error)) console.error(error.processorId, error.option, error.message);
 * }
 * ```
 */
export class InvalidProcessorOptionError extends RxAgentError {
  private readonly [marker] = true;
  /** The processor's id. */
  readonly processorId: string;
  /** The option's name. */
  readonly option: string;
  /** The value given. */
  readonly value: unknown;

  /**
   * `expected` completes "option X must be …"; `{ problem }` instead says what is wrong in full
   * ("is not one of its options (did you mean strategy?)") and leaves the value out of the message
   * (an option name given by mistake may carry a secret as its value; `value` still holds it).
   */
  constructor(processorId: string, option: string, value: unknown, expected: string | { readonly problem: string }) {
    super(
      'InvalidProcessorOptionError',
      typeof expected === 'string' ? `${processorId}: option ${option} must be ${expected} (got ${describe(value)})` : `${processorId}: option ${option} ${expected.problem}`,
    );
    this.processorId = processorId;
    this.option = option;
    this.value = value;
  }

  static override isInstance(error: unknown): error is InvalidProcessorOptionError {
    return hasMarker(error, marker);
  }
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return String(value);
  return typeof value;
}
