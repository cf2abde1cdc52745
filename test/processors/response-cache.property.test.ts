/**
 * `ResponseCache` by construction (docs/security.md, the response cache's row): two requests share
 * a key — an answer — exactly when they are the same request in every field that can change the
 * answer, and an entry a store hands back is served only when it is the entry written under that
 * key, whole.
 *
 * - The canonical form (`canonicalDigest`): generated values and their look-alikes ('1' and 1, -0
 *   and 0, `NaN` and `null`, `undefined` and a missing key, NFC and NFD, a string and the same
 *   string in an array, bytes and their numbers, a date and its text, a piece moved between
 *   neighbours) share a digest exactly when a reference equality says they are equal; key order
 *   never matters.
 * - The key (`responseCacheKey`): generated requests (prompt with every part type, model, call
 *   options, memory resource and thread, named request-context values) and the same request with
 *   one field changed — a look-alike, a piece moved between fields or messages, the provider and
 *   model id split elsewhere — share a key exactly when the fields the key documents are equal;
 *   headers and key order never matter.
 * - Through an Agent: two runs whose model calls would differ in what is sent are never served one
 *   answer, and identical ones are.
 * - A store's entries: an accepted entry corrupted in generated ways (another key, truncated, a
 *   field of the wrong type, a string cut, chunks of another entry, huge) is a miss reported to
 *   `onError`, the model answers; the entry itself, or its JSON form with keys in any order, is served.
 *
 * Case counts: fixed per property (each well under 10 s on a loaded 2-core machine).
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { jsonSchema } from 'ai';
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4Prompt } from '@ai-sdk/provider';
import { Agent } from '../../src/loop/agent.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { AgentToolSet } from '../../src/contract/tool-types.js';
import type { CachedLLMStepResponse } from '../../src/contract/processor-types.js';
import { RequestContext } from '../../src/contract/request-context.js';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import { canonicalDigest } from '../../src/processors/internal/cache-key.js';
import { InMemoryResponseCacheStore, ResponseCache, responseCacheKey, type ResponseCacheKeyInput, type ResponseCacheStore } from '../../src/processors/response-cache.js';
import { mockModel, type MockModel } from '../../src/testing/mock-model.js';
import { finishPart, reasoningParts, textParts } from '../../src/testing/model-parts.js';
import { checkProperty } from '../reliability/support/property.js';

// ---------------------------------------------------------------------------------------------
// Values and their look-alikes
// ---------------------------------------------------------------------------------------------

/** Strings that look like other values, like each other, or like SQL and JSON syntax. */
const LOOK_ALIKES = ['1', '01', '1.0', '-0', '0', 'NaN', 'null', 'undefined', 'true', '', ' ', 'a', 'A', '\u0391', 'a\u200b', 'e\u0301', '\u00e9', '%', '_', '\\', '"', "'", '\u0000', '\ud800', '[]', '{}'];

const leaf: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...LOOK_ALIKES),
  fc.string({ maxLength: 6, unit: 'binary' }),
  fc.integer({ min: -3, max: 3 }),
  fc.double(),
  fc.constantFrom(0, -0, Number.NaN, Number.POSITIVE_INFINITY, 1e21, 0.1 + 0.2),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.bigInt({ min: -3n, max: 3n }),
  fc.uint8Array({ maxLength: 4 }),
  fc.integer({ min: -1e12, max: 1e12 }).map((time) => new Date(time)),
);

const { value: anyValue } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(fc.oneof(fc.constantFrom(...LOOK_ALIKES), fc.string({ maxLength: 4 })), tie('value'), { maxKeys: 4 })),
}));

const isPlain = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
};

/**
 * The reference equality of the documented canonicalisation: `Object.is` for primitives (so -0 is
 * not 0 and `NaN` is `NaN`), arrays element by element, plain objects by their own keys in any
 * order (a key set to `undefined` is not a missing key), bytes by view type and content, dates by
 * time, URLs by their `href`.
 */
function sameValue(a: unknown, b: unknown): boolean {
  if (typeof a !== typeof b) return false;
  if (typeof a !== 'object' || a === null || b === null) return Object.is(a, b);
  const other = b as object;
  if (Array.isArray(a) || Array.isArray(other)) {
    if (!Array.isArray(a) || !Array.isArray(other) || a.length !== other.length) return false;
    return a.every((item, index) => sameValue(item, other[index]));
  }
  if (ArrayBuffer.isView(a) || ArrayBuffer.isView(other)) {
    if (!ArrayBuffer.isView(a) || !ArrayBuffer.isView(other) || a.constructor !== other.constructor) return false;
    return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(other.buffer, other.byteOffset, other.byteLength));
  }
  if (a instanceof Date || other instanceof Date) return a instanceof Date && other instanceof Date && Object.is(a.getTime(), other.getTime());
  if (a instanceof URL || other instanceof URL) return a instanceof URL && other instanceof URL && a.href === other.href;
  if (!isPlain(a) || !isPlain(other)) return false;
  const keys = Object.keys(a).sort();
  const otherKeys = Object.keys(other).sort();
  return isDeepStrictEqual(keys, otherKeys) && keys.every((key) => sameValue(a[key], other[key]));
}

