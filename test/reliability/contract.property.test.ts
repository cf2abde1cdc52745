/**
 * Contract properties over generated runs: processor `state` isolation, retry budgets,
 * `generate()` ⇔ `stream$()` agreement, and fail-closed processor errors.
 */
import { describe, expect, it } from 'vitest';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import { buildAgent, Recorder, runGenerate, runStream, settle } from './support/harness.js';
import { streamText } from './support/invariants.js';
import { checkProperty, expectNone, PROPERTY_TIMEOUT_MS } from './support/property.js';
import { scenarioArbitrary, type Scenario } from './support/scenario.js';

const terminalOf = (chunks: readonly ChunkType[]): ChunkType | undefined => chunks[chunks.length - 1];

/** The budgets a scenario grants: tripwire retries, API-error retries. */
function budgets(scenario: Scenario): { tripwire: number; apiError: number } {
  const hasErrorProcessors = scenario.processors.some((spec) => spec.role === 'error');
  return {
    tripwire: scenario.maxProcessorRetries ?? 0,
    apiError: scenario.maxProcessorRetries ?? (hasErrorProcessors ? 10 : 0),
  };
}

describe('contract invariants (property-based)', () => {
  it(
    'state: one object per processor per run, shared by its hooks, never shared across processors or runs',
    async () => {
      await checkProperty('state isolation', scenarioArbitrary({ unsubscribe: false }), async (scenario) => {
        const recorder = new Recorder();
        const agent = buildAgent(scenario, recorder);
        // two runs of the same agent at once
        await Promise.all([runStream(agent, scenario, recorder, 'first'), runStream(agent, scenario, recorder, 'second')]);
        await settle(recorder);
        const problems = [...recorder.violations];
        const owners = new Map<object, string>();
        const byRunAndProcessor = new Map<string, Set<object>>();
        for (const call of recorder.hooks) {
          const key = `${call.runId}/${call.processorId}`;
          const states = byRunAndProcessor.get(key) ?? new Set<object>();
          states.add(call.state);
          byRunAndProcessor.set(key, states);
          const owner = owners.get(call.state);
          if (owner === undefined) owners.set(call.state, key);
          else if (owner !== key) problems.push(`state of ${owner} given to ${key} (${call.hook})`);
        }
        for (const [key, states] of byRunAndProcessor) if (states.size !== 1) problems.push(`${key} got ${states.size} state objects`);
        expectNone(problems, 'state');
      });
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'retryCount and model calls within budget (1 + maxProcessorRetries attempts; API-error retries bounded the same way)',
    async () => {
      await checkProperty('retry budgets', scenarioArbitrary({ unsubscribe: false }), async (scenario) => {
        const recorder = new Recorder();
        const agent = buildAgent(scenario, recorder);
        const run = await runStream(agent, scenario, recorder);
        await settle(recorder);
        const budget = budgets(scenario);
        const problems: string[] = [];
        for (const call of recorder.hooks) {
          const limit = call.hook === 'processAPIError' ? budget.apiError : budget.tripwire;
          if (call.retryCount < 0 || call.retryCount > limit) problems.push(`${call.processorId}.${call.hook} saw retryCount ${call.retryCount} (budget ${limit})`);
        }
        const modelCalls = recorder.modelSignals.length;
        const bound = scenario.maxSteps + budget.tripwire + budget.apiError;
        if (modelCalls > bound) problems.push(`${modelCalls} model calls, bound ${bound}`);
        const retries = run.chunks.filter((chunk) => chunk.type === 'step-finish' && chunk.payload.stepResult.reason === 'retry').length;
        if (retries > budget.tripwire + budget.apiError) problems.push(`${retries} retried attempts, budget ${budget.tripwire + budget.apiError}`);
        const steps = new Set(run.chunks.filter((chunk) => chunk.type === 'step-start').map((chunk) => (chunk as { payload: { stepNumber: number } }).payload.stepNumber));
        for (const stepNumber of steps) {
          const attempts = run.chunks.filter((chunk) => chunk.type === 'step-start' && chunk.payload.stepNumber === stepNumber).length;
          if (attempts > 1 + budget.tripwire + budget.apiError) problems.push(`step ${stepNumber}: ${attempts} attempts`);
        }
        if (Math.max(...steps, -1) >= scenario.maxSteps) problems.push(`step ${Math.max(...steps)} ran, maxSteps ${scenario.maxSteps}`);
        expectNone(problems, 'budgets');
      });
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'generate() and stream$() agree on text, finish reason, tripwire and error',
    async () => {
      await checkProperty('generate agrees with stream$', scenarioArbitrary({ unsubscribe: false, timers: false }), async (scenario) => {
        const streamed = await runStream(buildAgent(scenario, new Recorder()), scenario, new Recorder());
        const generated = await runGenerate(buildAgent(scenario, new Recorder()), scenario, new Recorder());
        const terminal = terminalOf(streamed.chunks);
        const kinds = streamed.chunks.map((chunk) => chunk.type).join(',');
        switch (terminal?.type) {
          case 'finish': {
            expect(generated.error, kinds).toBeUndefined();
            const text = streamText(streamed.chunks);
            expect(generated.result?.text, kinds).toBe(text);
            expect(terminal.payload.output.text, kinds).toBe(text);
            expect(generated.result?.finishReason, kinds).toBe(terminal.payload.stepResult.reason);
            expect(generated.result?.tripwire, kinds).toBeUndefined();
            break;
          }
          case 'tripwire':
            expect(generated.error, kinds).toBeUndefined();
            expect(generated.result?.tripwire, kinds).toEqual(terminal.payload);
            expect(generated.result?.text, kinds).toBe('');
            expect(generated.result?.finishReason, kinds).toBe('other');
            break;
          case 'error': {
            const error = terminal.payload.error as Error;
            expect(generated.result, kinds).toBeUndefined();
            const rejected = generated.error as Error & { cause?: unknown };
            const reported = ProcessorError.isInstance(error) || error?.name === 'InvalidMessageError' ? rejected : (rejected?.cause as Error);
            expect(reported?.message, kinds).toBe(error?.message);
            break;
          }
          case 'abort':
            expect(generated.result, kinds).toBeUndefined();
            expect((generated.error as Error)?.name, kinds).toBe('AbortError');
            break;
          default:
            throw new Error(`no terminal chunk: ${kinds}`);
        }
      });
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'fail closed: a hook that throws or returns a wrong shape ends the run with its ProcessorError; the chunk it was checking never passes',
    async () => {
      await checkProperty('fail closed', scenarioArbitrary(), async (scenario) => {
        const recorder = new Recorder();
        const run = await runStream(buildAgent(scenario, recorder), scenario, recorder);
        const first = recorder.throws[0];
        if (first === undefined) return;
        const problems: string[] = [];
        if (first.part !== undefined && run.chunks.includes(first.part)) problems.push(`the ${first.part.type} ${first.processorId} was checking reached the consumer`);
        const terminal = terminalOf(run.chunks);
        if (!run.unsubscribed) {
          const error = terminal?.type === 'error' ? terminal.payload.error : undefined;
          if (!ProcessorError.isInstance(error)) problems.push(`run ended with ${terminal?.type} (${String((error as Error | undefined)?.message)}), not a ProcessorError`);
          else if (error.processorId !== first.processorId || error.hook !== first.hook) {
            problems.push(`ProcessorError names ${error.processorId}.${error.hook}, the throw was ${first.processorId}.${first.hook}`);
          }
          const afterThrow = first.hook === 'processOutputResult' && run.chunks.some((chunk) => chunk.type === 'finish');
          if (afterThrow) problems.push('finish emitted although processOutputResult threw');
        }
        expectNone(problems, `fail closed (${first.processorId}.${first.hook})`);
      });
    },
    PROPERTY_TIMEOUT_MS,
  );
});
