/**
 * Generators of what a provider — or a proxy, a gateway, a hand-written adapter in front of it —
 * can hand the library: stream part sequences in any order (ids that match or not, parts after
 * `finish`, a missing or repeated `finish`, unknown types), fields of any type, parts that are
 * Proxies or throw where they are read, streams that error, never settle or resolve garbage,
 * `doStream`/`doGenerate` that reject or throw, and token usage of any value. Every case is plain
 * data (so fast-check can print and shrink it); `build*` makes the hostile values fresh per run.
 */
import fc from 'fast-check';
import { throwingProxy, revokedProxy } from '../support/hostile-values.js';

export const PROVIDER = 'acme.property';
export const MODEL_ID = 'property-1';

export type Version = 'v2' | 'v4';

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

/** A value where the spec wants something else (made fresh by {@link makeValue}). */
export const HOSTILE_VALUES = [
  'number',
  'negative',
  'NaN',
  'Infinity',
  'null',
  'undefined',
  'true',
  'bigint',
  'symbol',
  'object',
  'array',
  'date',
  'invalid-date',
  'function',
  'proxy',
  'revoked',
  'getter-inside',
  'cycle',
  'huge',
  'lone-surrogate',
  'empty',
  '__proto__',
  'constructor',
  'deep',
] as const;
export type HostileValue = (typeof HOSTILE_VALUES)[number];

const HUGE = 'x'.repeat(1_000_000);

/** A fresh hostile value of kind `kind`. */
export function makeValue(kind: HostileValue): unknown {
  switch (kind) {
    case 'number':
      return 7;
    case 'negative':
      return -1;
    case 'NaN':
      return Number.NaN;
    case 'Infinity':
      return Number.POSITIVE_INFINITY;
    case 'null':
      return null;
    case 'undefined':
      return undefined;
    case 'true':
      return true;
    case 'bigint':
      return 5n;
    case 'symbol':
      return Symbol('s');
    case 'object':
      return { a: 1 };
    case 'array':
      return ['a'];
    case 'date':
      return new Date(0);
    case 'invalid-date':
      return new Date(Number.NaN);
    case 'function':
      return () => 'x';
    case 'proxy':
      return throwingProxy();
    case 'revoked':
      return revokedProxy();
    case 'getter-inside':
      return {
        get a(): unknown {
          throw new Error('getter inside');
        },
      };
    case 'cycle': {
      const value: Record<string, unknown> = {};
      value.self = value;
      return value;
    }
    case 'huge':
      return HUGE;
    case 'lone-surrogate':
      return '\uD800x\uDFFF';
    case 'empty':
      return '';
    case '__proto__':
      return '__proto__';
    case 'constructor':
      return 'constructor';
    case 'deep': {
      let value: unknown = 1;
      for (let level = 0; level < 2_000; level++) value = { a: value };
      return value;
    }
  }
}

/** Any UTF-16 code unit, lone surrogates included. */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code));
/** Text as a provider may stream it: any code units (lone surrogates too), now and then 1 MB. */
export const anyText: fc.Arbitrary<string> = fc.oneof(
  { weight: 12, arbitrary: fc.string({ unit: codeUnit, maxLength: 6 }) },
  { weight: 1, arbitrary: fc.constant(HUGE) },
);

/** A field written in place of the well-formed one: a hostile value, or a getter that throws. */
export interface Fault {
  readonly field: string;
  readonly value: HostileValue | 'getter-throws';
}

const FAULT_FIELDS = [
  'type',
  'id',
  'delta',
  'toolName',
  'toolCallId',
  'input',
  'result',
  'sourceType',
  'url',
  'title',
  'mediaType',
  'data',
  'timestamp',
  'modelId',
  'finishReason',
  'usage',
  'providerMetadata',
  'rawValue',
  'error',
  'warnings',
  'providerExecuted',
  'isError',
  'approvalId',
] as const;

const faultArb: fc.Arbitrary<Fault> = fc.record({
  field: fc.constantFrom(...FAULT_FIELDS),
  value: fc.constantFrom<HostileValue | 'getter-throws'>(...HOSTILE_VALUES, 'getter-throws'),
});

/** `target` with `fault` written in (a getter that throws, or the value). */
export function applyFault(target: Record<string, unknown>, fault: Fault | null): Record<string, unknown> {
  if (fault === null) return target;
  if (fault.value === 'getter-throws') {
    Object.defineProperty(target, fault.field, {
      enumerable: true,
      configurable: true,
      get() {
        throw new Error(`getter ${fault.field}`);
      },
    });
  } else target[fault.field] = makeValue(fault.value);
  return target;
}

