import { describe, expect, it } from 'vitest';
import { firstValueFrom, of } from 'rxjs';
import type { LanguageModelV4Prompt } from '@ai-sdk/provider';
import { processLLMRequest, sentCallOptions, type LLMRequest } from '../../src/operators/process-llm-request.js';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import type { CachedLLMStepResponse, Processor, ProcessLLMRequestArgs } from '../../src/contract/processor-types.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { createTestScheduler } from '../../src/testing/test-scheduler.js';
import { describeMarbleChecklist } from './marble-checklist.js';
import { errorOf, idsAndTexts, listWith, testContext, user } from './helpers.js';

const model = mockModel({ modelId: 'base' });
const prompt = (text: string): LanguageModelV4Prompt => [{ role: 'user', content: [{ type: 'text', text }] }];
const cached = (text: string): CachedLLMStepResponse => ({ chunks: [{ type: 'text-delta', payload: { id: '1', text } }] });

describeMarbleChecklist<LLMRequest>('processLLMRequest', {
  hook: 'processLLMRequest',
  operator: processLLMRequest,
  setup: () => ({
    ctx: testContext(),
    a: { prompt: prompt('first'), model, stepNumber: 0 },
    b: { prompt: prompt('second'), model, stepNumber: 1 },
  }),
});

