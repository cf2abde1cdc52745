import { describe, expect, it } from 'vitest';
import { firstValueFrom, of } from 'rxjs';
import { processOutputStep, type StepOutput } from '../../src/operators/process-output-step.js';
import type { Processor, ProcessOutputStepArgs } from '../../src/contract/processor-types.js';
import { testUsage } from '../../src/testing/chunk-builders.js';
import { describeMarbleChecklist } from './marble-checklist.js';
import { assistant, idsAndTexts, listWith, testContext, user } from './helpers.js';

const output = (text: string, stepNumber = 0): StepOutput => ({
  stepNumber,
  finishReason: 'stop',
  toolCalls: [],
  text,
  usage: testUsage({ inputTokens: 1, outputTokens: 2 }),
});

describeMarbleChecklist<StepOutput>('processOutputStep', {
  hook: 'processOutputStep',
  operator: processOutputStep,
  setup: () => ({ ctx: testContext({ messageList: listWith([user('u1', 'hi')]) }), a: output('one'), b: output('two', 1) }),
});

describe('processOutputStep', () => {
  it('gives the step\'s text, toolCalls, finishReason, usage, all messages, system messages and steps', async () => {
    const ctx = testContext({ messageList: listWith([user('u1', 'hi')], { response: [assistant('a1', 'hello')], system: ['Sys.'] }) });
    const seen: ProcessOutputStepArgs[] = [];
    const spy: Processor = { id: 'spy', processOutputStep: (args) => void seen.push(args) };
    const step: StepOutput = {
      ...output('hello', 2),
      finishReason: 'tool-calls',
      toolCalls: [{ toolCallId: 'c1', toolName: 'search', args: { q: 'x' } }],
      providerMetadata: { bedrock: { trace: 'x' } },
    };
    await firstValueFrom(of(step).pipe(processOutputStep([spy], ctx)));
    const args = seen[0] as ProcessOutputStepArgs;
    expect(args.text).toBe('hello');
    expect(args.stepNumber).toBe(2);
    expect(args.finishReason).toBe('tool-calls');
    expect(args.toolCalls).toEqual(step.toolCalls);
    expect(args.usage).toEqual(step.usage);
    expect(args.providerMetadata).toEqual({ bedrock: { trace: 'x' } });
    expect(idsAndTexts(args.messages)).toEqual([
      ['u1', 'hi'],
      ['a1', 'hello'],
    ]);
    expect(args.systemMessages).toEqual([{ role: 'system', content: 'Sys.' }]);
    expect(args.steps).toEqual(ctx.steps); // a copy of the run's list (red-team-2026-12d: a hook cannot drop or add steps)
  });

  it('applies a returned array to the list (a message removed, response source kept)', async () => {
    const ctx = testContext({ messageList: listWith([user('u1', 'hi')], { response: [assistant('a1', 'bad'), assistant('a2', 'good')] }) });
    const dropBad: Processor = { id: 'drop-bad', processOutputStep: ({ messages }) => messages.filter((message) => message.id !== 'a1') };
    await firstValueFrom(of(output('x')).pipe(processOutputStep([dropBad], ctx)));
    expect(idsAndTexts(ctx.messageList.get.all.db())).toEqual([
      ['u1', 'hi'],
      ['a2', 'good'],
    ]);
    expect(idsAndTexts(ctx.messageList.get.response.db())).toEqual([['a2', 'good']]);
  });

  it('sees retryCount from the run context', async () => {
    const ctx = testContext({ retryCount: 2 });
    const counts: number[] = [];
    const spy: Processor = { id: 'spy', processOutputStep: ({ retryCount }) => void counts.push(retryCount) };
    await firstValueFrom(of(output('x')).pipe(processOutputStep([spy], ctx)));
    expect(counts).toEqual([2]);
  });
});
