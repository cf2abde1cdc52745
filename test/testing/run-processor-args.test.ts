/**
 * `runProcessor` calls a hook directly (the test's arguments as given, the hook's raw result), not
 * through its operator — but with the arguments a run gives that hook: every name a hook receives
 * in an agent's run, the kit fills too, except the request fields a run reads off the step (model
 * settings, tools, the provider's raw response). A new argument of the run that the kit does not
 * fill fails here.
 */
import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { Agent, type Processor, type ProcessorHookName } from 'rxagent';
import { chunk, finishPart, mockModel, runProcessor, textParts, toolCallParts } from 'rxagent/testing';

const HOOKS: readonly ProcessorHookName[] = [
  'processInput',
  'processInputStep',
  'processLLMRequest',
  'processLLMResponse',
  'processAPIError',
  'processOutputStream',
  'processOutputStep',
  'processToolResult',
  'processOutputResult',
];

/** What only a run has: the step's request settings and the provider's answer (undefined where unset). */
const RUN_ONLY: Partial<Record<ProcessorHookName, readonly string[]>> = {
  processInputStep: ['activeTools', 'llmRequestStage', 'modelSettings', 'providerOptions', 'structuredOutput', 'toolChoice', 'tools'],
  processLLMRequest: ['modelSettings'],
  processLLMResponse: ['rawResponse', 'request', 'warnings'],
};

/** A processor with every hook, recording the argument names each hook got (first call). */
function recorder(seen: Partial<Record<ProcessorHookName, string[]>>): Processor {
  const record = (hook: ProcessorHookName, args: object): void => {
    seen[hook] ??= Object.keys(args).sort();
  };
  return {
    id: 'recorder',
    processInput: (args) => void record('processInput', args),
    processInputStep: (args) => void record('processInputStep', args),
    processLLMRequest: (args) => void record('processLLMRequest', args),
    processLLMResponse: (args) => void record('processLLMResponse', args),
    processAPIError: (args) => (record('processAPIError', args), { retry: true }),
    processOutputStream: (args) => (record('processOutputStream', args), args.part),
    processOutputStep: (args) => void record('processOutputStep', args),
    processToolResult: (args) => void record('processToolResult', args),
    processOutputResult: (args) => void record('processOutputResult', args),
  };
}

/** The argument names of every hook in an agent's run: an API error recovered, a tool step, an answer. */
async function namesInARun(): Promise<Partial<Record<ProcessorHookName, string[]>>> {
  const seen: Partial<Record<ProcessorHookName, string[]>> = {};
  const processor = recorder(seen);
  let failed = false;
  const model = mockModel({
    parts: ({ callIndex }) => {
      if (!failed) {
        failed = true;
        throw new Error('overloaded');
      }
      return callIndex <= 1 ? [...toolCallParts('add', { a: 1, b: 2 }, { streamInput: false }), finishPart('tool-calls')] : [...textParts('3'), finishPart()];
    },
  });
  const agent = new Agent({
    id: 'every-hook',
    model,
    inputProcessors: [processor],
    outputProcessors: [processor],
    maxProcessorRetries: 2,
    tools: { add: { inputSchema: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }: { a: number; b: number }) => a + b } },
  });
  await lastValueFrom(agent.stream$('1 + 2?').pipe(toArray()));
  return seen;
}

/** The argument names `runProcessor` gives each hook (with only the arguments it requires). */
async function namesInTheKit(): Promise<Partial<Record<ProcessorHookName, string[]>>> {
  const seen: Partial<Record<ProcessorHookName, string[]>> = {};
  const processor = recorder(seen);
  await runProcessor(processor, 'processInput');
  await runProcessor(processor, 'processInputStep');
  await runProcessor(processor, 'processLLMRequest', { prompt: [] });
  await runProcessor(processor, 'processLLMResponse');
  await runProcessor(processor, 'processAPIError', { error: new Error('overloaded') });
  await runProcessor(processor, 'processOutputStream', { part: chunk.textDelta('x') });
  await runProcessor(processor, 'processOutputStep');
  await runProcessor(processor, 'processToolResult', { toolName: 'add', toolCallId: 'call-1', result: 3 });
  await runProcessor(processor, 'processOutputResult');
  return seen;
}

describe('runProcessor gives a hook the arguments a run gives it', () => {
  it('every name a run passes, for every hook (but the step-only request fields)', async () => {
    const [run, kit] = await Promise.all([namesInARun(), namesInTheKit()]);
    for (const hook of HOOKS) {
      expect(run[hook], `${hook} ran in the run`).toBeDefined();
      const missing = (run[hook] ?? []).filter((name) => !(kit[hook] ?? []).includes(name) && !(RUN_ONLY[hook] ?? []).includes(name));
      expect(missing, `${hook}: arguments a run gives that runProcessor does not`).toEqual([]);
    }
  });

  it('sendSignal works as in a run: it resolves with the signal, whose chunk is recorded as a run streams it', async () => {
    let sent: Promise<unknown> | undefined;
    const reminder: Processor = {
      id: 'reminder',
      processInputStep: ({ sendSignal }) => void (sent = sendSignal({ type: 'system-reminder', contents: 'be brief' })),
    };
    const { customChunks, error } = await runProcessor(reminder, 'processInputStep');
    expect(error).toBeUndefined();
    await expect(sent).resolves.toMatchObject({ tagName: 'system-reminder', contents: 'be brief' });
    expect(customChunks).toHaveLength(1);
    expect(customChunks[0]).toMatchObject({ type: 'data-signal', data: { tagName: 'system-reminder', contents: 'be brief' } });
  });

  it('processorIndex: the processor’s own index, else 0 (a run’s position in a one-processor list)', async () => {
    const indexes: Array<number | undefined> = [];
    const processor: Processor = { id: 'p', processOutputStep: ({ processorIndex }) => void indexes.push(processorIndex) };
    await runProcessor(processor, 'processOutputStep');
    await runProcessor({ ...processor, processorIndex: 3 }, 'processOutputStep');
    expect(indexes).toEqual([0, 3]);
  });
});
