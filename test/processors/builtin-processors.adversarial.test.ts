/**
 * The built-in processors that are not guards, under a hostile model, client or store:
 * `ResponseCache` (who writes to the cache, who is served from it), `ToolCallFilter` and
 * `ToolSearchProcessor` (reaching a tool by a name variant, huge or match-everything queries),
 * `StructuredOutputProcessor` (model-controlled JSON) and `UnicodeNormalizer` (lone surrogates,
 * combining floods, huge inputs).
 */
import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { concat, from, lastValueFrom, NEVER, toArray } from 'rxjs';
import { z } from 'zod';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { Agent } from '../../src/loop/agent.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { AgentToolSet } from '../../src/contract/tool-types.js';
import type { CachedLLMStepResponse, Processor } from '../../src/contract/processor-types.js';
import { RequestContext } from '../../src/contract/request-context.js';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import { InMemoryResponseCacheStore, ResponseCache, responseCacheKey, type ResponseCacheStore } from '../../src/processors/response-cache.js';
import { ToolSearchProcessor } from '../../src/processors/tool-search.js';
import { ToolCallFilter } from '../../src/processors/tool-call-filter.js';
import { StructuredOutputProcessor } from '../../src/processors/structured-output.js';
import { UnicodeNormalizer } from '../../src/processors/unicode-normalizer.js';
import { InvalidProcessorOptionError } from '../../src/contract/errors/invalid-processor-option-error.js';
import { mockModel, type MockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';

type Agentish = ConstructorParameters<typeof Agent>[0];

/** A model that answers `answer` (then `finish` with `reason`) and counts its calls. */
function answering(answer: string | ((callIndex: number) => string), reason: Parameters<typeof finishPart>[0] = 'stop', modelId = 'mock-model'): MockModel {
  return mockModel({
    modelId,
    parts: ({ callIndex }) => [...textParts(typeof answer === 'string' ? answer : answer(callIndex)), finishPart(reason)],
  });
}

const textOf = (chunks: readonly ChunkType[]) => chunks.flatMap((chunk) => (chunk.type === 'text-delta' ? [chunk.payload.text] : [])).join('');
const collect = (agent: Agent, prompt: string, options: Parameters<Agent['stream$']>[1] = {}) => lastValueFrom(agent.stream$(prompt, options).pipe(toArray()));

/** A store that records what it is asked and answers from a map. */
class RecordingStore implements ResponseCacheStore {
  readonly entries = new Map<string, CachedLLMStepResponse>();
  readonly reads: string[] = [];
  readonly writes: string[] = [];
  get(key: string) {
    this.reads.push(key);
    return this.entries.get(key);
  }
  set(key: string, value: CachedLLMStepResponse) {
    this.writes.push(key);
    this.entries.set(key, value);
  }
}

afterEach(() => {
  for (const key of ['polluted']) delete (Object.prototype as Record<string, unknown>)[key];
});

describe('ResponseCache: what the key covers', () => {
  const tools: AgentToolSet = {
    lookup: { description: 'Look a word up', inputSchema: z.object({ word: z.string() }), execute: () => 'found' },
    deleteUser: { description: 'Delete a user', inputSchema: z.object({ id: z.string() }), execute: () => 'deleted' },
  };
  /** First call: a call to `deleteUser` when offered, else text; the second call answers text. */
  const toolModel = () =>
    mockModel({
      parts: ({ options, callIndex }) => {
        const offered = (options.tools ?? []).map((tool) => tool.name);
        if (offered.includes('deleteUser') && !JSON.stringify(options.prompt).includes('"tool"')) return [...toolCallParts('deleteUser', { id: '7' }, { toolCallId: `c${callIndex}` }), finishPart('tool-calls')];
        return [...textParts(`text ${offered.join(',')}`), finishPart()];
      },
    });

  it('a run offered other tools (activeTools) is not served the answer of a run that had a tool it lacks', async () => {
    const model = toolModel();
    const agent = new Agent({ id: 'a', model, tools, inputProcessors: [new ResponseCache()] });
    const admin = await collect(agent, 'clean up', { activeTools: ['lookup', 'deleteUser'] });
    expect(admin.some((chunk) => chunk.type === 'tool-call')).toBe(true);
    const callsBefore = model.calls.length;
    const user = await collect(agent, 'clean up', { activeTools: ['lookup'] });
    expect(user.some((chunk) => chunk.type === 'tool-call')).toBe(false);
    expect(model.calls.length).toBe(callsBefore + 1);
  });

  it('agents with the same prompt but tools of other schemas or descriptions do not share answers', async () => {
    const store = new RecordingStore();
    const variants: AgentToolSet[] = [
      { lookup: { description: 'Look a word up', inputSchema: z.object({ word: z.string() }), execute: () => 'a' } },
      { lookup: { description: 'Look a word up', inputSchema: z.object({ word: z.number() }), execute: () => 'b' } },
      { lookup: { description: 'Look a user up', inputSchema: z.object({ word: z.string() }), execute: () => 'c' } },
      {},
    ];
    for (const variant of variants) {
      const model = answering('hello');
      await collect(new Agent({ id: 'a', model, tools: variant, inputProcessors: [new ResponseCache({ store })] }), 'same');
      expect(model.calls).toHaveLength(1);
    }
    expect(new Set(store.writes).size).toBe(variants.length);
  });

  it('tool choice, provider options and the structured-output schema are part of the key', async () => {
    const store = new RecordingStore();
    const schemaA = z.object({ name: z.string() });
    const schemaB = z.object({ id: z.number() });
    const runs: Array<Parameters<Agent['stream$']>[1]> = [
      {},
      { toolChoice: 'none' },
      { toolChoice: 'required' },
      { providerOptions: { mock: { user: 'a' } } },
      { providerOptions: { mock: { user: 'b' } } },
      { structuredOutput: { schema: schemaA } },
      { structuredOutput: { schema: schemaB } },
    ];
    for (const options of runs) {
      const model = mockModel({ parts: ({ options: call }) => [...textParts(call.responseFormat?.type === 'json' ? JSON.stringify(call.responseFormat.schema?.properties ?? {}).includes('name') ? '{"name":"x"}' : '{"id":1}' : 'plain'), finishPart()] });
      await collect(new Agent({ id: 'a', model, tools, inputProcessors: [new ResponseCache({ store })] }), 'same', options);
      expect(model.calls).toHaveLength(1);
    }
    expect(new Set(store.writes).size).toBe(runs.length);
  });

  it('instructions, model id and settings are part of the key', async () => {
    const store = new RecordingStore();
    const configs: Array<Partial<Agentish> & { settings?: Record<string, unknown> }> = [
      { instructions: 'Be brief.' },
      { instructions: 'Be verbose.' },
      { instructions: 'Be brief.', model: answering('x', 'stop', 'other-model') },
      { instructions: 'Be brief.', settings: { temperature: 0.2 } },
      { instructions: 'Be brief.', settings: { temperature: 0.3 } },
    ];
    for (const { settings, ...config } of configs) {
      const model = (config.model as MockModel | undefined) ?? answering('x');
      await collect(new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store })], ...config, ...(config.model ? {} : { model }) }), 'same', settings ? { modelSettings: settings } : {});
      expect(model.calls).toHaveLength(1);
    }
  });

  it('another resource or thread (memory) is not served the answer of the first; the same one is', async () => {
    const store = new RecordingStore();
    const cache = new ResponseCache({ store });
    const model = answering((index) => `answer ${index}`);
    const agent = new Agent({ id: 'a', model, inputProcessors: [cache] });
    const as = (resource: string, thread: string) => new RequestContext([['resourceId', resource], ['threadId', thread]]);
    expect(textOf(await collect(agent, 'q', { requestContext: as('alice', 't1') }))).toBe('answer 0');
    expect(textOf(await collect(agent, 'q', { requestContext: as('bob', 't1') }))).toBe('answer 1');
    expect(textOf(await collect(agent, 'q', { requestContext: as('alice', 't2') }))).toBe('answer 2');
    expect(textOf(await collect(agent, 'q', { requestContext: as('alice', 't1') }))).toBe('answer 0');
    expect(model.calls).toHaveLength(3);
  });

  it('request-context values the app names (requestContextKeys) are part of the key, others are not', async () => {
    const store = new RecordingStore();
    const model = answering((index) => `answer ${index}`);
    const agent = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store, requestContextKeys: ['tenant'] })] });
    const context = (tenant: unknown, other: string) => new RequestContext([['tenant', tenant], ['traceId', other]]);
    expect(textOf(await collect(agent, 'q', { requestContext: context('acme', '1') }))).toBe('answer 0');
    expect(textOf(await collect(agent, 'q', { requestContext: context('globex', '2') }))).toBe('answer 1');
    expect(textOf(await collect(agent, 'q', { requestContext: context('acme', '3') }))).toBe('answer 0');
    // a key the app named and the run does not have is not the same as one holding undefined or null
    expect(textOf(await collect(agent, 'q', { requestContext: new RequestContext() }))).toBe('answer 2');
    expect(textOf(await collect(agent, 'q', { requestContext: context(null, '4') }))).toBe('answer 3');
    expect(model.calls).toHaveLength(4);
  });
});

