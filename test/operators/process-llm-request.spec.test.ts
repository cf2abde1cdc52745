import { describe, expect, it } from 'vitest';
import { firstValueFrom, of } from 'rxjs';
import type { LanguageModelV4Prompt } from '@ai-sdk/provider';
import { processLLMRequest, type LLMRequest } from '../../src/operators/process-llm-request.js';
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

  it('lets the first returned response win while later processors still run', async () => {
    let laterRan = false;
    const first: Processor = { id: 'cache-1', processLLMRequest: () => ({ response: cached('one') }) };
    const second: Processor = {
      id: 'cache-2',
      processLLMRequest: () => {
        laterRan = true;
        return { response: cached('two') };
      },
    };
    const request = await firstValueFrom(of<LLMRequest>({ prompt: prompt('x'), model, stepNumber: 0 }).pipe(processLLMRequest([first, second], testContext())));
    expect(request.response).toEqual(cached('one'));
    expect(laterRan).toBe(true);
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
