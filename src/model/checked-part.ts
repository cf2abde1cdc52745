/**
 * The fields of one V4 stream part, checked where the part enters the run (the read of `doStream`'s
 * stream, the parts of a `doGenerate` answer): a provider — or whatever sits between it and the
 * app — that writes an id, a name or tool input that is not a string, metadata or values that
 * cannot be written as JSON, or a part the spec does not allow, is named by one
 * `InvalidModelResponseError` instead of reaching the client as a chunk nobody can encode, a
 * `TypeError` deep in the loop, or a step memory refuses after the client saw it.
 */
import { encodeJson } from '../contract/json-codec.js';
import { JsonEncodingError } from '../contract/errors/json-encoding-error.js';
import { thrownMessage } from '../errors/thrown-message.js';

type Fields = Readonly<Record<string, unknown>>;

/** A short, safe description of `value` for a problem text (never the value itself: it may be 1 MB, or a Proxy). */
export function shapeOf(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return value === '' ? 'an empty string' : 'a string';
  if (typeof value !== 'object') return `a ${typeof value}`;
  if (Array.isArray(value)) return 'an array';
  return 'an object';
}

/**
 * The message of `error`, read defensively (`thrownMessage`): a value that is neither an `Error` nor a
 * string is named by its shape, never shown (it may be 1 MB, or a provider's body); a Proxy or a
 * throwing getter gives a fixed text.
 */
export function messageOf(error: unknown): string {
  return thrownMessage(error, (value) => (typeof value === 'string' ? value : shapeOf(value))) ?? 'an error that cannot be read';
}

/**
 * The deepest nesting of a value a provider hands the run (metadata, a tool's input or result, a
 * raw value): half of what the JSON codec writes (`MAX_JSON_DEPTH`, 1,000), so the chunk, the
 * message and the snapshot around it still encode.
 */
export const MAX_PART_DEPTH = 500;

/**
 * How many values a value shared within itself may write as JSON: past this a small object whose
 * parts are shared (`a = [b, b]`, `b = [c, c]`, …) writes gigabytes, and takes seconds to encode.
 * A value without shared parts (whatever a provider parsed from JSON) is never refused for its size.
 */
export const MAX_SHARED_VALUES = 1_000_000;

/** The values under `node` that its JSON text writes (leaves of the codec: dates, byte arrays). */
function childrenOf(node: object): unknown[] {
  if (Array.isArray(node)) return node;
  if (node instanceof Date || ArrayBuffer.isView(node) || node instanceof Map || node instanceof Set) return [];
  const values = Object.values(node);
  if (node instanceof Error && node.cause !== undefined) values.push(node.cause);
  return values;
}

/** What {@link measureJson} found. */
export interface JsonMeasure {
  /** The values the JSON text writes (a shared object counted each time it is written). */
  readonly written: number;
  /** The values the value itself holds: each distinct object and each of its fields or elements, once. */
  readonly held: number;
  /** The deepest nesting of objects and arrays (a leaf alone: 0). */
  readonly depth: number;
  /** Whether an object holds itself (the JSON text would be endless). */
  readonly cycle: boolean;
}

interface Frame {
  readonly node: object;
  readonly children: unknown[];
  index: number;
  written: number;
  depth: number;
}

/**
 * Measures `value` as the JSON codec would write it, in time linear in its distinct objects (shared
 * ones are measured once, a cycle is found, not followed; any depth costs no stack). Reading a
 * getter that throws throws.
 *
 * @example
 * ```ts
 * const leaf = [1, 2];
 * measureJson({ a: leaf, b: leaf }); // { written: 7, held: 5, depth: 2, cycle: false }
 * ```
 */
