/**
 * Reading what was thrown, without throwing again. Whatever a hook, a tool, a provider or a store
 * throws may be hostile: a Proxy whose traps throw, a revoked Proxy (even `instanceof` throws on
 * it), an `Error` whose `message` getter throws, an object whose `toString` throws or that has no
 * prototype. Each place that turns such a value into an error text reads it here, so each has the
 * same one rule and only chooses its own fallback text.
 */

/**
 * The text of a thrown value: an `Error`'s `message` (as a string), anything else as `show` gives it
 * (default `String`: `'boom'`, `'42'`, `'null'`, `'Symbol(x)'`, `'[object Object]'`). `undefined`
 * when the value cannot be read — reading it, or `show`, threw — so the caller says so in its own
 * words (`?? 'a value that cannot be read'`). Never throws.
 *
 * Not bounded: a 1 MB message is returned whole (a caller that shows it cuts it). `show` runs
 * inside the same guard, so it may throw too (`JSON.stringify` of a `BigInt`).
 *
 * @example
 * ```ts
 * import { thrownMessage } from '../errors/thrown-message.js';
 * thrownMessage(new Error('boom')); // 'boom'
 * thrownMessage(Object.create(null)); // undefined (String() throws on it)
 * thrownMessage({ code: 7 }, (value) => JSON.stringify(value) ?? String(value)); // '{"code":7}'
 * const text = thrownMessage(error) ?? 'a value that cannot be read';
 * ```
 */
export function thrownMessage(thrown: unknown, show: (value: unknown) => string = String): string | undefined {
  try {
    return thrown instanceof Error ? String(thrown.message) : show(thrown);
  } catch {
    return undefined;
  }
}

/**
 * Whether `value` is an `Error` whose `message` is a string that can be read: one that can be kept
 * as a `cause` and shown as it is. False for a Proxy posing as an `Error` whose traps throw, a
 * revoked Proxy, a throwing `message` getter, a `message` that is not a string. Never throws.
 *
 * @example
 * ```ts
 * import { isReadableError } from '../errors/thrown-message.js';
 * isReadableError(new TypeError('bad')); // true
 * isReadableError(Object.assign(new Error(), { message: 42 })); // false
 * ```
 */
export function isReadableError(value: unknown): value is Error {
  try {
    return value instanceof Error && typeof value.message === 'string';
  } catch {
    return false;
  }
}

/**
 * A `show` for {@link thrownMessage} that writes a value that is not an `Error` as JSON where it
 * can (`{"code":7}`, a string as it is) and as `String` gives it otherwise (a BigInt, a Symbol, a
 * cycle, a `toJSON` that throws). May throw (`String` of a null-prototype object): `thrownMessage`
 * catches it.
 *
 * @example
 * ```ts
 * import { jsonOrString, thrownMessage } from '../errors/thrown-message.js';
 * thrownMessage({ code: 7 }, jsonOrString); // '{"code":7}'
 * thrownMessage(10n, jsonOrString); // '10'
 * ```
 */
export function jsonOrString(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
