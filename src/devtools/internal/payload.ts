/**
 * JSON-safe, bounded copies of whatever a run hands the inspector (chunks, hook arguments,
 * results, errors, processor state): made at once, so later mutations do not show, and cut so
 * that one huge tool result cannot blow up the page. A copy is bounded as a whole, not only per
 * level: a structure that shares its parts (small in memory, exponential as a tree) is cut after
 * `maxValues` values and `maxChars` characters, with a note.
 */
import type { Payload } from '../inspector-events.js';

/** Limits of one copy. */
export interface PayloadLimits {
  maxDepth: number;
  /** Characters of one string (or key). */
  maxString: number;
  /** Items of one array, keys of one object. */
  maxItems: number;
  /** Objects, arrays and values in the whole copy. */
  maxValues: number;
  /** Characters of strings and keys in the whole copy. */
  maxChars: number;
}

export const DEFAULT_PAYLOAD_LIMITS: PayloadLimits = { maxDepth: 7, maxString: 4000, maxItems: 200, maxValues: 10_000, maxChars: 200_000 };

/** What one copy has used of its limits, and the objects on the path being copied (cycles). */
interface CopyState {
  seen: Set<object>;
  values: number;
  /** UTF-16 units of the copy's strings and keys (its `maxChars` limit). */
  chars: number;
  /** {@link stringBytes} of the copy's strings and keys. */
  bytes: number;
  /** Whether to count {@link CopyState.readBytes} (it costs a pass over every string read whole). */
  read: boolean;
  /** {@link stringBytes} of the strings and keys the copy read, before they were cut (what the original holds). */
  readBytes: number;
}

/** Bytes a value other than a string is estimated at (an object, an array, a number…), in a copy or in what it was copied from. */
export const VALUE_BYTES = 16;

/** A string JSON writes as it is (printable ASCII, no quote or backslash): one byte a unit, in UTF-8 and in memory. */
const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * The bytes a string takes where the inspector keeps or sends it: the larger of its size as UTF-8
 * JSON (quotes and escapes included: `\n` is 2 bytes, a control character or a lone surrogate 6, a
 * character past U+07FF 3, a surrogate pair 4) and its size in memory (2 bytes a UTF-16 unit in a
 * string holding a character past U+00FF, as engines store it, else 1).
 *
 * @example
 * ```ts
 * stringBytes('abc'); // 5: "abc"
 * stringBytes('漢字'); // 8: two 3-byte characters and the quotes
 * ```
 */
export function stringBytes(text: string): number {
  const length = text.length;
  if (PLAIN_ASCII.test(text)) return length + 2;
  let json = 2;
  let wide = false;
  for (let index = 0; index < length; index++) {
    const unit = text.charCodeAt(index);
    if (unit < 0x80) {
      if (unit >= 0x20) json += unit === 0x22 || unit === 0x5c ? 2 : 1;
      else json += unit === 0x08 || unit === 0x09 || unit === 0x0a || unit === 0x0c || unit === 0x0d ? 2 : 6;
    } else if (unit < 0x800) {
      json += 2;
      if (unit > 0xff) wide = true;
    } else {
      wide = true;
      if (unit >= 0xd800 && unit <= 0xdfff) {
        const next = text.charCodeAt(index + 1);
        if (unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
          json += 4;
          index += 1;
        } else json += 6; // a lone half: JSON writes it as \uXXXX
      } else json += 3;
    }
  }
  return Math.max(json, wide ? 2 * length : length);
}

/**
 * A copy and its estimated size: `bytes`, of the copy (its strings and keys as
 * {@link stringBytes}, and {@link VALUE_BYTES} per value); `readBytes`, of the part of the
 * original it read (its strings and keys before they were cut), when asked for (`read: true`).
 * Counted as the copy is made, so the estimate costs no second walk; what the copy did not read
 * (past its limits) is not counted.
 */
export interface MeasuredPayload {
  payload: Payload;
  bytes: number;
  readBytes: number;
}

const newState = (seen: Set<object> = new Set(), read = false): CopyState => ({ seen, values: 0, chars: 0, bytes: 0, read, readBytes: 0 });

const measured = (payload: Payload, state: CopyState): MeasuredPayload => ({
  payload,
  bytes: state.bytes + VALUE_BYTES * (state.values + 1),
  readBytes: state.readBytes + VALUE_BYTES * (state.values + 1),
});

/** Where a copy that reached `maxValues` stops. */
export const VALUES_LEFT_OUT = '… values left out: the copy is at its size limit';

