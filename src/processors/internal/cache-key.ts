/**
 * The text a `ResponseCache` key is hashed from: one spelling per value, so two values share a
 * key only when they are the same value. Strings are JSON-quoted (a piece cannot move from one
 * field to the next), object keys are sorted (the order they were written in does not matter),
 * `undefined`, `null`, `NaN`, `-0`, `Infinity` and bigints each have their own token, and bytes,
 * dates and URLs are tagged. A value that has no such spelling (a cycle, a function, a symbol, an
 * instance of another class) throws a `TypeError`: the request is then not cached.
 */
import { createHash } from 'node:crypto';

/** More nodes than this (shared references counted each time they are reached) is not keyed. */
const MAX_NODES = 1_000_000;

/** Work items of the iterative walk: a value to write, a literal to append, or an object to leave. */
type Work = { value: unknown } | { text: string } | { leave: object };

/** How one number is written: `-0`, `NaN` and the infinities stay apart from `0` and `null`. */
function numberToken(value: number): string {
  return `#${Object.is(value, -0) ? '-0' : String(value)};`;
}

function bytesToken(view: ArrayBufferView): string {
  const bytes = Buffer.from(view.buffer, view.byteOffset, view.byteLength).toString('base64');
  return `B${JSON.stringify(view.constructor.name)}${JSON.stringify(bytes)}`;
}

function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/**
 * `value` written canonically (see the module). Iterative: nesting depth costs no stack.
 *
 * @example
 * ```ts
 * canonicalText({ b: 1, a: [undefined, null] }) === canonicalText({ a: [undefined, null], b: 1 }); // true
 * ```
 */
export function canonicalText(root: unknown): string {
  const out: string[] = [];
  const work: Work[] = [{ value: root }];
  const open = new Set<object>();
  let nodes = 0;
  while (work.length > 0) {
    const item = work.pop() as Work;
    if ('text' in item) {
      out.push(item.text);
      continue;
    }
    if ('leave' in item) {
      open.delete(item.leave);
      continue;
    }
    if (++nodes > MAX_NODES) throw new TypeError(`the value has more than ${MAX_NODES} parts`);
    const value = item.value;
    switch (typeof value) {
      case 'undefined':
        out.push('u');
        continue;
      case 'boolean':
        out.push(value ? 't' : 'f');
        continue;
      case 'number':
        out.push(numberToken(value));
        continue;
      case 'bigint':
        out.push(`#${value}n;`);
        continue;
      case 'string':
        out.push(JSON.stringify(value));
        continue;
      case 'object':
        break;
      default:
        throw new TypeError(`a ${typeof value} cannot be part of a cache key`);
    }
    if (value === null) {
      out.push('n');
      continue;
    }
    if (ArrayBuffer.isView(value)) {
      out.push(bytesToken(value));
      continue;
    }
    if (value instanceof Date) {
      out.push(`D${JSON.stringify(String(value.getTime()))}`);
      continue;
    }
    if (value instanceof URL) {
      out.push(`L${JSON.stringify(value.href)}`);
      continue;
    }
    if (open.has(value)) throw new TypeError('a value that contains itself cannot be part of a cache key');
    const entries: Work[] = [];
    if (Array.isArray(value)) {
      entries.push({ text: '[' });
      for (let index = 0; index < value.length; index++) {
        if (index > 0) entries.push({ text: ',' });
        entries.push({ value: value[index] as unknown });
      }
      entries.push({ text: ']' });
    } else if (isPlainObject(value)) {
      entries.push({ text: '{' });
      const keys = Object.keys(value).sort();
      keys.forEach((key, index) => {
        entries.push({ text: `${index > 0 ? ',' : ''}${JSON.stringify(key)}:` }, { value: (value as Record<string, unknown>)[key] });
      });
      entries.push({ text: '}' });
    } else {
      const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
      throw new TypeError(`an instance of ${typeof name === 'string' && name !== '' ? name : 'a class'} cannot be part of a cache key`);
    }
    open.add(value);
    work.push({ leave: value });
    for (let index = entries.length - 1; index >= 0; index--) work.push(entries[index] as Work);
  }
  return out.join('');
}

/** The sha256 (hex) of `value`'s canonical text (see {@link canonicalText}). */
export function canonicalDigest(value: unknown): string {
  return createHash('sha256').update(canonicalText(value)).digest('hex');
}
