/**
 * The mark of an error about an option: `generate()` rejects with it as is (not wrapped in
 * `AgentRunError`), and an option function the run calls as a hook (`prepareStep`) that fails an
 * option's check is that error, not a processor's (`toHookError` passes it on).
 */

const OPTION_ERROR = Symbol.for('rxagent.error.invalidOption');

/**
 * A `TypeError` about an option (marked, so `generate()` rejects with it as is).
 *
 * @example
 * ```ts
 * throw optionError('options.maxSteps must be a whole number ≥ 1, got NaN.');
 * ```
 */
export function optionError(message: string): TypeError {
  const error = new TypeError(message);
  Object.defineProperty(error, OPTION_ERROR, { value: true });
  return error;
}

/**
 * True for the errors {@link optionError} makes (from any copy of the package).
 *
 * @example
 * ```ts
 * if (isOptionError(error)) throw error;
 * ```
 */
export function isOptionError(error: unknown): error is TypeError {
  return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[OPTION_ERROR] === true;
}
