import { describe, expect, it } from 'vitest';
import { firstValueFrom, of } from 'rxjs';
import { z } from 'zod';
import { processInputStep, type StepInput } from '../../src/operators/process-input-step.js';
import { ModelResolutionError } from '../../src/contract/errors/model-resolution-error.js';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import type { Processor, ProcessInputStepArgs } from '../../src/contract/processor-types.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { createTestScheduler } from '../../src/testing/test-scheduler.js';
import { createRunContext } from '../../src/operators/run-context.js';
import { describeMarbleChecklist } from './marble-checklist.js';
import { errorOf, idsAndTexts, listWith, testContext, user } from './helpers.js';

const model = mockModel({ modelId: 'base' });

describeMarbleChecklist<StepInput>('processInputStep', {
  hook: 'processInputStep',
  operator: processInputStep,
  setup: () => ({
    ctx: testContext({ messageList: listWith([user('u1', 'hi')]) }),
    a: { stepNumber: 0, model },
    b: { stepNumber: 1, model },
  }),
});

describe('processInputStep', () => {
  it('chains: processor N+1 sees what processor N set, and the step carries the final values', async () => {
    const ctx = testContext({ messageList: listWith([user('u1', 'hi')], { system: ['Original.'] }) });
    const tools = { search: { description: 'search', execute: () => 'found' } };
    const schema = z.object({ answer: z.string() });
    const first: Processor = {
      id: 'first',
      processInputStep: () => ({
        model: 'fast-model',
        tools,
        toolChoice: 'required',
        activeTools: ['search'],
        providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
        modelSettings: { temperature: 0.1 },
        structuredOutput: { schema },
        systemMessages: [{ role: 'system', content: 'Replaced.' }],
      }),
    };
    const seen: ProcessInputStepArgs[] = [];
    const second: Processor = { id: 'second', processInputStep: (args) => void seen.push(args) };
    const step = await firstValueFrom(of<StepInput>({ stepNumber: 0, model }).pipe(processInputStep([first, second], ctx)));
    const args = seen[0] as ProcessInputStepArgs;
    expect(args.model.modelId).toBe('fast-model');
    expect(args.tools).toBe(tools);
    expect(args.toolChoice).toBe('required');
    expect(args.activeTools).toEqual(['search']);
    expect(args.providerOptions).toEqual({ anthropic: { cacheControl: { type: 'ephemeral' } } });
    expect(args.modelSettings).toEqual({ temperature: 0.1 });
    expect(args.structuredOutput?.schema).toBe(schema);
    expect(args.systemMessages).toEqual([{ role: 'system', content: 'Replaced.' }]);
    expect(step.model.modelId).toBe('fast-model');
    expect(step.toolChoice).toBe('required');
    expect(step.activeTools).toEqual(['search']);
  });

  it('follows the specification\'s chaining example: model then toolChoice', async () => {
    const first: Processor = { id: 'p1', processInputStep: ({ model: current }) => ({ model: `${current.modelId}-mini` }) };
    const second: Processor = { id: 'p2', processInputStep: () => ({ toolChoice: 'none' }) };
    const step = await firstValueFrom(
      of<StepInput>({ stepNumber: 0, model: mockModel({ modelId: 'gpt-5.4' }) }).pipe(processInputStep([first, second], testContext())),
    );
    expect(step.model.modelId).toBe('gpt-5.4-mini');
    expect(step.toolChoice).toBe('none');
  });

  it('gives the hook all messages, stepNumber, steps and the current step values', async () => {
    const ctx = testContext({ messageList: listWith([user('u1', 'hi')]), steps: [] });
    const seen: ProcessInputStepArgs[] = [];
    const spy: Processor = { id: 'spy', processInputStep: (args) => void seen.push(args) };
    await firstValueFrom(of<StepInput>({ stepNumber: 3, model, toolChoice: 'auto' }).pipe(processInputStep([spy], ctx)));
    const args = seen[0] as ProcessInputStepArgs;
    expect(idsAndTexts(args.messages)).toEqual([['u1', 'hi']]);
    expect(args.stepNumber).toBe(3);
    expect(args.steps).toEqual(ctx.steps); // a copy of the run's list (red-team-2026-12d: a hook cannot drop or add steps)
    expect(args.model).toBe(model);
    expect(args.toolChoice).toBe('auto');
    expect(args.messageList).toBe(ctx.messageList);
  });

  it('lets an explicit undefined clear a value (every returned key replaces the current one)', async () => {
    const clear: Processor = { id: 'clear', processInputStep: () => ({ activeTools: undefined }) };
    const step = await firstValueFrom(of<StepInput>({ stepNumber: 0, model, activeTools: ['a'] }).pipe(processInputStep([clear], testContext())));
    expect(step.activeTools).toBeUndefined();
  });

  it('fails with a ProcessorError (cause ModelResolutionError) for a model id the context cannot resolve', async () => {
    const bad: Processor = { id: 'bad-model', processInputStep: () => ({ model: 'nowhere/none' }) };
    const error = await errorOf(of<StepInput>({ stepNumber: 0, model }).pipe(processInputStep([bad], createRunContext())));
    expect(ProcessorError.isInstance(error)).toBe(true);
    expect((error as ProcessorError).processorId).toBe('bad-model');
    expect(ModelResolutionError.isInstance((error as ProcessorError).cause)).toBe(true);
  });

  it('returns a step object for a returned array, keeping the step values', () => {
    const ctx = testContext({ messageList: listWith([user('u1', 'hi'), user('u2', 'there')]) });
    const keepFirst: Processor = { id: 'keep-first', processInputStep: ({ messages }) => messages.slice(0, 1) };
    const step: StepInput = { stepNumber: 0, model, toolChoice: 'auto' };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-s|', { s: step }).pipe(processInputStep([keepFirst], ctx))).toBe('-s|', { s: step });
    });
    expect(idsAndTexts(ctx.messageList.get.all.db())).toEqual([['u1', 'hi']]);
  });

  it('rejects a non-object result with a clear ProcessorError', async () => {
    const weird = { id: 'weird', processInputStep: () => 42 } as unknown as Processor;
    const error = await errorOf(of<StepInput>({ stepNumber: 0, model }).pipe(processInputStep([weird], testContext())));
    expect(ProcessorError.isInstance(error)).toBe(true);
    expect((error as ProcessorError).message).toMatch(/returned number/);
  });
});
