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
   * With `expected`, the message describes the value without printing a string (an API key given
   * to the wrong option must not land in a log): `a string of 41 characters`; numbers (but whole
   * numbers of 9 digits or more, which may be account or card numbers), booleans, `null` and
   * `undefined` as they are. `suggestion` names the accepted value a string is closest to.
   */
  constructor(processorId: string, option: string, value: unknown, expected: string | { readonly problem: string }, options: { readonly suggestion?: string | undefined } = {}) {
    super(
      'InvalidProcessorOptionError',
      typeof expected === 'string'
        ? `${processorId}: option ${option} must be ${expected} (got ${describeValue(value)}${options.suggestion === undefined ? '' : `; did you mean ${options.suggestion}?`})`
        : `${processorId}: option ${option} ${expected.problem}`,
    );
    this.processorId = processorId;
    this.option = option;
    this.value = value;
  }

  static override isInstance(error: unknown): error is InvalidProcessorOptionError {
    return hasMarker(error, marker);
  }
}

/** Whole numbers from this many digits on are described, not printed (account, card or PIN-like numbers). */
const SECRET_LIKE_DIGITS = 9;

/**
 * What `value` is, for an error message, without printing a string or a secret-like number. Never
 * throws (a revoked Proxy is "a value that cannot be read").
 */
function describeValue(value: unknown): string {
  try {
    if (typeof value === 'string') return value === '' ? 'an empty string' : `a string of ${value.length} character${value.length === 1 ? '' : 's'}`;
    if (typeof value === 'number') {
      const digits = Number.isInteger(value) ? String(Math.abs(value)).length : 0;
      return digits >= SECRET_LIKE_DIGITS && !String(value).includes('e') ? `a whole number of ${digits} digits` : String(value);
    }
    if (typeof value === 'boolean' || value === null || value === undefined) return String(value);
    if (typeof value === 'function') return 'a function';
    if (typeof value === 'symbol') return 'a symbol';
    if (typeof value === 'bigint') return 'a bigint';
    if (Array.isArray(value)) return `an array of ${value.length} entr${value.length === 1 ? 'y' : 'ies'}`;
    return 'an object';
  } catch {
    return 'a value that cannot be read';
  }
}
