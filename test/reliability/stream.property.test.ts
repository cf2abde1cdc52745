/**
 * Stream-shape properties (DESIGN §3) over generated runs: random model streams (text, reasoning,
 * parallel and malformed tool calls, provider errors, early ends), random processor chains, random
 * tool behaviours and random unsubscribe points.
 */
import { getEventListeners } from 'node:events';
import { describe, it } from 'vitest';
import { buildAgent, Recorder, runStream, settle } from './support/harness.js';
import { checkBracketing, checkLifecycle, checkToolAnswers } from './support/invariants.js';
import { checkProperty, expectNone, PROPERTY_TIMEOUT_MS } from './support/property.js';
import { scenarioArbitrary, type Scenario } from './support/scenario.js';

async function streamOnce(scenario: Scenario) {
  const recorder = new Recorder();
  const agent = buildAgent(scenario, recorder);
  const run = await runStream(agent, scenario, recorder);
  return { recorder, run };
}

describe('stream invariants (property-based)', () => {
  it(
    'exactly one start and one terminal chunk (finish | tripwire | error | abort), nothing after it',
    async () => {
      await checkProperty('lifecycle', scenarioArbitrary(), async (scenario) => {
        const { run } = await streamOnce(scenario);
        expectNone(checkLifecycle(run.chunks, !run.unsubscribed), 'lifecycle');
      });
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'step-start … step-finish per attempt; text and reasoning bracketed start/delta/end',
    async () => {
      await checkProperty('bracketing', scenarioArbitrary(), async (scenario) => {
        const { run } = await streamOnce(scenario);
        expectNone(checkBracketing(run.chunks, !run.unsubscribed), 'bracketing');
      });
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'every client tool-call answered by exactly one tool-result or tool-error before the next step',
    async () => {
      await checkProperty('tool answers', scenarioArbitrary(), async (scenario) => {
        const { run, recorder } = await streamOnce(scenario);
        const executed = recorder.toolRuns.map((toolRun) => toolRun.toolCallId);
        expectNone(checkToolAnswers(run.chunks, executed, !run.unsubscribed, recorder.droppedAnswers), 'tool answers');
      });
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'after the end or an unsubscribe: no hook call, tool signals aborted, model signals aborted or released, no listener left on the caller signal',
    async () => {
      await checkProperty('teardown', scenarioArbitrary(), async (scenario) => {
        const { run, recorder } = await streamOnce(scenario);
        await settle(recorder);
        const problems: string[] = [];
        const late = recorder.hooks.filter((call) => call.seq > run.endSeq);
        if (late.length > 0) problems.push(`hooks called after the consumer left: ${late.map((call) => `${call.processorId}.${call.hook}`).join(', ')}`);
        // a model call's signal is aborted when the run left it unfinished; a finished call's signal
        // holds no listener any more (the provider's own listeners included)
        recorder.modelSignals.forEach((signal, index) => {
          const listeners = getEventListeners(signal, 'abort').length;
          if (!signal.aborted && listeners > 0) problems.push(`model call ${index}: signal not aborted and ${listeners} listener(s) left`);
        });
        for (const toolRun of recorder.toolRuns) if (!toolRun.signal.aborted) problems.push(`tool ${toolRun.tool} (${toolRun.toolCallId}): abortSignal not aborted after the run`);
        const user = recorder.userController?.signal;
        if (user !== undefined && !user.aborted) {
          const listeners = getEventListeners(user, 'abort').length;
          if (listeners > 0) problems.push(`${listeners} abort listener(s) left on the caller's signal`);
        }
        expectNone(problems, `teardown (${run.unsubscribed ? 'unsubscribed' : 'ended'})`);
      });
    },
    PROPERTY_TIMEOUT_MS,
  );
});