/** How a whole part (or content part) is handed over. */
export const WRAPS = [
  'plain',
  'proxy-throws',
  'proxy-forwarding',
  'type-getter-throws',
  'inherited',
  'frozen',
  'null',
  'number',
  'string',
  'array',
] as const;
export type Wrap = (typeof WRAPS)[number];

const wrapArb: fc.Arbitrary<Wrap> = fc.oneof(
  { weight: 30, arbitrary: fc.constant<Wrap>('plain') },
  { weight: 1, arbitrary: fc.constantFrom<Wrap>(...WRAPS) },
);

/** `part` handed over as `wrap` says. */
export function wrapPart(part: Record<string, unknown>, wrap: Wrap): unknown {
  switch (wrap) {
    case 'plain':
      return part;
    case 'proxy-throws':
      return throwingProxy();
    case 'proxy-forwarding':
      return new Proxy(part, {});
    case 'type-getter-throws':
      // copied by descriptor: a getter the fault wrote stays a getter (a spread would call it here)
      return Object.defineProperty(Object.defineProperties({}, Object.getOwnPropertyDescriptors(part)), 'type', {
        enumerable: true,
        get() {
          throw new Error('type getter');
        },
      });
    case 'inherited':
      return Object.create(part) as unknown;
    case 'frozen':
      return Object.freeze(part);
    case 'null':
      return null;
    case 'number':
      return 42;
    case 'string':
      return 'text-delta';
    case 'array':
      return [part];
  }
}

// ---------------------------------------------------------------------------------------------
// Token usage
// ---------------------------------------------------------------------------------------------

/** A token count: a whole number, or any value a provider's accounting glitch can give. */
export type CountSpec = number | 'NaN' | '-1' | 'Infinity' | '-Infinity' | '1.5' | '2^53' | '2^60' | '-0' | 'string' | 'null' | 'missing' | 'bigint' | 'object' | 'proxy' | 'getter-throws';

export const countArb: fc.Arbitrary<CountSpec> = fc.oneof(
  { weight: 3, arbitrary: fc.nat({ max: 1_000_000 }) },
  { weight: 1, arbitrary: fc.constant(Number.MAX_SAFE_INTEGER) },
  {
    weight: 6,
    arbitrary: fc.constantFrom<CountSpec>('NaN', '-1', 'Infinity', '-Infinity', '1.5', '2^53', '2^60', '-0', 'string', 'null', 'missing', 'bigint', 'object', 'proxy', 'getter-throws'),
  },
);

function countValue(spec: CountSpec): unknown {
  if (typeof spec === 'number') return spec;
  switch (spec) {
    case 'NaN':
      return Number.NaN;
    case '-1':
      return -1;
    case 'Infinity':
      return Number.POSITIVE_INFINITY;
    case '-Infinity':
      return Number.NEGATIVE_INFINITY;
    case '1.5':
      return 1.5;
    case '2^53':
      return 2 ** 53;
    case '2^60':
      return 2 ** 60;
    case '-0':
      return -0;
    case 'string':
      return '5';
    case 'null':
      return null;
    case 'missing':
      return undefined;
    case 'bigint':
      return 5n;
    case 'object':
      return { total: 5 };
    case 'proxy':
      return throwingProxy();
    case 'getter-throws':
      return undefined; // written as a getter by `withCounts`
  }
}

/** The count the run keeps of `spec`: a whole number from 0 to 2^53 − 1, else unknown. */
export function keptCount(spec: CountSpec | undefined): number | undefined {
  if (spec === '-0') return 0;
  return typeof spec === 'number' && Number.isSafeInteger(spec) && spec >= 0 ? spec : undefined;
}

/** An object of the given counts (a `getter-throws` count is a getter that throws; `missing` is left out). */
function withCounts(counts: Record<string, CountSpec>): Record<string, unknown> {
  const target: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(counts)) {
    if (spec === 'missing') continue;
    if (spec === 'getter-throws') {
      Object.defineProperty(target, key, {
        enumerable: true,
        get() {
          throw new Error(`usage getter ${key}`);
        },
      });
    } else target[key] = countValue(spec);
  }
  return target;
}

/** A whole usage object (or group) that is not one. */
export type WholeSpec = 'object' | 'null' | 'missing' | 'number' | 'string' | 'array' | 'proxy' | 'getter-throws';
const wholeArb: fc.Arbitrary<WholeSpec> = fc.oneof(
  { weight: 12, arbitrary: fc.constant<WholeSpec>('object') },
  { weight: 1, arbitrary: fc.constantFrom<WholeSpec>('null', 'missing', 'number', 'string', 'array', 'proxy', 'getter-throws') },
);

