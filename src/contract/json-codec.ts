/**
 * The one JSON codec of rxagent: how chunks, run snapshots and journal entries become JSON text.
 *
 * - `encodeJson` / `toJsonValue` (lenient, for chunks and snapshots): what `JSON.stringify` does —
 *   `toJSON` honoured, so a `Date` becomes its ISO string; `undefined` object fields dropped; a
 *   boxed string, number or boolean written as its value (a boxed BigInt or symbol refused) — plus
 *   an `Error` as `{ name, message, …its own fields, cause? }` and a `Uint8Array` as its base64
 *   text. What would be lost silently is an error instead: a `BigInt`, a function or symbol value,
 *   a `Map`/`Set`, a non-finite number, a cycle (`JsonEncodingError` naming path and type).
 * - `findNonJson` (strict, for processor `state`): only values that read back as themselves —
 *   plain objects, arrays, finite numbers, strings, booleans, `null` (and `undefined` object
 *   fields, which read back as absent). A `Date`, `Map`, `Set`, `Error` or class instance is
 *   reported, with its path.
 */
import { JsonEncodingError } from './errors/json-encoding-error.js';

/** A JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Where a value stops being JSON: a JSONPath (`$.a[2].b`) and what was found there. */
export interface NonJsonAt {
  /** A JSONPath to the value (`$.a[2].b`). */
  path: string;
  /** What was found there (`Set`, `bigint`, `NaN`, `cycle`…). */
  type: string;
}

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * The deepest nesting the codec writes (objects and arrays within each other). Deeper values are
 * a `JsonEncodingError` (type `depth > 1000`), never a stack overflow, and every reader can
 * handle whatever the codec wrote.
 */
export const MAX_JSON_DEPTH = 1000;

/** True when `value` nests objects or arrays deeper than `limit` (iterative: any depth; a cycle counts as deep). */
function deeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop() as [unknown, number];
    if (item === null || typeof item !== 'object') continue;
    if (depth >= limit) return true;
    const children: unknown[] = Array.isArray(item) ? item : Object.values(item);
    for (const child of children) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return identifier.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isNaN(value) ? 'NaN' : String(value);
  if (typeof value !== 'object') return typeof value;
  const constructorName = (Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null)?.constructor?.name;
  return constructorName === undefined || constructorName === '' ? 'object' : constructorName;
}