describe('ResponseCache: what is written', () => {
  const cut = (parts: LanguageModelV4StreamPart[]) => mockModel({ parts });

  it.each([
    ['cut off at the output limit', [...textParts('half an ans'), finishPart('length')]],
    ['stopped by the content filter', [...textParts('I cannot'), finishPart('content-filter')]],
    ['ended by a provider error', [...textParts('partial'), finishPart('error')]],
    ['with an error part', [...textParts('partial'), { type: 'error', error: new Error('boom') }, finishPart('stop')]],
    ['with an other finish reason', [...textParts('partial'), finishPart('other')]],
  ] as Array<[string, LanguageModelV4StreamPart[]]>)('an answer %s is not stored', async (_label, parts) => {
    const store = new RecordingStore();
    const agent = new Agent({ id: 'a', model: cut(parts), inputProcessors: [new ResponseCache({ store })] });
    await collect(agent, 'q').catch(() => undefined);
    expect(store.writes).toEqual([]);
  });

  it('an answer an output processor tripwired (processOutputStream) is not stored', async () => {
    const store = new RecordingStore();
    const guard: Processor = { id: 'guard', processOutputStream: ({ part, abort }) => (part.type === 'text-delta' && part.payload.text.includes('bad') ? abort('no') : part) };
    const agent = new Agent({ id: 'a', model: answering('bad answer'), inputProcessors: [new ResponseCache({ store })], outputProcessors: [guard] });
    await collect(agent, 'q');
    expect(store.writes).toEqual([]);
  });

  it('an answer the run was aborted in the middle of is not stored', async () => {
    const store = new RecordingStore();
    const controller = new AbortController();
    const model = mockModel({ stream: () => concat(from(textParts('the first half')), NEVER) });
    const seen: string[] = [];
    const spy: Processor = { id: 'spy', processOutputStream: ({ part }) => (part.type === 'text-delta' && seen.push(part.payload.text) === 1 ? (queueMicrotask(() => controller.abort()), part) : part) };
    const agent = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store })], outputProcessors: [spy] });
    await collect(agent, 'q', { abortSignal: controller.signal }).catch(() => undefined);
    expect(seen.length).toBeGreaterThan(0);
    expect(store.writes).toEqual([]);
  });

  it('chunks processors or tools wrote (data-*) are not stored: one run never replays another run\'s data', async () => {
    const store = new RecordingStore();
    const profile: Processor = {
      id: 'profile',
      processInput: async ({ messages, writer, requestContext }) => {
        await writer.custom({ type: 'data-account', data: { owner: requestContext.get('owner') } });
        return messages;
      },
    };
    const model = answering('the answer');
    const agent = new Agent({ id: 'a', model, inputProcessors: [profile, new ResponseCache({ store })] });
    await collect(agent, 'q', { requestContext: new RequestContext([['owner', 'alice']]) });
    const replay = await collect(agent, 'q', { requestContext: new RequestContext([['owner', 'alice']]) });
    expect(model.calls).toHaveLength(1);
    expect(replay.filter((chunk) => chunk.type === 'data-account').map((chunk) => (chunk as { data?: unknown }).data)).toEqual([{ owner: 'alice' }]);
    for (const entry of store.entries.values()) expect(entry.chunks.map((chunk) => chunk.type)).not.toContain('data-account');
  });

  it('a replayed structured answer streams the same chunks as the first run (no object chunk twice)', async () => {
    const schema = z.object({ name: z.string() });
    const model = answering('{"name":"Ada"}');
    const agent = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache()] });
    const content = (chunks: ChunkType[]) => chunks.filter((chunk) => !['start', 'step-start', 'step-finish', 'finish', 'response-metadata'].includes(chunk.type)).map((chunk) => JSON.stringify([chunk.type, (chunk as { payload?: unknown }).payload]));
    const first = await collect(agent, 'who?', { structuredOutput: { schema } });
    const second = await collect(agent, 'who?', { structuredOutput: { schema } });
    expect(model.calls).toHaveLength(1);
    expect(content(second)).toEqual(content(first));
  });

  it('with the cache after a processor that rewrites the prompt per user (processLLMRequest), users do not share answers', async () => {
    const model = mockModel({ parts: ({ options }) => [...textParts(`you are ${JSON.stringify(options.prompt).match(/user=(\w+)/)?.[1]}`), finishPart()] });
    const profile: Processor = {
      id: 'profile',
      processLLMRequest: ({ prompt, requestContext }) => ({ prompt: [...prompt, { role: 'user', content: [{ type: 'text', text: `user=${String(requestContext.get('user'))}` }] }] }),
    };
    const agent = new Agent({ id: 'a', model, inputProcessors: [profile, new ResponseCache()] });
    expect(textOf(await collect(agent, 'who am I?', { requestContext: new RequestContext([['user', 'alice']]) }))).toBe('you are alice');
    expect(textOf(await collect(agent, 'who am I?', { requestContext: new RequestContext([['user', 'bob']]) }))).toBe('you are bob');
    expect(textOf(await collect(agent, 'who am I?', { requestContext: new RequestContext([['user', 'alice']]) }))).toBe('you are alice');
    expect(model.calls).toHaveLength(2);
  });
});