export function measureJson(value: unknown): JsonMeasure {
  if (value === null || typeof value !== 'object') return { written: 1, held: 1, depth: 0, cycle: false };
  const measured = new Map<object, { written: number; depth: number }>();
  const onPath = new Set<object>();
  const stack: Frame[] = [];
  let held = 1;
  const enter = (node: object): void => {
    onPath.add(node);
    const children = childrenOf(node);
    held += children.length;
    stack.push({ node, children, index: 0, written: 1, depth: 1 });
  };
  enter(value);
  let root = { written: 1, depth: 1 };
  while (stack.length > 0) {
    const frame = stack[stack.length - 1] as Frame;
    if (frame.index < frame.children.length) {
      const child = frame.children[frame.index++];
      if (child === null || typeof child !== 'object') {
        frame.written += 1;
        continue;
      }
      if (onPath.has(child)) return { written: Number.POSITIVE_INFINITY, held, depth: Number.POSITIVE_INFINITY, cycle: true };
      const known = measured.get(child);
      if (known === undefined) {
        enter(child);
        continue;
      }
      frame.written += known.written;
      frame.depth = Math.max(frame.depth, known.depth + 1);
      continue;
    }
    stack.pop();
    onPath.delete(frame.node);
    const result = { written: frame.written, depth: frame.depth };
    measured.set(frame.node, result);
    const parent = stack[stack.length - 1];
    if (parent === undefined) root = result;
    else {
      parent.written += result.written;
      parent.depth = Math.max(parent.depth, result.depth + 1);
    }
  }
  return { written: root.written, held, depth: root.depth, cycle: false };
}

/** Up to this many values, plain data is taken without measuring or encoding it (metadata: a few keys). */
const SMALL_VALUES = 64;

/**
 * True when `value` is plain JSON data — plain objects and arrays of strings, finite numbers,
 * booleans, `null` (and `undefined` object fields, not array items) — of at most `budget.left` values: the codec writes
 * it as it is, and so small it cannot nest too deep or share itself into a large text. False says
 * nothing (the full check decides). Getters are read (a throwing one throws).
 */
function smallPlainJson(value: unknown, budget: { left: number }): boolean {
  if (--budget.left < 0) return false;
  switch (typeof value) {
    case 'string':
    case 'boolean':
    case 'undefined':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (value === null) return true;
      const prototype: unknown = Object.getPrototypeOf(value);
      if (prototype === Array.prototype) {
        // `undefined` in an array is written as `null`: not as it is (the full check decides)
        for (const item of value as unknown[]) if (item === undefined || !smallPlainJson(item, budget)) return false;
        return true;
      }
      if (prototype !== Object.prototype && prototype !== null) return false;
      for (const key of Object.keys(value)) if (!smallPlainJson((value as Record<string, unknown>)[key], budget)) return false;
      return true;
    }
    default:
      return false;
  }
}

/**
 * Why `value` cannot be written as JSON by the codec every consumer shares, or `undefined`: it
 * holds what the codec refuses (a BigInt, a cycle, a `Map`, a non-finite number…), cannot be read
 * (a Proxy or a getter that throws), is nested deeper than {@link MAX_PART_DEPTH} levels, or shares
 * its parts so that its text would hold more than {@link MAX_SHARED_VALUES} values. Measured
 * before it is encoded: linear in its distinct objects.
 */
export function jsonProblem(value: unknown): string | undefined {
  try {
    if (value !== null && typeof value === 'object') {
      if (smallPlainJson(value, { left: SMALL_VALUES })) return undefined;
      const { written, held, depth, cycle } = measureJson(value);
      if (cycle) return 'is not JSON (it holds itself: a cycle)';
      if (depth > MAX_PART_DEPTH) return `is nested deeper than ${MAX_PART_DEPTH} levels`;
      if (written > MAX_SHARED_VALUES && written > held * 2) return `shares its parts so that its JSON would hold ${written > 1e15 ? 'more than 10^15' : written} values`;
    }
    encodeJson(value);
    return undefined;
  } catch (error) {
    if (JsonEncodingError.isInstance(error)) return `is not JSON at ${error.path} (${error.type})`;
    return `cannot be read (${messageOf(error)})`;
  }
}

const bad = (type: string, field: string, value: unknown, expected: string): string => `a "${type}" part whose ${field} is ${shapeOf(value)}, not ${expected}`;

function text(part: Fields, type: string, field: string): string | undefined {
  const value = part[field];
  return typeof value === 'string' ? undefined : bad(type, field, value, 'a string');
}

function optionalText(part: Fields, type: string, field: string): string | undefined {
  const value = part[field];
  return value === undefined || typeof value === 'string' ? undefined : bad(type, field, value, 'a string');
}

/** A tool call id or tool name, a file's media type: the prompt, memory and providers refuse an empty one. */
function nonEmpty(part: Fields, type: string, field: string): string | undefined {
  const value = part[field];
  return typeof value === 'string' && value !== '' ? undefined : bad(type, field, value, 'a non-empty string');
}

