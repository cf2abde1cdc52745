/**
 * Every string of a structured value — keys included, at any depth — reaches the guards (issue 24
 * §2): `mapStrings` / `collectStrings` walk iteratively, once per container, through cycles.
 */
import { describe, expect, it } from 'vitest';
import { collectStrings, mapStrings } from '../../src/processors/internal/deep-strings.js';

const redactEmail = (text: string) => text.replace(/[a-z]+@example\.com/g, '[EMAIL]');

/** `{ k: { k: … { k: leaf } } }`, `depth` objects deep, built without recursion. */
function nested(depth: number, key: string, leaf: unknown): unknown {
  let value = leaf;
  for (let level = 0; level < depth; level++) value = { [key]: value };
  return value;
}

/** The innermost value of {@link nested}. */
function innermost(value: unknown, depth: number): unknown {
  let current = value;
  for (let level = 0; level < depth; level++) current = Object.values(current as Record<string, unknown>)[0];
  return current;
}

describe('mapStrings', () => {
  it('rewrites object keys as well as values', () => {
    const value = { 'ada@example.com': { note: 'mail bob@example.com' }, list: ['eve@example.com'] };
    expect(mapStrings(value, redactEmail)).toEqual({ '[EMAIL]': { note: 'mail [EMAIL]' }, list: ['[EMAIL]'] });
  });

  it('keeps the identity of untouched values and containers', () => {
    const untouched = { a: ['x', { b: 1 }] };
    const value = { untouched, changed: 'ada@example.com' };
    const mapped = mapStrings(value, redactEmail) as typeof value;
    expect(mapped).not.toBe(value);
    expect(mapped.untouched).toBe(untouched);
    expect(mapStrings(untouched, redactEmail)).toBe(untouched);
  });

  it('gives colliding renamed keys a suffix; keys that were not renamed keep their names', () => {
    const value = { 'ada@example.com': 1, '[EMAIL]': 2, 'bob@example.com': 3, '[EMAIL] (2)': 4 };
    expect(mapStrings(value, redactEmail)).toEqual({ '[EMAIL] (3)': 1, '[EMAIL]': 2, '[EMAIL] (4)': 3, '[EMAIL] (2)': 4 });
  });

  it('a key renamed to __proto__ stays a plain property (no prototype change)', () => {
    const mapped = mapStrings({ secret: { a: 1 } }, (text) => (text === 'secret' ? '__proto__' : text)) as Record<string, unknown>;
    expect(Object.getPrototypeOf(mapped)).toBe(Object.prototype);
    expect(Object.getOwnPropertyNames(mapped)).toEqual(['__proto__']);
    const parsed = JSON.parse('{"__proto__": "ada@example.com"}') as Record<string, unknown>;
    const redacted = mapStrings(parsed, redactEmail) as Record<string, unknown>;
    expect(Object.getPrototypeOf(redacted)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(redacted, '__proto__')?.value).toBe('[EMAIL]');
  });

  it('reaches a string nested 100,000 levels deep, in a key and in a value, without recursion', () => {
    const depth = 100_000;
    const value = nested(depth, 'level', { 'ada@example.com': 'bob@example.com' });
    const mapped = mapStrings(value, redactEmail);
    expect(innermost(mapped, depth)).toEqual({ '[EMAIL]': '[EMAIL]' });
    expect(innermost(value, depth)).toEqual({ 'ada@example.com': 'bob@example.com' });
    const arrays = nested(depth, 'a', ['ada@example.com']);
    expect(collectStrings(arrays)).toContain('ada@example.com');
  });

  it('handles cycles: each container once, the copy keeps the cycle', () => {
    const value: Record<string, unknown> = { mail: 'ada@example.com' };
    value.self = value;
    value.list = [value, { back: value }];
    let calls = 0;
    const mapped = mapStrings(value, (text) => {
      calls++;
      return redactEmail(text);
    }) as Record<string, unknown>;
    expect(calls).toBe(5); // mail, its value, self, list, back
    expect(mapped.mail).toBe('[EMAIL]');
    expect(mapped.self).toBe(mapped);
    expect((mapped.list as unknown[])[0]).toBe(mapped);
    expect(((mapped.list as unknown[])[1] as Record<string, unknown>).back).toBe(mapped);
    expect(value.mail).toBe('ada@example.com');
  });

  it('keeps shared references shared', () => {
    const shared = { to: 'ada@example.com' };
    const mapped = mapStrings({ a: shared, b: [shared] }, redactEmail) as { a: object; b: object[] };
    expect(mapped.a).toBe(mapped.b[0]);
    expect(mapped.a).toEqual({ to: '[EMAIL]' });
  });

  it('copies errors with their message, own fields and cause rewritten', () => {
    const error = Object.assign(new Error('failed for ada@example.com', { cause: new Error('bob@example.com') }), { detail: { 'eve@example.com': true } });
    error.name = 'LookupError';
    const mapped = mapStrings(error, redactEmail) as Error & { detail: unknown };
    expect(mapped).toBeInstanceOf(Error);
    expect(mapped.name).toBe('LookupError');
    expect(mapped.message).toBe('failed for [EMAIL]');
    expect((mapped.cause as Error).message).toBe('[EMAIL]');
    expect(mapped.detail).toEqual({ '[EMAIL]': true });
    expect(Object.keys(mapped)).toEqual(Object.keys(error)); // name (set on the instance) and detail
    expect(mapped.stack).toMatch(/^LookupError: failed for \[EMAIL\]\n\s+at /);
    const typed = mapStrings(new TypeError('ada@example.com'), redactEmail) as Error;
    expect(typed).toBeInstanceOf(TypeError);
    expect(typed.name).toBe('TypeError');
    expect(Object.keys(typed)).toEqual([]);
  });

  it('leaves other class instances and primitives alone; null-prototype objects are walked', () => {
    const date = new Date(0);
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { 'ada@example.com': 1 });
    const mapped = mapStrings({ date, bare, n: 1, b: true, u: undefined }, redactEmail) as Record<string, unknown>;
    expect(mapped.date).toBe(date);
    expect(Object.getPrototypeOf(mapped.bare)).toBeNull();
    expect(Object.keys(mapped.bare as object)).toEqual(['[EMAIL]']);
    expect(mapStrings('ada@example.com', redactEmail)).toBe('[EMAIL]');
    expect(mapStrings(42, redactEmail)).toBe(42);
  });
});

describe('collectStrings', () => {
  it('lists keys and values breadth first, each container once', () => {
    const shared = { deep: 'x' };
    expect(collectStrings({ 'ada@example.com': { note: 'hi' }, again: shared, more: [shared, 'y'] })).toEqual([
      'ada@example.com',
      'again',
      'more',
      'note',
      'hi',
      'deep',
      'x',
      'y',
    ]);
  });
});
