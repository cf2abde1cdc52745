/**
 * The provider seam under a hostile provider — or whatever sits between it and the app (a proxy,
 * a gateway, a hand-written adapter): it can write anything to the stream, in any order, and
 * answer `doStream`/`doGenerate` with anything. Every fault is contained in its run: one terminal
 * chunk (an `error` carrying an `InvalidModelResponseError` that names the provider, the provider's
 * own error, or the documented repair), every chunk and UI message chunk writable as JSON, no
 * process-level error, no hang, the provider's stream released and no listener left on the caller's
 * signal. The same classes go through each adapter (V1, V2, V3, V4) and through `doGenerate`;
 * a processor's cached response (`processLLMRequest` returning `{ response }`) is checked the same
 * way and blamed on the processor.
 *
 * Found here (each failed before its fix):
 * - ids, names and tool input that are not strings (a number, a BigInt, an object, a Proxy) went
 *   into chunks (a BigInt id broke the UI stream) or crashed deep in the run (`input.trim`), or were
 *   refused by memory only after the chunk reached the client;
 * - `providerMetadata`, a provider-executed tool's `result`, `raw` values, `stream-start` warnings
 *   and `error` parts that cannot be written as JSON (a BigInt, a cycle, a Proxy or getter that
 *   throws) reached the client as chunks no one can encode; a small object whose parts are shared
 *   40 levels deep (2^40 values as JSON) stalled whoever encoded it; a V2 warning of no V2 type
 *   became `undefined` in the warnings list;
 * - `file` parts with bogus data and `source` parts with missing fields were raw `TypeError`s or
 *   refused late by memory; a `finish` without a reason was a `TypeError`, a reason the spec does
 *   not know went into the step as it was;
 * - a stream that sends `finish` and never closes hung the run; parts after `finish` were taken;
 * - `result.request` that throws where it is read (streamed or generated) was an unhandled
 *   rejection and a hung run; so was a `doStream` rejecting with a Proxy that throws;
 * - conversion faults in the V1/V2/V3 adapters (a V2 `finish` without usage, warnings that are not
 *   an array, a V1 stream of `null`) were raw `TypeError`s, and left the older-spec reader locked;
 * - a tool input nested 5,000 or 100,000 deep became `args` no consumer could encode
 *   (`JSON.stringify` throws past ≈ 4,100 levels, the codec past 1,000);
 * - a cached response with a tool call without payload was an uncaught exception in the step, and
 *   one with an empty `toolCallId`, no `toolName` or a source without `sourceType` was refused by
 *   memory after the chunk reached the client — now a `ProcessorError` naming the processor.
 */
import { getEventListeners } from 'node:events';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { from, lastValueFrom, timeout, toArray } from 'rxjs';
import { z } from 'zod';
import { Agent, InvalidModelResponseError, ProcessorError, type ChunkType } from '../../src/index.js';
import { toUIMessageStream } from '../../src/ai-sdk/to-ui-message-stream.js';
import { encodeJson } from '../../src/contract/json-codec.js';
import { FINISH_GRACE_MS } from '../../src/model/stream-model.js';
import { checkProperty, PROPERTY_RUNS } from '../reliability/support/property.js';
import { failOnProcessLevelErrors } from './process-guard.js';
import { partStream, type StreamProbe } from './part-stream.js';

failOnProcessLevelErrors();

const RUNS = Math.max(60, Math.floor(PROPERTY_RUNS / 5));
const PROVIDER = 'acme.hostile';
const MODEL_ID = 'hostile-1';

type Version = 'v1' | 'v2' | 'v3' | 'v4';
type Part = Record<string, unknown>;

/** A model of `version` whose `doStream` resolves with `result()`; `doGenerate` with `generated()`. */
function hostileModel(version: Version, result: () => unknown, generated: () => unknown = () => Promise.reject(new Error('not used'))): object {
  return {
    specificationVersion: version,
    provider: PROVIDER,
    modelId: MODEL_ID,
    supportedUrls: {},
    ...(version === 'v1' ? { defaultObjectGenerationMode: undefined } : {}),
    doGenerate: async () => generated(),
    doStream: async () => result(),
  };
}

/** A model streaming `parts` (in `version`'s shapes), and the probe of its stream. */
function streaming(version: Version, parts: readonly unknown[], hang = false): { model: object; probe: StreamProbe } {
  const probe: StreamProbe = { state: 'open' };
  const model = hostileModel(version, () => ({ stream: partStream(parts, probe, hang), ...(version === 'v1' ? { rawCall: { rawPrompt: null, rawSettings: {} } } : {}) }));
  return { model, probe };
}

const weather = { description: 'weather', inputSchema: z.object({ city: z.string() }), execute: ({ city }: { city: string }) => ({ city, sky: 'sunny' }) };
const anything = { description: 'takes anything', inputSchema: z.any(), execute: () => 'ok' };

const agentOf = (model: object, extra: Record<string, unknown> = {}): Agent =>
  new Agent({ id: 'a', instructions: 'Be brief.', model: model as never, tools: { weather, anything }, maxSteps: 1, ...extra });

const settle = async (): Promise<void> => {
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
};

/** A run's chunks, after checking what every run must hold (see the module comment). */
async function contained(agent: Agent, options: { abortSignal?: AbortSignal } = {}): Promise<ChunkType[]> {
  const controller = new AbortController();
  const signal = options.abortSignal ?? controller.signal;
  const chunks = await lastValueFrom(agent.stream$('Hello', { abortSignal: signal }).pipe(timeout(10_000), toArray()));
  const terminals = chunks.filter((chunk) => ['finish', 'error', 'abort', 'tripwire'].includes(chunk.type));
  expect(terminals.map((chunk) => chunk.type), chunks.map((chunk) => chunk.type).join(',')).toHaveLength(1);
  expect(chunks.at(-1)).toBe(terminals[0]);
  for (const chunk of chunks) expect(() => encodeJson(chunk), `chunk ${chunk.type}`).not.toThrow();
  const reader = toUIMessageStream(from(chunks)).getReader();
  for (;;) {
    const next = await reader.read();
    if (next.done) break;
    expect(() => JSON.stringify(next.value), `UI chunk ${String((next.value as { type?: unknown }).type)}`).not.toThrow();
  }
  await settle();
  expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  return chunks;
}