function wholeValue(spec: WholeSpec, object: () => Record<string, unknown>): unknown {
  switch (spec) {
    case 'object':
      return object();
    case 'null':
      return null;
    case 'missing':
      return undefined;
    case 'number':
      return 3;
    case 'string':
      return '3';
    case 'array':
      return [3];
    case 'proxy':
      return throwingProxy();
    case 'getter-throws':
      return undefined; // written as a getter by the caller
  }
}

/** A V4 usage: `{ inputTokens: { total, noCache, cacheRead, cacheWrite }, outputTokens: { total, text, reasoning } }`. */
export interface UsageV4Spec {
  readonly version: 'v4';
  readonly whole: WholeSpec;
  readonly input: WholeSpec;
  readonly output: WholeSpec;
  readonly inputCounts: { total: CountSpec; noCache: CountSpec; cacheRead: CountSpec; cacheWrite: CountSpec };
  readonly outputCounts: { total: CountSpec; text: CountSpec; reasoning: CountSpec };
}

/** A V2 usage: `{ inputTokens, outputTokens, totalTokens, reasoningTokens, cachedInputTokens }`. */
export interface UsageV2Spec {
  readonly version: 'v2';
  readonly whole: WholeSpec;
  readonly counts: { inputTokens: CountSpec; outputTokens: CountSpec; totalTokens: CountSpec; reasoningTokens: CountSpec; cachedInputTokens: CountSpec };
}

export type UsageSpec = UsageV4Spec | UsageV2Spec;

export const usageV4Arb: fc.Arbitrary<UsageV4Spec> = fc.record({
  version: fc.constant('v4' as const),
  whole: wholeArb,
  input: wholeArb,
  output: wholeArb,
  inputCounts: fc.record({ total: countArb, noCache: countArb, cacheRead: countArb, cacheWrite: countArb }),
  outputCounts: fc.record({ total: countArb, text: countArb, reasoning: countArb }),
});

export const usageV2Arb: fc.Arbitrary<UsageV2Spec> = fc.record({
  version: fc.constant('v2' as const),
  whole: wholeArb,
  counts: fc.record({ inputTokens: countArb, outputTokens: countArb, totalTokens: countArb, reasoningTokens: countArb, cachedInputTokens: countArb }),
});

export const usageArb = (version: Version): fc.Arbitrary<UsageSpec> => (version === 'v4' ? usageV4Arb : usageV2Arb);

const throwingGetter = (target: Record<string, unknown>, key: string): Record<string, unknown> =>
  Object.defineProperty(target, key, {
    enumerable: true,
    get() {
      throw new Error(`usage getter ${key}`);
    },
  });

/** The usage object `spec` describes (fresh). */
export function buildUsage(spec: UsageSpec): unknown {
  if (spec.version === 'v2') return wholeValue(spec.whole, () => withCounts(spec.counts));
  return wholeValue(spec.whole, () => {
    const usage: Record<string, unknown> = { raw: { any: 'thing' } };
    if (spec.input === 'getter-throws') throwingGetter(usage, 'inputTokens');
    else usage.inputTokens = wholeValue(spec.input, () => withCounts(spec.inputCounts));
    if (spec.output === 'getter-throws') throwingGetter(usage, 'outputTokens');
    else usage.outputTokens = wholeValue(spec.output, () => withCounts(spec.outputCounts));
    return usage;
  });
}

/** Whether `spec` is a usage object at all (its counts may be anything). */
export const usageIsObject = (spec: UsageSpec): boolean => spec.whole === 'object';

/** The counts a run keeps of `spec` (see `fromV4Usage`): each that is a whole number from 0 to 2^53 − 1. */
export function keptUsage(spec: UsageSpec): { input?: number; output?: number; total?: number; cacheRead?: number; reasoning?: number } {
  if (spec.whole !== 'object') return {};
  if (spec.version === 'v2') {
    const input = keptCount(spec.counts.inputTokens);
    const output = keptCount(spec.counts.outputTokens);
    return { input, output, total: sumOf(input, output), cacheRead: keptCount(spec.counts.cachedInputTokens), reasoning: keptCount(spec.counts.reasoningTokens) };
  }
  const input = spec.input === 'object' ? keptCount(spec.inputCounts.total) : undefined;
  const output = spec.output === 'object' ? keptCount(spec.outputCounts.total) : undefined;
  return {
    input,
    output,
    total: sumOf(input, output),
    cacheRead: spec.input === 'object' ? keptCount(spec.inputCounts.cacheRead) : undefined,
    reasoning: spec.output === 'object' ? keptCount(spec.outputCounts.reasoning) : undefined,
  };
}

