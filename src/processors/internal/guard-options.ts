/**
 * A processor's options read once, at construction, on one strict path: a value the processor cannot place
 * (a misspelt strategy, a threshold that is no probability) is an `InvalidProcessorOptionError`
 * naming the option, never some other behaviour.
 */
import { closestKey, InvalidProcessorOptionError, thrownMessage } from '../../contract/index.js';

/** The accepted value a string given for an enum option is closest to (`'Block'` → `'block'`), quoted; never for a long string. */
function nearestAccepted(value: unknown, accepted: readonly string[]): string | undefined {
  if (typeof value !== 'string' || value.length > 64) return undefined;
  const nearest = closestKey(value.trim(), accepted);
  return nearest === undefined ? undefined : `'${nearest}'`;
}

/**
 * Why a pattern does not compile, without the pattern (`Unterminated group`): the engine's message
 * quotes the pattern, which is the option's value and may be a secret.
 *
 * @example
 * ```ts
 * compileProblem(new SyntaxError('Invalid regular expression: /(/: Unterminated group')); // 'Unterminated group'
 * ```
 */
export function compileProblem(error: unknown): string {
  const message = thrownMessage(error);
  return (message === undefined ? undefined : /: ([^:]+)$/.exec(message)?.[1]) ?? 'it does not compile';
}

/**
 * `value` when it is one of `accepted` (compared exactly), `fallback` when it is `undefined`.
 *
 * @example
 * ```ts
 * const strategy = oneOfOption('moderation', 'strategy', options.strategy, ['block', 'warn', 'filter'] as const, 'block');
 * ```
 */
export function oneOfOption<T extends string>(processorId: string, option: string, value: unknown, accepted: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (typeof value === 'string' && (accepted as readonly string[]).includes(value)) return value as T;
  throw new InvalidProcessorOptionError(processorId, option, value, `one of ${accepted.map((entry) => `'${entry}'`).join(', ')}`, { suggestion: nearestAccepted(value, accepted) });
}

/**
 * `value` when it is a number from 0 to 1, `fallback` when it is `undefined`.
 *
 * @example
 * ```ts
 * const threshold = probabilityOption('moderation', 'threshold', options.threshold, 0.5);
 * ```
 */
export function probabilityOption(processorId: string, option: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number' && value >= 0 && value <= 1) return value;
  throw new InvalidProcessorOptionError(processorId, option, value, 'a number from 0 to 1');
}

/**
 * `value` when it is a non-empty array of entries of `accepted`, `fallback` when it is `undefined`.
 *
 * @example
 * ```ts
 * const channels = listOfOption('pii-detector', 'channels', options.channels, ['text', 'reasoning'] as const, ['text']);
 * ```
 */
export function listOfOption<T extends string>(processorId: string, option: string, value: unknown, accepted: readonly T[], fallback: readonly T[]): readonly T[] {
  if (value === undefined) return fallback;
  // an empty list would check nothing: refused, as a misspelt entry is
  if (Array.isArray(value) && value.length > 0 && value.every((entry) => typeof entry === 'string' && (accepted as readonly string[]).includes(entry))) return value as T[];
  const wrong: unknown = Array.isArray(value) ? value.find((entry) => !(accepted as readonly unknown[]).includes(entry)) : value;
  throw new InvalidProcessorOptionError(processorId, option, value, `a non-empty array of ${accepted.map((entry) => `'${entry}'`).join(', ')}`, { suggestion: nearestAccepted(wrong, accepted) });
}

/**
 * `value` when it is a boolean, `fallback` when it is `undefined` (a string such as `'false'` is
 * refused: it would read as `true`).
 *
 * @example
 * ```ts
 * const lastMessageOnly = booleanOption('moderation', 'lastMessageOnly', options.lastMessageOnly, false);
 * ```
 */
export function booleanOption(processorId: string, option: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value === 'boolean') return value;
  throw new InvalidProcessorOptionError(processorId, option, value, 'true or false');
}

/**
 * `value` when it is a whole number from `least` to `most`, `fallback` when it is `undefined`.
 *
 * @example
 * ```ts
 * const batchSize = wholeNumberOption('batch-parts', 'batchSize', options.batchSize, 5, 1);
 * ```
 */
export function wholeNumberOption(processorId: string, option: string, value: unknown, fallback: number, least: number, most = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= least && value <= most) return value;
  throw new InvalidProcessorOptionError(processorId, option, value, `a whole number of at least ${least}${most === Number.MAX_SAFE_INTEGER ? '' : `, at most ${most}`}`);
}

/** The bounds {@link numberOption} checks: `above` (exclusive) or `least` (inclusive), and `most` (inclusive; without it `Infinity` is accepted). */
export interface NumberBounds {
  /** The value must be greater than this. */
  above?: number;
  /** The value must be at least this. */
  least?: number;
  /** The value must be at most this (finite: `Infinity` is then refused). */
  most?: number;
}