function isPlainObject(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * A boxed primitive's value (`new String('a')` → `'a'`, `Object(1n)` → `1n`), as `JSON.stringify`
 * unwraps them; `value` itself for anything else (an object that only inherits from
 * `String.prototype` and the like included: its `valueOf` refuses it).
 */
function unboxed(value: object): unknown {
  const valueOf =
    value instanceof String ? String.prototype.valueOf
    : value instanceof Number ? Number.prototype.valueOf
    : value instanceof Boolean ? Boolean.prototype.valueOf
    : value instanceof BigInt ? BigInt.prototype.valueOf
    : value instanceof Symbol ? Symbol.prototype.valueOf
    : undefined;
  if (valueOf === undefined) return value;
  try {
    return (valueOf as (this: object) => unknown).call(value);
  } catch {
    return value;
  }
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** An `Error` as plain data: `name`, `message`, its own enumerable fields, and `cause`. */
function errorFields(error: Error): Record<string, unknown> {
  const fields: Record<string, unknown> = { name: error.name, message: error.message };
  for (const key of Object.keys(error)) if (!(key in fields)) fields[key] = (error as unknown as Record<string, unknown>)[key];
  if (error.cause !== undefined && !('cause' in fields)) fields['cause'] = error.cause;
  return fields;
}

/**
 * `value` as a JSON value (see the module's rules); throws `JsonEncodingError` naming the first
 * path that cannot be written. `what` names the value in the message (`'chunk text-delta'`).
 *
 * @example
 * ```ts
 * import { toJsonValue } from 'rxagent/durable';
 * toJsonValue({ at: new Date(0), error: new TypeError('bad') });
 * // { at: '1970-01-01T00:00:00.000Z', error: { name: 'TypeError', message: 'bad' } }
 * ```
 */
export function toJsonValue(value: unknown, what?: string): JsonValue {
  const ancestors: object[] = [];
  const fail = (path: string, type: string): never => {
    throw new JsonEncodingError(what === undefined ? { path, type } : { path, type, what });
  };
  const walk = (item: unknown, path: string, key: string, depth: number): JsonValue | undefined => {
    let current = item;
    if (current !== null && typeof current === 'object' && typeof (current as { toJSON?: unknown }).toJSON === 'function') {
      current = (current as { toJSON(key: string): unknown }).toJSON(key);
    }
    if (current !== null && typeof current === 'object') current = unboxed(current);
    switch (typeof current) {
      case 'string':
      case 'boolean':
        return current;
      case 'number':
        return Number.isFinite(current) ? current : fail(path, typeName(current));
      case 'undefined':
        return undefined;
      case 'bigint':
      case 'function':
      case 'symbol':
        return fail(path, typeof current);
    }
    if (current === null) return null;
    const object = current as object;
    if (ancestors.includes(object)) return fail(path, 'cycle');
    if (depth >= MAX_JSON_DEPTH) return fail(path, `depth > ${MAX_JSON_DEPTH}`);
    if (object instanceof Map || object instanceof Set || object instanceof WeakMap || object instanceof WeakSet || object instanceof Promise) {
      return fail(path, typeName(object));
    }
    if (object instanceof Uint8Array) return base64(object);
    ancestors.push(object);
    try {
      if (Array.isArray(object)) {
        return object.map((element, index) => walk(element, childPath(path, index), String(index), depth + 1) ?? null);
      }
      const source = object instanceof Error ? errorFields(object) : (object as Record<string, unknown>);
      const result: { [key: string]: JsonValue } = {};
      for (const field of Object.keys(source)) {
        const encoded = walk(source[field], childPath(path, field), field, depth + 1);
        if (encoded === undefined) continue;
        // an own `__proto__` key (as `JSON.parse` makes one) is data: assigning it would set the prototype
        if (field === '__proto__') Object.defineProperty(result, field, { value: encoded, enumerable: true, writable: true, configurable: true });
        else result[field] = encoded;
      }
      return result;
    } finally {
      ancestors.pop();
    }
  };
  return walk(value, '$', '', 0) ?? null;
}

const dateToJson = Date.prototype.toJSON;
const dateToIsoString = Date.prototype.toISOString;
/** Deeper than this, {@link isPlainJson} gives up (the replacer's pass takes it, cycles included). */
const PLAIN_DEPTH = 32;

/**
 * True when `JSON.stringify(value)` writes what the replacer's pass writes, so the replacer can be
 * left out: strings, booleans, `undefined`, finite numbers, `null`, arrays and plain objects of
 * those, and a `Date` with the built-in `toJSON` (its ISO text, as the replacer sees it). Anything
 * else — an `Error`, a `Uint8Array`, a class instance, a function, a non-finite number, a cycle
 * (past {@link PLAIN_DEPTH}) — is `false`, and the replacer decides. Only while neither
 * `Object.prototype` nor `Array.prototype` has a `toJSON` (one would change every object's text).
 */
function isPlainJson(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
    case 'undefined':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null) return true;
  if (depth > PLAIN_DEPTH) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype === Array.prototype) {
    const array = value as unknown[];
    for (let index = 0; index < array.length; index++) if (!isPlainJson(array[index], depth + 1)) return false;
    return true;
  }
  if (prototype === Object.prototype || prototype === null) {
    // `for…in` also visits inherited enumerable keys, which `JSON.stringify` skips: checked for nothing
    for (const key in value) if (!isPlainJson((value as Record<string, unknown>)[key], depth + 1)) return false;
    return true;
  }
  return prototype === Date.prototype && (value as Date).toJSON === dateToJson && (value as Date).toISOString === dateToIsoString;
}

/** Thrown by {@link strictReplacer} where the fast path stops (the walk then names the path). */
const NOT_PLAIN = Symbol('not plain JSON');

/**
 * `JSON.stringify`'s replacer for the module's rules: an `Error` as its fields, a `Uint8Array` as
 * base64; what `JSON.stringify` would drop or change silently (a function or symbol, a
 * non-finite number, a `Map`/`Set`/`Promise`) stops it.
 */