describe('ResponseCache: a store that fails', () => {
  const run = async (store: ResponseCacheStore, options: Partial<ConstructorParameters<typeof ResponseCache>[0]> = {}) => {
    const model = answering((index) => `fresh ${index}`);
    const errors: unknown[] = [];
    const agent = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store, storeTimeoutMs: 50, onError: (error) => void errors.push(error), ...options })] });
    const chunks = await collect(agent, 'q');
    return { chunks, model, errors };
  };

  it.each([
    ['get throws', { get: () => { throw new Error('down'); }, set: () => undefined }],
    ['get rejects', { get: () => Promise.reject(new Error('down')), set: () => undefined }],
    ['get never settles', { get: () => new Promise<undefined>(() => undefined), set: () => undefined }],
    ['set throws', { get: () => undefined, set: () => { throw new Error('full'); } }],
    ['set rejects', { get: () => undefined, set: () => Promise.reject(new Error('full')) }],
    ['set never settles', { get: () => undefined, set: () => new Promise<void>(() => undefined) }],
  ] as Array<[string, ResponseCacheStore]>)('%s: the run answers from the model and the failure is reported', async (_label, store) => {
    const { chunks, model, errors } = await run(store);
    expect(chunks.some((chunk) => chunk.type === 'error')).toBe(false);
    expect(textOf(chunks)).toBe('fresh 0');
    expect(model.calls).toHaveLength(1);
    expect(errors).toHaveLength(1);
    expect(ProcessorError.isInstance(errors[0])).toBe(true);
    expect(errors[0]).toMatchObject({ processorId: 'response-cache', hook: _label.startsWith('get') ? 'processLLMRequest' : 'processLLMResponse' });
  });

  it('an entry of any other shape is a miss, never a wrong answer or a crash', async () => {
    // entries carrying the key they were asked for, so only their shape can make them a miss
    const chunk = fc.oneof(
      fc.record({ type: fc.string(), payload: fc.anything() }, { requiredKeys: [] }),
      fc.record({ type: fc.constantFrom('text-delta', 'reasoning-delta', 'tool-call', 'tool-result', 'finish', 'error', 'tripwire', 'abort', 'data-x', 'step-finish', '__proto__'), payload: fc.anything() }, { requiredKeys: ['type'] }),
      fc.constant({ type: 'text-delta', payload: { id: 't', text: 'forged' } }).map((valid) => ({ ...valid, payload: { ...valid.payload, text: 7 } })),
      fc.anything(),
    );
    const garbage = fc.oneof(
      fc.tuple(fc.anything(), fc.constant(false)),
      fc.tuple(fc.record({ chunks: fc.anything(), warnings: fc.anything() }, { requiredKeys: [] }), fc.constant(true)),
      fc.tuple(fc.record({ chunks: fc.array(chunk, { minLength: 1, maxLength: 4 }) }), fc.constant(true)),
      fc.tuple(fc.record({ chunks: fc.array(chunk, { maxLength: 4 }), warnings: fc.oneof(fc.string(), fc.integer(), fc.object()) }), fc.constant(true)),
    );
    await fc.assert(
      fc.asyncProperty(garbage, async ([value, withKey]) => {
        const entryFor = (key: string) => (withKey ? { ...(value as object), key } : value);
        const { chunks, model, errors } = await run({ get: (key) => entryFor(key) as CachedLLMStepResponse, set: () => undefined });
        // never a failed run; an entry refused (reported) is a miss answered by the model, and one
        // served is an entry of the model's own chunk shapes, written under this very key
        expect(chunks.some((chunk) => chunk.type === 'error')).toBe(false);
        const refused = errors.length > 0 || value === undefined || value === null;
        if (refused) expect(textOf(chunks)).toBe('fresh 0');
        if (refused) expect(model.calls).toHaveLength(1);
        if (!refused) expect(withKey).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it('an entry of well-shaped chunks in any order (deltas without a start, calls to tools the agent lacks) replays without failing the run', async () => {
    const id = fc.constantFrom('t1', 't2', 'c1', '__proto__', '');
    const text = fc.string({ maxLength: 5 });
    const modelChunk = fc.oneof(
      fc.record({ type: fc.constantFrom('text-start', 'text-end', 'reasoning-start', 'reasoning-end'), payload: fc.record({ id }) }),
      fc.record({ type: fc.constantFrom('text-delta', 'reasoning-delta'), payload: fc.record({ id, text }) }),
      fc.record({ type: fc.constant('tool-call-input-streaming-start'), payload: fc.record({ toolCallId: id, toolName: fc.constantFrom('lookup', 'missing', 'constructor') }) }),
      fc.record({ type: fc.constant('tool-call-delta'), payload: fc.record({ toolCallId: id, argsTextDelta: text }) }),
      fc.record({ type: fc.constant('tool-call-input-streaming-end'), payload: fc.record({ toolCallId: id }) }),
      fc.record({ type: fc.constant('tool-call'), payload: fc.record({ toolCallId: id, toolName: fc.constantFrom('lookup', 'missing', 'constructor'), args: fc.anything() }) }),
      fc.record({ type: fc.constantFrom('tool-result', 'tool-error'), payload: fc.record({ toolCallId: id, toolName: fc.constantFrom('web', 'lookup'), result: fc.anything(), error: fc.string(), providerExecuted: fc.boolean() }) }),
      fc.record({ type: fc.constant('source'), payload: fc.record({ id, sourceType: fc.constantFrom('url', 'document', 'other'), url: fc.string() }) }),
      fc.record({ type: fc.constant('response-metadata'), payload: fc.record({ id: text, modelId: text }, { requiredKeys: [] }) }),
      fc.record({ type: fc.constant('file'), payload: fc.record({ data: fc.base64String({ maxLength: 8 }), mimeType: fc.constantFrom('text/plain', 'image/png', '') }) }),
      fc.record({ type: fc.constant('raw'), payload: fc.record({ rawValue: fc.anything() }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(modelChunk, { maxLength: 8 }), async (entryChunks) => {
        const model = answering('fresh');
        const tools: AgentToolSet = { lookup: { inputSchema: z.object({}).passthrough(), execute: () => 'found' } };
        const store: ResponseCacheStore = { get: (key) => ({ key, chunks: entryChunks }) as CachedLLMStepResponse, set: () => undefined };
        const agent = new Agent({ id: 'a', model, tools, maxSteps: 2, inputProcessors: [new ResponseCache({ store })] });
        const chunks = await collect(agent, 'q');
        expect(chunks.at(-1)?.type).toBe('finish');
        expect(chunks.filter((chunk) => chunk.type === 'error')).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });

  it('an entry stored under another key (a store that mixes keys up) is a miss', async () => {
    const store = new RecordingStore();
    const model = answering((index) => `answer ${index}`);
    const agent = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store })] });
    await collect(agent, 'first question');
    const [written] = store.entries.values();
    const confused: ResponseCacheStore = { get: () => written, set: () => undefined };
    const other = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store: confused })] });
    expect(textOf(await collect(other, 'second question'))).toBe('answer 1');
  });
});


