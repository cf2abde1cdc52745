/**
 * `runProcessor` calls a hook directly (the test's arguments as given, the hook's raw result), not
 * through its operator — but with the arguments a run gives that hook: every name a hook receives
 * in an agent's run, the kit fills too, except the request fields a run reads off the step (model
 * settings, tools, the provider's raw response). A new argument of the run that the kit does not
 * fill fails here.
 *
 * `streamParts` is read-only in the kit as in a run (the same view): a processor that writes to it
 * gets the `ProcessorError` in its unit test that it would get in a run, not a pass.
 */
import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { Agent, ProcessorError, type ChunkType, type Processor, type ProcessorHookName } from 'rxagent';
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

/** Writes a processor author might make to `streamParts` (each one a ProcessorError in a run). */
const WRITES: Array<[string, (parts: ChunkType[]) => unknown]> = [
  ['length = 0', (parts) => (parts.length = 0)],
  ['push', (parts) => parts.push(chunk.textDelta('forged'))],
  ['splice(0)', (parts) => parts.splice(0)],
  ['[0] = a chunk', (parts) => (parts[0] = chunk.textDelta('forged'))],
  ['sort (of two or more)', (parts) => parts.sort()],
  ['reverse (of two or more)', (parts) => parts.reverse()],
  ['delete [0]', (parts) => delete parts[0]],
  ['Object.freeze', (parts) => Object.freeze(parts)],
  ['Object.defineProperty', (parts) => Object.defineProperty(parts, 0, { value: null })],
  ['Object.setPrototypeOf', (parts) => Object.setPrototypeOf(parts, null)],
];

function writer(write: (parts: ChunkType[]) => unknown): Processor {
  return {
    id: 'writer',
    processOutputStream: ({ part, streamParts }) => {
      write(streamParts);
      return part;
    },
  };
}

function isWriterError(error: unknown): boolean {
  return ProcessorError.isInstance(error) && error.processorId === 'writer' && error.hook === 'processOutputStream' && /streamParts is read-only/.test(error.message);
}

describe('runProcessor: streamParts is read-only, as in a run', () => {
  it.each(WRITES)('%s: the ProcessorError a run ends with, in the kit too; nothing written', async (name, write) => {
    const run = await lastValueFrom(new Agent({ id: 'a', model: mockModel({ parts: [...textParts('hi'), finishPart()] }), outputProcessors: [writer(write)] }).stream$('Hi').pipe(toArray()));
    const ended = run.at(-1);
    expect(ended?.type === 'error' && isWriterError(ended.payload.error)).toBe(true);

    const part = chunk.textDelta('hi');
    const kit = await runProcessor(writer(write), 'processOutputStream', { part });
    // (sorting or reversing the default list, `[part]`, writes nothing: no error, in a run either)
    expect(isWriterError(kit.error)).toBe(!name.includes('two or more'));
    // the test's own list, given as streamParts: read-only too, and left as it was
    const given = [chunk.textDelta('before'), part];
    const withGiven = await runProcessor(writer(write), 'processOutputStream', { part, streamParts: given });
    expect(isWriterError(withGiven.error)).toBe(true);
    expect(given.map((entry) => entry.type === 'text-delta' && entry.payload.text)).toEqual(['before', 'hi']);
    expect(Object.isFrozen(given)).toBe(false);
  });

  it('reading works as on an array (the part is the last entry), and a hook that catches a write goes on', async () => {
    const part = chunk.textDelta('hi');
    let read: unknown[] = [];
    const reader: Processor = {
      id: 'reader',
      processOutputStream: ({ part: got, streamParts }) => {
        try {
          streamParts.push(got);
        } catch {
          // refused: nothing written
        }
        read = [Array.isArray(streamParts), streamParts.length, streamParts.at(-1) === got, streamParts.slice().length, JSON.stringify(streamParts) === JSON.stringify([got])];
        return got;
      },
    };
    const { result, error } = await runProcessor(reader, 'processOutputStream', { part });
    expect(error).toBeUndefined();
    expect(result).toBe(part);
    expect(read).toEqual([true, 1, true, 1, true]);
  });
});
