import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonEncodingError, encodeJson, findNonJson, toJsonValue } from 'rxagent/durable';

describe('toJsonValue / encodeJson (chunks and snapshots)', () => {
  it('writes what JSON.stringify writes for JSON data', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(encodeJson(value)).toBe(JSON.stringify(value));
      }),
    );
  });

  it('writes a Date as its ISO string, an Error as plain fields, bytes as base64', () => {
    const cause = new RangeError('inner');
    const error = Object.assign(new TypeError('bad', { cause }), { statusCode: 429 });
    expect(toJsonValue({ at: new Date(0), error, bytes: new Uint8Array([104, 105]), skip: undefined, list: [undefined] })).toEqual({
      at: '1970-01-01T00:00:00.000Z',
      error: { name: 'TypeError', message: 'bad', statusCode: 429, cause: { name: 'RangeError', message: 'inner' } },
      bytes: 'aGk=',
      list: [null],
    });
  });

  it('keeps a repeated (acyclic) reference', () => {
    const shared = { a: 1 };
    expect(toJsonValue({ x: shared, y: [shared] })).toEqual({ x: { a: 1 }, y: [{ a: 1 }] });
  });

  it.each([
    ['a BigInt', { payload: { n: 1n } }, '$.payload.n', 'bigint'],
    ['a function', { payload: [() => 1] }, '$.payload[0]', 'function'],
    ['a Map', { state: new Map() }, '$.state', 'Map'],
    ['a Set', { 'odd key': new Set() }, '$["odd key"]', 'Set'],
    ['NaN', { score: Number.NaN }, '$.score', 'NaN'],
    ['Infinity', [Number.POSITIVE_INFINITY], '$[0]', 'Infinity'],
  ])('refuses %s, naming path and type', (_name, value, path, type) => {
    const thrown = (() => {
      try {
        encodeJson(value, 'chunk tool-result');
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(JsonEncodingError.isInstance(thrown)).toBe(true);
    expect(thrown).toMatchObject({ name: 'JsonEncodingError', path, type });
    expect((thrown as Error).message).toContain('chunk tool-result');
  });

  it('shortens a long path around an ellipsis (a client may see the error): start and end kept, at most 160 characters', () => {
    let deep: unknown = 1n;
    for (let level = 0; level < 1_200; level++) deep = { child: deep };
    const caught = (() => {
      try {
        encodeJson(deep, 'chunk data-x');
      } catch (error) {
        return error as JsonEncodingError;
      }
      return undefined;
    })();
    expect(JsonEncodingError.isInstance(caught)).toBe(true);
    expect(caught!.type).toBe('depth > 1000');
    expect(caught!.path.length).toBe(160);
    expect(caught!.path).toMatch(/^\$\.child\.child.*….*child$/);
    expect(caught!.message.length).toBeLessThan(220);
  });

  it('keeps an own __proto__ key as data at any depth (as JSON.parse makes one), never as the prototype', () => {
    const parsed = JSON.parse('{"a":{"__proto__":{"polluted":true},"b":1},"__proto__":[1]}') as unknown;
    const value = toJsonValue(parsed) as Record<string, Record<string, unknown>>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(value['a'])).toBe(Object.prototype);
    expect(Object.hasOwn(value['a'] as object, '__proto__')).toBe(true);
    expect((value['a'] as { polluted?: unknown }).polluted).toBeUndefined();
    expect(JSON.stringify(value)).toBe(JSON.stringify(parsed));
    expect(encodeJson(parsed)).toBe(JSON.stringify(parsed));
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('refuses a cycle', () => {
    const value: Record<string, unknown> = { a: { b: {} } };
    (value['a'] as Record<string, Record<string, unknown>>)['b']!['back'] = value;
    expect(() => toJsonValue(value)).toThrow(expect.objectContaining({ path: '$.a.b.back', type: 'cycle' }));
  });
});

describe('findNonJson (processor state)', () => {
  it('accepts any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(findNonJson(value)).toBeUndefined();
      }),
    );
  });

  it.each([
    [{ seen: new Set(['a']) }, '$.seen', 'Set'],
    [{ at: new Date(0) }, '$.at', 'Date'],
    [{ outcome: { error: new Error('x') } }, '$.outcome.error', 'Error'],
    [{ list: [1, undefined] }, '$.list[1]', 'undefined'],
    [{ n: 2n }, '$.n', 'bigint'],
    [{ inst: new (class Counter {})() }, '$.inst', 'Counter'],
  ])('reports %o at its path', (value, path, type) => {
    expect(findNonJson(value)).toEqual({ path, type });
  });

  it('accepts undefined object fields and null-prototype objects', () => {
    expect(findNonJson({ a: undefined, b: Object.assign(Object.create(null) as object, { c: 1 }) })).toBeUndefined();
  });

  it('reports a cycle and walks any depth without recursion', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(findNonJson(cyclic)).toEqual({ path: '$.self', type: 'cycle' });
    let deep: unknown = 'leaf';
    for (let depth = 0; depth < 100_000; depth++) deep = [deep];
    expect(findNonJson(deep)).toBeUndefined();
  });
});

