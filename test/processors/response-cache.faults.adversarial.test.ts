/**
 * `ResponseCache` against the faults found in it and against someone who wants it to fail: an
 * answer a processor rejected after the model finished it (`processOutputStep`, a later
 * `processLLMResponse`, `processOutputResult`) must never be served; under `processorsMiddleware`
 * the key covers each tool's whole definition and the response format; hostile keys, stores and
 * concurrent runs with the same key leave every run whole and every cached answer an accepted one.
 * A processor after the cache that changes the request is keyed (what is sent) or refused (a later
 * `processLLMRequest`, on a hit). An Agent run's error or caller's abort after the model finished
 * its last step leaves that step unaccepted (more in `response-cache.leftovers.adversarial.test.ts`).
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { generateText, jsonSchema, streamText, tool, wrapLanguageModel, type ToolSet } from 'ai';
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { Agent } from '../../src/loop/agent.js';
import { processorsMiddleware } from '../../src/ai-sdk/index.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { AgentToolSet } from '../../src/contract/tool-types.js';
import type { CachedLLMStepResponse, Processor } from '../../src/contract/processor-types.js';
import { RequestContext } from '../../src/contract/request-context.js';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import { InvalidProcessorOptionError } from '../../src/contract/errors/invalid-processor-option-error.js';
import { ResponseCache, responseCacheKey, type ResponseCacheOptions, type ResponseCacheStore } from '../../src/processors/response-cache.js';
import { mockModel, type MockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';

const textOf = (chunks: readonly ChunkType[]) => chunks.flatMap((chunk) => (chunk.type === 'text-delta' ? [chunk.payload.text] : [])).join('');
const entryText = (entry: CachedLLMStepResponse | undefined) => textOf((entry?.chunks ?? []) as ChunkType[]);
const collect = (agent: Agent, prompt: string, options: Parameters<Agent['stream$']>[1] = {}) => lastValueFrom(agent.stream$(prompt, options).pipe(toArray()));

/** A model whose n-th call answers `answers[n]` (the last one after that) and counts its calls. */
function answering(...answers: string[]): MockModel {
  return mockModel({ parts: ({ callIndex }) => [...textParts(answers[Math.min(callIndex, answers.length - 1)] ?? ''), finishPart()] });
}

/** A store that records what it is asked and answers from a map. */
class RecordingStore implements ResponseCacheStore {
  readonly entries = new Map<string, CachedLLMStepResponse>();
  readonly writes: Array<{ key: string; text: string; accepted: boolean }> = [];
  get(key: string) {
    return this.entries.get(key);
  }
  set(key: string, value: CachedLLMStepResponse) {
    this.writes.push({ key, text: entryText(value), accepted: (value as { accepted?: unknown }).accepted === true });
    this.entries.set(key, value);
  }
  /** Every answer text the store holds now. */
  texts(): string[] {
    return [...this.entries.values()].map(entryText);
  }
}

/** A guard that rejects a step whose text contains `bad` (`processOutputStep`). */
const rejectBad = (retry: boolean): Processor => ({
  id: 'bad-guard',
  processOutputStep: ({ text, abort }) => (text.includes('bad') ? abort('no bad answers', { retry }) : undefined),
});

