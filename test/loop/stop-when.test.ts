/**
 * `stopWhen`: stop conditions in the AI SDK's shape (`({ steps }) => boolean | PromiseLike<boolean>`)
 * end the tool loop; they replace the implicit `maxSteps` limit, and an explicit `maxSteps` still caps.
 */
import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { hasToolCall as aiHasToolCall, stepCountIs as aiStepCountIs } from 'ai';
import { Agent } from '../../src/loop/agent.js';
import type { AgentConfig } from '../../src/loop/agent-types.js';
import { hasToolCall, stepCountIs, type StopCondition } from '../../src/loop/step/stop-condition.js';
import { StopConditionError } from '../../src/loop/step/stop-condition-error.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { waitFor } from '../support/wait-for.js';
import type { Processor } from '../../src/contract/processor-types.js';

/** A model that asks for `tick` at every step (ids call-0, call-1, …), for ever; `done` at step `doneAt`. */
function looping(doneAt = Number.POSITIVE_INFINITY) {
  return mockModel({
    parts: ({ callIndex }) =>
      callIndex === doneAt
        ? [...toolCallParts('done', {}, { toolCallId: `call-${callIndex}` }), finishPart('tool-calls')]
        : [...toolCallParts('tick', { n: callIndex }, { toolCallId: `call-${callIndex}` }), finishPart('tool-calls')],
  });
}

const executed: string[] = [];
const tools = {
  tick: { inputSchema: z.object({ n: z.number() }), execute: async ({ n }: { n: number }) => (executed.push(`tick ${n}`), n) },
  done: { inputSchema: z.object({}), execute: async () => (executed.push('done'), 'ok') },
};

function agent(config: Partial<AgentConfig> = {}, model = looping()) {
  executed.length = 0;
  return { model, agent: new Agent({ id: 'a', model, tools, ...config }) };
}

