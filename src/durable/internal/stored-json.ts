/**
 * What the journal keeps of a value a run hands it (a submitted input, a tool's arguments, result
 * or error): the codec's JSON text, read back. An own `__proto__` key (as `JSON.parse` makes one,
 * in a client's message or a tool's result) is text like any other key and reads back as an own
 * key again — a walk that assigned keys dropped it, silently, so a worker taking the run over got
 * other data than its first owner.
 */
import { encodeJson, type JsonValue } from '../../contract/index.js';

/**
 * `value` as the journal stores it (the codec's rules: a `Date` as its ISO text, an `Error` as its
 * fields, a `Uint8Array` as base64); a `JsonEncodingError` naming the path of what cannot be written.
 *
 * @example
 * ```ts
 * storedJson(JSON.parse('{"__proto__":{"x":1}}')); // { ['__proto__']: { x: 1 } }, an own key
 * ```
 */
export function storedJson(value: unknown, what?: string): JsonValue {
  return JSON.parse(encodeJson(value, what)) as JsonValue;
}