describe('boxed primitives', () => {
  it('a boxed string, number or boolean is written as its value, both ways, as JSON.stringify writes it', () => {
    const value = { s: new String('xy'), n: new Number(2), b: new Boolean(false), list: [new String('z')] };
    const expected = { s: 'xy', n: 2, b: false, list: ['z'] };
    expect(JSON.parse(encodeJson(value))).toEqual(expected);
    expect(toJsonValue(value)).toEqual(expected);
    expect(encodeJson(value)).toBe(JSON.stringify(value));
  });

  it('a boxed BigInt, symbol or non-finite number is a JsonEncodingError naming path and type, never {} or null', () => {
    for (const [boxed, type] of [
      [Object(1n), 'bigint'],
      [Object(Symbol('s')), 'symbol'],
      [new Number(Number.NaN), 'NaN'],
      [new Number(Number.POSITIVE_INFINITY), 'Infinity'],
    ] as const) {
      for (const encode of [() => encodeJson({ a: [boxed] }), () => toJsonValue({ a: [boxed] })]) {
        let caught: unknown;
        try {
          encode();
        } catch (error) {
          caught = error;
        }
        expect(JsonEncodingError.isInstance(caught)).toBe(true);
        expect(caught).toMatchObject({ path: '$.a[0]', type });
      }
    }
  });

  it('an object that only inherits from String.prototype is an object, not a string', () => {
    const impostor = Object.assign(Object.create(String.prototype) as object, { k: 1 });
    expect(toJsonValue({ impostor })).toEqual({ impostor: { k: 1 } });
    expect(JSON.parse(encodeJson({ impostor }))).toEqual({ impostor: { k: 1 } });
  });

  it('the strict check reports them: they do not read back as themselves', () => {
    expect(findNonJson({ s: new String('x') })).toEqual({ path: '$.s', type: 'String' });
  });
});