/** `value` with every plain object's keys in reverse order (the same value). */
function reordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reordered);
  if (!isPlain(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value).reverse()) copy[key] = reordered(value[key]);
  return copy;
}

/** Look-alikes of one value: each may or may not be equal to it (the oracle decides). */
function lookAlikesOf(value: unknown): unknown[] {
  const out: unknown[] = [[value], null, undefined];
  if (typeof value === 'string') {
    out.push(Number(value), value.normalize('NFD'), value.normalize('NFC'), `${value}\u200b`, value.toUpperCase(), [...value].reverse().join(''), value === '' ? ' ' : value.slice(1));
  } else if (typeof value === 'number') {
    out.push(String(value), -value, value + 1, Number.isNaN(value) ? null : Number.NaN, Number.isInteger(value) ? BigInt(value) : Math.fround(value));
  } else if (typeof value === 'bigint') {
    out.push(Number(value), String(value));
  } else if (typeof value === 'boolean') {
    out.push(String(value), value ? 1 : 0, !value);
  } else if (value === null) {
    out.push(Number.NaN, 'null', 0);
  } else if (value === undefined) {
    out.push('undefined', []);
  } else if (value instanceof Uint8Array) {
    out.push(Buffer.from(value), [...value], new Uint16Array(value), Buffer.from(value).toString('base64'), new Uint8Array([...value, 0]));
  } else if (value instanceof Date) {
    out.push(value.toISOString(), value.getTime(), new Date(value.getTime() + 1));
  } else if (Array.isArray(value)) {
    out.push(value.length === 1 ? value[0] : value.slice(1), [...value, undefined], Object.fromEntries(value.entries()));
    // a piece of one string moved to its neighbour
    const index = value.findIndex((item, position) => typeof item === 'string' && typeof value[position + 1] === 'string' && item.length > 0);
    if (index >= 0) {
      const moved = [...value];
      const [left, right] = [moved[index] as string, moved[index + 1] as string];
      moved[index] = left.slice(0, -1);
      moved[index + 1] = left.slice(-1) + right;
      out.push(moved);
    }
  } else if (isPlain(value)) {
    const keys = Object.keys(value);
    out.push({ ...value, extra: undefined }, reordered(value));
    if (keys.length > 0) {
      const [first, ...rest] = keys as [string, ...string[]];
      const without = Object.fromEntries(rest.map((key) => [key, value[key]]));
      out.push(without, { ...without, [`${first} `]: value[first] });
      // a key moved into a sibling object
      const target = rest.find((key) => isPlain(value[key]));
      if (target !== undefined) out.push({ ...without, [target]: { ...(value[target] as object), [first]: value[first] } });
    }
  }
  return out;
}

/** Every path to a node of `value` (the root included). */
function pathsOf(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  const paths = [prefix];
  if (Array.isArray(value)) value.forEach((item, index) => paths.push(...pathsOf(item, [...prefix, index])));
  else if (isPlain(value)) for (const key of Object.keys(value)) paths.push(...pathsOf(value[key], [...prefix, key]));
  return paths;
}

function getAt(value: unknown, path: ReadonlyArray<string | number>): unknown {
  return path.reduce<unknown>((node, step) => (node as Record<string | number, unknown>)[step], value);
}

function setAt(value: unknown, path: ReadonlyArray<string | number>, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [step, ...rest] = path as [string | number, ...Array<string | number>];
  if (Array.isArray(value)) return value.map((item, index) => (index === step ? setAt(item, rest, replacement) : item));
  return { ...(value as object), [step]: setAt((value as Record<string, unknown>)[step as string], rest, replacement) };
}

/** `value` with one node somewhere replaced by one of its look-alikes. */
const mutationOf = (value: unknown): fc.Arbitrary<unknown> =>
  fc.constantFrom(...pathsOf(value)).chain((path) => fc.constantFrom(...lookAlikesOf(getAt(value, path))).map((replacement) => setAt(value, path, replacement)));