describe('ResponseCache: an answer rejected after the model finished it is never served', () => {
  it('processOutputStep rejects with a retry: the retry asks the model, and a later identical run is not served the rejected answer', async () => {
    const store = new RecordingStore();
    const model = answering('bad answer', 'good answer');
    const agent = new Agent({ id: 'a', model, maxProcessorRetries: 2, inputProcessors: [new ResponseCache({ store })], outputProcessors: [rejectBad(true)] });
    expect(textOf(await collect(agent, 'q'))).toContain('good answer');
    expect(model.calls).toHaveLength(2);
    const later = await collect(agent, 'q');
    expect(textOf(later)).not.toContain('bad');
    expect(store.texts().join('|')).not.toContain('bad');
  });

  it('even when the key is the same for the retry (a key that leaves the feedback out), the retry is not served the rejected answer', async () => {
    const store = new RecordingStore();
    const model = answering('bad answer', 'good answer');
    // the key of the first user message only: the rejected attempt and its retry share it
    const key: ResponseCacheOptions['key'] = (input) => responseCacheKey({ ...input, prompt: input.prompt.slice(0, 1) });
    const agent = new Agent({ id: 'a', model, maxProcessorRetries: 2, inputProcessors: [new ResponseCache({ store, key })], outputProcessors: [rejectBad(true)] });
    const first = await collect(agent, 'q');
    expect(model.calls).toHaveLength(2);
    expect(textOf(first)).toBe('bad answergood answer');
    expect(first.at(-1)?.type).toBe('finish');
    const later = await collect(agent, 'q');
    expect(textOf(later)).toBe('good answer');
    expect(model.calls).toHaveLength(2);
  });

  it('processOutputStep rejects without a retry (the run ends with the tripwire): a later run asks the model', async () => {
    const store = new RecordingStore();
    const model = answering('bad answer', 'fine answer');
    const agent = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store })], outputProcessors: [rejectBad(false)] });
    expect((await collect(agent, 'q')).some((chunk) => chunk.type === 'tripwire')).toBe(true);
    expect(textOf(await collect(agent, 'q'))).toBe('fine answer');
    expect(model.calls).toHaveLength(2);
    expect(textOf(await collect(agent, 'q'))).toBe('fine answer');
    expect(model.calls).toHaveLength(2);
    expect(store.texts()).not.toContain('bad answer');
  });

  it('a later processLLMResponse that rejects the step (another input processor) keeps it out of the cache too', async () => {
    const store = new RecordingStore();
    const model = answering('bad answer', 'fine answer');
    const auditor: Processor = { id: 'auditor', processLLMResponse: ({ chunks, abort }) => (JSON.stringify(chunks).includes('bad') ? abort('audited', { retry: true }) : undefined) };
    const agent = new Agent({ id: 'a', model, maxProcessorRetries: 2, inputProcessors: [new ResponseCache({ store }), auditor] });
    await collect(agent, 'q');
    expect(textOf(await collect(agent, 'q'))).toBe('fine answer');
    expect(store.texts().join('|')).not.toContain('bad');
  });

  it('a run an output processor rejects at its end (processOutputResult) leaves no answer to serve', async () => {
    const store = new RecordingStore();
    const model = answering('leaky answer', 'fine answer');
    const scrubber: Processor = { id: 'scrubber', processOutputResult: ({ result, abort }) => (result.text.includes('leaky') ? abort('leak') : undefined) };
    const agent = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store })], outputProcessors: [scrubber] });
    expect((await collect(agent, 'q')).some((chunk) => chunk.type === 'tripwire')).toBe(true);
    expect(textOf(await collect(agent, 'q'))).toBe('fine answer');
    expect(store.texts()).not.toContain('leaky answer');
  });

  it('an answer served from the cache that a processor now rejects (a stricter guard) is withdrawn: the next run asks the model', async () => {
    const store = new RecordingStore();
    const model = answering('plain answer', 'careful answer');
    const lenient = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store })] });
    expect(textOf(await collect(lenient, 'q'))).toBe('plain answer');
    const strict: Processor = { id: 'strict', processOutputStep: ({ text, abort }) => (text.includes('plain') ? abort('too plain') : undefined) };
    const guarded = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store })], outputProcessors: [strict] });
    expect((await collect(guarded, 'q')).some((chunk) => chunk.type === 'tripwire')).toBe(true);
    expect(model.calls).toHaveLength(1);
    expect(textOf(await collect(guarded, 'q'))).toBe('careful answer');
    expect(model.calls).toHaveLength(2);
    expect(textOf(await collect(lenient, 'q'))).toBe('careful answer');
    expect(model.calls).toHaveLength(2);
  });

  it('an accepted step of a multi-step run is cached at once (the next step began), the last one when the run is over', async () => {
    const store = new RecordingStore();
    const tools: AgentToolSet = { lookup: { inputSchema: z.object({ word: z.string() }), execute: () => 'found' } };
    const model = mockModel({
      parts: ({ options, callIndex }) =>
        JSON.stringify(options.prompt).includes('"tool"')
          ? [...textParts(`done ${callIndex}`), finishPart()]
          : [
              { type: 'tool-input-start', id: `c${callIndex}`, toolName: 'lookup' },
              { type: 'tool-input-delta', id: `c${callIndex}`, delta: '{"word":"x"}' },
              { type: 'tool-input-end', id: `c${callIndex}` },
              { type: 'tool-call', toolCallId: `c${callIndex}`, toolName: 'lookup', input: '{"word":"x"}' },
              finishPart('tool-calls'),
            ],
    });
    let acceptedWhenStep1Began = -1;
    const watcher: Processor = { id: 'watcher', processInputStep: ({ stepNumber }) => void (stepNumber === 1 && (acceptedWhenStep1Began = store.writes.filter((write) => write.accepted).length)) };
    const agent = new Agent({ id: 'a', model, tools, inputProcessors: [new ResponseCache({ store }), watcher] });
    expect(textOf(await collect(agent, 'q'))).toBe('done 1');
    // step 0 (the tool call) accepted when step 1 began; step 1 when the run was over
    expect(acceptedWhenStep1Began).toBe(1);
    expect(store.writes.filter((write) => write.accepted)).toHaveLength(2);
    expect(textOf(await collect(agent, 'q'))).toBe('done 1');
    expect(model.calls).toHaveLength(2);
  });

  it('while a step waits for its guard, an identical run at the same time is not served its answer', async () => {
    const store = new RecordingStore();
    const model = answering('bad answer', 'second answer', 'third answer');
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered: () => void = () => undefined;
    const judgingFirst = new Promise<void>((resolve) => (entered = resolve));
    let judging = 0;
    const slowGuard: Processor = {
      id: 'slow-guard',
      processOutputStep: async ({ text, abort }) => {
        if (judging++ === 0) {
          entered();
          await held;
        }
        if (text.includes('bad')) abort('no bad answers');
      },
    };
    const agent = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store })], outputProcessors: [slowGuard] });
    const first = collect(agent, 'q');
    await judgingFirst;
    const second = await collect(agent, 'q');
    expect(textOf(second)).toBe('second answer');
    release();
    expect((await first).some((chunk) => chunk.type === 'tripwire')).toBe(true);
    // the rejected answer's entry was overwritten (an accepted one of the same key may go with it)
    expect(['second answer', 'third answer']).toContain(textOf(await collect(agent, 'q')));
    expect(store.texts().join('|')).not.toContain('bad');
  });

  /*
   * Was residual: in an Agent run, the caller's abort or an error that ends the run (a guard that
   * throws, not a tripwire) after the model finished the last step counted as the step's acceptance,
   * and a later run was served the unjudged answer (its guards judged it again). Now the last step
   * is accepted only when the run ended with its `finish`: the later run asks the model.
   */
  it('the caller aborts the run while a guard judges the step: a later run asks the model, and its judged answer is served after that', async () => {
    const store = new RecordingStore();
    const model = answering('unjudged answer', 'judged answer');
    const controller = new AbortController();
    const judged: string[] = [];
    const judge: Processor = {
      id: 'judge',
      processOutputStep: async ({ text, abortSignal, abort }) => {
        judged.push(text);
        if (judged.length === 1) {
          controller.abort();
          await new Promise((resolve) => setTimeout(resolve, 5));
          // the judge's own call, cancelled with the run
          if (abortSignal.aborted) throw abortSignal.reason;
        }
        if (text.includes('unjudged')) abort('the judge rejects it');
      },
    };
    const agent = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store })], outputProcessors: [judge] });
    await collect(agent, 'q', { abortSignal: controller.signal }).catch(() => undefined);
    // not served: the next run asks the model, and its judged answer is served after that
    expect(textOf(await collect(agent, 'q'))).toBe('judged answer');
    expect(judged).toEqual(['unjudged answer', 'judged answer']);
    expect(textOf(await collect(agent, 'q'))).toBe('judged answer');
    expect(model.calls).toHaveLength(2);
    expect(store.texts()).not.toContain('unjudged answer');
  });

  it('a guard that fails (throws, not a tripwire) ends the run with an error: a later run asks the model, and its judged answer is served after that', async () => {
    const store = new RecordingStore();
    const model = answering('unjudged answer', 'judged answer');
    const judged: string[] = [];
    const judge: Processor = {
      id: 'judge',
      processOutputStep: ({ text, abort }) => {
        judged.push(text);
        if (judged.length === 1) throw new Error('the judge is down');
        if (text.includes('unjudged')) abort('the judge rejects it');
      },
    };
    const agent = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store })], outputProcessors: [judge] });
    expect((await collect(agent, 'q')).some((chunk) => chunk.type === 'error')).toBe(true);
    expect(textOf(await collect(agent, 'q'))).toBe('judged answer');
    expect(judged).toEqual(['unjudged answer', 'judged answer']);
    expect(textOf(await collect(agent, 'q'))).toBe('judged answer');
    expect(model.calls).toHaveLength(2);
    expect(store.texts()).not.toContain('unjudged answer');
  });

  it('identical runs at once, some rejected and some accepted, in any order: a rejected answer is never served', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(fc.boolean(), { minLength: 2, maxLength: 4 }), async (scheduler, verdicts) => {
        const entries = new Map<string, CachedLLMStepResponse>();
        const store: ResponseCacheStore = {
          get: (key) => scheduler.schedule(Promise.resolve(entries.get(key))),
          set: (key, entry) => scheduler.schedule(Promise.resolve()).then(() => void entries.set(key, entry)),
        };
        let call = 0;
        const model = mockModel({ parts: () => [...textParts(verdicts[call++ % verdicts.length] === true ? `good ${call}` : `bad ${call}`), finishPart()] });
        const guard: Processor = { id: 'guard', processOutputStep: ({ text, abort }) => scheduler.schedule(Promise.resolve()).then(() => (text.includes('bad') ? abort('no') : undefined)) };
        const agent = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store })], outputProcessors: [guard] });
        const all = Promise.all(verdicts.map(() => collect(agent, 'same')));
        await scheduler.waitFor(all);
        // the writes still scheduled, then a later run: served an accepted answer or asks the model
        await scheduler.waitIdle();
        const runs = [...(await all), await scheduler.waitFor(collect(agent, 'same'))];
        // a rejected answer reached the run whose model call made it, and no other run
        const rejected = runs.flatMap((chunks) => [...new Set(textOf(chunks).match(/bad \d+/g) ?? [])]);
        expect(rejected).toEqual([...new Set(rejected)]);
        for (const chunks of runs) if (!chunks.some((chunk) => chunk.type === 'tripwire')) expect(textOf(chunks)).toMatch(/^good \d+$/);
      }),
      { numRuns: 40 },
    );
  });
});