function strictReplacer(_key: string, given: unknown): unknown {
  const value = given !== null && typeof given === 'object' ? unboxed(given) : given;
  switch (typeof value) {
    case 'string':
    case 'boolean':
    case 'undefined':
      return value;
    case 'number':
      if (Number.isFinite(value)) return value;
      throw NOT_PLAIN;
    case 'function':
    case 'symbol':
    case 'bigint':
      throw NOT_PLAIN;
  }
  if (value === null || Array.isArray(value)) return value;
  if (value instanceof Error) return errorFields(value);
  if (value instanceof Uint8Array) return base64(value);
  if (value instanceof Map || value instanceof Set || value instanceof WeakMap || value instanceof WeakSet || value instanceof Promise) throw NOT_PLAIN;
  return value;
}

/**
 * `value` as JSON text (see the module's rules); throws `JsonEncodingError` naming the first path
 * that cannot be written. The text is what every reader of a journal or snapshot gets.
 *
 * @example
 * ```ts
 * import { encodeJson } from 'rxagent/durable';
 * encodeJson({ type: 'text-delta', payload: { id: '1', text: 'hi' } }); // '{"type":"text-delta",…}'
 * ```
 */
export function encodeJson(value: unknown, what?: string): string {
  // Plain data (most chunks): `JSON.stringify` alone, after a cheap check that the rules change
  // nothing. Else `JSON.stringify` with the rules as a replacer (one native pass); where it stops —
  // a value the rules refuse, a cycle, a throwing `toJSON` — the walk does it again, names the path
  // or rethrows.
  // Past the plain check's depth, a value is measured (iteratively) first: one nested deeper than
  // MAX_JSON_DEPTH goes to the walk, which names the path (or the cycle) instead of overflowing.
  try {
    if (!('toJSON' in Array.prototype) && isPlainJson(value, 0)) return JSON.stringify(value) ?? 'null';
    if (deeperThan(value, MAX_JSON_DEPTH)) return JSON.stringify(toJsonValue(value, what));
    return JSON.stringify(value, strictReplacer) ?? 'null';
  } catch (error) {
    if (JsonEncodingError.isInstance(error)) throw error;
    return JSON.stringify(toJsonValue(value, what));
  }
}

/**
 * The first place where `value` is not strictly JSON (it would not read back as itself), or
 * `undefined` when it is. Iterative: any depth, cycles reported.
 *
 * @example
 * ```ts
 * import { findNonJson } from 'rxagent/durable';
 * findNonJson({ seen: new Set(['a']) }); // { path: '$.seen', type: 'Set' }
 * findNonJson({ seen: ['a'] });          // undefined
 * ```
 */
export function findNonJson(value: unknown): NonJsonAt | undefined {
  const onPath = new Set<object>();
  // Depth-first with an explicit stack; an `exit` entry takes an object off the current path.
  const stack: Array<{ item: unknown; path: string; inArray: boolean } | { exit: object }> = [{ item: value, path: '$', inArray: false }];
  while (stack.length > 0) {
    const entry = stack.pop() as { item: unknown; path: string; inArray: boolean } | { exit: object };
    if ('exit' in entry) {
      onPath.delete(entry.exit);
      continue;
    }
    const { item, path, inArray } = entry;
    switch (typeof item) {
      case 'string':
      case 'boolean':
        continue;
      case 'number':
        if (Number.isFinite(item)) continue;
        return { path, type: typeName(item) };
      case 'undefined':
        if (inArray) return { path, type: 'undefined' };
        continue;
      case 'bigint':
      case 'function':
      case 'symbol':
        return { path, type: typeof item };
    }
    if (item === null) continue;
    const object = item as object;
    if (onPath.has(object)) return { path, type: 'cycle' };
    if (!Array.isArray(object) && !isPlainObject(object)) return { path, type: typeName(object) };
    onPath.add(object);
    stack.push({ exit: object });
    if (Array.isArray(object)) {
      for (let index = object.length - 1; index >= 0; index--) stack.push({ item: object[index], path: childPath(path, index), inArray: true });
    } else {
      const keys = Object.keys(object);
      for (let index = keys.length - 1; index >= 0; index--) {
        const key = keys[index] as string;
        stack.push({ item: (object as Record<string, unknown>)[key], path: childPath(path, key), inArray: false });
      }
    }
  }
  return undefined;
}