/** `a + b` as the run adds counts: unknown + n = n, a sum past 2^53 − 1 unknown. */
function sumOf(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  return a + b <= Number.MAX_SAFE_INTEGER ? a + b : undefined;
}

// ---------------------------------------------------------------------------------------------
// Stream parts
// ---------------------------------------------------------------------------------------------

export const PART_KINDS = [
  'stream-start',
  'response-metadata',
  'text-start',
  'text-delta',
  'text-end',
  'reasoning-start',
  'reasoning-delta',
  'reasoning-end',
  'tool-input-start',
  'tool-input-delta',
  'tool-input-end',
  'tool-call',
  'tool-result',
  'tool-approval-request',
  'source-url',
  'source-document',
  'file',
  'raw',
  'error',
  'finish',
  'unknown',
] as const;
export type PartKind = (typeof PART_KINDS)[number];

/** Block ids: a few, so that starts, deltas and ends match now and then, and now and then not. */
const BLOCK_IDS = ['t1', 't2', 'r1', '__proto__', 'constructor', ''] as const;
const CALL_IDS = ['c1', 'c2', 'ws1', '__proto__'] as const;
const TOOL_NAMES = ['weather', 'anything', 'web_search', 'nope', ''] as const;
const TOOL_INPUTS = ['{"city":"Paris"}', '{}', '', 'not json', '{"city":1}', '[[[[1]]]]', '{"city":"\uD800"}'] as const;
const UNIFIED_REASONS = ['stop', 'length', 'content-filter', 'tool-calls', 'error', 'other', 'interrupted', 'weird', 'unknown'] as const;
const UNKNOWN_TYPES = ['ping', 'custom', 'reasoning-file', 'x-later-spec', '__proto__', 'constructor', '', 'finish ', 'TEXT-DELTA'] as const;

/** One part a provider sends: a well-formed one of `kind`, with at most one field faulty, handed over as `wrap`. */
export interface PartSpec {
  readonly kind: PartKind;
  readonly id: number;
  readonly callId: number;
  readonly toolName: number;
  readonly input: number;
  readonly text: string;
  readonly reason: number;
  readonly rawReason: 'string' | 'missing' | 'number';
  readonly providerExecuted: boolean | null;
  readonly unknownType: number;
  readonly usage: UsageSpec;
  readonly fault: Fault | null;
  readonly wrap: Wrap;
}

export const partArb = (version: Version, kinds: fc.Arbitrary<PartKind> = fc.constantFrom(...PART_KINDS)): fc.Arbitrary<PartSpec> =>
  fc.record({
    kind: kinds,
    id: fc.nat({ max: BLOCK_IDS.length - 1 }),
    callId: fc.nat({ max: CALL_IDS.length - 1 }),
    toolName: fc.nat({ max: TOOL_NAMES.length - 1 }),
    input: fc.nat({ max: TOOL_INPUTS.length - 1 }),
    text: anyText,
    reason: fc.nat({ max: UNIFIED_REASONS.length - 1 }),
    rawReason: fc.constantFrom<'string' | 'missing' | 'number'>('string', 'string', 'missing', 'number'),
    providerExecuted: fc.constantFrom(null, null, true, false),
    unknownType: fc.nat({ max: UNKNOWN_TYPES.length - 1 }),
    usage: usageArb(version),
    // one part in about twelve has a faulty field: most sequences reach the run's end on well-formed parts
    fault: fc.oneof({ weight: 11, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: faultArb }),
    wrap: wrapArb,
  });

/** Values a case injected as the provider's own errors (an `error` part's, a stream's, a rejection's). */
export type Injected = Set<unknown>;

/** A provider's error: an Error, or any value (injected: the run may pass it on as it is). */
export type ErrorSpec = 'error' | 'api-like' | 'string' | 'number' | 'undefined' | 'null' | HostileValue;
export const errorArb: fc.Arbitrary<ErrorSpec> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom<ErrorSpec>('error', 'api-like', 'string', 'number', 'undefined', 'null') },
  { weight: 2, arbitrary: fc.constantFrom<ErrorSpec>(...HOSTILE_VALUES) },
);