describe('encodeJson: the native fast path writes what the walk writes (property)', () => {
  const leaf = fc.oneof(
    fc.anything({ maxDepth: 2 }),
    fc.date({ noInvalidDate: true }),
    fc.constantFrom(new TypeError('bad'), Object.assign(new Error('with fields'), { code: 'E1' }), new Error('caused', { cause: new RangeError('inner') })),
    fc.uint8Array({ maxLength: 8 }),
    fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, 1n, () => 1, Symbol('s'), new Map([[1, 2]]), new Set([1]), Promise.resolve()),
    fc.constantFrom<unknown>(new String('s'), new Number(2), new Boolean(true), new Number(Number.NaN), Object(1n), Object(Symbol('s'))),
  );
  /** What an encoder made of a value: its text, or its error (path and type). */
  const outcome = (encode: () => string): string => {
    try {
      return `ok ${encode()}`;
    } catch (error) {
      return JsonEncodingError.isInstance(error) ? `error ${error.path} ${error.type}` : `thrown ${String(error)}`;
    }
  };
  const value = fc.letrec((tie) => ({
    node: fc.oneof({ depthSize: 'small' }, leaf, fc.array(tie('node'), { maxLength: 4 }), fc.dictionary(fc.string({ maxLength: 4 }), tie('node'), { maxKeys: 4 })),
  })).node;

  it('for any value: the same text, or the same JsonEncodingError (path and type) — 1,000 cases', () => {
    fc.assert(
      fc.property(value, (input) => {
        expect(outcome(() => encodeJson(input))).toBe(outcome(() => JSON.stringify(toJsonValue(input))));
      }),
      { numRuns: 1000, seed: 20261202 },
    );
  });

  // What a check could get wrong on the way to a plain `JSON.stringify`: prototypes, own `toJSON`s,
  // dates, holes, -0, depth.
  class Tagged extends Array<unknown> {
    toJSON(): unknown {
      return new Map();
    }
  }
  const tricky = fc.constantFrom<unknown>(
    new Date(0),
    new Date(Number.NaN),
    Object.assign(new Date(0), { toJSON: () => new Set() }),
    Object.assign(new Date(0), { toISOString: () => 1n }),
    new (class Stamp extends Date {})(0),
    { toJSON: () => ({ replaced: true }) },
    { toJSON: 'not callable' },
    Object.assign(Object.create(null) as object, { a: 1, b: [undefined] }),
    Object.assign(Object.create({ inherited: () => 1 }) as object, { own: 1 }),
    Tagged.from([1, 2]),
    [1, , 3],
    -0,
    Object.defineProperty({}, 'hidden', { value: () => 1, enumerable: false }),
    Object.defineProperty({}, 'computed', { get: () => 42, enumerable: true }),
    { [Symbol('key')]: () => 1, shown: 1 },
  );
  const plainData = fc.letrec((tie) => ({
    node: fc.oneof(
      { depthSize: 'small' },
      fc.anything({ maxDepth: 3, withNullPrototype: true, withSparseArray: true, withDate: true, withUnicodeString: true }),
      tricky,
      fc.array(tie('node'), { maxLength: 5 }),
      fc.dictionary(fc.string({ maxLength: 6 }), tie('node'), { maxKeys: 5 }),
    ),
  })).node;

  it('for chunk-like data and the tricky cases of the check: the same text or error — 2,000 cases', () => {
    fc.assert(
      fc.property(plainData, (input) => {
        expect(outcome(() => encodeJson(input))).toBe(outcome(() => JSON.stringify(toJsonValue(input))));
      }),
      { numRuns: 2000, seed: 20261203 },
    );
  });

  it("plain data nested past the check's depth, and a Date whose built-in toJSON was replaced, write what the walk writes", () => {
    let deep: unknown = { leaf: [1, 'two', null] };
    for (let depth = 0; depth < 100; depth++) deep = depth % 2 === 0 ? [deep] : { next: deep };
    expect(encodeJson(deep)).toBe(JSON.stringify(toJsonValue(deep)));
    let deepBad: unknown = { leaf: Number.NaN };
    for (let depth = 0; depth < 40; depth++) deepBad = [deepBad];
    expect(() => encodeJson(deepBad)).toThrow(expect.objectContaining({ path: `$${'[0]'.repeat(40)}.leaf`, type: 'NaN' }));
    const original = Object.getOwnPropertyDescriptor(Date.prototype, 'toJSON')!;
    try {
      Object.defineProperty(Date.prototype, 'toJSON', { ...original, value: () => new Map() });
      expect(() => encodeJson({ at: new Date(0) })).toThrow(expect.objectContaining({ path: '$.at', type: 'Map' }));
    } finally {
      Object.defineProperty(Date.prototype, 'toJSON', original);
    }
    expect(encodeJson({ at: new Date(0) })).toBe('{"at":"1970-01-01T00:00:00.000Z"}');
  });

  it.each([
    ['Object.prototype', Object.prototype, '$'],
    ['Array.prototype', Array.prototype, '$.list'],
  ])("a toJSON on %s (every object's text changes) goes through the replacer too", (_name, prototype, path) => {
    const value = { list: [1, { a: 'x' }], n: 2 };
    try {
      Object.defineProperty(prototype, 'toJSON', { value: () => new Set(), configurable: true, writable: true });
      expect(() => encodeJson(value)).toThrow(expect.objectContaining({ path, type: 'Set' }));
    } finally {
      delete (prototype as { toJSON?: unknown }).toJSON;
    }
    expect(encodeJson(value)).toBe(JSON.stringify(value));
  });

  it('cycles, an error that is its own cause and a throwing toJSON go through the walk', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic['self'] = cyclic;
    expect(() => encodeJson(cyclic)).toThrow(expect.objectContaining({ path: '$.self', type: 'cycle' }));
    const looped = new Error('loop');
    looped.cause = looped;
    expect(() => encodeJson({ error: looped })).toThrow(expect.objectContaining({ path: '$.error.cause', type: 'cycle' }));
    const hostile = { toJSON: () => { throw new Error('no JSON for you'); } };
    expect(() => encodeJson(hostile)).toThrow('no JSON for you');
  });
});