describe('ResponseCache: its bounds', () => {
  it('a maxEntries, ttlMs or storeTimeoutMs that would leave the cache unbounded (NaN, 0, negative) is refused when it is made', () => {
    for (const maxEntries of [Number.NaN, 0, -1, 2.5]) expect(() => new InMemoryResponseCacheStore({ maxEntries })).toThrow(InvalidProcessorOptionError);
    for (const ttlMs of [Number.NaN, 0, -5]) expect(() => new ResponseCache({ ttlMs })).toThrow(InvalidProcessorOptionError);
    for (const storeTimeoutMs of [Number.NaN, 0, -5]) expect(() => new ResponseCache({ storeTimeoutMs })).toThrow(InvalidProcessorOptionError);
    expect(() => new ResponseCache({ requestContextKeys: 'tenant' as unknown as string[] })).toThrow(InvalidProcessorOptionError);
    const store = new InMemoryResponseCacheStore({ maxEntries: 2 });
    for (const key of ['a', 'b', 'c', 'd']) store.set(key, { chunks: [] }, 1_000);
    expect(store.size).toBe(2);
  });
});

describe('ResponseCache: the key', () => {
  const model = answering('x');
  const base = { prompt: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'q' }] }], model, modelSettings: {} };

  /** Equal as values: same primitives (`Object.is`), same own keys in any order, same array items. */
  function sameValue(left: unknown, right: unknown): boolean {
    if (typeof left !== 'object' || left === null || typeof right !== 'object' || right === null) return Object.is(left, right);
    if (Array.isArray(left) !== Array.isArray(right)) return false;
    const leftKeys = Object.keys(left).sort();
    const rightKeys = Object.keys(right).sort();
    return sameValue(leftKeys.length, rightKeys.length) && leftKeys.every((key, index) => key === rightKeys[index] && sameValue((left as Record<string, unknown>)[key], (right as Record<string, unknown>)[key]));
  }

  const value = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.constantFrom<unknown>(undefined, null, NaN, -0, 0, Infinity, -Infinity, '', 'null', 'NaN', 'undefined', '-0', '0', 'true', true, false),
      fc.string({ maxLength: 4 }),
      fc.integer({ min: -3, max: 3 }),
      fc.double({ noNaN: false }),
      fc.array(tie('value'), { maxLength: 3 }),
      fc.dictionary(fc.constantFrom('a', 'b', 'ab', 'c', '"', '__proto__', 'constructor'), tie('value'), { maxKeys: 3, noNullPrototype: true }),
    ),
  })).value;

  it('two request-context values give the same key exactly when they are the same value (key order aside)', () => {
    fc.assert(
      fc.property(value, value, (left, right) => {
        const keyOf = (given: unknown) => responseCacheKey({ ...base, requestContext: { tenant: given } });
        expect(keyOf(left) === keyOf(right)).toBe(sameValue(left, right));
      }),
      { numRuns: 2000 },
    );
  });

  it('an object gives the same key whatever order its keys were written in', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 3 }), value, { maxKeys: 6, noNullPrototype: true }), (record) => {
        const reversed = Object.fromEntries(Object.entries(record).reverse());
        expect(responseCacheKey({ ...base, requestContext: { tenant: reversed } })).toBe(responseCacheKey({ ...base, requestContext: { tenant: record } }));
        expect(responseCacheKey({ ...base, modelSettings: { temperature: 0.5, topP: 0.9 } })).toBe(responseCacheKey({ ...base, modelSettings: { topP: 0.9, temperature: 0.5 } }));
      }),
    );
  });

  it('pieces cannot be moved from one part of the key to the next (no concatenation collisions)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 }), fc.nat(6), (first, second, cut) => {
        const joined = first + second;
        const at = Math.min(cut, joined.length);
        const [a, b] = [joined.slice(0, at), joined.slice(at)];
        fc.pre(a !== first);
        const scoped = (resourceId: string, threadId: string) => responseCacheKey({ ...base, resourceId, threadId });
        expect(scoped(first, second)).not.toBe(scoped(a, b));
        const named = (x: string, y: string) => responseCacheKey({ ...base, requestContext: { [x]: y } });
        expect(named(first, second)).not.toBe(named(a, b));
        expect(responseCacheKey({ ...base, requestContext: { k: [first, second] } })).not.toBe(responseCacheKey({ ...base, requestContext: { k: [a, b] } }));
      }),
    );
  });

  it('a named request-context key the run lacks, one holding undefined and one holding null are four keys', () => {
    const keys = [{}, { tenant: undefined }, { tenant: null }, { tenant: 'null' }].map((requestContext) => responseCacheKey({ ...base, requestContext }));
    expect(new Set(keys).size).toBe(4);
  });

  it('a value the key cannot be made of (a cycle, a function) means no caching for the run, not a failed run', async () => {
    const store = new RecordingStore();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const tenant of [cyclic, () => 'x', Symbol('s'), 10n]) {
      const agent = new Agent({ id: 'a', model: answering('ok'), inputProcessors: [new ResponseCache({ store, requestContextKeys: ['tenant'] })] });
      const chunks = await collect(agent, 'q', { requestContext: new RequestContext([['tenant', tenant]]) });
      expect(chunks.some((chunk) => chunk.type === 'error')).toBe(false);
      expect(textOf(chunks)).toBe('ok');
    }
  });
});