let errorCount = 0;
export function buildError(spec: ErrorSpec, injected: Injected): unknown {
  let value: unknown;
  switch (spec) {
    case 'error':
      value = new Error(`provider failure ${++errorCount}`);
      break;
    case 'api-like':
      value = Object.assign(new Error('rate limited'), { name: 'AI_APICallError', statusCode: 429, isRetryable: false });
      break;
    case 'string':
      value = 'overloaded';
      break;
    default:
      value = makeValue(spec);
  }
  injected.add(value);
  return value;
}

/** The well-formed part `spec` describes, in `version`'s shape, its fault written in, wrapped. */
export function buildPart(spec: PartSpec, version: Version, injected: Injected): unknown {
  const id = BLOCK_IDS[spec.id];
  const toolCallId = CALL_IDS[spec.callId];
  const toolName = TOOL_NAMES[spec.toolName];
  let part: Record<string, unknown>;
  switch (spec.kind) {
    case 'stream-start':
      part = { type: 'stream-start', warnings: spec.text === '' ? [] : [{ type: 'other', message: spec.text }] };
      break;
    case 'response-metadata':
      part = { type: 'response-metadata', id: 'resp-1', modelId: MODEL_ID, timestamp: spec.providerExecuted === true ? '2026-01-02T03:04:05.000Z' : new Date(0) };
      break;
    case 'text-start':
    case 'text-end':
    case 'reasoning-start':
    case 'reasoning-end':
      part = { type: spec.kind, id };
      break;
    case 'text-delta':
    case 'reasoning-delta':
      part = { type: spec.kind, id, delta: spec.text };
      break;
    case 'tool-input-start':
      part = { type: 'tool-input-start', id: toolCallId, toolName, ...(spec.providerExecuted === null ? {} : { providerExecuted: spec.providerExecuted }) };
      break;
    case 'tool-input-delta':
      part = { type: 'tool-input-delta', id: toolCallId, delta: TOOL_INPUTS[spec.input] };
      break;
    case 'tool-input-end':
      part = { type: 'tool-input-end', id: toolCallId };
      break;
    case 'tool-call':
      part = { type: 'tool-call', toolCallId, toolName, input: TOOL_INPUTS[spec.input], ...(spec.providerExecuted === null ? {} : { providerExecuted: spec.providerExecuted }) };
      break;
    case 'tool-result':
      part = { type: 'tool-result', toolCallId, toolName: 'web_search', result: { hits: [spec.text] }, ...(version === 'v2' ? { providerExecuted: true } : {}) };
      break;
    case 'tool-approval-request':
      part = { type: 'tool-approval-request', toolCallId, approvalId: 'ap1' };
      break;
    case 'source-url':
      part = { type: 'source', sourceType: 'url', id: 's1', url: 'https://rxjs.dev', title: spec.text };
      break;
    case 'source-document':
      part = { type: 'source', sourceType: 'document', id: 's2', title: 'Guide', mediaType: 'text/plain' };
      break;
    case 'file':
      part = { type: 'file', mediaType: 'image/png', data: version === 'v4' ? { type: 'data', data: 'iVBORw0KGgo=' } : 'iVBORw0KGgo=' };
      break;
    case 'raw':
      part = { type: 'raw', rawValue: { chunk: spec.text } };
      break;
    case 'error':
      part = { type: 'error', error: buildError('error', injected) };
      break;
    case 'finish': {
      const unified = UNIFIED_REASONS[spec.reason];
      const raw = spec.rawReason === 'string' ? unified : spec.rawReason === 'number' ? 3 : undefined;
      part = {
        type: 'finish',
        finishReason: version === 'v4' ? { unified, raw } : unified,
        usage: buildUsage(spec.usage),
      };
      break;
    }
    case 'unknown':
      part = { type: UNKNOWN_TYPES[spec.unknownType], id, delta: spec.text };
      break;
  }
  if (spec.fault?.field === 'error' && spec.kind === 'error' && spec.fault.value !== 'getter-throws') {
    // the error part's own error: whatever it is, it is the provider's
    part.error = makeValue(spec.fault.value);
    injected.add(part.error);
  } else applyFault(part, spec.fault);
  return wrapPart(part, spec.wrap);
}

// ---------------------------------------------------------------------------------------------
// One model call
// ---------------------------------------------------------------------------------------------

/** How `doStream` answers. */
export type StartSpec =
  | { readonly kind: 'ok' }
  | { readonly kind: 'reject' | 'throw'; readonly error: ErrorSpec }
  | { readonly kind: 'garbage'; readonly what: 'null' | 'number' | 'empty' | 'stream-null' | 'proxy' | 'stream-getter-throws' | 'request-getter-throws' | 'no-read' };

