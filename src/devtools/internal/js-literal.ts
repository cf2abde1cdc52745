/**
 * Values written back as JavaScript source (also valid TypeScript), for the marble export's
 * snippet; and the equality the export checks its builder calls with (the one `toEqual` uses:
 * properties holding `undefined` count as absent).
 */

/** Source text of a value, and whether it rebuilds the value exactly. */
export interface Literal {
  code: string;
  exact: boolean;
}

/** Writes some values its own way (e.g. a usage object as a `testUsage(…)` call); `undefined`: the default. */
export type LiteralOverride = (value: unknown) => string | undefined;

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * Values one literal writes, and pairs one comparison visits: a structure that shares its parts is
 * small in memory and exponential written out as a tree. Past it, the rest is `undefined` and the
 * literal inexact (a comparison: not provably the same).
 */
export const MAX_LITERAL_VALUES = 100_000;

/**
 * What {@link escapeText} rewrites: quotes and backslashes; a backtick, `$` before `{` and `/` after
 * `*` (template literals, block comments); every control, format (bidi, zero-width, BOM), separator
 * (U+2028, U+2029, spaces other than U+0020) and lone surrogate code point.
 */
const UNSAFE = /[\\'`]|\$(?=\{)|(?<=\*)\/|(?! )[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Zs}\p{Cs}]/gu;

const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f', '\v': '\\v' };

function unitEscape(unit: number): string {
  return `\\u${unit.toString(16).padStart(4, '0')}`;
}

/**
 * The one escaper for every string the marble export writes (titles, run ids, payloads, keys,
 * labels): the body of a single-quoted literal that is also safe inside a template literal, a line
 * comment and a block comment. The result is printable: no line terminator (`\n`, `\r`, U+2028,
 * U+2029), no `*` + `/`, no backtick, no `$` + `{`, no control or invisible format character and no
 * lone surrogate survives; each is written as an escape that evaluates back to it. Other text
 * (letters of any script, emoji) stays as it is, so ordinary text reads as written.
 *
 * @example
 * ```ts
 * escapeText("it's done\n"); // "it\\'s done\\n": safe between quotes, in a template and in a comment
 * quote('a\u2028b'); // "'a\\u2028b'"
 * ```
 */
export function escapeText(text: string): string {
  return text.replace(UNSAFE, (match) => {
    if (match === '\\' || match === "'" || match === '`' || match === '$' || match === '/') return `\\${match}`;
    const short = SHORT_ESCAPES[match];
    if (short !== undefined) return short;
    // one code point: a BMP unit, a lone surrogate, or an astral format character (written as its pair)
    let written = '';
    for (let index = 0; index < match.length; index++) written += unitEscape(match.charCodeAt(index));
    return written;
  });
}

/** A single-quoted string literal, written with {@link escapeText}. */
export function quote(text: string): string {
  return `'${escapeText(text)}'`;
}

function propertyKey(key: string): string {
  // `__proto__: x` (quoted or not) would set the prototype in a literal: a computed key makes a property
  if (key === '__proto__') return `[${quote(key)}]`;
  return IDENTIFIER.test(key) ? key : quote(key);
}

/** Own enumerable entries; a getter that throws makes its property `undefined` and the literal inexact. */
function entriesOf(object: object, state: { exact: boolean }): Array<[string, unknown]> {
  return Object.keys(object).map((key): [string, unknown] => {
    try {
      return [key, (object as Record<string, unknown>)[key]];
    } catch {
      state.exact = false;
      return [key, undefined];
    }
  });
}

function isPlain(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

interface WriteState {
  exact: boolean;
  seen: Set<object>;
  values: number;
}

/**
 * `value` as source; what cannot be read (a Proxy that throws, a revoked Proxy) or written within
 * {@link MAX_LITERAL_VALUES} is `undefined`, and the literal inexact.
 */
function write(value: unknown, override: LiteralOverride | undefined, state: WriteState): string {
  state.values += 1;
  if (state.values > MAX_LITERAL_VALUES) {
    state.exact = false;
    return 'undefined';
  }
  try {
    return writeValue(value, override, state);
  } catch {
    state.exact = false;
    return 'undefined';
  }
}

function writeValue(value: unknown, override: LiteralOverride | undefined, state: WriteState): string {
  const special = override?.(value);
  if (special !== undefined) return special;
  switch (typeof value) {
    case 'undefined':
      return 'undefined';
    case 'string':
      return quote(value);
    case 'boolean':
      return String(value);
    case 'number':
      return Object.is(value, -0) ? '-0' : String(value); // NaN, Infinity and -Infinity are globals
    case 'bigint':
      return `${value.toString()}n`;
    case 'function':
    case 'symbol':
      state.exact = false;
      return 'undefined';
  }
  if (value === null) return 'null';
  const object = value as object;
  if (state.seen.has(object)) {
    state.exact = false;
    return 'undefined';
  }
  if (object instanceof Date) return `new Date(${Number.isNaN(object.getTime()) ? 'NaN' : quote(object.toISOString())})`;
  if (object instanceof URL) return `new URL(${quote(object.href)})`;
  if (ArrayBuffer.isView(object) && object instanceof Uint8Array) return `new Uint8Array([${[...object].join(', ')}])`;
  state.seen.add(object);
  try {
    if (Array.isArray(object)) return `[${object.map((item) => write(item, override, state)).join(', ')}]`;
    if (object instanceof Error) {
      // rebuilt as an Error with the same name, message and fields: what createTestScheduler compares
      const fields = [...entriesOf(object, state).filter(([key]) => key !== 'name'), ['name', object.name] as [string, unknown]].filter(([, item]) => item !== undefined);
      const extra = fields.map(([key, item]) => `${propertyKey(key)}: ${write(item, override, state)}`).join(', ');
      return `Object.assign(new Error(${quote(object.message)}), { ${extra} })`;
    }
    if (!isPlain(object)) state.exact = false; // a class instance: written as a plain object of its own fields
    const entries = entriesOf(object, state).filter(([, item]) => item !== undefined);
    if (entries.length === 0) return '{}';
    return `{ ${entries.map(([key, item]) => `${propertyKey(key)}: ${write(item, override, state)}`).join(', ')} }`;
  } finally {
    state.seen.delete(object);
  }
}

/**
 * `value` as source text.
 *
 * @example
 * ```ts
 * jsLiteral({ id: 't0', text: "it's" }).code; // "{ id: 't0', text: 'it\\'s' }"
 * ```
 */
export function jsLiteral(value: unknown, override?: LiteralOverride): Literal {
  const state: WriteState = { exact: true, seen: new Set<object>(), values: 0 };
  const code = write(value, override, state);
  return { code, exact: state.exact };
}

/**
 * Deep equality as `toEqual` sees it: properties holding `undefined` count as absent, errors are
 * compared by name, message and `processorId`, dates by time, typed arrays by content.
 */
export function sameValue(left: unknown, right: unknown): boolean {
  try {
    return equal(left, right, { pairs: 0 });
  } catch {
    return false; // a getter that throws, or past MAX_LITERAL_VALUES: not provably the same
  }
}

function equal(left: unknown, right: unknown, budget: { pairs: number }): boolean {
  if (Object.is(left, right)) return true;
  budget.pairs += 1;
  if (budget.pairs > MAX_LITERAL_VALUES) throw new RangeError('sameValue: past MAX_LITERAL_VALUES');
  if (typeof left !== 'object' || typeof right !== 'object' || left === null || right === null) return false;
  if (left instanceof Error || right instanceof Error) {
    if (!(left instanceof Error && right instanceof Error)) return false;
    return (
      left.name === right.name &&
      left.message === right.message &&
      (left as { processorId?: unknown }).processorId === (right as { processorId?: unknown }).processorId
    );
  }
  if (left instanceof Date || right instanceof Date) {
    return left instanceof Date && right instanceof Date && Object.is(left.getTime(), right.getTime());
  }
  if (ArrayBuffer.isView(left) || ArrayBuffer.isView(right)) {
    if (!(left instanceof Uint8Array && right instanceof Uint8Array) || left.length !== right.length) return false;
    return left.every((byte, index) => byte === right[index]);
  }
  if (Array.isArray(left) !== Array.isArray(right)) return false;
  if (Array.isArray(left) && Array.isArray(right)) {
    return left.length === right.length && left.every((item, index) => equal(item, right[index], budget));
  }
  const leftKeys = Object.keys(left).filter((key) => (left as Record<string, unknown>)[key] !== undefined);
  const rightKeys = Object.keys(right).filter((key) => (right as Record<string, unknown>)[key] !== undefined);
  if (leftKeys.length !== rightKeys.length) return false;
  return leftKeys.every((key) => equal((left as Record<string, unknown>)[key], (right as Record<string, unknown>)[key], budget));
}
