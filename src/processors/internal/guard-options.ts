/**
 * A guard's options read once, at construction, on one strict path: a value the guard cannot place
 * (a misspelt strategy, a threshold that is no probability) is an `InvalidProcessorOptionError`
 * naming the option, never some other behaviour.
 */
import { InvalidProcessorOptionError } from '../../contract/index.js';

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
  throw new InvalidProcessorOptionError(processorId, option, value, `one of ${accepted.map((entry) => `'${entry}'`).join(', ')}`);
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
 * `value` when it is an array of entries of `accepted`, `fallback` when it is `undefined`.
 *
 * @example
 * ```ts
 * const channels = listOfOption('pii-detector', 'channels', options.channels, ['text', 'reasoning'] as const, ['text']);
 * ```
 */
export function listOfOption<T extends string>(processorId: string, option: string, value: unknown, accepted: readonly T[], fallback: readonly T[]): readonly T[] {
  if (value === undefined) return fallback;
  if (Array.isArray(value) && value.every((entry) => typeof entry === 'string' && (accepted as readonly string[]).includes(entry))) return value as T[];
  throw new InvalidProcessorOptionError(processorId, option, value, `an array of ${accepted.map((entry) => `'${entry}'`).join(', ')}`);
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