/** How the stream ends after its parts. */
export type EndSpec =
  | { readonly kind: 'close' }
  | { readonly kind: 'error'; readonly error: ErrorSpec }
  | { readonly kind: 'hang' }
  | { readonly kind: 'read-throws' }
  | { readonly kind: 'read-garbage'; readonly what: 'null' | 'number' | 'done-getter-throws' | 'value-missing' };

export interface CallSpec {
  readonly start: StartSpec;
  readonly parts: readonly PartSpec[];
  readonly end: EndSpec;
  /** `web`: a real `ReadableStream`; `reader`: an object with `getReader()` only (what a proxy may hand over). */
  readonly stream: 'web' | 'reader';
}

const startArb: fc.Arbitrary<StartSpec> = fc.oneof(
  { weight: 20, arbitrary: fc.constant<StartSpec>({ kind: 'ok' }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom<'reject' | 'throw'>('reject', 'throw'), error: errorArb }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant<'garbage'>('garbage'),
      what: fc.constantFrom('null', 'number', 'empty', 'stream-null', 'proxy', 'stream-getter-throws', 'request-getter-throws', 'no-read') as fc.Arbitrary<Extract<StartSpec, { kind: 'garbage' }>['what']>,
    }),
  },
);

const endArb: fc.Arbitrary<EndSpec> = fc.oneof(
  { weight: 12, arbitrary: fc.constant<EndSpec>({ kind: 'close' }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant<'error'>('error'), error: errorArb }) },
  { weight: 1, arbitrary: fc.constant<EndSpec>({ kind: 'hang' }) },
  { weight: 1, arbitrary: fc.constant<EndSpec>({ kind: 'read-throws' }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant<'read-garbage'>('read-garbage'),
      what: fc.constantFrom('null', 'number', 'done-getter-throws', 'value-missing') as fc.Arbitrary<'null' | 'number' | 'done-getter-throws' | 'value-missing'>,
    }),
  },
);

/** A part sequence: mostly a plausible answer shuffled and mutated, now and then anything at all. */
export const partsArb = (version: Version): fc.Arbitrary<PartSpec[]> =>
  fc.oneof(
    // anything, in any order
    fc.array(partArb(version), { maxLength: 14 }),
    // a plausible answer: blocks of a few kinds, interleaved, usually ending with a finish
    fc
      .tuple(
        fc.array(partArb(version, fc.constantFrom<PartKind>('text-start', 'text-delta', 'text-end', 'reasoning-start', 'reasoning-delta', 'reasoning-end', 'tool-input-start', 'tool-input-delta', 'tool-input-end', 'tool-call')), { maxLength: 10 }),
        fc.array(partArb(version, fc.constant<PartKind>('finish')), { maxLength: 2 }),
        fc.array(partArb(version), { maxLength: 3 }),
      )
      .map(([body, finishes, after]) => [...body, ...finishes, ...after]),
  );

export const callArb = (version: Version): fc.Arbitrary<CallSpec> =>
  fc.record({ start: startArb, parts: partsArb(version), end: endArb, stream: fc.constantFrom<'web' | 'reader'>('web', 'web', 'web', 'reader') });

/** What a test saw of one call's stream. */
export interface CallProbe {
  /** The stream's reader was cancelled, or read to its end. */
  released: boolean;
  /** A read that never settles was handed out. */
  hung: boolean;
}