describe('the canonical form: equal digests exactly for equal values', () => {
  it('a value and a look-alike of one of its nodes, or the value with its keys reordered', async () => {
    const pair = anyValue.chain((value) => fc.oneof(mutationOf(value), fc.constant(reordered(value))).map((other) => [value, other] as const));
    await checkProperty(
      'response cache: canonical digests of look-alike values',
      pair,
      async ([value, other]) => {
        const equal = sameValue(value, other);
        expect(canonicalDigest(value) === canonicalDigest(other), `equal by the reference: ${equal}`).toBe(equal);
      },
      3000,
    );
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

const word = fc.oneof(fc.constantFrom(...LOOK_ALIKES.filter((text) => text !== '')), fc.string({ minLength: 1, maxLength: 8 }));
const json = fc.jsonValue({ maxDepth: 2 });
const providerOptions = fc.option(fc.dictionary(fc.constantFrom('openai', 'anthropic', 'mock'), fc.dictionary(word, json, { maxKeys: 2 }), { maxKeys: 2 }), { nil: undefined });
const withOptions = <T extends object>(part: fc.Arbitrary<T>) => fc.tuple(part, providerOptions).map(([value, options]) => (options === undefined ? value : { ...value, providerOptions: options }));

const textPart = withOptions(word.map((text) => ({ type: 'text' as const, text })));
const filePart = withOptions(
  fc.record({
    type: fc.constant('file' as const),
    mediaType: fc.constantFrom('image/png', 'image/PNG', 'text/plain', 'application/pdf'),
    data: fc.oneof(fc.uint8Array({ maxLength: 6 }), fc.base64String({ maxLength: 8 }), fc.constantFrom('https://example.com/a.png', 'https://example.com/A.png').map((url) => new URL(url))),
  }),
);
const reasoningPart = withOptions(word.map((text) => ({ type: 'reasoning' as const, text })));
const toolCallPart = withOptions(fc.record({ type: fc.constant('tool-call' as const), toolCallId: word, toolName: word, input: json }));
const toolResultPart = withOptions(fc.record({ type: fc.constant('tool-result' as const), toolCallId: word, toolName: word, output: json.map((value) => ({ type: 'json' as const, value })) }));

const message = fc.oneof(
  word.map((content) => ({ role: 'system' as const, content })),
  fc.record({ role: fc.constant('user' as const), content: fc.array(fc.oneof(textPart, filePart), { minLength: 1, maxLength: 3 }) }),
  fc.record({ role: fc.constant('assistant' as const), content: fc.array(fc.oneof(textPart, reasoningPart, toolCallPart), { minLength: 1, maxLength: 3 }) }),
  fc.record({ role: fc.constant('tool' as const), content: fc.array(toolResultPart, { minLength: 1, maxLength: 2 }) }),
);

const schema = fc.record({ type: fc.constant('object'), properties: fc.dictionary(word, fc.record({ type: fc.constantFrom('string', 'number', 'integer') }), { maxKeys: 3 }) }, { requiredKeys: ['type'] });

const callOptions = fc.record(
  {
    maxOutputTokens: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.constant(-0)),
    temperature: fc.oneof(fc.constantFrom(0, -0, 1, 0.7, Number.NaN), fc.double({ min: 0, max: 2 })),
    topP: fc.double({ min: 0, max: 1, noNaN: true }),
    topK: fc.integer({ min: 1, max: 3 }),
    presencePenalty: fc.constantFrom(0, -0, 0.5),
    frequencyPenalty: fc.constantFrom(0, -0, 0.5),
    stopSequences: fc.array(word, { maxLength: 3 }),
    seed: fc.integer({ min: 0, max: 3 }),
    tools: fc.array(
      fc.record({ type: fc.constant('function' as const), name: word, description: fc.option(word, { nil: undefined }), inputSchema: schema, providerOptions }, { requiredKeys: ['type', 'name', 'inputSchema'] }),
      { maxLength: 2 },
    ),
    toolChoice: fc.oneof(fc.constantFrom({ type: 'auto' }, { type: 'none' }, { type: 'required' }), word.map((toolName) => ({ type: 'tool', toolName }))),
    providerOptions: providerOptions.filter((value) => value !== undefined),
    responseFormat: fc.oneof(fc.constant({ type: 'text' }), fc.record({ type: fc.constant('json'), schema, name: word, description: word }, { requiredKeys: ['type'] })),
    headers: fc.dictionary(fc.constantFrom('x-user', 'x-trace'), word, { maxKeys: 2 }),
    includeRawChunks: fc.boolean(),
  },
  { requiredKeys: [] },
);

type Request = ResponseCacheKeyInput & { model: Pick<LanguageModelV4, 'provider' | 'modelId'> };

const request: fc.Arbitrary<Request> = fc
  .record(
    {
      provider: fc.constantFrom('openai', 'openai.chat', 'anthropic', 'a', 'ab'),
      modelId: word,
      prompt: fc.array(message, { minLength: 1, maxLength: 4 }),
      callOptions,
      resourceId: word,
      threadId: word,
      requestContext: fc.dictionary(fc.constantFrom('tenant', 'locale', 'plan'), fc.oneof(word, json), { maxKeys: 2 }),
    },
    { requiredKeys: ['provider', 'modelId', 'prompt', 'callOptions'] },
  )
  .map(({ provider, modelId, prompt, ...rest }) => ({ ...rest, prompt: prompt as unknown as LanguageModelV4Prompt, model: { provider, modelId } as LanguageModelV4, modelSettings: {} }) as Request);

/** What the key documents: provider, model id, the call options but the headers, prompt, resource, thread, named values. */
function sameRequest(a: Request, b: Request): boolean {
  const sent = (options: Request['callOptions']) => {
    if (options === undefined) return undefined;
    const { headers: _headers, ...rest } = options as Record<string, unknown>;
    return rest;
  };
  return (
    a.model.provider === b.model.provider &&
    a.model.modelId === b.model.modelId &&
    sameValue(a.prompt, b.prompt) &&
    sameValue(sent(a.callOptions), sent(b.callOptions)) &&
    a.resourceId === b.resourceId &&
    a.threadId === b.threadId &&
    sameValue(a.requestContext, b.requestContext)
  );
}

/** The first text of message `index`'s content, as a path, if any. */
function firstTextPath(prompt: unknown[], index: number): Array<string | number> | undefined {
  const content = (prompt[index] as { content: unknown }).content;
  if (typeof content === 'string') return [index, 'content'];
  const part = (content as Array<{ type: string }>).findIndex((item) => item.type === 'text' || item.type === 'reasoning');
  return part < 0 ? undefined : [index, 'content', part, 'text'];
}

/** The same request with exactly one field changed: a look-alike inside it, or a piece moved to a neighbouring field. */
function changedRequest(base: Request): fc.Arbitrary<Request> {
  const fields = (['prompt', 'callOptions', 'resourceId', 'threadId', 'requestContext'] as const).filter((field) => base[field] !== undefined);
  const inField = fc
    .constantFrom(...fields)
    .chain((field) => mutationOf(base[field]).map((value) => ({ ...base, [field]: value }) as Request))
    // the call options are an object (the loop's and the middleware's): a look-alike inside them, not of them
    .filter((changed) => isPlain(changed.callOptions));
  const { provider, modelId } = base.model;
  const moves: Request[] = [
    // the provider and model id split elsewhere
    { ...base, model: { provider: provider + modelId.slice(0, 1), modelId: modelId.slice(1) } as LanguageModelV4 },
    { ...base, model: { provider: provider.slice(0, -1), modelId: provider.slice(-1) + modelId } as LanguageModelV4 },
    { ...base, model: { provider: modelId, modelId: provider } as LanguageModelV4 },
    // resource and thread swapped, or the resource only in the request context
    { ...base, resourceId: base.threadId, threadId: base.resourceId },
    { ...base, resourceId: undefined, requestContext: { ...base.requestContext, resourceId: base.resourceId } },
    // headers changed, keys reordered: the same request
    { ...base, callOptions: { ...base.callOptions, headers: { 'x-user': 'someone else' } } },
    reordered(base) as Request,
  ];
  // a piece of text moved to the next message
  const prompt = base.prompt as unknown[];
  for (let index = 0; index + 1 < prompt.length; index++) {
    const from = firstTextPath(prompt, index);
    const to = firstTextPath(prompt, index + 1);
    if (from === undefined || to === undefined) continue;
    const left = getAt(prompt, from) as string;
    if (left.length === 0) continue;
    const moved = setAt(setAt(prompt, from, left.slice(0, -1)), to, left.slice(-1) + (getAt(prompt, to) as string));
    moves.push({ ...base, prompt: moved as LanguageModelV4Prompt });
  }
  return fc.oneof({ weight: 3, arbitrary: inField }, { weight: 1, arbitrary: fc.constantFrom(...moves) });
}

describe('the key: requests share one exactly when they are the same request', () => {
  it('a request and the same request with one field changed (look-alikes, pieces moved between fields and messages)', async () => {
    const pair = request.chain((base) => changedRequest(base).map((other) => [base, other] as const));
    await checkProperty(
      'response cache: keys of requests differing in one field',
      pair,
      async ([base, other]) => {
        const equal = sameRequest(base, other);
        let keys: [string, string];
        try {
          keys = [responseCacheKey(base), responseCacheKey(other)];
        } catch (error) {
          // only a value that cannot be keyed (none is generated) may throw
          throw new Error(`a generated request could not be keyed: ${String(error)}`);
        }
        expect(keys[0] === keys[1], `the same request by the reference: ${equal}`).toBe(equal);
      },
      2000,
    );
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------
// Through an Agent: what the model is sent decides
// ---------------------------------------------------------------------------------------------

const textOf = (chunks: readonly ChunkType[]) => chunks.flatMap((chunk) => (chunk.type === 'text-delta' ? [chunk.payload.text] : [])).join('');
const collect = (agent: Agent, input: Parameters<Agent['stream$']>[0], options: Parameters<Agent['stream$']>[1] = {}) => lastValueFrom(agent.stream$(input, options).pipe(toArray()));

/** One agent call: everything an app sets per agent or per call that reaches the model or the key. */
interface Setup {
  provider: string;
  modelId: string;
  instructions: string;
  input: string | Array<{ role: 'user' | 'assistant'; content: string }>;
  tools: Record<string, { description?: string; schema: Record<string, unknown>; providerOptions?: Record<string, Record<string, unknown>> }>;
  toolChoice?: 'auto' | 'none' | 'required';
  modelSettings: Record<string, unknown>;
  providerOptions?: Record<string, Record<string, unknown>>;
  structured?: Record<string, unknown>;
  context: Record<string, unknown>;
}

const setup: fc.Arbitrary<Setup> = fc.record(
  {
    provider: fc.constantFrom('openai', 'openai.chat', 'mock'),
    modelId: fc.constantFrom('m', 'm-mini', 'M'),
    instructions: fc.constantFrom('Be brief.', 'Be brief. ', 'Be brie', 'f. Be brief.'),
    input: fc.oneof(
      word,
      fc.array(fc.record({ role: fc.constantFrom<'user' | 'assistant'>('user', 'assistant'), content: word }), { minLength: 1, maxLength: 3 }).map((messages) => [...messages, { role: 'user' as const, content: 'q' }]),
    ),
    tools: fc.dictionary(
      fc.constantFrom('search', 'Search', 'lookup'),
      fc.record(
        { description: fc.constantFrom('Find', 'Find.', 'find'), schema: schema.map((value) => value as Record<string, unknown>), providerOptions: fc.constant({ mock: { strict: true } }) },
        { requiredKeys: ['schema'] },
      ),
      { maxKeys: 2 },
    ),
    toolChoice: fc.constantFrom<'auto' | 'none' | 'required'>('auto', 'none', 'required'),
    modelSettings: fc.record(
      { temperature: fc.constantFrom(0, -0, 0.5, 1), maxOutputTokens: fc.constantFrom(1, 2, 10), seed: fc.constantFrom(0, 1), stopSequences: fc.constantFrom(['x'], ['x', 'y'], ['y', 'x'], ['xy']), topP: fc.constantFrom(0.5, 1) },
      { requiredKeys: [] },
    ),
    providerOptions: fc.dictionary(fc.constantFrom('mock', 'openai'), fc.dictionary(fc.constantFrom('a', 'b', 'A'), fc.constantFrom<unknown>(1, '1', true, 'true', null, [1], undefined), { maxKeys: 2 }), { maxKeys: 2 }),
    structured: schema.map((value) => value as Record<string, unknown>),
    context: fc.dictionary(fc.constantFrom('tenant', 'unnamed', 'resourceId', 'threadId'), fc.constantFrom<unknown>('acme', 'Acme', 'acme ', 1, '1', undefined), { maxKeys: 3 }),
  },
  { requiredKeys: ['provider', 'modelId', 'instructions', 'input', 'tools', 'modelSettings', 'context'] },
);

/** The same setup with one field changed to a look-alike (or to itself: then it must be served). */
const changedSetup = (base: Setup): fc.Arbitrary<Setup> =>
  fc.constantFrom(...(Object.keys(base) as Array<keyof Setup>)).chain((field) => {
    const value = base[field];
    if (typeof value === 'string') return fc.constantFrom(...lookAlikesOf(value).filter((item) => typeof item === 'string'), value).map((item) => ({ ...base, [field]: item }));
    return mutationOf(value)
      .filter((item) => (field === 'input' ? typeof item === 'string' || (Array.isArray(item) && item.length > 0 && item.every((entry) => isPlain(entry) && typeof entry.content === 'string' && (entry.role === 'user' || entry.role === 'assistant'))) : isPlain(item) || (item === undefined && (field === 'providerOptions' || field === 'structured'))))
      .filter((item) => field !== 'tools' || Object.values(item as object).every((tool) => isPlain(tool) && isPlain((tool as { schema?: unknown }).schema)))
      .filter((item) => field !== 'modelSettings' || Object.values(item as object).every((setting) => setting === undefined || typeof setting === 'number' || (Array.isArray(setting) && setting.every((entry) => typeof entry === 'string'))))
      .filter((item) => field !== 'structured' || (isPlain(item) && item.type === 'object'))
      .map((item) => ({ ...base, [field]: item }) as Setup);
  });

/** An agent of `given`, answering `answer`, with a cache on `store` keyed by the `tenant` value. */
function agentOf(given: Setup, answer: string, store?: ResponseCacheStore, onError?: (error: ProcessorError) => void): { agent: Agent; model: MockModel; options: Parameters<Agent['stream$']>[1] } {
  const model = mockModel({ provider: given.provider, modelId: given.modelId, parts: [...textParts(answer), finishPart()] });
  const tools: AgentToolSet = {};
  for (const [name, tool] of Object.entries(given.tools)) {
    tools[name] = { ...(tool.description === undefined ? {} : { description: tool.description }), inputSchema: jsonSchema(tool.schema as never), ...(tool.providerOptions === undefined ? {} : { providerOptions: tool.providerOptions }) } as AgentToolSet[string];
  }
  const agent = new Agent({
    id: 'a',
    model,
    instructions: given.instructions,
    tools,
    ...(store === undefined ? {} : { inputProcessors: [new ResponseCache({ store, requestContextKeys: ['tenant'], ...(onError === undefined ? {} : { onError }) })] }),
  });
  const options: Parameters<Agent['stream$']>[1] = {
    modelSettings: given.modelSettings as never,
    requestContext: new RequestContext(Object.entries(given.context)),
    ...(given.toolChoice === undefined ? {} : { toolChoice: given.toolChoice }),
    ...(given.providerOptions === undefined ? {} : { providerOptions: given.providerOptions as never }),
    ...(given.structured === undefined ? {} : { structuredOutput: { schema: jsonSchema(given.structured as never) } }),
  };
  return { agent, model, options };
}

/** What reaching the model means for `given`: the call it is sent (but headers and the signal), the model, the keyed context. */
async function sentBy(given: Setup): Promise<unknown> {
  // with a cache of its own (an empty store): the call goes through the same hooks (processInputStep copies what it is given)
  const { agent, model, options } = agentOf(given, 'probe', new InMemoryResponseCacheStore());
  const chunks = await collect(agent, given.input as never, options);
  if (model.calls.length === 0) return { refused: chunks.find((chunk) => chunk.type === 'error')?.payload };
  const { abortSignal: _signal, headers: _headers, ...call } = model.calls[0] as LanguageModelV4CallOptions;
  const context = new RequestContext(Object.entries(given.context));
  return {
    provider: given.provider,
    modelId: given.modelId,
    call,
    resourceId: context.resourceId,
    threadId: context.threadId,
    tenant: context.has('tenant') ? [context.get('tenant')] : [],
  };
}

describe('through an Agent: served exactly when the model would be sent the same call', () => {
  it('two runs on one store whose setups differ in one field (look-alikes included)', async () => {
    const pair = setup.chain((base) => changedSetup(base).map((other) => [base, other] as const));
    await checkProperty(
      'response cache: agent runs differing in one field',
      pair,
      async ([first, second]) => {
        const [sentFirst, sentSecond] = [await sentBy(first), await sentBy(second)];
        // a setup the run refuses (a tool choice naming no tool…) says nothing of the cache
        if ('refused' in (sentFirst as object) || 'refused' in (sentSecond as object)) return;
        const errors: ProcessorError[] = [];
        const store = new InMemoryResponseCacheStore();
        // valid JSON of any generated schema (its property names are shorter), for a structured run to end well
        const [firstAnswer, secondAnswer] = ['{"~~first answer~~":1}', '{"~~second answer~~":1}'];
        const a = agentOf(first, firstAnswer, store, (error) => void errors.push(error));
        await collect(a.agent, first.input as never, a.options);
        const b = agentOf(second, secondAnswer, store, (error) => void errors.push(error));
        const chunks = await collect(b.agent, second.input as never, b.options);
        const served = b.model.calls.length === 0;
        expect(errors).toEqual([]);
        expect(served, `the same call: ${sameValue(sentFirst, sentSecond)}`).toBe(sameValue(sentFirst, sentSecond));
        expect(textOf(chunks)).toBe(served ? firstAnswer : secondAnswer);
      },
      400,
    );
  }, 120_000);
});

// ---------------------------------------------------------------------------------------------
// What a store hands back
// ---------------------------------------------------------------------------------------------

/** An entry as a store holds it (as far as this test reads it). */
interface Entry {
  key: string;
  accepted?: true;
  chunks: Array<{ type: string; payload: Record<string, unknown> }>;
  warnings?: unknown[];
}

/** A model answer: reasoning, text in generated deltas, provider metadata and a response id. */
const answer = fc.record({
  reasoning: fc.option(fc.string({ minLength: 1, maxLength: 12 }), { nil: undefined }),
  text: fc.string({ minLength: 2, maxLength: 40, unit: 'grapheme' }),
  chunkSize: fc.integer({ min: 1, max: 5 }),
  metadata: fc.option(fc.dictionary(word, fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }), { nil: undefined }),
});

type Answer = typeof answer extends fc.Arbitrary<infer T> ? T : never;

/** The accepted entry a real run writes for `given`, and the key it was written under. */
async function writtenEntry(given: Answer, prompt: string): Promise<Entry> {
  const entries: Entry[] = [];
  const store: ResponseCacheStore = { get: () => undefined, set: (_key, value) => void entries.push(value as unknown as Entry) };
  const parts = [
    { type: 'response-metadata' as const, id: 'response-1', modelId: 'm', timestamp: new Date(0) },
    ...(given.reasoning === undefined ? [] : reasoningParts(given.reasoning)),
    ...textParts(given.text, { chunkSize: given.chunkSize }).map((part) => (given.metadata !== undefined && part.type === 'text-delta' ? { ...part, providerMetadata: { mock: given.metadata } } : part)),
    finishPart(),
  ];
  const agent = new Agent({ id: 'a', model: mockModel({ parts: parts as never }), inputProcessors: [new ResponseCache({ store })] });
  await collect(agent, prompt);
  const accepted = entries.find((entry) => entry.accepted === true);
  if (accepted === undefined) throw new Error('the run wrote no accepted entry');
  return accepted;
}

/** What a store may do to an entry, and whether the result is still the entry (served) or not (a miss). */
type Corruption = { name: string; benign: boolean; apply: (entry: Entry, other: Entry) => unknown };

const jsonForm = (value: unknown): Entry => JSON.parse(JSON.stringify(value)) as Entry;
const withChunks = (entry: Entry, chunks: unknown[]) => ({ ...entry, chunks });

const corruption: fc.Arbitrary<Corruption> = fc.oneof(
  fc.constantFrom<Corruption>(
    { name: 'as written', benign: true, apply: (entry) => entry },
    { name: 'its JSON form', benign: true, apply: (entry) => jsonForm(entry) },
    { name: 'its JSON form, keys reordered (jsonb)', benign: true, apply: (entry) => reordered(jsonForm(entry)) },
    { name: 'a field the store adds', benign: true, apply: (entry) => ({ ...entry, storedAt: 1 }) },
    { name: 'another key', benign: false, apply: (entry, other) => ({ ...entry, key: other.key }) },
    { name: 'no key', benign: false, apply: ({ key: _key, ...rest }) => rest },
    { name: 'another entry under this key', benign: false, apply: (entry, other) => ({ ...other, key: entry.key }) },
    { name: "another entry's chunks", benign: false, apply: (entry, other) => withChunks(entry, other.chunks) },
    { name: 'accepted as a string', benign: false, apply: (entry) => ({ ...entry, accepted: 'true' }) },
    { name: 'chunks an object', benign: false, apply: (entry) => ({ ...entry, chunks: { ...entry.chunks } }) },
    { name: 'no chunks', benign: false, apply: (entry) => withChunks(entry, []) },
    { name: 'warnings a string', benign: false, apply: (entry) => ({ ...entry, warnings: 'none' }) },
    { name: 'a warning that is no JSON (a cycle)', benign: false, apply: (entry) => { const warning: Record<string, unknown> = { type: 'other', message: 'x' }; warning.self = warning; return { ...entry, warnings: [warning] }; } },
    { name: 'a warning that is no JSON (a bigint)', benign: false, apply: (entry) => ({ ...entry, warnings: [{ type: 'other', message: 1n }] }) },
    { name: 'a warning that is no warning', benign: false, apply: (entry) => ({ ...entry, warnings: [42] }) },
    { name: 'huge: a 4 MB delta appended', benign: false, apply: (entry) => withChunks(entry, [...entry.chunks.slice(0, -1), { type: 'text-delta', payload: { id: 'text-1', text: 'x'.repeat(4_000_000) } }, ...entry.chunks.slice(-1)]) },
    { name: 'huge: 50,000 deltas appended', benign: false, apply: (entry) => withChunks(entry, [...entry.chunks.slice(0, -1), ...Array.from({ length: 50_000 }, () => ({ type: 'text-delta', payload: { id: 'text-1', text: 'x' } })), ...entry.chunks.slice(-1)]) },
  ),
  // truncated: the first n chunks
  fc.nat().map((seed): Corruption => ({ name: 'truncated', benign: false, apply: (entry) => withChunks(entry, entry.chunks.slice(0, 1 + (seed % (entry.chunks.length - 1)))) })),
  // a chunk dropped, or doubled
  fc.nat().map((seed): Corruption => ({ name: 'a chunk dropped', benign: false, apply: (entry) => withChunks(entry, entry.chunks.filter((_, index) => index !== seed % entry.chunks.length)) })),
  fc.nat().map((seed): Corruption => ({ name: 'a chunk twice', benign: false, apply: (entry) => withChunks(entry, entry.chunks.flatMap((chunk, index) => (index === seed % entry.chunks.length ? [chunk, chunk] : [chunk]))) })),
  // a string field cut short, or a field of another type
  fc.tuple(fc.nat(), fc.constantFrom<unknown>(42, null, undefined, '', ['x'], { text: 'x' })).map(
    ([seed, replacement]): Corruption => ({
      name: `a payload field changed to ${String(replacement)} or cut`,
      benign: false,
      apply: (entry) => {
        const fields = entry.chunks.flatMap((chunk, index) => Object.keys(chunk.payload).filter((field) => typeof chunk.payload[field] === 'string' && chunk.payload[field] !== '').map((field) => [index, field] as const));
        const [index, field] = fields[seed % fields.length] as readonly [number, string];
        const chunk = entry.chunks[index] as Entry['chunks'][number];
        const value = chunk.payload[field] as string;
        const changed = replacement === '' ? value.slice(0, -1) : replacement;
        return withChunks(entry, entry.chunks.map((item, position) => (position === index ? { type: item.type, payload: { ...item.payload, [field]: changed } } : item)));
      },
    }),
  ),
  fc.nat().map((seed): Corruption => ({ name: 'a chunk of another type', benign: false, apply: (entry) => withChunks(entry, entry.chunks.map((chunk, index) => (index === seed % entry.chunks.length ? { ...chunk, type: chunk.type === 'text-delta' ? 'reasoning-delta' : 'text-delta' } : chunk))) })),
);

describe("a store's entries: served only when they are the entry written under the key, whole", () => {
  it('an accepted entry as a store may hand it back (as written, JSON, keys reordered) or corrupted (another key, truncated, cut, retyped, huge)', async () => {
    const cases = fc.tuple(answer, answer, corruption);
    await checkProperty(
      "response cache: a store's corrupted entries",
      cases,
      async ([given, otherGiven, broken]) => {
        fc.pre(given.text !== otherGiven.text || given.reasoning !== otherGiven.reasoning);
        const entry = await writtenEntry(given, 'question');
        const other = await writtenEntry(otherGiven, 'another question');
        const handed = broken.apply(structuredClone(entry), structuredClone(other));
        // the entry's own form may differ from the original (the JSON form): what is asserted is whether it is served
        const errors: ProcessorError[] = [];
        const model = mockModel({ parts: [...textParts('fresh answer'), finishPart()] });
        const store: ResponseCacheStore = { get: () => handed as unknown as CachedLLMStepResponse, set: () => undefined };
        const agent = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store, onError: (error) => void errors.push(error) })] });
        const chunks = await collect(agent, 'question');
        expect(chunks.filter((chunk) => chunk.type === 'error'), broken.name).toEqual([]);
        if (broken.benign) {
          expect(model.calls, broken.name).toHaveLength(0);
          expect(textOf(chunks), broken.name).toBe(given.text);
          expect(errors, broken.name).toEqual([]);
        } else {
          expect(model.calls, broken.name).toHaveLength(1);
          expect(textOf(chunks), broken.name).toBe('fresh answer');
          // a miss the cache reports (an entry not accepted is only a miss)
          if (broken.name !== 'accepted as a string') expect(errors.map((error) => [ProcessorError.isInstance(error), error.hook]), broken.name).toEqual([[true, 'processLLMRequest']]);
        }
      },
      300,
    );
  }, 120_000);
});

describe("a store's entries: the faults the property found (each was served as the answer)", () => {
  const given: Answer = { reasoning: 'think', text: 'the whole answer', chunkSize: 4, metadata: undefined };
  it.each<[string, (entry: Entry, other: Entry) => unknown]>([
    // the property's first counterexample (seed -965493034): a chunk dropped from the middle
    ['a chunk dropped', (entry) => withChunks(entry, entry.chunks.filter((_, index) => index !== 4))],
    ['truncated after a delta (the text block left open: the replay closed it)', (entry) => withChunks(entry, entry.chunks.slice(0, -2))],
    ['a chunk twice', (entry) => withChunks(entry, [...entry.chunks.slice(0, 5), ...entry.chunks.slice(4)])],
    ['a delta cut short', (entry) => withChunks(entry, entry.chunks.map((chunk) => (chunk.type === 'text-delta' ? { ...chunk, payload: { ...chunk.payload, text: String(chunk.payload.text).slice(0, 1) } } : chunk)))],
    ["another entry's chunks under this key", (entry, other) => withChunks(entry, other.chunks)],
    ['another entry with this key written in', (entry, other) => ({ ...other, key: entry.key })],
    ['a warning that is no warning', (entry) => ({ ...entry, warnings: [42] })],
  ])('%s: a miss reported to onError, the model answers', async (_name, corrupt) => {
    const entry = await writtenEntry(given, 'question');
    const other = await writtenEntry({ ...given, text: 'another answer' }, 'another question');
    const handed = corrupt(entry, other);
    const errors: ProcessorError[] = [];
    const model = mockModel({ parts: [...textParts('fresh answer'), finishPart()] });
    const store: ResponseCacheStore = { get: () => handed as unknown as CachedLLMStepResponse, set: () => undefined };
    const agent = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store, onError: (error) => void errors.push(error) })] });
    expect(textOf(await collect(agent, 'question'))).toBe('fresh answer');
    expect(model.calls).toHaveLength(1);
    expect(errors).toHaveLength(1);
    expect(ProcessorError.isInstance(errors[0]) && errors[0].hook).toBe('processLLMRequest');
  });
});
