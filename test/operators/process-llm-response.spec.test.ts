import { describe, expect, it } from 'vitest';
import { firstValueFrom, of } from 'rxjs';
import { processLLMRequest, type LLMRequest } from '../../src/operators/process-llm-request.js';
import { processLLMResponse, type LLMResponse } from '../../src/operators/process-llm-response.js';
import type { Processor, ProcessLLMResponseArgs } from '../../src/contract/processor-types.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { describeMarbleChecklist } from './marble-checklist.js';
import { testContext } from './helpers.js';

const model = mockModel({ modelId: 'base' });
const response = (text: string, fromCache = false): LLMResponse => ({
  chunks: [{ type: 'text-delta', payload: { id: '1', text } }],
  model,
  stepNumber: 0,
  fromCache,
});

describeMarbleChecklist<LLMResponse>('processLLMResponse', {
  hook: 'processLLMResponse',
  operator: processLLMResponse,
  setup: () => ({ ctx: testContext(), a: response('first'), b: response('second') }),
});

describe('processLLMResponse', () => {
  it('gives chunks, model, stepNumber, steps, fromCache, warnings, request and rawResponse', async () => {
    const ctx = testContext();
    const seen: ProcessLLMResponseArgs[] = [];
    const spy: Processor = { id: 'spy', processLLMResponse: (args) => void seen.push(args) };
    const input: LLMResponse = { ...response('hi', true), warnings: [{ type: 'other', message: 'w' }], request: { body: 'b' }, rawResponse: { raw: 1 } };
    await firstValueFrom(of(input).pipe(processLLMResponse([spy], ctx)));
    const args = seen[0] as ProcessLLMResponseArgs;
    expect(args.chunks).toEqual(input.chunks);
    expect(args.model).toBe(model);
    expect(args.stepNumber).toBe(0);
    expect(args.steps).toEqual(ctx.steps); // a copy of the run's list (red-team-2026-12d: a hook cannot drop or add steps)
    expect(args.fromCache).toBe(true);
    expect(args.warnings).toEqual([{ type: 'other', message: 'w' }]);
    expect(args.request).toEqual({ body: 'b' });
    expect(args.rawResponse).toEqual({ raw: 1 });
  });

  it('shares state with the same processor\'s processLLMRequest (a cache key stashed before the call)', async () => {
    const ctx = testContext();
    const written: Array<[string, string]> = [];
    const cache: Processor = {
      id: 'cache',
      processLLMRequest: ({ state, stepNumber }) => {
        state.key = `step-${stepNumber}`;
      },
      processLLMResponse: ({ state, chunks, fromCache }) => {
        if (!fromCache) written.push([state.key as string, JSON.stringify(chunks)]);
      },
    };
    const request: LLMRequest = { prompt: [], model, stepNumber: 4 };
    await firstValueFrom(of(request).pipe(processLLMRequest([cache], ctx)));
    await firstValueFrom(of(response('hi')).pipe(processLLMResponse([cache], ctx)));
    await firstValueFrom(of(response('again', true)).pipe(processLLMResponse([cache], ctx)));
    expect(written).toEqual([['step-4', JSON.stringify(response('hi').chunks)]]);
  });
});