/**
 * A processor after the cache that changes the request: a later `processInputStep` or `prepareStep`
 * (which runs after every processor) changing what the step offers is in the key (the cache keys
 * the call options as sent); a later `processLLMRequest`, which could rewrite the prompt after the
 * answer was looked up, is refused on a hit (a `ProcessorError` naming both processors).
 */
describe('ResponseCache: a processor after it that changes the request', () => {
  /** A model that answers with the user named in the prompt or in its provider options. */
  const echoUser = () =>
    mockModel({
      parts: ({ options }) => [
        ...textParts(`you are ${JSON.stringify(options.prompt).match(/user=(\w+)/)?.[1] ?? (options.providerOptions?.mock as { user?: string } | undefined)?.user}`),
        finishPart(),
      ],
    });
  const as = (user: string) => ({ requestContext: new RequestContext([['user', user]]) });

  /** The `ProcessorError` a run ended with, if any. */
  const errorOf = (chunks: readonly ChunkType[]) => chunks.flatMap((chunk) => (chunk.type === 'error' ? [chunk.payload.error] : [])).find(ProcessorError.isInstance);

  it('a later processLLMRequest that rewrites the prompt per user: every request is refused before the cache looks up or stores anything, naming both processors', async () => {
    const profile: Processor = {
      id: 'profile',
      processLLMRequest: ({ prompt, requestContext }) => ({ prompt: [...prompt, { role: 'user', content: [{ type: 'text', text: `user=${String(requestContext.get('user'))}` }] }] }),
    };
    const model = echoUser();
    const store = new RecordingStore();
    const agent = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store }), profile] });
    for (const user of ['alice', 'bob']) {
      const chunks = await collect(agent, 'who am I?', as(user));
      const error = errorOf(chunks);
      expect(error?.processorId).toBe('response-cache');
      expect(error?.hook).toBe('processLLMRequest');
      expect(error?.message).toContain('"profile"');
      expect(error?.message).toContain('Place "response-cache" after every processor that hooks processLLMRequest');
      expect(chunks.at(-1)?.type).toBe('error');
    }
    expect(model.calls).toHaveLength(0);
    expect(store.writes).toEqual([]);
  });

  it('a misplaced cache shares its store with a well-placed one: nothing keyed before the rewrite is ever written, so the well-placed agent serves no other user\'s answer', async () => {
    const profile: Processor = {
      id: 'profile',
      processLLMRequest: ({ prompt, requestContext }) => ({ prompt: [...prompt, { role: 'user', content: [{ type: 'text', text: `user=${String(requestContext.get('user'))}` }] }] }),
    };
    const store = new RecordingStore();
    const misplaced = new Agent({ id: 'a', model: echoUser(), inputProcessors: [new ResponseCache({ store }), profile] });
    const placed = new Agent({ id: 'a', model: echoUser(), inputProcessors: [profile, new ResponseCache({ store })] });
    expect(errorOf(await collect(misplaced, 'who am I?', as('alice')))?.processorId).toBe('response-cache');
    expect(textOf(await collect(placed, 'who am I?', as('bob')))).toBe('you are bob');
  });

  it('a processor of your own marked answersRequests is held to the same rule; unmarked, its { response } is refused when it comes', async () => {
    const rewrite: Processor = { id: 'rewrite', processLLMRequest: ({ prompt }) => ({ prompt }) };
    const lookedUp: string[] = [];
    const answer = { chunks: [{ type: 'text-delta', payload: { id: 't', text: 'cached' } }] } as never;
    const marked: Processor = { id: 'mine', answersRequests: true, processLLMRequest: () => void lookedUp.push('marked') };
    const unmarked: Processor = { id: 'mine', processLLMRequest: () => (lookedUp.push('unmarked'), { response: answer }) };
    const first = await collect(new Agent({ id: 'a', model: echoUser(), inputProcessors: [marked, rewrite] }), 'hi', as('alice'));
    expect(errorOf(first)?.message).toContain('answers requests (answersRequests)');
    const second = await collect(new Agent({ id: 'a', model: echoUser(), inputProcessors: [unmarked, rewrite] }), 'hi', as('alice'));
    expect(errorOf(second)?.message).toContain('it answered the request ({ response })');
    expect(lookedUp).toEqual(['unmarked']);
    const hostile = new Proxy({ id: 'hostile', processLLMRequest: () => undefined } as Processor, {
      get: (target, key) => {
        if (key === 'answersRequests') throw new Error('no');
        return Reflect.get(target, key);
      },
    });
    expect(errorOf(await collect(new Agent({ id: 'a', model: echoUser(), inputProcessors: [hostile, rewrite] }), 'hi', as('alice')))?.processorId).toBe('hostile');
  });

  it('the same processors in the order the docs give (the cache last): each user gets their own answer, and a repeat is served', async () => {
    const profile: Processor = {
      id: 'profile',
      processLLMRequest: ({ prompt, requestContext }) => ({ prompt: [...prompt, { role: 'user', content: [{ type: 'text', text: `user=${String(requestContext.get('user'))}` }] }] }),
    };
    const model = echoUser();
    const agent = new Agent({ id: 'a', model, inputProcessors: [profile, new ResponseCache()] });
    expect(textOf(await collect(agent, 'who am I?', as('alice')))).toBe('you are alice');
    expect(textOf(await collect(agent, 'who am I?', as('bob')))).toBe('you are bob');
    expect(textOf(await collect(agent, 'who am I?', as('alice')))).toBe('you are alice');
    expect(model.calls).toHaveLength(2);
  });

  it('a later processInputStep that sets provider options per user: users do not share answers', async () => {
    const perUser: Processor = { id: 'per-user', processInputStep: ({ requestContext }) => ({ providerOptions: { mock: { user: String(requestContext.get('user')) } } }) };
    const model = echoUser();
    const agent = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache(), perUser] });
    expect(textOf(await collect(agent, 'who am I?', as('alice')))).toBe('you are alice');
    expect(textOf(await collect(agent, 'who am I?', as('bob')))).toBe('you are bob');
    // each user's own answer is still served
    expect(textOf(await collect(agent, 'who am I?', as('alice')))).toBe('you are alice');
    expect(model.calls).toHaveLength(2);
  });

  it('prepareStep that sets provider options per user: users do not share answers', async () => {
    const model = echoUser();
    const agent = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache()] });
    const prepareStep = ({ requestContext }: { requestContext: RequestContext }) => ({ providerOptions: { mock: { user: String(requestContext.get('user')) } } });
    expect(textOf(await collect(agent, 'who am I?', { ...as('alice'), prepareStep }))).toBe('you are alice');
    expect(textOf(await collect(agent, 'who am I?', { ...as('bob'), prepareStep }))).toBe('you are bob');
    expect(textOf(await collect(agent, 'who am I?', { ...as('bob'), prepareStep }))).toBe('you are bob');
    expect(model.calls).toHaveLength(2);
  });

  it('whatever a later processInputStep or prepareStep changes in what is sent (tools, tool choice, settings, response format, active tools), users do not share answers', async () => {
    /** A model that answers with what it was sent besides the prompt. */
    const echoOptions = () => mockModel({ parts: ({ options }) => [...textParts(JSON.stringify({ ...options, prompt: undefined, abortSignal: undefined })), finishPart()] });
    const lookup = { description: 'Look a word up', inputSchema: z.object({ word: z.string() }), execute: () => 'found' };
    const tools: AgentToolSet = { lookup, define: { ...lookup, description: 'Define a word' } };
    type Change = (user: string) => Record<string, unknown>;
    const changes: Change[] = [
      (user) => ({ modelSettings: { temperature: user === 'alice' ? 0 : 1 } }),
      (user) => ({ activeTools: [user === 'alice' ? 'lookup' : 'define'] }),
      (user) => ({ toolChoice: user === 'alice' ? 'auto' : 'none' }),
      (user) => ({ tools: { lookup: { ...lookup, description: `Look a word up for ${user}` } } }),
      (user) => ({ structuredOutput: { schema: user === 'alice' ? z.object({ a: z.string() }) : z.object({ b: z.string() }) } }),
    ];
    for (const change of changes) {
      for (const where of ['processor', 'prepareStep'] as const) {
        const model = echoOptions();
        const changer: Processor = { id: 'changer', processInputStep: ({ requestContext }) => change(String(requestContext.get('user'))) as never };
        const agent = new Agent({ id: 'a', model, tools, inputProcessors: where === 'processor' ? [new ResponseCache(), changer] : [new ResponseCache()] });
        const options = (user: string) => ({ ...as(user), ...(where === 'prepareStep' ? { prepareStep: ({ requestContext }: { requestContext: RequestContext }) => change(String(requestContext.get('user'))) as never } : {}) });
        const alice = textOf(await collect(agent, 'q', options('alice')));
        const bob = textOf(await collect(agent, 'q', options('bob')));
        expect(bob, `${where}: ${change('bob') && JSON.stringify(Object.keys(change('bob')))}`).not.toBe(alice);
        expect(model.calls).toHaveLength(2);
      }
    }
  });
});

