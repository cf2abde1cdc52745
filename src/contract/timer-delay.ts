/**
 * The longest delay a timer waits: Node's and the browsers' `setTimeout` take a 32-bit signed
 * count of milliseconds, and fire a longer delay at once.
 */

/** 2^31 − 1 ms (about 24.8 days): the longest delay `setTimeout` waits. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Whether `value` is a delay a timer waits for: a number of milliseconds above 0 and at most
 * {@link MAX_TIMER_MS} (not `NaN`, not `Infinity`, not a string).
 *
 * @example
 * ```ts
 * isTimerDelay(15_000); // true
 * isTimerDelay(2 ** 31); // false: it would fire at once
 * ```
 */
export function isTimerDelay(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= MAX_TIMER_MS;
}