function flag(part: Fields, type: string, field: string): string | undefined {
  const value = part[field];
  return value === undefined || typeof value === 'boolean' ? undefined : bad(type, field, value, 'a boolean');
}

function json(part: Fields, type: string, field: string): string | undefined {
  const problem = jsonProblem(part[field]);
  return problem === undefined ? undefined : `a "${type}" part whose ${field} ${problem}`;
}

const isPlainObject = (value: unknown): value is Fields => {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
};

/**
 * What in `value` (JSON the codec can write) memory would not store as JSON data: a value that is
 * not a plain object or array, a string, a finite number, a boolean or `null` — a `Date`, bytes, a
 * class instance, `undefined` inside an array (JSON writes `null`, memory's schema refuses it) — as
 * `holds a Date`; `undefined` when none. Each object is visited once (shared parts too).
 */
function notPlainJson(value: unknown): string | undefined {
  const seen = new Set<object>();
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (typeof next !== 'object' || next === null || seen.has(next)) continue;
    seen.add(next);
    if (Array.isArray(next)) {
      // `includes` sees holes too (`[1, , 2]`)
      if ((next as unknown[]).includes(undefined)) return 'holds undefined inside an array (JSON would write null)';
      stack.push(...(next as unknown[]));
    }
    else if (isPlainObject(next)) stack.push(...Object.values(next));
    else return `holds ${next instanceof Date ? 'a Date' : ArrayBuffer.isView(next) ? 'bytes' : 'an object that is not plain data'}`;
  }
  return undefined;
}

/**
 * `providerMetadata`, when given: `{ [provider]: { [key]: JSON } }` of plain objects (what memory
 * stores). Small plain data (the usual few keys) costs one walk of at most `SMALL_VALUES` values
 * and a look at each provider's entry; anything else is measured and encoded (`jsonProblem`) and
 * walked once more for what is not plain data.
 */
function metadata(part: Fields, type: string): string | undefined {
  const value = part.providerMetadata;
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) return bad(type, 'providerMetadata', value, 'an object');
  const small = smallPlainJson(value, { left: SMALL_VALUES });
  const problem = small ? undefined : (json(part, type, 'providerMetadata') ?? notPlainJson(value));
  if (problem !== undefined) return problem.startsWith('a "') ? problem : `a "${type}" part whose providerMetadata ${problem}`;
  for (const key of Object.keys(value)) {
    const entry = value[key];
    if (!isPlainObject(entry)) return bad(type, `providerMetadata.${key.slice(0, 40)}`, entry, 'an object');
  }
  return undefined;
}

/** A timestamp: a valid `Date` (of any realm), or a date string (JSON carries dates as text; see `responseOf`). */
function date(part: Fields, type: string, field: string): string | undefined {
  const value = part[field];
  if (value === undefined) return undefined;
  if (typeof value === 'string') return Number.isNaN(Date.parse(value)) ? `a "${type}" part whose ${field} is a string that is not a date` : undefined;
  try {
    if (!Number.isNaN(Date.prototype.getTime.call(value))) return undefined;
  } catch {
    // not a Date
  }
  return bad(type, field, value, 'a valid Date');
}

function fileData(part: Fields): string | undefined {
  const data = part.data as Fields | null | undefined;
  if (typeof data !== 'object' || data === null) return bad('file', 'data', data, "{ type: 'data' | 'url', … }");
  if (data.type === 'data') {
    const bytes = data.data;
    return typeof bytes === 'string' || bytes instanceof Uint8Array ? undefined : bad('file', 'data.data', bytes, 'a base64 string or a Uint8Array');
  }
  if (data.type === 'url') return data.url instanceof URL || typeof data.url === 'string' ? undefined : bad('file', 'data.url', data.url, 'a URL');
  return `a "file" part whose data is of type ${typeof data.type === 'string' ? JSON.stringify(data.type.slice(0, 40)) : shapeOf(data.type)}, not 'data' or 'url'`;
}

function source(part: Fields): string | undefined {
  const problem = text(part, 'source', 'id');
  if (problem !== undefined) return problem;
  if (part.sourceType === 'url') return text(part, 'source', 'url') ?? optionalText(part, 'source', 'title');
  if (part.sourceType === 'document') return text(part, 'source', 'title') ?? text(part, 'source', 'mediaType') ?? optionalText(part, 'source', 'filename');
  return bad('source', 'sourceType', part.sourceType, "'url' or 'document'");
}