/** The stream of `call`: its parts (built fresh), then its end. */
function buildStream(call: CallSpec, version: Version, injected: Injected, probe: CallProbe): unknown {
  const parts = call.parts.map((part) => buildPart(part, version, injected));
  const endError = call.end.kind === 'error' ? buildError(call.end.error, injected) : undefined;
  let index = 0;
  const endRead = (): unknown => {
    const { end } = call;
    switch (end.kind) {
      case 'close':
        probe.released = true;
        return Promise.resolve({ done: true, value: undefined });
      case 'error':
        return Promise.reject(endError);
      case 'hang':
        probe.hung = true;
        return new Promise(() => undefined);
      case 'read-throws': {
        // the provider's reader throws: its own error
        const thrown = new Error('read threw');
        injected.add(thrown);
        throw thrown;
      }
      case 'read-garbage':
        switch (end.what) {
          case 'null':
            return Promise.resolve(null);
          case 'number':
            return Promise.resolve(1);
          case 'value-missing':
            return Promise.resolve({ done: false });
          case 'done-getter-throws':
            return Promise.resolve({
              get done(): boolean {
                throw new Error('done getter');
              },
            });
        }
    }
  };
  if (call.stream === 'reader') {
    const reader = {
      read: () => (index < parts.length ? Promise.resolve({ done: false, value: parts[index++] }) : endRead()),
      cancel: () => {
        probe.released = true;
        return Promise.resolve();
      },
      releaseLock: () => undefined,
    };
    return { getReader: () => reader };
  }
  return new ReadableStream<unknown>(
    {
      async pull(controller) {
        if (index < parts.length) {
          controller.enqueue(parts[index++]);
          return;
        }
        const { end } = call;
        if (end.kind === 'close') {
          probe.released = true;
          controller.close();
          return;
        }
        if (end.kind === 'error') {
          controller.error(endError);
          probe.released = true;
          return;
        }
        if (end.kind === 'hang') {
          probe.hung = true;
          await new Promise(() => undefined);
        }
        // a web stream cannot hand out garbage reads: its pull fails instead (the provider's error)
        const failure = new Error(`pull failed (${end.kind})`);
        injected.add(failure);
        throw failure;
      },
      cancel() {
        probe.released = true;
      },
    },
    { highWaterMark: 0 },
  );
}

/** What `doStream` resolves with (or how it fails) for `call`. */
export function doStreamAnswer(call: CallSpec, version: Version, injected: Injected, probe: CallProbe): Promise<unknown> {
  const { start } = call;
  if (start.kind === 'throw') throw buildError(start.error, injected);
  if (start.kind === 'reject') return Promise.reject(buildError(start.error, injected));
  if (start.kind === 'garbage') {
    probe.released = true;
    switch (start.what) {
      case 'null':
        return Promise.resolve(null);
      case 'number':
        return Promise.resolve(5);
      case 'empty':
        return Promise.resolve({});
      case 'stream-null':
        return Promise.resolve({ stream: null });
      case 'proxy':
        return Promise.resolve({ stream: throwingProxy() });
      case 'no-read':
        return Promise.resolve({ stream: { getReader: () => ({}) } });
      case 'stream-getter-throws':
        return Promise.resolve(
          Object.defineProperty({}, 'stream', {
            get() {
              throw new Error('stream getter');
            },
          }),
        );
      case 'request-getter-throws': {
        probe.released = false;
        const stream = buildStream(call, version, injected, probe);
        return Promise.resolve(
          Object.defineProperty({ stream }, 'request', {
            enumerable: true,
            get() {
              throw new Error('request getter');
            },
          }),
        );
      }
    }
  }
  return Promise.resolve({ stream: buildStream(call, version, injected, probe), request: { body: '{}' }, response: { headers: { 'x-id': '1' } } });
}

/** Whether `call` can leave the run waiting for ever (a read that never settles before any `finish`). */
export const mayHang = (call: CallSpec): boolean => call.start.kind === 'ok' || (call.start.kind === 'garbage' && call.start.what === 'request-getter-throws') ? call.end.kind === 'hang' : false;

// ---------------------------------------------------------------------------------------------
// doGenerate answers
// ---------------------------------------------------------------------------------------------

export const CONTENT_KINDS = ['text', 'reasoning', 'tool-call', 'tool-result', 'source-url', 'source-document', 'file', 'tool-approval-request', 'unknown'] as const;
export type ContentKind = (typeof CONTENT_KINDS)[number];

export interface ContentSpec {
  readonly kind: ContentKind;
  readonly part: PartSpec;
}

export interface AnswerSpec {
  readonly start: { readonly kind: 'ok' } | { readonly kind: 'reject' | 'throw'; readonly error: ErrorSpec };
  readonly whole: 'object' | 'null' | 'string' | 'proxy' | 'content-getter-throws' | 'content-not-array' | 'response-getter-throws' | 'request-getter-throws';
  readonly content: readonly ContentSpec[];
  readonly reason: number;
  readonly reasonWhole: 'object' | HostileValue;
  readonly usage: UsageSpec;
  readonly warnings: 'none' | 'missing' | 'one' | HostileValue;
  readonly response: 'none' | 'ok' | 'date-string' | HostileValue;
  readonly providerMetadata: 'none' | 'ok' | HostileValue;
}

const contentArb = (version: Version): fc.Arbitrary<ContentSpec> => fc.record({ kind: fc.constantFrom(...CONTENT_KINDS), part: partArb(version) });