/** Hook arguments that are the runtime's plumbing, not the processor's data: left out of copies. */
const PLUMBING = new Set(['abort', 'writer', 'sendSignal', 'tracingContext', 'abortSignal']);

/**
 * The first `length` UTF-16 units of `text`, one fewer when the cut would split a surrogate pair
 * (a lone half would show as U+FFFD).
 */
export function cutText(text: string, length: number): string {
  if (text.length <= length) return text;
  const last = text.charCodeAt(length - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? length - 1 : length);
}

function cutString(text: string, limits: PayloadLimits, state: CopyState): string {
  const room = Math.min(limits.maxString, Math.max(0, limits.maxChars - state.chars));
  if (text.length <= room) {
    state.chars += text.length;
    const bytes = stringBytes(text);
    state.bytes += bytes;
    if (state.read) state.readBytes += bytes;
    return text;
  }
  const kept = cutText(text, room);
  state.chars += kept.length;
  const copy = `${kept}… (${text.length - kept.length} more characters)`;
  state.bytes += stringBytes(copy);
  if (state.read) state.readBytes += stringBytes(text);
  return copy;
}

/** Whether the copy has room for one more value; counts it when it has. */
function takeValue(limits: PayloadLimits, state: CopyState): boolean {
  if (state.values >= limits.maxValues) return false;
  state.values += 1;
  return true;
}

function errorPayload(error: Error, depth: number, limits: PayloadLimits, state: CopyState): Payload {
  const copy: Record<string, Payload> = { $type: 'Error', name: cutString(String(error.name), limits, state), message: cutString(String(error.message), limits, state) };
  for (const key of ['processorId', 'hook', 'reason', 'retry', 'metadata', 'statusCode'] as const) {
    const value = (error as unknown as Record<string, unknown>)[key];
    if (value !== undefined) copy[key] = copyValue(value, depth + 1, limits, state);
  }
  if (error.cause !== undefined) copy.cause = copyValue(error.cause, depth + 1, limits, state);
  return copy;
}

/** The first `limit` values of an iterable (a Map's entries, a Set's values), without walking the rest; a note when there are more. */
function firstOf(values: Iterable<unknown>, size: number, limit: number): unknown[] {
  const first: unknown[] = [];
  if (limit <= 0) return first;
  for (const value of values) {
    first.push(value);
    if (first.length >= limit) break;
  }
  if (size > limit) first.push(`… ${size - limit} more`);
  return first;
}

/** A MessageList (duck-typed: its `get.all.db()` view) as its messages. */
function messageListMessages(value: object): unknown[] | undefined {
  const get = (value as { get?: { all?: { db?: unknown } } }).get;
  const db = get?.all?.db;
  if (typeof db !== 'function') return undefined;
  try {
    const messages: unknown = (db as () => unknown).call(get?.all);
    return Array.isArray(messages) ? messages : undefined;
  } catch {
    return undefined;
  }
}

/** Sets an own property (a `__proto__` key stays a key). */
function define(copy: Record<string, Payload>, key: string, value: Payload): void {
  Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
}

/** What a value that threw when read is shown as. */
function unreadable(error: unknown): string {
  return `[unreadable: ${cutText(error instanceof Error ? String(error.message) : String(error), DEFAULT_PAYLOAD_LIMITS.maxString)}]`;
}

/** A property read that a throwing getter cannot break. */
function read(value: object, key: string): unknown {
  try {
    return (value as Record<string, unknown>)[key];
  } catch (error) {
    return unreadable(error);
  }
}

function copyObject(value: object, depth: number, limits: PayloadLimits, state: CopyState, leaveOut?: ReadonlySet<string>): Payload {
  const copy: Record<string, Payload> = {};
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) {
    const name = (value.constructor as { name?: unknown } | undefined)?.name;
    if (typeof name === 'string' && name !== '') copy.$type = name;
  }
  let count = 0;
  for (const key of Object.keys(value)) {
    if (leaveOut?.has(key)) continue;
    const item = read(value, key);
    if (typeof item === 'function' || item === undefined) continue;
    if (count++ >= limits.maxItems) {
      define(copy, '…', 'more keys left out');
      break;
    }
    if (!takeValue(limits, state)) {
      define(copy, '…', VALUES_LEFT_OUT);
      break;
    }
    define(copy, cutString(key, limits, state), copyValue(item, depth + 1, limits, state));
  }
  return copy;
}