describe('ResponseCache under processorsMiddleware', () => {
  const prompt = 'What is the weather?';
  const callsOf = (model: MockModel) => model.calls.length;

  it('a step processOutputStep rejects is not served to a later identical call; an accepted one is', async () => {
    const store = new RecordingStore();
    const model = answering('bad answer', 'fine answer');
    const wrapped = wrapLanguageModel({ model, middleware: processorsMiddleware({ inputProcessors: [new ResponseCache({ store })], outputProcessors: [rejectBad(false)] }) });
    await expect(generateText({ model: wrapped, prompt })).rejects.toSatisfy(TripWire.isInstance);
    expect((await generateText({ model: wrapped, prompt })).text).toBe('fine answer');
    expect((await generateText({ model: wrapped, prompt })).text).toBe('fine answer');
    expect(callsOf(model)).toBe(2);
    expect(store.texts()).not.toContain('bad answer');
  });

  it('a call that fails or is cancelled after the model finished (a guard that throws, a reader that leaves) keeps its answer unservable', async () => {
    const store = new RecordingStore();
    const model = answering('unjudged answer', 'left answer', 'judged answer');
    let judged = 0;
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered: () => void = () => undefined;
    const secondJudging = new Promise<void>((resolve) => (entered = resolve));
    let done: () => void = () => undefined;
    const secondJudged = new Promise<void>((resolve) => (done = resolve));
    const judge: Processor = {
      id: 'judge',
      processOutputStep: async () => {
        if (judged++ === 0) throw new Error('the judge is down');
        if (judged === 2) {
          entered();
          await held;
          done();
        }
      },
    };
    const wrapped = wrapLanguageModel({ model, middleware: processorsMiddleware({ inputProcessors: [new ResponseCache({ store })], outputProcessors: [judge] }) });
    await expect(generateText({ model: wrapped, prompt })).rejects.toThrow();
    // a reader that leaves while the judge works on the answer (the model's text all read)
    const reader = (await wrapped.doStream({ prompt: [{ role: 'user', content: [{ type: 'text', text: prompt }] }] })).stream.getReader();
    const reading = (async () => {
      while (!(await reader.read()).done);
    })();
    await secondJudging;
    await reader.cancel();
    await reading;
    release();
    await secondJudged;
    expect((await generateText({ model: wrapped, prompt })).text).toBe('judged answer');
    expect((await generateText({ model: wrapped, prompt })).text).toBe('judged answer');
    expect(callsOf(model)).toBe(3);
  });

  it('tools of one name but another input schema, description, strictness, examples or provider options do not share an answer', async () => {
    const store = new RecordingStore();
    const variants: ToolSet[] = [
      { lookup: tool({ description: 'Look a word up', inputSchema: z.object({ word: z.string() }) }) },
      { lookup: tool({ description: 'Look a word up', inputSchema: z.object({ word: z.number() }) }) },
      { lookup: tool({ description: 'Delete a word', inputSchema: z.object({ word: z.string() }) }) },
      { lookup: tool({ description: 'Look a word up', inputSchema: z.object({ word: z.string() }), strict: true }) },
      { lookup: tool({ description: 'Look a word up', inputSchema: z.object({ word: z.string() }), inputExamples: [{ input: { word: 'x' } }] }) },
      { lookup: tool({ description: 'Look a word up', inputSchema: z.object({ word: z.string() }), providerOptions: { mock: { cacheControl: 'a' } } }) },
      { lookup: tool({ description: 'Look a word up', inputSchema: jsonSchema({ type: 'object', properties: { word: { type: 'string', maxLength: 3 } } }) }) },
    ];
    let calls = 0;
    for (const tools of variants) {
      const model = answering('answer');
      const wrapped = wrapLanguageModel({ model, middleware: processorsMiddleware({ inputProcessors: [new ResponseCache({ store })] }) });
      await generateText({ model: wrapped, prompt, tools });
      calls += callsOf(model);
    }
    expect(calls).toBe(variants.length);
    // the same definitions again: served
    const model = answering('answer');
    const wrapped = wrapLanguageModel({ model, middleware: processorsMiddleware({ inputProcessors: [new ResponseCache({ store })] }) });
    await generateText({ model: wrapped, prompt, tools: variants[1] });
    expect(callsOf(model)).toBe(0);
  });

  it('calls asking for JSON of other schemas do not share an answer, nor a call asking for text', async () => {
    const store = new RecordingStore();
    const formats: Array<LanguageModelV4CallOptions['responseFormat']> = [
      undefined,
      { type: 'json', schema: { type: 'object', properties: { name: { type: 'string' } } } },
      { type: 'json', schema: { type: 'object', properties: { id: { type: 'number' } } } },
      { type: 'json' },
    ];
    let calls = 0;
    for (const responseFormat of formats) {
      const model = answering('{"name":"x"}');
      const wrapped = wrapLanguageModel({ model, middleware: processorsMiddleware({ inputProcessors: [new ResponseCache({ store })] }) });
      const params: LanguageModelV4CallOptions = { prompt: [{ role: 'user', content: [{ type: 'text', text: prompt }] }], ...(responseFormat === undefined ? {} : { responseFormat }) };
      await drain((await wrapped.doStream(params)).stream);
      calls += callsOf(model);
      // the same format again: served
      const again = answering('{"name":"x"}');
      const rewrapped = wrapLanguageModel({ model: again, middleware: processorsMiddleware({ inputProcessors: [new ResponseCache({ store })] }) });
      await drain((await rewrapped.doStream(params)).stream);
      expect(callsOf(again)).toBe(0);
    }
    expect(calls).toBe(formats.length);
  });

  it('a long-lived caller signal given to many calls (served, answered, rejected, failed) keeps no listener of theirs', async () => {
    const shutdown = new AbortController();
    const before = getEventListeners(shutdown.signal, 'abort').length;
    const model = mockModel({ parts: ({ callIndex }) => (callIndex % 3 === 2 ? [{ type: 'error', error: new Error('boom') }] : [...textParts(callIndex % 3 === 1 ? 'bad answer' : 'fine answer'), finishPart()]) });
    const wrapped = wrapLanguageModel({ model, middleware: processorsMiddleware({ inputProcessors: [new ResponseCache()], outputProcessors: [rejectBad(false)] }) });
    for (let index = 0; index < 12; index++) {
      await generateText({ model: wrapped, prompt: `question ${index % 4}`, abortSignal: shutdown.signal }).catch(() => undefined);
      await streamText({ model: wrapped, prompt: `question ${index % 4}`, abortSignal: shutdown.signal, onError: () => undefined }).consumeStream();
    }
    expect(getEventListeners(shutdown.signal, 'abort').length).toBe(before);
  });

  it('a processor after the cache: provider options set per user are keyed (users do not share answers); a later processLLMRequest is refused before any lookup', async () => {
    const echo = () => mockModel({ parts: ({ options }) => [...textParts(`you are ${(options.providerOptions?.mock as { user?: string } | undefined)?.user ?? JSON.stringify(options.prompt).match(/user=(\w+)/)?.[1]}`), finishPart()] });
    const perUser = (user: string): Processor => ({ id: 'per-user', processInputStep: () => ({ providerOptions: { mock: { user } } }) });
    const store = new RecordingStore();
    const model = echo();
    const answer = async (user: string) => (await generateText({ model: wrapLanguageModel({ model, middleware: processorsMiddleware({ inputProcessors: [new ResponseCache({ store }), perUser(user)] }) }), prompt })).text;
    expect(await answer('alice')).toBe('you are alice');
    expect(await answer('bob')).toBe('you are bob');
    expect(await answer('alice')).toBe('you are alice');
    expect(callsOf(model)).toBe(2);
    const profile = (user: string): Processor => ({ id: 'profile', processLLMRequest: ({ prompt: sent }) => ({ prompt: [...sent, { role: 'user', content: [{ type: 'text', text: `user=${user}` }] }] }) });
    const rewriting = echo();
    const shared = new ResponseCache();
    const askShared = (user: string) => generateText({ model: wrapLanguageModel({ model: rewriting, middleware: processorsMiddleware({ inputProcessors: [shared, profile(user)] }) }), prompt: 'who am I?' });
    for (const user of ['alice', 'bob']) {
      const refused = await askShared(user).then(() => undefined, (error: unknown) => error);
      expect(ProcessorError.isInstance(refused) && [refused.processorId, refused.message.includes('"profile"')]).toEqual(['response-cache', true]);
    }
    expect(callsOf(rewriting)).toBe(0);
  });

  it('streamText: an accepted answer is served to the next identical call (no model call)', async () => {
    const store = new RecordingStore();
    const model = answering('cached answer');
    const wrapped = wrapLanguageModel({ model, middleware: processorsMiddleware({ inputProcessors: [new ResponseCache({ store })] }) });
    expect(await streamText({ model: wrapped, prompt }).text).toBe('cached answer');
    expect(await streamText({ model: wrapped, prompt }).text).toBe('cached answer');
    expect(callsOf(model)).toBe(1);
  });
});