function finish(part: Fields): string | undefined {
  const reason = part.finishReason as Fields | null | undefined;
  if (typeof reason !== 'object' || reason === null) return bad('finish', 'finishReason', reason, '{ unified, raw }');
  return text(reason, 'finish', 'unified') ?? optionalText(reason, 'finish', 'raw') ?? metadata(part, 'finish');
}

function problemOf(part: Fields, type: string): string | undefined {
  switch (type) {
    // the per-token parts first: one typeof check, and the metadata only when it is there
    case 'text-delta':
    case 'reasoning-delta':
      if (typeof part.id !== 'string') return bad(type, 'id', part.id, 'a string');
      return part.providerMetadata === undefined ? undefined : metadata(part, type);
    case 'tool-input-delta':
      // a tool call's id: the chunks it becomes need a non-empty one
      if (typeof part.id !== 'string' || part.id === '') return bad(type, 'id', part.id, 'a non-empty string');
      return part.providerMetadata === undefined ? undefined : metadata(part, type);
    case 'text-start':
    case 'text-end':
    case 'reasoning-start':
    case 'reasoning-end':
      return text(part, type, 'id') ?? metadata(part, type);
    case 'tool-input-end':
      return nonEmpty(part, type, 'id') ?? metadata(part, type);
    case 'tool-input-start':
      return nonEmpty(part, type, 'id') ?? text(part, type, 'toolName') ?? flag(part, type, 'providerExecuted') ?? flag(part, type, 'dynamic') ?? metadata(part, type);
    case 'tool-call':
      return (
        nonEmpty(part, type, 'toolCallId') ??
        nonEmpty(part, type, 'toolName') ??
        text(part, type, 'input') ??
        flag(part, type, 'providerExecuted') ??
        flag(part, type, 'dynamic') ??
        metadata(part, type)
      );
    case 'tool-result':
      return (
        nonEmpty(part, type, 'toolCallId') ??
        nonEmpty(part, type, 'toolName') ??
        (part.result === undefined ? `a "tool-result" part without a result` : json(part, type, 'result')) ??
        flag(part, type, 'isError') ??
        metadata(part, type)
      );
    case 'tool-approval-request':
      return nonEmpty(part, type, 'toolCallId') ?? text(part, type, 'approvalId');
    case 'source':
      return source(part) ?? metadata(part, type);
    case 'file':
      return nonEmpty(part, type, 'mediaType') ?? fileData(part) ?? metadata(part, type);
    case 'response-metadata':
      return optionalText(part, type, 'id') ?? optionalText(part, type, 'modelId') ?? date(part, type, 'timestamp');
    case 'stream-start':
      return Array.isArray(part.warnings) ? json(part, type, 'warnings') : bad(type, 'warnings', part.warnings, 'an array');
    case 'finish':
      return finish(part);
    case 'raw':
      return json(part, type, 'rawValue');
    case 'error':
      return json(part, type, 'error');
    default:
      // ping, custom, reasoning-file and types of later spec versions: not surfaced, nothing to check
      return undefined;
  }
}

/**
 * What is wrong with `part` (an object with a string `type`, as `checkedRead` passes it on), as
 * the end of a sentence — `a "tool-call" part whose input is a number, not a string` — or
 * `undefined` when nothing is. Never throws: a getter or a Proxy that throws while the part is read
 * is the problem. Text and reasoning deltas keep their repair (a delta that is not a string adds
 * nothing to the text, see `modelPartToChunk`); everything the run passes on or stores is checked.
 * Costs one `typeof` check per delta without metadata.
 *
 * @example
 * ```ts
 * partProblem({ type: 'text-delta', id: 7, delta: 'Hi' }); // 'a "text-delta" part whose id is a number, not a string'
 * partProblem({ type: 'text-delta', id: 't', delta: 'Hi' }); // undefined
 * ```
 */
export function partProblem(part: { readonly type: string }): string | undefined {
  let type = 'unreadable';
  try {
    type = part.type;
    return problemOf(part as Fields, type);
  } catch (error) {
    return `a "${type}" part that throws where it is read (${messageOf(error)})`;
  }
}