const errorOf = (chunks: readonly ChunkType[]): unknown => {
  const last = chunks.at(-1);
  return last?.type === 'error' ? last.payload.error : undefined;
};

/** The run ended with an `InvalidModelResponseError` naming the provider (and `problem`, if given). */
function expectInvalid(chunks: readonly ChunkType[], problem?: RegExp): InvalidModelResponseError {
  const error = errorOf(chunks);
  expect(InvalidModelResponseError.isInstance(error), `${chunks.map((chunk) => chunk.type).join(',')}: ${String((error as Error | undefined)?.message)}`).toBe(true);
  const invalid = error as InvalidModelResponseError;
  expect(invalid.provider).toBe(PROVIDER);
  expect(invalid.modelId).toBe(MODEL_ID);
  if (problem !== undefined) expect(invalid.problem).toMatch(problem);
  return invalid;
}

async function expectReleased(probe: StreamProbe): Promise<void> {
  await settle();
  expect(probe.state, 'the provider stream is read to its end or cancelled').not.toBe('open');
}

// ---------------------------------------------------------------------------------------------
// Hostile values
// ---------------------------------------------------------------------------------------------

/** A value made fresh for each case (a Proxy or a cycle cannot be shared between runs safely). */
interface Hostile {
  readonly label: string;
  readonly make: () => unknown;
}

const hostile = (label: string, make: () => unknown): Hostile => ({ label, make, toString: () => label }) as Hostile;

function throwingProxy(): object {
  return new Proxy(
    {},
    {
      get() {
        throw new Error('proxy trap');
      },
      ownKeys() {
        throw new Error('proxy trap');
      },
      getPrototypeOf() {
        throw new Error('proxy trap');
      },
      has() {
        throw new Error('proxy trap');
      },
    },
  );
}

function revokedProxy(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let level = 0; level < depth; level++) value = { a: value };
  return value;
}

/** A small value whose parts are shared: its JSON text writes 2^levels values. */
function shared(levels: number): unknown {
  let value: unknown = 1;
  for (let level = 0; level < levels; level++) value = [value, value];
  return { acme: value };
}

function cycle(): object {
  const value: { p: { self?: unknown } } = { p: {} };
  value.p.self = value;
  return value;
}

/** Values where a string is required. */
const notAString: fc.Arbitrary<Hostile> = fc.oneof(
  fc.integer().map((value) => hostile(`number ${value}`, () => value)),
  fc.bigInt().map((value) => hostile(`BigInt ${value}`, () => value)),
  fc.constantFrom(
    hostile('undefined', () => undefined),
    hostile('null', () => null),
    hostile('true', () => true),
    hostile('NaN', () => Number.NaN),
    hostile('{}', () => ({})),
    hostile("['t']", () => ['t']),
    hostile('a symbol', () => Symbol('id')),
    hostile('a String object', () => Object('t')),
    hostile('a Proxy that throws', throwingProxy),
    hostile('a revoked Proxy', revokedProxy),
    hostile('an object whose toString throws', () => ({
      toString() {
        throw new Error('toString');
      },
    })),
    hostile('a function', () => () => 't'),
    hostile('a Date', () => new Date(0)),
    hostile('a Uint8Array', () => new Uint8Array([1, 2])),
  ),
);

/** Values that cannot be written as JSON (or read at all). */
const notJson: fc.Arbitrary<Hostile> = fc.constantFrom(
  hostile('a BigInt inside', () => ({ acme: { n: 1n } })),
  hostile('a cycle', cycle),
  hostile('a Proxy that throws', throwingProxy),
  hostile('a revoked Proxy', revokedProxy),
  hostile('a getter that throws', () => ({
    get acme(): unknown {
      throw new Error('getter');
    },
  })),
  hostile('a Map inside', () => ({ acme: new Map([[1, 2]]) })),
  hostile('NaN inside', () => ({ acme: { n: Number.NaN } })),
  hostile('Infinity inside', () => ({ acme: { n: Number.POSITIVE_INFINITY } })),
  hostile('a function inside', () => ({ acme: { f: () => 1 } })),
  hostile('a symbol inside', () => ({ acme: { s: Symbol('s') } })),
  hostile('2,000 levels deep', () => ({ acme: nested(2000) })),
  hostile('40 levels of shared parts (2^40 values as JSON)', () => shared(40)),
);

// ---------------------------------------------------------------------------------------------
// Well-formed parts of each version, and where a hostile value can go
// ---------------------------------------------------------------------------------------------

function finishOf(version: Version): Part {
  if (version === 'v1') return { type: 'finish', finishReason: 'stop', usage: { promptTokens: 3, completionTokens: 2 } };
  if (version === 'v2') return { type: 'finish', finishReason: 'stop', usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 } };
  return { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: { total: 3 }, outputTokens: { total: 2 } } };
}

const textBlock = (id: string, text: string): Part[] => [
  { type: 'text-start', id },
  { type: 'text-delta', id, delta: text },
  { type: 'text-end', id },
];

