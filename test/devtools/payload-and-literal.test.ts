/**
 * What the inspector copies (bounded, JSON-safe payloads) and what it writes back as source (the
 * marble export's literals: a property test that any plain value round-trips through `eval`), and
 * a run full of hostile values that the inspector records without breaking.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { lastValueFrom, toArray } from 'rxjs';
import { Agent, MessageList, TripWire, type ChunkType, type Processor } from 'rxagent';
import { Inspector, toMarbleDiagram } from 'rxagent/devtools';
import { scriptedModel } from 'rxagent/testing';
import { hookArgsPayload, toPayload } from '../../src/devtools/internal/payload.js';
import { jsLiteral, sameValue } from '../../src/devtools/internal/js-literal.js';
import { evaluateSnippet } from './support/evaluate-snippet.js';

describe('toPayload', () => {
  it('copies within bounds: long strings, big arrays, deep objects, cycles', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    let deep: Record<string, unknown> = { leaf: true };
    for (let level = 0; level < 20; level++) deep = { deep };
    const payload = toPayload({ text: 'x'.repeat(10_000), items: Array.from({ length: 500 }, (_, index) => index), cyclic, deep }) as Record<string, unknown>;
    expect(payload.text).toBe(`${'x'.repeat(4000)}… (6000 more characters)`);
    expect((payload.items as unknown[]).length).toBe(201);
    expect((payload.items as unknown[]).at(-1)).toBe('… 300 more items');
    expect(payload.cyclic).toEqual({ name: 'loop', self: '[circular]' });
    expect(JSON.stringify(payload.deep)).toContain('"{…}"');
    expect(() => JSON.stringify(payload)).not.toThrow();
  });

  it('writes errors, dates, bytes, big numbers, maps and message lists readably', () => {
    const tripwire = new TripWire('blocked', { retry: true, metadata: { rule: 'x' } }, 'guard');
    const list = new MessageList().add('Hello', 'input');
    const payload = toPayload({ tripwire, at: new Date(0), bytes: new Uint8Array(3), big: 10n, nan: Number.NaN, map: new Map([['k', 1]]), list }) as Record<string, unknown>;
    expect(payload.tripwire).toMatchObject({ $type: 'Error', name: 'TripWire', message: 'blocked', processorId: 'guard', retry: true, metadata: { rule: 'x' } });
    expect(payload.at).toBe('1970-01-01T00:00:00.000Z');
    expect(payload.bytes).toEqual({ $type: 'Uint8Array', byteLength: 3 });
    expect(payload.big).toBe('10n');
    expect(payload.nan).toBe('NaN');
    expect(payload.map).toEqual({ $type: 'Map', entries: [['k', 1]] });
    expect((payload.list as { $type: string; messages: unknown[] }).$type).toBe('MessageList');
    expect((payload.list as { messages: Array<{ role: string }> }).messages[0]?.role).toBe('user');
  });

  it('survives throwing getters, proxies and __proto__ keys', () => {
    const hostile = Object.defineProperty({ fine: 1 }, 'boom', { enumerable: true, get: () => { throw new Error('no peeking'); } });
    expect(toPayload(hostile)).toEqual({ fine: 1, boom: '[unreadable: no peeking]' });
    const proxy = new Proxy({}, { ownKeys: () => { throw new Error('trap'); } });
    expect(toPayload(proxy)).toBe('[unreadable: trap]');
    const parsed = toPayload(JSON.parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('leaves the runtime plumbing out of hook arguments', () => {
    const args = { part: { type: 'text-delta' }, state: { n: 1 }, abort: () => undefined, writer: {}, abortSignal: new AbortController().signal, tracingContext: {}, retryCount: 0 };
    expect(hookArgsPayload(args)).toEqual({ part: { type: 'text-delta' }, state: { n: 1 }, retryCount: 0 });
  });
});

/** Plain values a chunk can hold (what a literal must rebuild exactly). */
const plainValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string({ unit: 'binary' }),
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.bigInt(),
    fc.date({ noInvalidDate: false }),
    fc.uint8Array({ maxLength: 5 }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string({ unit: 'binary' }), fc.constant('__proto__'), fc.constant('a-b')), tie('value'), { maxKeys: 4 }),
  ),
})).value;

describe('jsLiteral', () => {
  it('rebuilds any plain value exactly (property)', () => {
    fc.assert(
      fc.property(plainValue, (value) => {
        const { code, exact } = jsLiteral(value);
        expect(exact).toBe(true);
        // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the literal is evaluated as a test file would
        const rebuilt = new Function(`return (${code});`)() as unknown;
        expect(sameValue(rebuilt, value)).toBe(true);
        if (value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date) && !(value instanceof Uint8Array)) {
          expect(Object.getPrototypeOf(rebuilt)).toBe(Object.prototype);
          expect(Object.keys(rebuilt as object).sort()).toEqual(Object.keys(value).filter((key) => (value as Record<string, unknown>)[key] !== undefined).sort());
        }
      }),
      { numRuns: 300 },
    );
  });

  it('flags what it cannot rebuild', () => {
    expect(jsLiteral({ run: () => 1 }).exact).toBe(false);
    expect(jsLiteral(new (class Point { x = 1; })()).exact).toBe(false);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(jsLiteral(cyclic)).toEqual({ code: '{ self: undefined }', exact: false });
  });
});

describe('a hostile run', () => {
  it('is recorded and exported without changing what the subscriber gets', async () => {
    const hostile: Processor = {
      id: 'hostile',
      processOutputStream: ({ part }) => {
        if (part.type !== 'text-delta') return part;
        const weird = { ...part, payload: { ...part.payload, extra: { __proto__: null, huge: 'y'.repeat(50_000) } } };
        return Object.defineProperty(weird, 'trap', { enumerable: true, get: () => { throw new Error('getter'); } }) as ChunkType;
      },
    };
    const agent = new Agent({ id: 'hostile', model: scriptedModel({ rules: [], fallback: { text: 'one two' } }), outputProcessors: [hostile] });
    const inspector = new Inspector();
    const plain = await lastValueFrom(agent.stream$('hi', { runId: 'plain' }).pipe(toArray()));
    const traced = await lastValueFrom(inspector.trace(({ tracingContext }) => agent.stream$('hi', { tracingContext, runId: 'plain' })).pipe(toArray()));
    expect(traced.map((chunk) => chunk.type)).toEqual(plain.map((chunk) => chunk.type));
    const [summary] = inspector.runs();
    expect(summary?.status).toBe('finish');
    const record = inspector.run(summary!.runId);
    const rewrite = record.events.find((event) => event.type === 'hook' && event.outcome === 'rewrite');
    expect(JSON.stringify(rewrite)).toContain('[unreadable: getter]');
    expect(JSON.stringify(rewrite).length).toBeLessThan(20_000);
    expect(() => toMarbleDiagram(traced)).not.toThrow();
  });

  it('exports a data chunk holding a __proto__ key as that key', () => {
    const data = { type: 'data-odd', runId: 'r', from: 'AGENT', data: JSON.parse('{"__proto__": {"x": 1}}') } as unknown as ChunkType;
    const { values } = evaluateSnippet(toMarbleDiagram([data]).code);
    expect(Object.keys((values.a as { data: object }).data)).toEqual(['__proto__']);
  });
});