describe('processLLMRequest', () => {
  it('threads the prompt: each processor sees the previous one\'s prompt', async () => {
    const seen: LanguageModelV4Prompt[] = [];
    const rewrite: Processor = { id: 'rewrite', processLLMRequest: () => ({ prompt: prompt('rewritten') }) };
    const spy: Processor = { id: 'spy', processLLMRequest: ({ prompt: current }) => void seen.push(current) };
    const request = await firstValueFrom(of<LLMRequest>({ prompt: prompt('original'), model, stepNumber: 0 }).pipe(processLLMRequest([rewrite, spy], testContext())));
    expect(seen).toEqual([prompt('rewritten')]);
    expect(request.prompt).toEqual(prompt('rewritten'));
  });

  it('honours an intentionally empty prompt', async () => {
    const empty: Processor = { id: 'empty', processLLMRequest: () => ({ prompt: [] }) };
    const request = await firstValueFrom(of<LLMRequest>({ prompt: prompt('x'), model, stepNumber: 0 }).pipe(processLLMRequest([empty], testContext())));
    expect(request.prompt).toEqual([]);
  });

  it('keeps the prompt when a result has no prompt property', async () => {
    const other: Processor = { id: 'other', processLLMRequest: () => ({}) };
    const request = await firstValueFrom(of<LLMRequest>({ prompt: prompt('x'), model, stepNumber: 0 }).pipe(processLLMRequest([other], testContext())));
    expect(request.prompt).toEqual(prompt('x'));
    expect(request.response).toBeUndefined();
  });

  it('a response from the last processor that hooks processLLMRequest replaces the call (processors without the hook after it do not count)', () => {
    const rewrite: Processor = { id: 'rewrite', processLLMRequest: () => ({ prompt: prompt('rewritten') }) };
    const cache: Processor = { id: 'cache', processLLMRequest: () => ({ response: cached('one') }) };
    const outputOnly: Processor = { id: 'guard', processOutputStep: () => undefined };
    const request: LLMRequest = { prompt: prompt('x'), model, stepNumber: 0 };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-r|', { r: request }).pipe(processLLMRequest([rewrite, cache, outputOnly], testContext()))).toBe('-r|', {
        r: { ...request, prompt: prompt('rewritten'), response: cached('one') },
      });
    });
  });

  it('a response with a later processor that hooks processLLMRequest errors with a ProcessorError naming both; the later hook never runs (fail closed)', () => {
    let laterRan = false;
    const cache: Processor = { id: 'cache', processLLMRequest: () => ({ response: cached('one') }) };
    const profile: Processor = {
      id: 'profile',
      processLLMRequest: () => {
        laterRan = true;
        return { prompt: prompt('rewritten per user') };
      },
    };
    const refusal = new ProcessorError(
      'cache',
      'processLLMRequest',
      'it answered the request ({ response }), but processor "profile" (index 1) after it also hooks processLLMRequest and may change the request the answer was found for, so the answer may be another request\'s (another user\'s). Place "cache" after every processor that hooks processLLMRequest.',
    );
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-r|', { r: { prompt: prompt('x'), model, stepNumber: 0 } }).pipe(processLLMRequest([cache, profile], testContext()))).toBe('-#', undefined, refusal);
    });
    expect(laterRan).toBe(false);
  });

  it('a processor marked answersRequests before one that hooks processLLMRequest: the request errors before any hook runs (no lookup, nothing stored)', () => {
    const ran: string[] = [];
    const cache: Processor = { id: 'cache', answersRequests: true, processLLMRequest: () => void ran.push('cache') };
    const profile: Processor = { id: 'profile', processLLMRequest: () => void ran.push('profile') };
    const refusal = new ProcessorError(
      'cache',
      'processLLMRequest',
      'it answers requests (answersRequests), but processor "profile" (index 1) after it also hooks processLLMRequest and may change the request an answer would be looked up and stored for. Place "cache" after every processor that hooks processLLMRequest.',
    );
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-r|', { r: { prompt: prompt('x'), model, stepNumber: 0 } }).pipe(processLLMRequest([cache, profile], testContext()))).toBe('-#', undefined, refusal);
      // last, it answers as any processor does
      expectObservable(cold('-r|', { r: { prompt: prompt('x'), model, stepNumber: 0 } }).pipe(processLLMRequest([profile, cache], testContext()))).toBe('-r|', { r: { prompt: prompt('x'), model, stepNumber: 0 } });
    });
    expect(ran).toEqual(['profile', 'cache']);
  });

  it('a miss (no response) with a later processLLMRequest is not refused: the request goes on, rewritten', () => {
    const cache: Processor = { id: 'cache', processLLMRequest: () => undefined };
    const profile: Processor = { id: 'profile', processLLMRequest: () => ({ prompt: prompt('rewritten') }) };
    const request: LLMRequest = { prompt: prompt('x'), model, stepNumber: 0 };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-r-s|', { r: request, s: request }).pipe(processLLMRequest([cache, profile], testContext()))).toBe('-r-s|', {
        r: { ...request, prompt: prompt('rewritten') },
        s: { ...request, prompt: prompt('rewritten') },
      });
    });
  });

  it('two processors answering (two caches): the first one\'s response is refused, the second\'s alone is served', async () => {
    const first: Processor = { id: 'cache-1', processLLMRequest: ({ stepNumber }) => (stepNumber === 0 ? { response: cached('one') } : undefined) };
    const second: Processor = { id: 'cache-2', processLLMRequest: () => ({ response: cached('two') }) };
    const ctx = testContext();
    const refused = await errorOf(of<LLMRequest>({ prompt: prompt('x'), model, stepNumber: 0 }).pipe(processLLMRequest([first, second], ctx)));
    expect(ProcessorError.isInstance(refused) && [refused.processorId, refused.message.includes('"cache-2"')]).toEqual(['cache-1', true]);
    const served = await firstValueFrom(of<LLMRequest>({ prompt: prompt('x'), model, stepNumber: 1 }).pipe(processLLMRequest([first, second], ctx)));
    expect(served.response).toEqual(cached('two'));
  });

  it('gives each hook the request\'s callOptions (what is sent besides the prompt), frozen: a hook cannot change them for the next one', () => {
    const sent = sentCallOptions({
      prompt: prompt('x'),
      temperature: 0,
      tools: [{ type: 'function', name: 'lookup', inputSchema: { type: 'object' } }],
      providerOptions: { mock: { user: 'alice' } },
      abortSignal: new AbortController().signal,
    });
    expect(sent).toEqual({ temperature: 0, tools: [{ type: 'function', name: 'lookup', inputSchema: { type: 'object' } }], providerOptions: { mock: { user: 'alice' } } });
    expect(Object.isFrozen(sent)).toBe(true);
    const seen: Array<ProcessLLMRequestArgs['callOptions']> = [];
    const meddler: Processor = {
      id: 'meddler',
      processLLMRequest: ({ callOptions }) => {
        seen.push(callOptions);
        expect(() => Object.assign(callOptions as object, { temperature: 2 })).toThrow(TypeError);
      },
    };
    const spy: Processor = { id: 'spy', processLLMRequest: ({ callOptions }) => void seen.push(callOptions) };
    const request: LLMRequest = { prompt: prompt('x'), model, stepNumber: 0, callOptions: sent };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-r|', { r: request }).pipe(processLLMRequest([meddler, spy], testContext()))).toBe('-r|', { r: request });
    });
    expect(seen).toEqual([sent, sent]);
    expect(seen[1]?.temperature).toBe(0);
  });

  it('a request without callOptions gives the hooks none (the field is absent)', async () => {
    const seen: ProcessLLMRequestArgs[] = [];
    const spy: Processor = { id: 'spy', processLLMRequest: (args) => void seen.push(args) };
    await firstValueFrom(of<LLMRequest>({ prompt: prompt('x'), model, stepNumber: 0 }).pipe(processLLMRequest([spy], testContext())));
    expect('callOptions' in (seen[0] as object)).toBe(false);
  });

  it('never writes the rewritten prompt back to the message list', () => {
    const ctx = testContext({ messageList: listWith([user('u1', 'original')]) });
    const rewrite: Processor = { id: 'rewrite', processLLMRequest: () => ({ prompt: prompt('rewritten') }) };
    const request: LLMRequest = { prompt: prompt('original'), model, stepNumber: 0 };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-r|', { r: request }).pipe(processLLMRequest([rewrite], ctx))).toBe('-r|', {
        r: { ...request, prompt: prompt('rewritten') },
      });
    });
    expect(request.prompt).toEqual(prompt('original')); // the incoming request object is not mutated
    expect(idsAndTexts(ctx.messageList.get.all.db())).toEqual([['u1', 'original']]);
  });

  it('gives the hook prompt, model, stepNumber, steps, state and messageList', async () => {
    const ctx = testContext();
    const seen: ProcessLLMRequestArgs[] = [];
    const spy: Processor = { id: 'spy', processLLMRequest: (args) => void seen.push(args) };
    await firstValueFrom(of<LLMRequest>({ prompt: prompt('x'), model, stepNumber: 2 }).pipe(processLLMRequest([spy], ctx)));
    const args = seen[0] as ProcessLLMRequestArgs;
    expect([args.prompt, args.model, args.stepNumber, args.steps, args.state, args.messageList]).toEqual([
      prompt('x'),
      model,
      2,
      ctx.steps,
      ctx.stateFor('spy'),
      ctx.messageList,
    ]);
  });

  it('rejects a prompt that is not an array, and a response without chunks', async () => {
    const badPrompt = { id: 'bad-prompt', processLLMRequest: () => ({ prompt: 'hello' }) } as unknown as Processor;
    const badResponse = { id: 'bad-response', processLLMRequest: () => ({ response: {} }) } as unknown as Processor;
    const request: LLMRequest = { prompt: prompt('x'), model, stepNumber: 0 };
    const promptError = await errorOf(of(request).pipe(processLLMRequest([badPrompt], testContext())));
    const responseError = await errorOf(of(request).pipe(processLLMRequest([badResponse], testContext())));
    expect(ProcessorError.isInstance(promptError) && promptError.processorId).toBe('bad-prompt');
    expect(ProcessorError.isInstance(responseError) && responseError.processorId).toBe('bad-response');
  });
});