function copyValue(value: unknown, depth: number, limits: PayloadLimits, state: CopyState): Payload {
  switch (typeof value) {
    case 'string':
      return cutString(value, limits, state);
    case 'number':
      return Number.isFinite(value) ? value : String(value);
    case 'boolean':
      return value;
    case 'bigint':
      return cutString(`${value.toString()}n`, limits, state);
    case 'undefined':
      return null;
    case 'function':
      return '[function]';
    case 'symbol':
      return cutString(value.toString(), limits, state);
  }
  if (value === null) return null;
  const object = value as object;
  const { seen } = state;
  if (seen.has(object)) return '[circular]';
  if (object instanceof Date) return Number.isNaN(object.getTime()) ? 'Invalid Date' : object.toISOString();
  if (object instanceof Error) {
    seen.add(object);
    const copy = errorPayload(object, depth, limits, state);
    seen.delete(object);
    return copy;
  }
  if (ArrayBuffer.isView(object)) return { $type: object.constructor.name, byteLength: object.byteLength };
  if (typeof AbortSignal !== 'undefined' && object instanceof AbortSignal) return { $type: 'AbortSignal', aborted: object.aborted };
  if (depth >= limits.maxDepth) return Array.isArray(object) ? `[${object.length} items]` : '{…}';
  seen.add(object);
  try {
    if (Array.isArray(object)) {
      const items: Payload[] = [];
      for (const item of object.slice(0, limits.maxItems)) {
        if (!takeValue(limits, state)) {
          items.push(VALUES_LEFT_OUT);
          return items;
        }
        items.push(copyValue(item, depth + 1, limits, state));
      }
      if (object.length > limits.maxItems) items.push(`… ${object.length - limits.maxItems} more items`);
      return items;
    }
    if (object instanceof Map) {
      return { $type: 'Map', entries: copyValue(firstOf(object.entries(), object.size, limits.maxItems), depth + 1, limits, state) };
    }
    if (object instanceof Set) return { $type: 'Set', values: copyValue(firstOf(object.values(), object.size, limits.maxItems), depth + 1, limits, state) };
    const messages = messageListMessages(object);
    if (messages !== undefined) return { $type: 'MessageList', messages: copyValue(messages, depth + 1, limits, state) };
    return copyObject(object, depth, limits, state);
  } finally {
    seen.delete(object);
  }
}

/**
 * A JSON-safe copy of `value` within `limits`.
 *
 * @example
 * ```ts
 * toPayload({ text: 'hi', at: new Date(0) }); // { text: 'hi', at: '1970-01-01T00:00:00.000Z' }
 * ```
 */
export function toPayload(value: unknown, limits: PayloadLimits = DEFAULT_PAYLOAD_LIMITS): Payload {
  return measuredPayload(value, limits).payload;
}

/**
 * {@link toPayload}, with the copy's estimated size (see {@link MeasuredPayload}).
 *
 * @example
 * ```ts
 * const { payload, bytes } = measuredPayload({ text: 'hi' }); // bytes: an estimate counted as the copy was made
 * const { readBytes } = measuredPayload(chunk, DEFAULT_PAYLOAD_LIMITS, { read: true }); // what the original holds, as read
 * ```
 */
export function measuredPayload(value: unknown, limits: PayloadLimits = DEFAULT_PAYLOAD_LIMITS, options: { read?: boolean } = {}): MeasuredPayload {
  const state = newState(undefined, options.read === true);
  let payload: Payload;
  try {
    payload = copyValue(value, 0, limits, state);
  } catch (error) {
    // a Proxy or exotic object that throws on inspection: the inspector still records the event
    payload = unreadable(error);
  }
  return measured(payload, state);
}

/**
 * A hook's argument object as a payload: its data (messages, part, state, step number…), without
 * the runtime's plumbing (`abort`, `writer`, `abortSignal`, `tracingContext`, `sendSignal`).
 */
export function hookArgsPayload(args: unknown, limits: PayloadLimits = DEFAULT_PAYLOAD_LIMITS): Payload {
  return measuredHookArgs(args, limits).payload;
}

/** {@link hookArgsPayload}, with the copy's estimated size (see {@link MeasuredPayload}). */
export function measuredHookArgs(args: unknown, limits: PayloadLimits = DEFAULT_PAYLOAD_LIMITS): MeasuredPayload {
  if (args === null || typeof args !== 'object') return measuredPayload(args, limits);
  const state = newState(new Set([args]));
  let payload: Payload;
  try {
    payload = copyObject(args, 0, limits, state, PLUMBING);
  } catch (error) {
    payload = unreadable(error);
  }
  return measured(payload, state);
}