/** A well-formed part of `kind` in `version`'s shape (V2–V4). */
function basePart(kind: string, version: Version): Part {
  switch (kind) {
    case 'text-start':
    case 'text-end':
    case 'reasoning-start':
    case 'reasoning-end':
      return { type: kind, id: 'b1' };
    case 'text-delta':
    case 'reasoning-delta':
      return { type: kind, id: 'b1', delta: 'Hi' };
    case 'tool-input-start':
      return { type: kind, id: 'c1', toolName: 'weather' };
    case 'tool-input-delta':
      return { type: kind, id: 'c1', delta: '{"city":"Paris"}' };
    case 'tool-input-end':
      return { type: kind, id: 'c1' };
    case 'tool-call':
      return { type: kind, toolCallId: 'c1', toolName: 'weather', input: '{"city":"Paris"}' };
    case 'tool-result':
      return { type: kind, toolCallId: 'ws1', toolName: 'web_search', result: { hits: ['https://rxjs.dev'] }, ...(version === 'v2' ? { providerExecuted: true } : {}) };
    case 'tool-approval-request':
      return { type: kind, toolCallId: 'c1', approvalId: 'ap1' };
    case 'source-url':
      return { type: 'source', sourceType: 'url', id: 's1', url: 'https://rxjs.dev', title: 'RxJS' };
    case 'source-document':
      return { type: 'source', sourceType: 'document', id: 's2', title: 'Guide', mediaType: 'text/plain' };
    case 'file':
      return { type: 'file', mediaType: 'image/png', data: version === 'v4' ? { type: 'data', data: 'iVBORw0KGgo=' } : 'iVBORw0KGgo=' };
    case 'response-metadata':
      return { type: kind, id: 'resp-1', modelId: MODEL_ID, timestamp: new Date(0) };
    case 'stream-start':
      return { type: kind, warnings: [] };
    case 'raw':
      return { type: kind, rawValue: { anything: true } };
    case 'finish':
      return finishOf(version);
    case 'error':
      return { type: 'error', error: new Error('provider error part') };
    default:
      throw new Error(`no base part ${kind}`);
  }
}

/** One place a hostile value can be written: the part, the field (a path), the versions it applies to. */
interface Slot {
  readonly kind: string;
  readonly path: readonly string[];
  readonly versions: readonly Version[];
  /** How this slot's fault ends the run: always an InvalidModelResponseError, or contained either way (an adapter's documented repair). */
  readonly outcome?: 'invalid' | 'contained';
}

const V234: readonly Version[] = ['v2', 'v3', 'v4'];
const slot = (kind: string, path: string, versions: readonly Version[] = V234, outcome: Slot['outcome'] = 'invalid'): Slot => ({ kind, path: path.split('.'), versions, outcome });

/** Fields that must be strings. */
const stringSlots: readonly Slot[] = [
  ...['text-start', 'text-delta', 'text-end', 'reasoning-start', 'reasoning-delta', 'reasoning-end', 'tool-input-delta', 'tool-input-end'].map((kind) => slot(kind, 'id')),
  slot('tool-input-start', 'id'),
  slot('tool-input-start', 'toolName'),
  slot('tool-call', 'toolCallId'),
  slot('tool-call', 'toolName'),
  slot('tool-call', 'input'),
  slot('tool-result', 'toolCallId'),
  slot('tool-result', 'toolName'),
  slot('tool-approval-request', 'toolCallId', ['v3', 'v4']),
  slot('tool-approval-request', 'approvalId', ['v3', 'v4']),
  slot('source-url', 'id'),
  slot('source-url', 'url'),
  slot('source-url', 'sourceType'),
  slot('source-document', 'title'),
  slot('source-document', 'mediaType'),
  slot('file', 'mediaType'),
  slot('file', 'data.data', ['v4']),
  slot('file', 'data', ['v2', 'v3']),
  slot('finish', 'finishReason', ['v3', 'v4']),
  slot('finish', 'finishReason.unified', ['v3', 'v4']),
  slot('finish', 'finishReason', ['v2']),
  slot('stream-start', 'warnings'),
];

/** Optional fields that must be strings (or a Date) when given: `undefined` is fine there. */
const optionalSlots: readonly Slot[] = [slot('response-metadata', 'id'), slot('response-metadata', 'modelId'), slot('response-metadata', 'timestamp'), slot('source-url', 'title')];

/** Fields that must be JSON data. */
const jsonSlots: readonly Slot[] = [
  ...['text-start', 'text-delta', 'text-end', 'reasoning-start', 'reasoning-delta', 'reasoning-end', 'tool-input-start', 'tool-call', 'tool-result', 'source-url', 'finish'].map((kind) =>
    slot(kind, 'providerMetadata'),
  ),
  slot('tool-result', 'result', ['v3', 'v4']),
  // V2 results are `unknown`: the adapter writes them as JSON text and back (a Map becomes {}), or fails
  slot('tool-result', 'result', ['v2'], 'contained'),
  slot('raw', 'rawValue'),
  slot('stream-start', 'warnings.0'),
  slot('error', 'error'),
];

function withValue(part: Part, path: readonly string[], value: unknown): Part {
  const copy: Part = { ...part };
  let target: Record<string, unknown> = copy;
  for (const key of path.slice(0, -1)) {
    const inner = target[key];
    const next: Record<string, unknown> = Array.isArray(inner) ? ([...inner] as unknown as Record<string, unknown>) : { ...(inner as Record<string, unknown>) };
    target[key] = next;
    target = next;
  }
  const last = path.at(-1) as string;
  if (Array.isArray(target) && last === '0') (target as unknown[]).splice(0, 1, value);
  else target[last] = value;
  return copy;
}

/** A stream around `part`: a well-formed answer before and after it (no `finish` after a `finish`). */
function around(part: Part, version: Version): Part[] {
  if (part.type === 'stream-start') return [part, ...textBlock('ok', 'Fine.'), finishOf(version)];
  if (part.type === 'finish') return [...textBlock('ok', 'Fine.'), part];
  return [...textBlock('ok', 'Fine.'), part, finishOf(version)];
}