const rare = <T>(common: T, others: fc.Arbitrary<T>): fc.Arbitrary<T> =>
  fc.oneof({ weight: 8, arbitrary: fc.constant(common) }, { weight: 1, arbitrary: others });

export const answerArb = (version: Version): fc.Arbitrary<AnswerSpec> =>
  fc.record({
    start: fc.oneof(
      { weight: 12, arbitrary: fc.constant<AnswerSpec['start']>({ kind: 'ok' }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom<'reject' | 'throw'>('reject', 'throw'), error: errorArb }) },
    ),
    whole: rare<AnswerSpec['whole']>('object', fc.constantFrom('null', 'string', 'proxy', 'content-getter-throws', 'content-not-array', 'response-getter-throws', 'request-getter-throws')),
    content: fc.array(contentArb(version), { maxLength: 6 }),
    reason: fc.nat({ max: UNIFIED_REASONS.length - 1 }),
    reasonWhole: rare<AnswerSpec['reasonWhole']>('object', fc.constantFrom(...HOSTILE_VALUES)),
    usage: usageArb(version),
    warnings: fc.oneof({ weight: 6, arbitrary: fc.constantFrom<AnswerSpec['warnings']>('none', 'missing', 'one') }, { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_VALUES) }),
    response: fc.oneof({ weight: 6, arbitrary: fc.constantFrom<AnswerSpec['response']>('none', 'ok', 'date-string') }, { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_VALUES) }),
    providerMetadata: fc.oneof({ weight: 6, arbitrary: fc.constantFrom<AnswerSpec['providerMetadata']>('none', 'ok') }, { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_VALUES) }),
  });

/** One content part of a `doGenerate` answer (V4 or V2 shape), its fault written in, wrapped. */
function buildContent(spec: ContentSpec, version: Version, injected: Injected): unknown {
  const { part } = spec;
  let content: Record<string, unknown>;
  switch (spec.kind) {
    case 'text':
    case 'reasoning':
      content = { type: spec.kind, text: part.text };
      break;
    case 'tool-call':
    case 'tool-result':
    case 'source-url':
    case 'source-document':
    case 'file':
    case 'tool-approval-request':
    case 'unknown': {
      const built = buildPart({ ...part, kind: spec.kind, fault: null, wrap: 'plain' }, version, injected) as Record<string, unknown>;
      content = built;
      break;
    }
  }
  applyFault(content, part.fault);
  return wrapPart(content, part.wrap);
}

/** What `doGenerate` resolves with for `spec` (fresh). */
export function buildAnswer(spec: AnswerSpec, version: Version, injected: Injected): unknown {
  switch (spec.whole) {
    case 'null':
      return null;
    case 'string':
      return 'Hello';
    case 'proxy':
      return throwingProxy();
    default:
      break;
  }
  const unified = UNIFIED_REASONS[spec.reason];
  const answer: Record<string, unknown> = {
    content: spec.content.map((content) => buildContent(content, version, injected)),
    finishReason: spec.reasonWhole === 'object' ? (version === 'v4' ? { unified, raw: unified } : unified) : makeValue(spec.reasonWhole),
    usage: buildUsage(spec.usage),
  };
  if (spec.warnings === 'none') answer.warnings = [];
  else if (spec.warnings === 'one') answer.warnings = [{ type: 'other', message: 'heads up' }];
  else if (spec.warnings !== 'missing') answer.warnings = makeValue(spec.warnings);
  if (spec.response === 'ok') answer.response = { id: 'resp-1', modelId: MODEL_ID, timestamp: new Date(0), headers: { 'x-id': '1' } };
  else if (spec.response === 'date-string') answer.response = { id: 'resp-1', timestamp: '2026-01-02T03:04:05.000Z' };
  else if (spec.response !== 'none') answer.response = makeValue(spec.response);
  if (spec.providerMetadata === 'ok') answer.providerMetadata = { acme: { requestId: 'r1' } };
  else if (spec.providerMetadata !== 'none') answer.providerMetadata = makeValue(spec.providerMetadata);
  if (spec.whole === 'content-not-array') answer.content = { 0: { type: 'text', text: 'x' } };
  const getter = spec.whole === 'content-getter-throws' ? 'content' : spec.whole === 'response-getter-throws' ? 'response' : spec.whole === 'request-getter-throws' ? 'request' : undefined;
  if (getter !== undefined) {
    Object.defineProperty(answer, getter, {
      enumerable: true,
      get() {
        throw new Error(`${getter} getter`);
      },
    });
  }
  return answer;
}