describe('stopWhen', () => {
  it('without stopWhen the loop stops at the default of 5 steps', async () => {
    const { model, agent: subject } = agent();
    const result = await subject.generate('go');
    expect(result.steps).toHaveLength(5);
    expect(model.calls).toHaveLength(5);
  });

  it('stepCountIs(n) replaces the default limit: 8 steps, no 9th model call', async () => {
    const { model, agent: subject } = agent({ stopWhen: stepCountIs(8) });
    const result = await subject.generate('go');
    expect(result.steps).toHaveLength(8);
    expect(model.calls).toHaveLength(8);
    // the last step's tools ran; the run ends as a run at its step limit does
    expect(executed.at(-1)).toBe('tick 7');
    expect(result.finishReason).toBe('tool-calls');
  });

  it('an explicit maxSteps still caps a condition that is never met', async () => {
    const { model, agent: subject } = agent({ maxSteps: 3, stopWhen: () => false });
    const result = await subject.generate('go');
    expect(result.steps).toHaveLength(3);
    expect(model.calls).toHaveLength(3);
  });

  it('hasToolCall: the step that called the tool runs it, and no step follows', async () => {
    const { model, agent: subject } = agent({ stopWhen: [stepCountIs(50), hasToolCall('done')] }, looping(2));
    const result = await subject.generate('go');
    expect(model.calls).toHaveLength(3);
    expect(result.steps.map((step) => step.toolCalls.map((call) => call.toolName))).toEqual([['tick'], ['tick'], ['done']]);
    expect(executed).toEqual(['tick 0', 'tick 1', 'done']);
    expect(result.toolResults.at(-1)).toMatchObject({ toolName: 'done', result: 'ok' });
    // the same run as chunks: the last step-finish is not continued, and the run has its finish
    const chunks = await lastValueFrom(agent({ stopWhen: hasToolCall('done') }, looping(2)).agent.stream$('go').pipe(toArray()));
    const continued = chunks.filter((chunk) => chunk.type === 'step-finish').map((chunk) => (chunk.payload as { stepResult: { isContinued: boolean } }).stepResult.isContinued);
    expect(continued).toEqual([true, true, false]);
    expect(chunks.at(-1)?.type).toBe('finish');
  });

  it('a condition sees the run’s steps so far, the finished step last with its tool results, and cannot change them', async () => {
    const seen: Array<{ count: number; lastResults: unknown[] }> = [];
    const spy: StopCondition = ({ steps }) => {
      seen.push({ count: steps.length, lastResults: steps.at(-1)?.toolResults.map((entry) => entry.result) ?? [] });
      (steps as unknown as unknown[]).length = 0; // a hostile condition empties its copy
      return steps.length > 99;
    };
    const { agent: subject } = agent({ maxSteps: 3, stopWhen: spy });
    const result = await subject.generate('go');
    // checked after steps 0 and 1 (after step 2 the loop stops at maxSteps without asking)
    expect(seen).toEqual([
      { count: 1, lastResults: [0] },
      { count: 2, lastResults: [1] },
    ]);
    expect(result.steps).toHaveLength(3);
  });

  it('a call’s stopWhen replaces the agent’s; conditions run in order and the first met one decides', async () => {
    const calls: string[] = [];
    const named = (name: string, answer: boolean): StopCondition => () => (calls.push(name), answer);
    const { agent: subject } = agent({ stopWhen: named('agent', true) });
    const result = await subject.generate('go', { stopWhen: [named('first', false), named('second', true), named('third', true)] });
    expect(result.steps).toHaveLength(1);
    expect(calls).toEqual(['first', 'second']);
  });

  it('defaultOptions.stopWhen applies to every call; a call’s maxSteps caps it', async () => {
    const { agent: subject } = agent({ defaultOptions: { stopWhen: [stepCountIs(3)] as const } });
    expect((await subject.generate('go')).steps).toHaveLength(3);
    expect((await subject.generate('go', { maxSteps: 2 })).steps).toHaveLength(2);
  });

  it('async conditions are awaited (a promise, a non-native thenable)', async () => {
    const later: StopCondition = ({ steps }) => new Promise((resolve) => setTimeout(() => resolve(steps.length >= 2), 1));
    const thenable: StopCondition = ({ steps }) => ({ then: (resolve: (value: boolean) => void) => resolve(steps.length >= 3) }) as PromiseLike<boolean>;
    expect((await agent({ stopWhen: later }).agent.generate('go')).steps).toHaveLength(2);
    expect((await agent({ stopWhen: thenable }).agent.generate('go')).steps).toHaveLength(3);
  });

  it('the AI SDK’s own stepCountIs and hasToolCall work unchanged (they read steps.length and toolCalls[].toolName)', async () => {
    const byCount = await agent({ stopWhen: aiStepCountIs(2) as unknown as StopCondition }).agent.generate('go');
    expect(byCount.steps).toHaveLength(2);
    const byTool = await agent({ stopWhen: aiHasToolCall('done') as unknown as StopCondition }, looping(1)).agent.generate('go');
    expect(byTool.steps).toHaveLength(2);
  });

  it('a step without tool calls ends the run before any condition is asked', async () => {
    const asked: number[] = [];
    const model = mockModel({ parts: () => [...textParts('hello'), finishPart()] });
    const result = await new Agent({ id: 'a', model, stopWhen: ({ steps }) => (asked.push(steps.length), false) }).generate('hi');
    expect(result.text).toBe('hello');
    expect(asked).toEqual([]);
  });

  it('processOutputResult and memory-facing hooks see the stopped run as finished', async () => {
    let finalSteps = -1;
    const observer: Processor = { id: 'observer', processOutputResult: ({ result, messages }) => ((finalSteps = result.steps.length), messages) };
    const { agent: subject } = agent({ stopWhen: stepCountIs(2), outputProcessors: [observer] });
    await subject.generate('go');
    expect(finalSteps).toBe(2);
  });

  it('a condition that never settles: the caller’s abort still ends the run (abort chunk, RunAbortedError), no further model call', async () => {
    let asked = 0;
    const { model, agent: subject } = agent({
      stopWhen: () => {
        asked++;
        return new Promise<boolean>(() => undefined);
      },
    });
    const controller = new AbortController();
    const pending = subject.generate('go', { abortSignal: controller.signal }).catch((caught: unknown) => caught);
    await waitFor(() => asked > 0, 'the stop condition to be asked');
    controller.abort('user left');
    const error = await pending;
    expect((error as Error).name).toBe('AbortError');
    expect(model.calls).toHaveLength(1);
  });

  describe('a condition that fails ends the run with a StopConditionError naming it (steps before it kept)', () => {
    const cases: Array<[string, StopCondition, RegExp]> = [
      ['throws', () => { throw new Error('boom'); }, /stopWhen\[1\] failed: boom/],
      ['rejects', () => Promise.reject(new Error('late boom')), /stopWhen\[1\] failed: late boom/],
      ['returns a string', () => 'yes' as unknown as boolean, /stopWhen\[1\] returned "yes"; expected a boolean/],
      ['returns undefined', () => undefined as unknown as boolean, /stopWhen\[1\] returned undefined; expected a boolean/],
      ['resolves to a number', () => Promise.resolve(1 as unknown as boolean), /stopWhen\[1\] returned number; expected a boolean/],
    ];
    it.each(cases)('%s', async (_name, bad, message) => {
      const { agent: subject } = agent({ stopWhen: [() => false, bad] });
      const error = await subject.generate('go').catch((caught: unknown) => caught);
      expect(StopConditionError.isInstance(error)).toBe(true);
      expect((error as StopConditionError).index).toBe(1);
      expect((error as Error).message).toMatch(message);
      const chunks = await lastValueFrom(subject.stream$('go').pipe(toArray()));
      expect(chunks.at(-1)?.type).toBe('error');
      expect(chunks.filter((chunk) => chunk.type === 'tool-result')).toHaveLength(1); // the first step's tool ran
    });
  });

  describe('bad stopWhen options are typed errors naming the option', () => {
    const model = looping();
    it.each([
      ['a string', 'stepCountIs(3)', /config\.stopWhen must be a stop condition/],
      ['an empty array', [], /config\.stopWhen must be a stop condition \(a function of \{ steps \}\) or a non-empty array of them \(got an array\)/],
      ['an array with a number', [stepCountIs(2), 3], /config\.stopWhen\[1\] must be a function \(got number 3\)/],
    ])('config: %s', (_name, value, message) => {
      expect(() => new Agent({ id: 'a', model, stopWhen: value as never })).toThrow(message);
    });
    it('call: an object is the run’s error and generate()’s rejection', async () => {
      const error = await new Agent({ id: 'a', model }).generate('go', { stopWhen: {} as never }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toMatch(/options\.stopWhen must be a stop condition/);
    });
    it('stepCountIs and hasToolCall reject bad arguments', () => {
      expect(() => stepCountIs(0)).toThrow(/count must be a whole number ≥ 1 \(got 0\)/);
      expect(() => stepCountIs(1.5)).toThrow(TypeError);
      expect(() => hasToolCall()).toThrow(/one or more tool names/);
      expect(() => hasToolCall('')).toThrow(TypeError);
    });
  });
});