describe('ResponseCache: concurrent runs and consumers', () => {
  it('identical runs at once, with a store answering in any order, each get one whole answer', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.integer({ min: 2, max: 4 }), async (scheduler, runs) => {
        const entries = new Map<string, CachedLLMStepResponse>();
        const store: ResponseCacheStore = {
          get: (key) => scheduler.schedule(Promise.resolve(entries.get(key))),
          set: (key, entry) => scheduler.schedule(Promise.resolve()).then(() => void entries.set(key, entry)),
        };
        const model = answering((index) => `whole answer number ${index}`);
        const agent = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store })] });
        const all = Promise.all(Array.from({ length: runs }, () => collect(agent, 'same')));
        await scheduler.waitFor(all);
        const texts = (await all).map(textOf);
        for (const text of texts) expect(text).toMatch(/^whole answer number \d$/);
        expect(model.calls.length).toBeLessThanOrEqual(runs);
        for (const entry of entries.values()) expect(textOf(entry.chunks as ChunkType[])).toMatch(/^whole answer number \d$/);
      }),
      { numRuns: 40 },
    );
  });

  it('a consumer that edits the chunks it got in place does not change what the cache serves next', async () => {
    const model = answering('original');
    const agent = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache()] });
    const tamper = (chunks: ChunkType[]) => {
      for (const chunk of chunks) if (chunk.type === 'text-delta') (chunk.payload as { text: string }).text = 'tampered';
    };
    tamper(await collect(agent, 'q'));
    const second = await collect(agent, 'q');
    expect(textOf(second)).toBe('original');
    tamper(second);
    expect(textOf(await collect(agent, 'q'))).toBe('original');
    expect(model.calls).toHaveLength(1);
  });
});

/** Name variants a model or a client can write for a tool name. */
const nameVariants = (name: string) =>
  fc.constantFrom(
    name.toUpperCase(),
    name[0]?.toUpperCase() + name.slice(1),
    ` ${name}`,
    `${name} `,
    `${name}\u200b`,
    `${name[0]}\u0301${name.slice(1)}`.normalize('NFC'),
    name.replace('e', '\u0435').replace('a', '\u0430').replace('o', '\u043e'),
    name.replace('_', '-'),
    `${name}\u0000`,
    '__proto__',
    'constructor',
    'toString',
    'hasOwnProperty',
    'valueOf',
    'prototype',
  ).filter((variant) => variant !== name);