const versionAndSlot = (slots: readonly Slot[]): fc.Arbitrary<[Version, Slot]> =>
  fc.constantFrom(...slots.flatMap((each) => each.versions.map((version): [Version, Slot] => [version, each])));

describe('hostile values in stream parts (V2, V3, V4): one InvalidModelResponseError naming the provider', () => {
  const check = async ([version, where]: [Version, Slot], value: Hostile): Promise<void> => {
    if (where.kind === 'file' && value.label === 'a Uint8Array') return; // file data may be bytes
    const part = withValue(basePart(where.kind, version), where.path, value.make());
    const { model, probe } = streaming(version, around(part, version));
    const chunks = await contained(agentOf(model));
    if (where.outcome === 'invalid') expectInvalid(chunks);
    else expect(['finish', 'error']).toContain(chunks.at(-1)?.type);
    await expectReleased(probe);
  };

  it('a required id, name, input, reason or field that is not a string (or not an array, for warnings)', async () => {
    await checkProperty('provider-streams: not a string', fc.tuple(versionAndSlot(stringSlots), notAString), ([where, value]) => check(where, value), RUNS);
  }, 120_000);

  it('an optional field given as something that is not a string (or a valid Date)', async () => {
    const given = notAString.filter((value) => value.label !== 'undefined' && value.label !== 'a Date');
    await checkProperty('provider-streams: optional fields', fc.tuple(versionAndSlot(optionalSlots), given), ([where, value]) => check(where, value), RUNS);
  }, 120_000);

  it('providerMetadata, a tool result, a raw value, a warning or an error part that cannot be written as JSON', async () => {
    await checkProperty('provider-streams: not JSON', fc.tuple(versionAndSlot(jsonSlots), notJson), ([where, value]) => check(where, value), RUNS);
  }, 120_000);

  it('an empty toolCallId, an unknown sourceType, a file given by reference or as text, an Invalid Date', async () => {
    const cases: Array<[string, Part]> = [
      ['tool-call with toolCallId ""', withValue(basePart('tool-call', 'v4'), ['toolCallId'], '')],
      ['tool-result with toolCallId ""', withValue(basePart('tool-result', 'v4'), ['toolCallId'], '')],
      ['source with sourceType "weird"', withValue(basePart('source-url', 'v4'), ['sourceType'], 'weird')],
      ['file given by reference', { type: 'file', mediaType: 'image/png', data: { type: 'reference', reference: { acme: 'file-1' } } }],
      ['file with data of type "text"', { type: 'file', mediaType: 'text/plain', data: { type: 'text', text: 'hi' } }],
      ['file whose url is a number', { type: 'file', mediaType: 'image/png', data: { type: 'url', url: 5 } }],
      ['response-metadata with an Invalid Date', withValue(basePart('response-metadata', 'v4'), ['timestamp'], new Date(Number.NaN))],
      ['finish.finishReason.raw that is a number', withValue(finishOf('v4'), ['finishReason', 'raw'], 7)],
    ];
    for (const [name, part] of cases) {
      const { model, probe } = streaming('v4', around(part, 'v4'));
      const chunks = await contained(agentOf(model));
      expect(errorOf(chunks), name).toBeDefined();
      expectInvalid(chunks);
      await expectReleased(probe);
    }
  });

  it('a response timestamp given as a date string (as JSON carries it) is a Date; a string that is no date is refused', async () => {
    const stamped = withValue(basePart('response-metadata', 'v4'), ['timestamp'], '2026-01-02T03:04:05.000Z');
    const { model } = streaming('v4', [stamped, ...textBlock('t', 'Hi'), finishOf('v4')]);
    const result = await agentOf(model).generate('Hello', { generateWith: 'doStream' });
    expect(result.steps[0]?.response?.timestamp).toEqual(new Date('2026-01-02T03:04:05.000Z'));
    const garbled = streaming('v4', [withValue(basePart('response-metadata', 'v4'), ['timestamp'], 'yesterday'), ...textBlock('t', 'Hi'), finishOf('v4')]);
    expectInvalid(await contained(agentOf(garbled.model)), /timestamp/);
  });

  it('a finish reason the spec does not know is "other" (repair); a known one is kept', async () => {
    for (const [unified, expected] of [
      ['weird', 'other'],
      ['interrupted', 'other'],
      ['length', 'length'],
    ] as const) {
      const finish = withValue(finishOf('v4'), ['finishReason', 'unified'], unified);
      const { model } = streaming('v4', [...textBlock('t', 'Hi'), finish]);
      const result = await agentOf(model).generate('Hello', { generateWith: 'doStream' });
      expect(result.finishReason).toBe(expected);
      expect(result.text).toBe('Hi');
    }
  });
});