/** Reads a V4 stream to its end. */
async function drain(stream: ReadableStream<unknown>): Promise<void> {
  const reader = stream.getReader();
  while (!(await reader.read()).done);
}

describe('ResponseCache: hostile keys, stores and options', () => {
  const run = async (store: ResponseCacheStore, options: ResponseCacheOptions = {}, callOptions: Parameters<Agent['stream$']>[1] = {}) => {
    const model = answering('fresh');
    const errors: ProcessorError[] = [];
    const agent = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store, storeTimeoutMs: 50, onError: (error) => void errors.push(error), ...options })] });
    const chunks = await collect(agent, 'q', callOptions);
    return { chunks, model, errors };
  };
  const hostile = (trap: string) =>
    new Proxy(
      {},
      {
        get: () => {
          throw new Error(`trap ${trap}`);
        },
        has: () => {
          throw new Error(`trap ${trap}`);
        },
        ownKeys: () => {
          throw new Error(`trap ${trap}`);
        },
        getPrototypeOf: () => {
          throw new Error(`trap ${trap}`);
        },
      },
    );

  it('a storeTimeoutMs a timer cannot wait for (above 2^31 - 1 ms: Node fires it at once) is refused when the cache is made', () => {
    for (const storeTimeoutMs of [2 ** 31, 2 ** 40, Number.POSITIVE_INFINITY]) expect(() => new ResponseCache({ storeTimeoutMs })).toThrow(InvalidProcessorOptionError);
    expect(() => new ResponseCache({ storeTimeoutMs: 2 ** 31 - 1 })).not.toThrow();
  });

  it.each([
    ['get returns a Proxy that throws on every trap', { get: () => hostile('get'), set: () => undefined }],
    ['get returns an object whose then getter throws', { get: () => Object.defineProperty({}, 'then', { get: () => { throw new Error('then'); } }), set: () => undefined }],
    ['get returns an entry whose fields throw when read', { get: (key: string) => Object.defineProperties({ key, accepted: true }, { chunks: { get: () => { throw new Error('chunks'); }, enumerable: true } }), set: () => undefined }],
    ['get returns an entry of chunks that throw when read', { get: (key: string) => ({ key, accepted: true, chunks: [hostile('chunk')] }), set: () => undefined }],
    ['get returns a thenable whose then throws', { get: () => ({ then: () => { throw new Error('then'); } }), set: () => undefined }],
    ['set returns a Proxy that throws on every trap', { get: () => undefined, set: () => hostile('set') }],
    ['set returns an object whose then getter throws', { get: () => undefined, set: () => Object.defineProperty({}, 'then', { get: () => { throw new Error('then'); } }) }],
  ] as unknown as Array<[string, ResponseCacheStore]>)('%s: the run answers from the model and the failure is reported', async (_label, store) => {
    const { chunks, model, errors } = await run(store);
    expect(chunks.filter((chunk) => chunk.type === 'error')).toEqual([]);
    expect(textOf(chunks)).toBe('fresh');
    expect(model.calls).toHaveLength(1);
    expect(errors.length).toBeGreaterThan(0);
    for (const error of errors) expect(ProcessorError.isInstance(error)).toBe(true);
  });

  it('provider options with a cycle, a symbol, a function or a class instance: the run answers, nothing is cached, the cache says why', async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const value of [cyclic, Symbol('s'), () => 'x', new Map([['a', 1]])]) {
      const store = new RecordingStore();
      const { chunks, errors } = await run(store, {}, { providerOptions: { mock: { value } } as never });
      expect(chunks.filter((chunk) => chunk.type === 'error')).toEqual([]);
      expect(textOf(chunks)).toBe('fresh');
      expect(store.writes).toEqual([]);
      // keyed as sent: the provider options cannot be, so the request is not cached
      expect(errors.map((error) => error.hook)).toContain('processLLMRequest');
    }
  });

  it('a huge prompt (8 MB, a million small parts) is keyed and served, or not cached: never a failed run', async () => {
    const store = new RecordingStore();
    const model = answering('fresh');
    const agent = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store })] });
    const huge = 'x'.repeat(8_000_000);
    expect(textOf(await collect(agent, huge))).toBe('fresh');
    expect(textOf(await collect(agent, huge))).toBe('fresh');
    expect(model.calls).toHaveLength(1);
    const context = new RequestContext([['tenant', Array.from({ length: 1_100_000 }, (_, index) => index)]]);
    const many = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store, requestContextKeys: ['tenant'] })] });
    const chunks = await collect(many, 'q', { requestContext: context });
    expect(textOf(chunks)).toBe('fresh');
  }, 60_000);

  it('two caches in one agent (a fast local one, a shared one keyed per tenant): refused before either looks anything up (only the last may answer); one cache keyed per tenant keeps tenants apart', async () => {
    const local = new RecordingStore();
    const shared = new RecordingStore();
    const model = answering('one', 'two', 'three');
    const agent = new Agent({
      id: 'a',
      model,
      inputProcessors: [new ResponseCache({ store: local }), new ResponseCache({ store: shared, requestContextKeys: ['tenant'] })],
    });
    const tenant = (name: string) => ({ requestContext: new RequestContext([['tenant', name]]) });
    const acme = await collect(agent, 'q', tenant('acme'));
    expect(textOf(acme)).toBe('');
    const refused = acme.flatMap((chunk) => (chunk.type === 'error' ? [chunk.payload.error] : []));
    expect(refused).toHaveLength(1);
    expect(ProcessorError.isInstance(refused[0]) && refused[0].processorId).toBe('response-cache');
    expect(String((refused[0] as Error).message)).toMatch(/processor "response-cache" \(index 1\) after it/);
    expect(model.calls).toHaveLength(0);
    expect(local.writes).toEqual([]);
    expect(shared.writes).toEqual([]);
    const sharedOnly = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store: shared, requestContextKeys: ['tenant'] })] });
    expect(textOf(await collect(sharedOnly, 'q', tenant('acme')))).toBe('one');
    expect(textOf(await collect(sharedOnly, 'q', tenant('globex')))).toBe('two');
    expect(textOf(await collect(sharedOnly, 'q', tenant('acme')))).toBe('one');
  });

  it('hooks called without a state (a unit test of the hook) neither fail nor remember anything', () => {
    const cache = new ResponseCache();
    const args = { tools: undefined, activeTools: undefined, toolChoice: undefined, providerOptions: undefined, structuredOutput: undefined } as unknown as Parameters<ResponseCache['processInputStep']>[0];
    expect(() => cache.processInputStep(args)).not.toThrow();
  });

  it('an entry read back is served only as an accepted answer: one written while its step waited, or emptied after a rejection, is a miss', async () => {
    // the entry a run writes when its model finished the step (not yet accepted), with its digest
    const written: Array<Record<string, unknown>> = [];
    const writer = new Agent({ id: 'a', model: answering('waiting'), inputProcessors: [new ResponseCache({ store: { get: () => undefined, set: (_key, value) => void written.push(value as never) } })] });
    await collect(writer, 'q');
    const waiting = written.find((entry) => entry.accepted === undefined) as Record<string, unknown>;
    expect(entryText(waiting as never)).toBe('waiting');
    const model = answering('fresh');
    const entries: Array<Record<string, unknown>> = [waiting, { ...waiting, chunks: [] }, { ...waiting, chunks: [], accepted: true }];
    for (const entry of entries) {
      const agent = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store: { get: () => entry as never, set: () => undefined } })] });
      expect(textOf(await collect(agent, 'q'))).toBe('fresh');
    }
    const accepted = { ...waiting, accepted: true };
    const served = new Agent({ id: 'a', model, inputProcessors: [new ResponseCache({ store: { get: () => accepted as never, set: () => undefined } })] });
    expect(textOf(await collect(served, 'q'))).toBe('waiting');
  });
});