describe('ToolSearchProcessor: reaching a tool the model was not given', () => {
  const catalogue = (): AgentToolSet => {
    const tools: AgentToolSet = {
      send_email: { description: 'Send an email message to a recipient', inputSchema: z.object({ to: z.string() }), execute: () => 'sent' },
      delete_account: { description: 'Delete the account of a user', inputSchema: z.object({ id: z.string() }), execute: () => 'deleted' },
    };
    for (let index = 0; index < 40; index++) tools[`filler_${index}`] = { description: `Maintenance task number ${index}`, execute: () => 'ok' };
    return tools;
  };
  const loadFirst = (name: string): MockModel =>
    mockModel({
      parts: ({ callIndex }) =>
        callIndex === 0
          ? [...toolCallParts('load_tool', { name }, { toolCallId: 'load' }), finishPart('tool-calls')]
          : callIndex === 1
            ? [...toolCallParts(name, {}, { toolCallId: 'use' }), finishPart('tool-calls')]
            : [...textParts('done'), finishPart()],
    });

  it('load_tool with a name variant, an Object.prototype name or a look-alike loads nothing, and the model cannot call it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('send_email', 'delete_account').chain(nameVariants), async (variant) => {
        const executed: string[] = [];
        const tools = catalogue();
        for (const [name, tool] of Object.entries(tools)) tools[name] = { ...tool, execute: () => (executed.push(name), 'ran') };
        const model = loadFirst(variant);
        const agent = new Agent({ id: 'a', model, maxSteps: 3, inputProcessors: [new ToolSearchProcessor({ tools })] });
        const chunks = await collect(agent, 'go');
        expect(chunks.filter((chunk) => chunk.type === 'error')).toEqual([]);
        const loaded = chunks.find((chunk) => chunk.type === 'tool-result' && chunk.payload.toolName === 'load_tool');
        expect(loaded).toMatchObject({ payload: { result: { loaded: false } } });
        expect(executed).toEqual([]);
        const offered = model.calls.map((call) => (call.tools ?? []).map((tool) => tool.name).sort());
        for (const names of offered) expect(names).toEqual(['load_tool', 'search_tools']);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      { numRuns: 60 },
    );
  });

  it('a loaded-tools list restored from a snapshot naming Object.prototype members adds no tool', async () => {
    const processor = new ToolSearchProcessor({ tools: catalogue() });
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'send_email']) {
      const result = (await processor.processInputStep({ tools: {}, state: { loaded: [name] } } as never)) as { tools: AgentToolSet };
      expect(Object.keys(result.tools).sort()).toEqual(name === 'send_email' ? ['load_tool', 'search_tools', 'send_email'] : ['load_tool', 'search_tools']);
      expect(Object.getPrototypeOf(result.tools)).toBe(Object.prototype);
    }
  });

  it('a catalogue tool named __proto__ is loaded as a tool, not as a prototype', async () => {
    const tools = JSON.parse('{"__proto__": {"description": "an odd name"}}') as AgentToolSet;
    (tools['__proto__'] as { execute: () => string }).execute = () => 'ran';
    const processor = new ToolSearchProcessor({ tools });
    const state: Record<string, unknown> = {};
    const first = (await processor.processInputStep({ tools: {}, state } as never)) as { tools: AgentToolSet };
    expect(await (first.tools.load_tool?.execute as (input: unknown) => unknown)({ name: '__proto__' })).toMatchObject({ loaded: true });
    const second = (await processor.processInputStep({ tools: {}, state } as never)) as { tools: AgentToolSet };
    expect(Object.hasOwn(second.tools, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(second.tools)).toBe(Object.prototype);
  });

  it('search_tools on huge, regex-like or match-everything queries answers at most the limit, in time linear in the query', { timeout: 4_000 }, () => {
    const tools: AgentToolSet = {};
    for (let index = 0; index < 3_000; index++) tools[`tool_${index}`] = { description: `Does task number ${index} with alpha${index % 50} and beta${index % 7}`, execute: () => 'ok' };
    const processor = new ToolSearchProcessor({ tools, maxResults: 5 });
    const distinctWords = Array.from({ length: 150_000 }, (_, index) => `w${index.toString(36)}`).join(' ');
    expect(processor.search(distinctWords)).toEqual([]);
    expect(processor.search(`${distinctWords} task`).length).toBe(5);
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom('.*', '^$', '(a+)+$', '[^]*', '\\w+', '*', '%', '', ' '), fc.string({ unit: fc.constantFrom('a', '.', '*', '(', ')', '+', '?', '|', '[', ']', '\\', 'task', ' ') })), (query) => {
        const results = processor.search(query);
        expect(results.length).toBeLessThanOrEqual(5);
        for (const result of results) expect(Object.hasOwn(tools, result.name)).toBe(true);
      }),
    );
    expect(processor.search('task '.repeat(100_000)).map((hit) => hit.name)).toHaveLength(5);
  });

  it('maxResults that is not a whole number of at least 1 is refused when the processor is made', () => {
    for (const maxResults of [Number.NaN, 0, -1, 1.5, Infinity]) {
      expect(() => new ToolSearchProcessor({ tools: {}, maxResults })).toThrow(InvalidProcessorOptionError);
    }
  });
});

