/**
 * JSON-safe, bounded copies of whatever a run hands the inspector (chunks, hook arguments,
 * results, errors, processor state): made at once, so later mutations do not show, and cut so
 * that one huge tool result cannot blow up the page.
 */
import type { Payload } from '../inspector-events.js';

/** Limits of one copy. */
export interface PayloadLimits {
  maxDepth: number;
  maxString: number;
  maxItems: number;
}

export const DEFAULT_PAYLOAD_LIMITS: PayloadLimits = { maxDepth: 7, maxString: 4000, maxItems: 200 };

/** Hook arguments that are the runtime's plumbing, not the processor's data: left out of copies. */
const PLUMBING = new Set(['abort', 'writer', 'sendSignal', 'tracingContext', 'abortSignal']);

function cutString(text: string, limits: PayloadLimits): string {
  return text.length <= limits.maxString ? text : `${text.slice(0, limits.maxString)}… (${text.length - limits.maxString} more characters)`;
}

function errorPayload(error: Error, depth: number, limits: PayloadLimits, seen: Set<object>): Payload {
  const copy: Record<string, Payload> = { $type: 'Error', name: error.name, message: cutString(error.message, limits) };
  for (const key of ['processorId', 'hook', 'reason', 'retry', 'metadata', 'statusCode'] as const) {
    const value = (error as unknown as Record<string, unknown>)[key];
    if (value !== undefined) copy[key] = copyValue(value, depth + 1, limits, seen);
  }
  if (error.cause !== undefined) copy.cause = copyValue(error.cause, depth + 1, limits, seen);
  return copy;
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

/** A property read that a throwing getter cannot break. */
function read(value: object, key: string): unknown {
  try {
    return (value as Record<string, unknown>)[key];
  } catch (error) {
    return `[unreadable: ${error instanceof Error ? error.message : String(error)}]`;
  }
}

function copyObject(value: object, depth: number, limits: PayloadLimits, seen: Set<object>, leaveOut?: ReadonlySet<string>): Payload {
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
    define(copy, key, copyValue(item, depth + 1, limits, seen));
  }
  return copy;
}

function copyValue(value: unknown, depth: number, limits: PayloadLimits, seen: Set<object>): Payload {
  switch (typeof value) {
    case 'string':
      return cutString(value, limits);
    case 'number':
      return Number.isFinite(value) ? value : String(value);
    case 'boolean':
      return value;
    case 'bigint':
      return `${value.toString()}n`;
    case 'undefined':
      return null;
    case 'function':
      return '[function]';
    case 'symbol':
      return value.toString();
  }
  if (value === null) return null;
  const object = value as object;
  if (seen.has(object)) return '[circular]';
  if (object instanceof Date) return Number.isNaN(object.getTime()) ? 'Invalid Date' : object.toISOString();
  if (object instanceof Error) {
    seen.add(object);
    const copy = errorPayload(object, depth, limits, seen);
    seen.delete(object);
    return copy;
  }
  if (ArrayBuffer.isView(object)) return { $type: object.constructor.name, byteLength: object.byteLength };
  if (typeof AbortSignal !== 'undefined' && object instanceof AbortSignal) return { $type: 'AbortSignal', aborted: object.aborted };
  if (depth >= limits.maxDepth) return Array.isArray(object) ? `[${object.length} items]` : '{…}';
  seen.add(object);
  try {
    if (Array.isArray(object)) {
      const items = object.slice(0, limits.maxItems).map((item) => copyValue(item, depth + 1, limits, seen));
      if (object.length > limits.maxItems) items.push(`… ${object.length - limits.maxItems} more items`);
      return items;
    }
    if (object instanceof Map) {
      return { $type: 'Map', entries: copyValue([...object.entries()].slice(0, limits.maxItems), depth + 1, limits, seen) };
    }
    if (object instanceof Set) return { $type: 'Set', values: copyValue([...object].slice(0, limits.maxItems), depth + 1, limits, seen) };
    const messages = messageListMessages(object);
    if (messages !== undefined) return { $type: 'MessageList', messages: copyValue(messages, depth + 1, limits, seen) };
    return copyObject(object, depth, limits, seen);
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
  try {
    return copyValue(value, 0, limits, new Set());
  } catch (error) {
    // a Proxy or exotic object that throws on inspection: the inspector still records the event
    return `[unreadable: ${error instanceof Error ? error.message : String(error)}]`;
  }
}

/**
 * A hook's argument object as a payload: its data (messages, part, state, step number…), without
 * the runtime's plumbing (`abort`, `writer`, `abortSignal`, `tracingContext`, `sendSignal`).
 */
export function hookArgsPayload(args: unknown, limits: PayloadLimits = DEFAULT_PAYLOAD_LIMITS): Payload {
  if (args === null || typeof args !== 'object') return toPayload(args, limits);
  return copyObject(args, 0, limits, new Set([args]), PLUMBING);
}