/**
 * `value` when it is a number (never `NaN`) within `bounds`, `fallback` when it is `undefined`.
 *
 * @example
 * ```ts
 * const limit = numberOption('token-limiter', 'limit', options.limit, undefined, { above: 0 });
 * ```
 */
export function numberOption<F extends number | undefined>(processorId: string, option: string, value: unknown, fallback: F, bounds: NumberBounds): number | F {
  if (value === undefined) return fallback;
  const { above, least, most } = bounds;
  if (
    typeof value === 'number' &&
    !Number.isNaN(value) &&
    (above === undefined || value > above) &&
    (least === undefined || value >= least) &&
    (most === undefined || value <= most)
  ) {
    return value;
  }
  const limits = [above !== undefined ? `above ${above}` : least !== undefined ? `of at least ${least}` : '', most === undefined ? '' : `at most ${most}`];
  throw new InvalidProcessorOptionError(processorId, option, value, ['a number', limits.filter((limit) => limit !== '').join(', ')].join(' ').trimEnd());
}

/**
 * `value` when it is a function, `undefined` when it is `undefined` (a callback that is no function
 * would fail only when called — where its throws are swallowed).
 *
 * @example
 * ```ts
 * const onDecision = functionOption('model-selection', 'onDecision', options.onDecision);
 * ```
 */
export function functionOption<T extends (...args: never[]) => unknown>(processorId: string, option: string, value: T | undefined): T | undefined {
  if (value === undefined || typeof value === 'function') return value;
  throw new InvalidProcessorOptionError(processorId, option, value, 'a function');
}

/**
 * `value` when it is a string (not empty with `nonEmpty`), `fallback` when it is `undefined`.
 *
 * @example
 * ```ts
 * const placeholder = stringOption('system-prompt-scrubber', 'placeholderText', options.placeholderText, '[SYSTEM_PROMPT]');
 * ```
 */
export function stringOption<F extends string | undefined>(processorId: string, option: string, value: unknown, fallback: F, nonEmpty = false): string | F {
  if (value === undefined) return fallback;
  if (typeof value === 'string' && (!nonEmpty || value !== '')) return value;
  throw new InvalidProcessorOptionError(processorId, option, value, nonEmpty ? 'a non-empty string' : 'a string');
}

/**
 * `value` when it is a non-empty array of non-blank strings, `fallback` when it is `undefined` (a
 * single string, `[]` or an entry that is no string would judge nothing, or the wrong thing).
 *
 * @example
 * ```ts
 * const categories = labelListOption('moderation', 'categories', options.categories, DEFAULT_MODERATION_CATEGORIES);
 * ```
 */
export function labelListOption(processorId: string, option: string, value: unknown, fallback: readonly string[]): readonly string[] {
  if (value === undefined) return fallback;
  if (Array.isArray(value) && value.length > 0 && value.every((entry) => typeof entry === 'string' && entry.trim() !== '')) return [...(value as string[])];
  throw new InvalidProcessorOptionError(processorId, option, value, 'a non-empty array of non-empty strings');
}

/**
 * `value` when it is an object with a function under each of `methods`, `undefined` when it is
 * `undefined` (a scheduler, a store).
 *
 * @example
 * ```ts
 * const scheduler = methodsOption('batch-parts', 'scheduler', options.scheduler, ['now']) ?? asyncScheduler;
 * ```
 */
export function methodsOption<T extends object>(processorId: string, option: string, value: T | undefined, methods: readonly string[]): T | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'object' && value !== null && methods.every((method) => typeof (value as Record<string, unknown>)[method] === 'function')) return value;
  throw new InvalidProcessorOptionError(processorId, option, value, `an object with ${methods.map((method) => `a ${method}() method`).join(' and ')}`);
}

/**
 * `value` when it is a RegExp or a string that compiles with `flags`, `undefined` when it is
 * `undefined`.
 *
 * @example
 * ```ts
 * const pattern = patternOption('system-prompt-scrubber', 'customPatterns[0]', 'INTERNAL-\\d+', 'g');
 * ```
 */
export function patternOption(processorId: string, option: string, value: unknown, flags: string): RegExp | undefined {
  if (value === undefined) return undefined;
  if (value instanceof RegExp) return value;
  if (typeof value === 'string') {
    try {
      return new RegExp(value, flags);
    } catch (error) {
      throw new InvalidProcessorOptionError(processorId, option, value, `a valid regular expression (${compileProblem(error)})`);
    }
  }
  throw new InvalidProcessorOptionError(processorId, option, value, 'a RegExp or a pattern string');
}