describe('ToolCallFilter: history a client or a model wrote', () => {
  type Part = { type: 'tool-call'; toolCallId: string; toolName: string; input: unknown } | { type: 'tool-result'; toolCallId: string; toolName: string; output: unknown } | { type: 'text'; text: string };
  type Message = { role: 'user' | 'assistant' | 'tool'; content: Part[] };
  const names: fc.Arbitrary<string> = fc.constantFrom('search', 'Search', 'search ', 's\u0435arch', 'lookup', '__proto__', 'constructor', 'toString');
  const ids = fc.constantFrom('c1', 'c2', 'c3', '__proto__', 'constructor', '');
  const output = fc.oneof(fc.record({ type: fc.constant('text'), value: fc.string({ maxLength: 5 }) }), fc.record({ type: fc.constant('json'), value: fc.jsonValue({ maxDepth: 3 }) }), fc.anything({ maxDepth: 2 }));
  const call = fc.record({ type: fc.constant('tool-call' as const), toolCallId: ids, toolName: names, input: fc.constant({}) });
  const result = fc.record({ type: fc.constant('tool-result' as const), toolCallId: ids, toolName: names, output });
  const text = fc.record({ type: fc.constant('text' as const), text: fc.string({ maxLength: 4 }) });
  const message: fc.Arbitrary<Message> = fc.oneof(
    fc.record({ role: fc.constant('user' as const), content: fc.array(text, { minLength: 1, maxLength: 2 }) }),
    fc.record({ role: fc.constant('assistant' as const), content: fc.array(fc.oneof(text, call, result), { minLength: 1, maxLength: 3 }) }),
    fc.record({ role: fc.constant('tool' as const), content: fc.array(result, { minLength: 1, maxLength: 2 }) }),
  );
  const options = fc.record(
    {
      exclude: fc.array(names, { maxLength: 3 }),
      preserveCurrentTurn: fc.boolean(),
      filterAfterToolSteps: fc.nat(3),
      preserveModelOutput: fc.boolean(),
    },
    { requiredKeys: [] },
  );
  const toolIds = (prompt: readonly Message[]) => new Set(prompt.flatMap((entry) => entry.content.flatMap((part) => ('toolCallId' in part ? [part.toolCallId] : []))));

  it('a call and its result go together, only ids with an excluded name go, no message is left empty, and nothing throws', () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 8 }), options, (prompt, given) => {
        const filter = new ToolCallFilter(given);
        const filtered = filter.filterPrompt(prompt as never) as unknown as Message[];
        const removed = [...toolIds(prompt)].filter((id) => !toolIds(filtered).has(id));
        for (const entry of filtered) expect(entry.content.length).toBeGreaterThan(0);
        for (const id of removed) {
          const parts = prompt.flatMap((entry) => entry.content).filter((part) => 'toolCallId' in part && part.toolCallId === id) as Array<{ toolName: string }>;
          if (given.exclude !== undefined) expect(parts.some((part) => given.exclude?.includes(part.toolName))).toBe(true);
        }
        const kept = filtered.flatMap((entry) => entry.content).filter((part) => 'toolCallId' in part) as Array<{ toolCallId: string }>;
        for (const part of kept) expect(removed).not.toContain(part.toolCallId);
        const texts = (list: readonly Message[]) => list.filter((entry) => entry.role === 'user').map((entry) => JSON.stringify(entry.content));
        expect(texts(filtered)).toEqual(texts(prompt));
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      { numRuns: 500 },
    );
  });

  it('an excluded name is matched exactly: a variant (case, spaces, look-alikes, Object.prototype names) is another tool, and the excluded tool\'s own calls never reach the model', () => {
    fc.assert(
      fc.property(nameVariants('search'), (variant) => {
        const prompt = [
          { role: 'user', content: [{ type: 'text', text: 'q' }] },
          { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'a', toolName: 'search', input: {} }, { type: 'tool-call', toolCallId: 'b', toolName: variant, input: {} }] },
          { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'a', toolName: 'search', output: { type: 'text', value: 'secret' } }, { type: 'tool-result', toolCallId: 'b', toolName: variant, output: { type: 'text', value: 'other' } }] },
          { role: 'user', content: [{ type: 'text', text: 'next' }] },
        ] as Message[];
        const filtered = new ToolCallFilter({ exclude: ['search'] }).filterPrompt(prompt as never) as unknown as Message[];
        expect([...toolIds(filtered)]).toEqual(['b']);
        expect(JSON.stringify(filtered)).not.toContain('secret');
      }),
    );
  });

  it('tool outputs of any depth (client history) are filtered and summarised without exhausting the stack', () => {
    fc.assert(
      fc.property(fc.constantFrom('array', 'value', 'content'), fc.integer({ min: 1, max: 50_000 }), (shape, depth) => {
        let value: unknown = 'leaf';
        for (let level = 0; level < depth; level++) value = shape === 'array' ? [value] : shape === 'value' ? { value } : { type: 'content', value: [value] };
        const prompt = [
          { role: 'user', content: [{ type: 'text', text: 'q' }] },
          { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'search', input: {} }] },
          { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'search', output: { type: 'json', value } }] },
          { role: 'user', content: [{ type: 'text', text: 'q2' }] },
        ];
        const filtered = new ToolCallFilter({ preserveModelOutput: true }).filterPrompt(prompt as never) as unknown as Message[];
        expect(toolIds(filtered).size).toBe(0);
      }),
      { numRuns: 30 },
    );
  });

  it('filterAfterToolSteps that is not a number of at least 0 is refused when the filter is made', () => {
    for (const filterAfterToolSteps of [Number.NaN, -1, '2' as unknown as number]) {
      expect(() => new ToolCallFilter({ filterAfterToolSteps })).toThrow(InvalidProcessorOptionError);
    }
    expect(() => new ToolCallFilter({ exclude: 'search' as unknown as string[] })).toThrow(InvalidProcessorOptionError);
  });
});