describe('V1 (legacy) streams: no String() of garbage, one InvalidModelResponseError', () => {
  const v1Finish = finishOf('v1');
  const v1Slots: Array<[string, Part, readonly string[]]> = [
    ['tool-call.toolCallId', { type: 'tool-call', toolCallType: 'function', toolCallId: 'c1', toolName: 'weather', args: '{"city":"Paris"}' }, ['toolCallId']],
    ['tool-call.toolName', { type: 'tool-call', toolCallType: 'function', toolCallId: 'c1', toolName: 'weather', args: '{"city":"Paris"}' }, ['toolName']],
    ['tool-call.args', { type: 'tool-call', toolCallType: 'function', toolCallId: 'c1', toolName: 'weather', args: '{"city":"Paris"}' }, ['args']],
    ['tool-call-delta.toolCallId', { type: 'tool-call-delta', toolCallType: 'function', toolCallId: 'c1', toolName: 'weather', argsTextDelta: '{' }, ['toolCallId']],
    ['tool-call-delta.toolName', { type: 'tool-call-delta', toolCallType: 'function', toolCallId: 'c1', toolName: 'weather', argsTextDelta: '{' }, ['toolName']],
    ['file.mimeType', { type: 'file', mimeType: 'image/png', data: 'iVBORw0KGgo=' }, ['mimeType']],
    ['file.data', { type: 'file', mimeType: 'image/png', data: 'iVBORw0KGgo=' }, ['data']],
    ['source.url', { type: 'source', source: { sourceType: 'url', id: 's1', url: 'https://rxjs.dev' } }, ['source', 'url']],
    ['response-metadata.id', { type: 'response-metadata', id: 'r1' }, ['id']],
  ];

  it('an id, name, args, media type or URL that is not a string', async () => {
    const given = notAString.filter((value) => value.label !== 'undefined');
    await checkProperty(
      'provider-streams: V1 not a string',
      fc.tuple(fc.constantFrom(...v1Slots), given),
      async ([[name, part, path], value]) => {
        if (name === 'file.data' && value.label === 'a Uint8Array') return; // file data may be bytes
        const { model, probe } = streaming('v1', [{ type: 'text-delta', textDelta: 'Fine.' }, withValue(part, path, value.make()), v1Finish]);
        expectInvalid(await contained(agentOf(model)));
        await expectReleased(probe);
      },
      RUNS,
    );
  }, 120_000);

  it('a finish whose providerMetadata, or warnings that cannot be written as JSON', async () => {
    await checkProperty(
      'provider-streams: V1 not JSON',
      notJson,
      async (value) => {
        const { model, probe } = streaming('v1', [{ type: 'text-delta', textDelta: 'Fine.' }, { ...v1Finish, providerMetadata: value.make() }]);
        expectInvalid(await contained(agentOf(model)));
        await expectReleased(probe);
      },
      RUNS,
    );
  }, 120_000);

  it('a text delta that is not a string adds nothing to the text (the V4 repair), never "5" or "Symbol(x)"', async () => {
    for (const delta of [5, Symbol('x'), { a: 1 }, null]) {
      const { model } = streaming('v1', [{ type: 'text-delta', textDelta: 'Hi' }, { type: 'text-delta', textDelta: delta }, v1Finish]);
      const chunks = await contained(agentOf(model));
      expect(chunks.at(-1)?.type).toBe('finish');
      const text = chunks.flatMap((chunk) => (chunk.type === 'text-delta' ? [chunk.payload.text] : [])).join('');
      expect(text).toBe('Hi');
    }
  });

  it('doStream resolving with { stream: null }, undefined or warnings that are not an array', async () => {
    for (const result of [{ stream: null }, undefined, { stream: partStream([v1Finish], { state: 'open' }), warnings: 'careful' }]) {
      const model = hostileModel('v1', () => result);
      expectInvalid(await contained(agentOf(model)));
    }
  });

  it('a doGenerate fallback (doStream "not implemented") answering garbage', async () => {
    for (const answer of [null, { text: 'x', toolCalls: 'x', finishReason: 'stop' }, { text: 'x', toolCalls: [{ toolCallId: 5, toolName: 'weather', args: '{}' }] }]) {
      const model = {
        ...hostileModel('v1', () => undefined, () => answer),
        doStream: () => Promise.reject(new Error('Not implemented')),
      };
      expectInvalid(await contained(agentOf(model)));
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Order: any sequence of well-formed parts
// ---------------------------------------------------------------------------------------------

const IDS = ['t', '__proto__', 'constructor', '', 'toString', 'hasOwnProperty'] as const;
/** A streamed tool input's id is a tool call id: an empty one is refused (provider-responses.property.test.ts), not reordered here. */
const TOOL_INPUT_IDS = IDS.filter((id) => id !== '');

const orderedPart: fc.Arbitrary<Part> = fc.oneof(
  fc.record({ type: fc.constantFrom('text-start', 'text-end', 'reasoning-start', 'reasoning-end'), id: fc.constantFrom(...IDS) }),
  fc.record({ type: fc.constantFrom('text-delta', 'reasoning-delta'), id: fc.constantFrom(...IDS), delta: fc.constantFrom('a', 'b ', '') }),
  fc.record({ type: fc.constant('tool-input-start'), id: fc.constantFrom(...TOOL_INPUT_IDS), toolName: fc.constantFrom('weather', 'nothing', '__proto__') }),
  fc.record({ type: fc.constant('tool-input-delta'), id: fc.constantFrom(...TOOL_INPUT_IDS), delta: fc.constantFrom('{"city":', '"P"}') }),
  fc.record({ type: fc.constant('tool-input-end'), id: fc.constantFrom(...TOOL_INPUT_IDS) }),
  fc.record({ type: fc.constant('tool-call'), toolCallId: fc.constantFrom('c1', '__proto__', 'constructor'), toolName: fc.constantFrom('weather', 'nothing', 'toString', '__proto__'), input: fc.constantFrom('{"city":"P"}', '{', '[1]', '"x"', '') }),
  fc.constant<Part>({ type: 'stream-start', warnings: [{ type: 'other', message: 'mid-stream' }] }),
  fc.constant<Part>({ type: 'response-metadata', id: 'r2', modelId: 'm2', timestamp: new Date(5) }),
  fc.constant<Part>({ type: 'raw', rawValue: { n: 1 } }),
  fc.constant<Part>({ type: 'source', sourceType: 'url', id: 's', url: 'https://rxjs.dev' }),
  fc.constant<Part>(finishOf('v4')),
  fc.constant<Part>({ type: 'error', error: new Error('mid-stream provider error') }),
);

describe('parts out of order, repeated, after finish (V4 and through the V3 and V2 adapters)', () => {
  it('one terminal chunk; nothing after the first finish is taken; a stream that hangs after finish still ends', async () => {
    await checkProperty(
      'provider-streams: order',
      fc.tuple(fc.constantFrom<Version>('v4', 'v3', 'v2'), fc.array(orderedPart, { maxLength: 14 }), fc.boolean()),
      async ([version, parts, hangAfter]) => {
        const shaped = version === 'v2' ? parts.map((part) => (part.type === 'finish' ? finishOf('v2') : part)) : parts;
        const firstFinish = parts.findIndex((part) => part.type === 'finish');
        const firstError = parts.findIndex((part) => part.type === 'error');
        const ends = firstFinish >= 0 || firstError >= 0;
        // a stream without finish and without error that hangs waits for the caller (shown below): closed here
        const { model, probe } = streaming(version, shaped, hangAfter && ends);
        const chunks = await contained(agentOf(model, { maxSteps: 1 }));
        const drained = !(hangAfter && ends); // a stream hanging after finish is cancelled within FINISH_GRACE_MS (shown below)
        const errorFirst = firstError >= 0 && (firstFinish < 0 || firstError < firstFinish);
        if (errorFirst) {
          expect(chunks.at(-1)?.type).toBe('error');
          expect((errorOf(chunks) as Error).message).toBe('mid-stream provider error');
        } else {
          const read = firstFinish >= 0 ? parts.slice(0, firstFinish) : parts;
          const text = chunks.flatMap((chunk) => (chunk.type === 'text-delta' ? [chunk.payload.text] : [])).join('');
          expect(text).toBe(read.flatMap((part) => (part.type === 'text-delta' ? [part.delta as string] : [])).join(''));
          expect(['finish', 'error']).toContain(chunks.at(-1)?.type);
        }
        if (drained || errorFirst) await expectReleased(probe);
      },
      RUNS,
    );
  }, 120_000);

  it('two finishes: the first one is the step\'s (its usage counted once)', async () => {
    const second = { ...finishOf('v4'), usage: { inputTokens: { total: 1000 }, outputTokens: { total: 1000 } } };
    const { model, probe } = streaming('v4', [...textBlock('t', 'Hi'), finishOf('v4'), second]);
    const result = await agentOf(model).generate('Hello', { generateWith: 'doStream' });
    expect(result.usage.inputTokens).toBe(3);
    expect(result.usage.outputTokens).toBe(2);
    await expectReleased(probe);
  });
});

// ---------------------------------------------------------------------------------------------
// Reading the stream
// ---------------------------------------------------------------------------------------------

describe('doStream results and readers that misbehave (each version)', () => {
  const versions: readonly Version[] = ['v4', 'v3', 'v2', 'v1'];

  it('result.request or result.response that throws where it is read: an error chunk, no unhandled rejection, no hang', async () => {
    for (const version of versions) {
      for (const key of version === 'v1' ? ['request', 'rawResponse', 'warnings'] : ['request', 'response']) {
        const probe: StreamProbe = { state: 'open' };
        const model = hostileModel(version, () =>
          Object.defineProperty({ stream: partStream([...textBlock('t', 'Hi'), finishOf(version === 'v1' ? 'v1' : version)], probe) }, key, {
            enumerable: true,
            get() {
              throw new Error(`${key} getter`);
            },
          }),
        );
        expectInvalid(await contained(agentOf(model)), version === 'v1' ? undefined : new RegExp(key));
        await expectReleased(probe);
      }
    }
  });

  it('doStream rejecting (or its stream failing) with a Proxy that throws, a BigInt or a cycle: one error chunk anyone can encode', async () => {
    for (const version of versions) {
      for (const make of [throwingProxy, revokedProxy, () => 1n, cycle, () => Object.assign(new Error('with a BigInt code'), { code: 1n })]) {
        await contained(agentOf(hostileModel(version, () => Promise.reject(make()))));
        const probe: StreamProbe = { state: 'open' };
        const failing = hostileModel(version, () => ({
          stream: new ReadableStream({
            start(controller) {
              controller.error(make());
            },
            cancel() {
              probe.state = 'cancelled';
            },
          }),
        }));
        const chunks = await contained(agentOf(failing));
        expect(chunks.at(-1)?.type).toBe('error');
      }
    }
  });

  it('a result or a stream that is a Proxy, a read() result whose getters throw', async () => {
    for (const version of ['v4', 'v3', 'v2'] as const) {
      expectInvalid(await contained(agentOf(hostileModel(version, () => ({ stream: throwingProxy() })))));
      // awaiting a Proxy reads its `then`: it throws, and the call rejects with what it threw
      expect((errorOf(await contained(agentOf(hostileModel(version, throwingProxy)))) as Error).message).toBe('proxy trap');
      const readers: Array<() => unknown> = [
        () =>
          Promise.resolve({
            get done() {
              throw new Error('done getter');
            },
          }),
        () =>
          Promise.resolve({
            done: false,
            value: {
              get type() {
                throw new Error('type getter');
              },
            },
          }),
      ];
      for (const read of readers) {
        const model = hostileModel(version, () => ({ stream: { getReader: () => ({ read, cancel: () => Promise.resolve() }) } }));
        expectInvalid(await contained(agentOf(model)));
      }
    }
  });

  it('a stream that sends finish and never closes ends the run at once; the reader is cancelled within FINISH_GRACE_MS', async () => {
    for (const version of ['v4', 'v3', 'v2', 'v1'] as const) {
      const parts = version === 'v1' ? [{ type: 'text-delta', textDelta: 'Hi' }, finishOf('v1')] : [...textBlock('t', 'Hi'), finishOf(version)];
      const { model, probe } = streaming(version, parts, true);
      const chunks = await contained(agentOf(model));
      expect(chunks.at(-1)?.type).toBe('finish');
      await vi.waitFor(() => expect(probe.state).toBe('cancelled'), { timeout: FINISH_GRACE_MS * 4, interval: 20 });
    }
  });

  it('a read that never settles: the caller\'s abort ends the run, cancels the reader and aborts the provider\'s signal', async () => {
    for (const version of versions) {
      const probe: StreamProbe = { state: 'open' };
      let providerSignal: AbortSignal | undefined;
      const model = {
        ...hostileModel(version, () => undefined),
        doStream: async (options: { abortSignal?: AbortSignal }) => {
          providerSignal = options.abortSignal;
          return { stream: partStream([], probe, true), ...(version === 'v1' ? { rawCall: { rawPrompt: null, rawSettings: {} } } : {}) };
        },
      };
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 30);
      const chunks = await contained(agentOf(model), { abortSignal: controller.signal });
      expect(chunks.at(-1)?.type).toBe('abort');
      await expectReleased(probe);
      expect(providerSignal?.aborted).toBe(true);
    }
  });

  it('doStream resolving after the run was cancelled: its stream is cancelled, not leaked', async () => {
    for (const version of versions) {
      const probe: StreamProbe = { state: 'open' };
      let resolve!: (value: unknown) => void;
      const model = { ...hostileModel(version, () => undefined), doStream: () => new Promise((settle) => (resolve = settle)) };
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 20);
      const chunks = await contained(agentOf(model), { abortSignal: controller.signal });
      expect(chunks.at(-1)?.type).toBe('abort');
      resolve({ stream: partStream([...textBlock('t', 'late')], probe, true), rawCall: { rawPrompt: null, rawSettings: {} } });
      await expectReleased(probe);
      expect(probe.state).toBe('cancelled');
    }
  });

  it('doStream throwing synchronously, or returning a non-promise: contained', async () => {
    for (const version of versions) {
      const throwing = {
        ...hostileModel(version, () => undefined),
        doStream: () => {
          throw new Error('sync');
        },
      };
      expect((errorOf(await contained(agentOf(throwing))) as Error).message).toBe('sync');
    }
  });
});

// ---------------------------------------------------------------------------------------------
// doGenerate
// ---------------------------------------------------------------------------------------------

describe('doGenerate answering hostile content (V4, V3, V2): generate() rejects with InvalidModelResponseError', () => {
  const usageOf = (version: Version): unknown => (version === 'v2' ? { inputTokens: 1, outputTokens: 1 } : { inputTokens: { total: 1 }, outputTokens: { total: 1 } });
  const reasonOf = (version: Version): unknown => (version === 'v2' ? 'stop' : { unified: 'stop', raw: 'stop' });
  const answer = (version: Version, content: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    content,
    finishReason: reasonOf(version),
    usage: usageOf(version),
    warnings: [],
    ...extra,
  });

  const contentSlots: Array<[string, (version: Version) => Part, readonly string[]]> = [
    ['tool-call.toolCallId', () => basePart('tool-call', 'v4'), ['toolCallId']],
    ['tool-call.toolName', () => basePart('tool-call', 'v4'), ['toolName']],
    ['tool-call.input', () => basePart('tool-call', 'v4'), ['input']],
    ['source.id', () => basePart('source-url', 'v4'), ['id']],
    ['source.url', () => basePart('source-url', 'v4'), ['url']],
    ['file.mediaType', (version) => basePart('file', version), ['mediaType']],
  ];

  async function expectRejected(model: object): Promise<void> {
    const agent = agentOf(model);
    const error: unknown = await agent.generate('Hello').then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(InvalidModelResponseError.isInstance(error), String((error as Error | undefined)?.message)).toBe(true);
    expect((error as InvalidModelResponseError).provider).toBe(PROVIDER);
    expect(() => encodeJson(error)).not.toThrow();
  }

  it('content with a field that is not a string', async () => {
    await checkProperty(
      'provider-streams: doGenerate not a string',
      fc.tuple(fc.constantFrom<Version>('v4', 'v3', 'v2'), fc.constantFrom(...contentSlots), notAString),
      async ([version, [, make, path], value]) => {
        await expectRejected(hostileModel(version, () => undefined, () => answer(version, [{ type: 'text', text: 'Fine.' }, withValue(make(version), path, value.make())])));
      },
      RUNS,
    );
  }, 120_000);

  it('providerMetadata, a tool result or warnings that cannot be written as JSON', async () => {
    await checkProperty(
      'provider-streams: doGenerate not JSON',
      fc.tuple(fc.constantFrom<Version>('v4', 'v3'), fc.constantFrom('text', 'finish', 'tool-result', 'warnings'), notJson),
      async ([version, where, value]) => {
        const made = value.make();
        const result =
          where === 'text'
            ? answer(version, [{ type: 'text', text: 'Fine.', providerMetadata: made }])
            : where === 'finish'
              ? answer(version, [{ type: 'text', text: 'Fine.' }], { providerMetadata: made })
              : where === 'tool-result'
                ? answer(version, [{ type: 'tool-result', toolCallId: 'ws1', toolName: 'web_search', result: made }])
                : answer(version, [{ type: 'text', text: 'Fine.' }], { warnings: [made] });
        await expectRejected(hostileModel(version, () => undefined, () => result));
      },
      RUNS,
    );
  }, 120_000);

  it('a result whose request, response or content throws where it is read, a result that is null or a Proxy', async () => {
    for (const version of ['v4', 'v3', 'v2'] as const) {
      for (const key of ['request', 'response', 'content']) {
        const result = Object.defineProperty(answer(version, [{ type: 'text', text: 'Fine.' }]), key, {
          enumerable: true,
          get() {
            throw new Error(`${key} getter`);
          },
        });
        await expectRejected(hostileModel(version, () => undefined, () => result));
      }
      for (const result of [null, 'text', { content: null, finishReason: reasonOf(version), usage: usageOf(version) }, answer(version, [], { warnings: 5 })]) {
        // (`usage: null` is unknown counts, as streamed: test/model/usage-one-rule.test.ts)
        await expectRejected(hostileModel(version, () => undefined, () => result));
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Bounded work on huge or deep parts
// ---------------------------------------------------------------------------------------------

describe('huge and deep parts', () => {
  it('tool input nested 5,000 or 100,000 deep (arrays or objects): args stay the text, every chunk encodes', async () => {
    const deep = (levels: number): string[] => ['['.repeat(levels) + ']'.repeat(levels), '{"a":'.repeat(levels) + '1' + '}'.repeat(levels)];
    for (const input of [...deep(5_000), ...deep(100_000)]) {
      for (const toolName of ['weather', 'anything']) {
        const { model } = streaming('v4', [{ type: 'tool-call', toolCallId: 'c1', toolName, input }, finishOf('v4')]);
        const chunks = await contained(agentOf(model));
        const call = chunks.find((chunk) => chunk.type === 'tool-call');
        expect(call?.type === 'tool-call' && call.payload.args).toBe(input);
      }
    }
  }, 60_000);

  it('a 50 MB tool input and 1 MB ids on many deltas: contained', async () => {
    const input = JSON.stringify({ city: 'x'.repeat(50_000_000) });
    const { model } = streaming('v4', [{ type: 'tool-call', toolCallId: 'c1', toolName: 'weather', input }, finishOf('v4')]);
    await contained(agentOf(model));
    const id = 'i'.repeat(1_000_000);
    const deltas = Array.from({ length: 300 }, (_, index): Part => ({ type: 'text-delta', id: `${id.slice(1)}${index % 2 === 0 ? 'i' : 'i'}`, delta: 'x' }));
    const many = streaming('v4', [{ type: 'text-start', id }, ...deltas, { type: 'text-end', id }, finishOf('v4')]);
    const chunks = await contained(agentOf(many.model));
    expect(chunks.at(-1)?.type).toBe('finish');
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------
// A processor's cached response
// ---------------------------------------------------------------------------------------------

describe("a processor's cached response (processLLMRequest → { response }) with malformed chunks", () => {
  const cases: Array<[string, Part]> = [
    ['a tool-call without payload', { type: 'tool-call' }],
    ['a tool-call with an empty toolCallId', { type: 'tool-call', payload: { toolCallId: '', toolName: 'weather', args: { city: 'P' } } }],
    ['a tool-call without toolName', { type: 'tool-call', payload: { toolCallId: 'c1', args: { city: 'P' } } }],
    ['a tool-call whose toolCallId is a number', { type: 'tool-call', payload: { toolCallId: 5, toolName: 'weather', args: {} } }],
    ['a tool-call whose args hold a BigInt', { type: 'tool-call', payload: { toolCallId: 'c1', toolName: 'weather', args: { city: 1n } } }],
    ['a source without sourceType', { type: 'source', payload: { id: 's1', url: 'https://rxjs.dev' } }],
    ['a source without id', { type: 'source', payload: { sourceType: 'url', url: 'https://rxjs.dev' } }],
    ['a url source without url', { type: 'source', payload: { sourceType: 'url', id: 's1' } }],
    ['a file without data', { type: 'file', payload: { mimeType: 'image/png' } }],
    ['a text-delta whose id is an object', { type: 'text-delta', payload: { id: {}, text: 'x' } }],
    ['a text-start without id', { type: 'text-start', payload: {} }],
    ['a reasoning-delta without id', { type: 'reasoning-delta', payload: { text: 'x' } }],
    ['a tool-result without toolCallId', { type: 'tool-result', payload: { toolName: 'web_search', result: 1 } }],
    ['a tool-result whose result is a cycle', { type: 'tool-result', payload: { toolCallId: 'ws1', toolName: 'web_search', result: cycle() } }],
    ['a finish with a reason rxagent does not know', { type: 'finish', payload: { stepResult: { reason: 'weird' } } }],
    ['a data chunk holding a BigInt', { type: 'data-x', data: 1n }],
  ];

  it('each is a ProcessorError naming the processor and processLLMRequest, before any of it reaches the client', async () => {
    for (const [name, chunk] of cases) {
      const probe: StreamProbe = { state: 'open' };
      const model = hostileModel('v4', () => ({ stream: partStream([...textBlock('t', 'live'), finishOf('v4')], probe) }));
      const agent = agentOf(model, { inputProcessors: [{ id: 'cache', processLLMRequest: () => ({ response: { chunks: [...textBlock('c', 'cached').map((part) => ({ type: part.type, payload: { id: part.id, text: part.delta } })), chunk] } }) }] });
      const chunks = await contained(agent);
      const error = errorOf(chunks);
      expect(ProcessorError.isInstance(error), `${name}: ${String((error as Error | undefined)?.message)}`).toBe(true);
      expect((error as ProcessorError).message, name).toMatch(/cache/);
      expect((error as ProcessorError).message, name).toMatch(/processLLMRequest/);
      expect(chunks.map((each) => each.type), name).not.toContain(chunk.type);
    }
  });

  it('a well-formed cached response still replays', async () => {
    const { model } = streaming('v4', [...textBlock('t', 'live'), finishOf('v4')]);
    const cached = [
      { type: 'text-start', payload: { id: 'c' } },
      { type: 'text-delta', payload: { id: 'c', text: 'cached' } },
      { type: 'text-end', payload: { id: 'c' } },
      { type: 'source', payload: { sourceType: 'url', id: 's1', url: 'https://rxjs.dev' } },
      { type: 'response-metadata', payload: { id: 'r1', timestamp: '2026-01-01T00:00:00.000Z' } },
      { type: 'finish', payload: { stepResult: { reason: 'stop' }, output: { usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } } } },
    ];
    const agent = agentOf(model, { inputProcessors: [{ id: 'cache', processLLMRequest: () => ({ response: { chunks: cached } }) }] });
    const chunks = await contained(agent);
    expect(chunks.at(-1)?.type).toBe('finish');
    expect(chunks.flatMap((chunk) => (chunk.type === 'text-delta' ? [chunk.payload.text] : [])).join('')).toBe('cached');
  });
});