describe('StructuredOutputProcessor: the structuring model\'s JSON', () => {
  const person = z.object({ name: z.string(), age: z.number(), tags: z.array(z.string()).optional() });
  const structuring = (answer: string) => mockModel({ parts: [...textParts(answer), finishPart()] });
  const runWith = async (answer: string, options: Partial<ConstructorParameters<typeof StructuredOutputProcessor<z.infer<typeof person>>>[0]> = {}) => {
    const processor = new StructuredOutputProcessor({ model: structuring(answer), schema: person, errorStrategy: 'warn', ...options });
    const agent = new Agent({ id: 'a', model: answering('Ada is 36.'), outputProcessors: [processor] });
    const result = await agent.generate('who?');
    const chunks = await collect(new Agent({ id: 'a', model: answering('Ada is 36.'), outputProcessors: [new StructuredOutputProcessor({ model: structuring(answer), schema: person, errorStrategy: 'warn', ...options })] }), 'who?');
    const objects = chunks.flatMap((chunk) => (chunk.type === 'object' || chunk.type === 'object-result' ? [chunk.payload.object] : []));
    return { result, chunks, objects };
  };

  /** Hostile spellings of an answer: a key named twice (any depth, escaped), `__proto__`, fences that differ, deep nesting, numbers out of range. */
  const hostile = fc.oneof(
    fc.constantFrom(
      '{"name":"Ada","age":36,"age":99}',
      '{"name":"Ada","age":36,"\\u0061ge":99}',
      '{"name":"Ada","age":36,"tags":["a"],"meta":{"x":1,"x":2}}',
      '{"name":"Ada","age":36,"__proto__":{"polluted":"yes"}}',
      '{"name":"Ada","age":36,"tags":[{"__proto__":{"polluted":"yes"}}]}',
      "{'name':'Ada','age':36,'__proto__':{'polluted':'yes'}}",
      '```json\n{"name":"Ada","age":36}\n```\n```json\n{"name":"Eve","age":30}\n```',
      '{"name":"Ada","age":36} and also {"name":"Eve","age":30}',
      '{"name":"Ada","age":"NaN"}',
      '{"name":"Ada","age":NaN}',
      '{"name":"Ada","age":Infinity}',
      '{"name":"Ada","age":1e999}',
      '{"name":"Ada","age":"36"}',
      '{"name":"Ada"}',
      '[{"name":"Ada","age":36}]',
    ),
    fc.integer({ min: 1_000, max: 200_000 }).map((depth) => `{"name":"Ada","age":36,"tags":${'['.repeat(depth)}${']'.repeat(depth)}}`),
    fc.integer({ min: 1_000, max: 200_000 }).map((depth) => `{"name":"Ada","age":36,"x":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`),
  );

  it('what reaches object, object-result and result.object is exactly what the schema accepts, or nothing', async () => {
    await fc.assert(
      fc.asyncProperty(hostile, async (answer) => {
        const { result, chunks, objects } = await runWith(answer);
        expect(chunks.filter((chunk) => chunk.type === 'error')).toEqual([]);
        for (const object of [...objects, ...(result.object === undefined ? [] : [result.object])]) {
          const parsed = person.safeParse(object);
          expect(parsed.success).toBe(true);
          expect(object).toStrictEqual(parsed.data);
          expect(Object.getPrototypeOf(object)).toBe(Object.prototype);
          expect(Number.isFinite((object as { age: number }).age)).toBe(true);
        }
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      { numRuns: 60 },
    );
  });

  it('an answer with two readings (a key twice, two different fences, __proto__) gives no object', async () => {
    for (const answer of ['{"name":"Ada","age":36,"age":99}', '{"name":"Ada","age":36,"\\u0061ge":99}', '{"name":"Ada","age":36,"__proto__":{"polluted":"yes"}}', '```json\n{"name":"Ada","age":36}\n```\n```json\n{"name":"Eve","age":30}\n```']) {
      const { result, objects } = await runWith(answer);
      expect(objects).toEqual([]);
      expect(result.object).toBeUndefined();
    }
  });

  it('a fallbackValue the schema refuses is refused when the processor is made', () => {
    expect(() => new StructuredOutputProcessor({ model: structuring('{}'), schema: person, errorStrategy: 'fallback', fallbackValue: { name: 'x', age: 'old' } as never })).toThrow(InvalidProcessorOptionError);
  });

  it('the fallback object of one run is not the object of the next: a consumer editing it changes nothing later', async () => {
    const processor = new StructuredOutputProcessor({ model: structuring('not json'), schema: person, errorStrategy: 'fallback', fallbackValue: { name: 'nobody', age: 0, tags: ['none'] } });
    const agent = new Agent({ id: 'a', model: answering('?'), outputProcessors: [processor] });
    const first = await agent.generate('who?');
    (first.object as { name: string; tags: string[] }).name = 'edited';
    (first.object as { name: string; tags: string[] }).tags.push('edited');
    const second = await agent.generate('who?');
    expect(second.object).toEqual({ name: 'nobody', age: 0, tags: ['none'] });
  });
});

describe('UnicodeNormalizer: hostile text', () => {
  const options = fc.record({ stripControlChars: fc.boolean(), preserveEmojis: fc.boolean(), collapseWhitespace: fc.boolean(), trim: fc.boolean() });
  const surrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));
  const piece = fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 4 }),
    fc.string({ unit: 'binary', maxLength: 4 }),
    surrogate,
    fc.constantFrom('\u200b', '\u200d', '\ufe0f', '\u20e3', '\u0301', '\u0316', '\u034f', 'ﬁ', 'Ａ', '℡', '\u3000', '\r\n', '\n\n\n', '\t', ' ', '👨‍👩‍👧', '1️⃣', 'ℹ️', '🇫🇷', '\u{e0041}', '\u2028', '\u00ad'),
  );
  const text = fc.array(piece, { maxLength: 12 }).map((pieces) => pieces.join(''));
  const isWellFormed = (value: string) => !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(value);

  it('the output is well-formed (a lone surrogate is U+FFFD, as UTF-8 would send it) and normalising twice changes nothing', () => {
    fc.assert(
      fc.property(options, text, (given, input) => {
        const normalizer = new UnicodeNormalizer(given);
        const once = normalizer.normalize(input);
        expect(isWellFormed(once)).toBe(true);
        expect(normalizer.normalize(once)).toBe(once);
      }),
      { numRuns: 3000 },
    );
  });

  it('a lone surrogate is replaced, a pair is kept, and a pair split by an invisible character is not joined into a new character', () => {
    const strict = new UnicodeNormalizer({ stripControlChars: true });
    expect(strict.normalize('a\ud800b')).toBe('a\ufffdb');
    expect(strict.normalize('a\udc00b')).toBe('a\ufffdb');
    expect(strict.normalize('😀')).toBe('😀');
    expect(strict.normalize('\ud83d\u200b\ude00')).toBe('\ufffd\ufffd');
  });

  it('a flood of combining marks, of any classes in any order, costs time linear in its length', { timeout: 5_000 }, () => {
    const normalizer = new UnicodeNormalizer({ stripControlChars: true });
    for (const flood of ['\u0301\u0316', '\u0316\u0301', '\u0301', '\u0345\u0301\u0316\u05b0', '\u0e49\u0e38']) {
      const input = `a${flood.repeat(Math.ceil(200_000 / flood.length))}b`;
      const output = normalizer.normalize(input);
      expect(output.normalize('NFD').startsWith('a')).toBe(true);
      expect(output.endsWith('b')).toBe(true);
      expect(normalizer.normalize(output)).toBe(output);
    }
    const mixed = Array.from({ length: 20_000 }, (_, index) => `x${'\u0301\u0316'.repeat(index % 40)}`).join('');
    expect(normalizer.normalize(mixed).length).toBeGreaterThan(0);
  });

  it('what a base character keeps of a combining flood: the first 30 marks (Unicode\'s stream-safe limit), in canonical order', () => {
    const normalizer = new UnicodeNormalizer();
    const output = normalizer.normalize(`e${'\u0301'.repeat(100)}z`);
    expect(output).toBe(`é${'\u0301'.repeat(29)}z`);
    expect(normalizer.normalize('e\u0301\u0316')).toBe('e\u0316\u0301'.normalize('NFKC'));
    expect(normalizer.normalize(`x${'\u0301\u0316'.repeat(15)}`)).toBe(`x${'\u0316'.repeat(15)}${'\u0301'.repeat(15)}`);
  });

  it('a megabyte of hostile text is normalised in one pass (every option)', { timeout: 10_000 }, () => {
    const hostile = ['\u200b'.repeat(300_000), '\ud800'.repeat(300_000), ' \t'.repeat(300_000), '\n'.repeat(300_000), '👨‍👩‍👧'.repeat(50_000), 'ﬁ'.repeat(300_000), '\u{e0041}'.repeat(200_000), `${'😀\u0301'.repeat(100_000)}`];
    for (const input of hostile) {
      for (const stripControlChars of [false, true]) {
        const output = new UnicodeNormalizer({ stripControlChars }).normalize(input);
        expect(isWellFormed(output)).toBe(true);
      }
    }
  });
});
