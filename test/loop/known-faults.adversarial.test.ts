/**
 * Five faults of the loop and the processor contract the last review left open, each shown by a
 * hostile processor, tool or composer, and what the run does now:
 *
 * 1. a hook that corrupts a step's token usage (in place, through `usage` or `steps`, or in a cached
 *    response) ends the run with a `ProcessorError` naming the processor and the hook — not an
 *    untyped `TypeError` (or a bare `Error`) from adding the usage up later;
 * 2. `closeBrackets()` given a value that is not a chunk (`null`, a number…) errors its result with a
 *    `TypeError` saying so, after closing what is open — never an exception thrown at nobody;
 * 3. a chunk a processor or a tool hands the run (a returned chunk, `writer.custom()`, a queued
 *    follow-up) never carries another run's id: the run stamps its own over it (a data chunk
 *    written without one, as the spec's example does, is left so);
 * 4. `abort()` called with options that cannot be read (a throwing getter, a hostile Proxy) is the
 *    processor's failure: a `ProcessorError` naming it and the hook, and a late one harms nobody;
 * 5. `modelSettings` from `processInputStep` (returned or edited in place) meet the call options'
 *    rules — a `ProcessorError` naming the processor and the field — and from `prepareStep` they are
 *    the option error a call's `modelSettings` gets (a `TypeError` naming `prepareStep()`); what is
 *    checked is what reaches the provider.
 */
import { describe, expect, it } from 'vitest';
import { expectNothingUnhandled } from '../support/nothing-unhandled.js';
import { finalize, from, lastValueFrom, of, toArray, type Observable } from 'rxjs';
import { z } from 'zod';
import { Agent } from '../../src/loop/agent.js';
import type { AgentCallOptions } from '../../src/loop/agent-types.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { ProcessorError, type ProcessorHookName } from '../../src/contract/errors/processor-error.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { makeChunk } from '../../src/contract/make-chunk.js';
import { FOLLOW_UP_CHUNKS_KEY } from '../../src/contract/stream-follow-up.js';
import { isOptionError } from '../../src/loop/data/option-error.js';
import { closeBrackets } from '../../src/loop/public.js';
import { emptyUsage } from '../../src/model/usage.js';
import { processInputStep, type StepInput } from '../../src/operators/process-input-step.js';
import { createRunContext } from '../../src/operators/run-context.js';
import { mockModel, type MockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { revokedProxy, throwingProxy } from '../support/hostile-values.js';

const weather = { inputSchema: z.object({ city: z.string() }), execute: async ({ city }: { city: string }) => ({ city, sky: 'sunny' }) };

/** A model that calls `weather` in its first step and answers in its second, reporting usage each time. */
const twoSteps = (): MockModel =>
  mockModel({
    parts: ({ callIndex }) =>
      callIndex === 0
        ? [...toolCallParts('weather', { city: 'Paris' }, { toolCallId: 'c1' }), finishPart('tool-calls', { inputTokens: 3, outputTokens: 4 })]
        : [...textParts('Sunny.'), finishPart('stop', { inputTokens: 5, outputTokens: 6 })],
  });
const answer = (): MockModel => mockModel({ parts: [...textParts('ok'), finishPart()] });

const collect = (agent: Agent, options?: AgentCallOptions): Promise<ChunkType[]> => lastValueFrom(agent.stream$('Weather in Paris?', options).pipe(toArray()));
const errorOf = (chunks: readonly ChunkType[]): unknown => {
  const last = chunks.at(-1);
  return last?.type === 'error' ? last.payload.error : undefined;
};

/** The run ended with a `ProcessorError` naming `processorId` and `hook` (stream and `generate()` alike); returns its message. */
async function expectProcessorError(makeAgent: () => Agent, hook: ProcessorHookName, message?: RegExp, processorId = 'hostile'): Promise<string> {
  const chunks = await collect(makeAgent());
  expect(chunks.at(-1)?.type).toBe('error');
  const error = errorOf(chunks);
  expect(ProcessorError.isInstance(error), `not a ProcessorError: ${String(error)}`).toBe(true);
  expect(error).toMatchObject({ processorId, hook });
  if (message !== undefined) expect((error as Error).message).toMatch(message);
  const rejected = await makeAgent()
    .generate('Weather in Paris?')
    .then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
  expect(ProcessorError.isInstance(rejected), `generate() did not reject with a ProcessorError: ${String(rejected)}`).toBe(true);
  expect(rejected).toMatchObject({ processorId, hook });
  return (error as Error).message;
}

/** An object whose `field` getter throws (from its `after`-th read on). */
const throwingGetter = (field: string, after = 0): object => {
  let reads = 0;
  return Object.defineProperty({}, field, {
    enumerable: true,
    get() {
      if (reads++ >= after) throw new Error(`hostile ${field}`);
      return undefined;
    },
  });
};

expectNothingUnhandled();

describe('1. a hook that corrupts a step\'s usage', () => {
  const BAD_COUNTS: Array<[string, () => unknown]> = [
    ['NaN', () => Number.NaN],
    ['-1', () => -1],
    ['Infinity', () => Number.POSITIVE_INFINITY],
    ['a string', () => '12'],
    ['a Symbol', () => Symbol('tokens')],
    ['a BigInt', () => 12n],
    ['a Proxy that throws', throwingProxy],
  ];

  /** Where each step-receiving hook can reach a usage, and the list that runs it. */
  const WAYS: Array<[string, ProcessorHookName, 'inputProcessors' | 'outputProcessors', (args: Record<string, unknown>, value: unknown) => void]> = [
    ['processOutputStep: args.usage.inputTokens', 'processOutputStep', 'outputProcessors', (args, value) => void ((args.usage as Record<string, unknown>).inputTokens = value)],
    [
      'processOutputStep: args.usage.outputTokenDetails.reasoningTokens',
      'processOutputStep',
      'outputProcessors',
      (args, value) => void ((args.usage as { outputTokenDetails: Record<string, unknown> }).outputTokenDetails.reasoningTokens = value),
    ],
    ['processOutputStep: args.steps[0].usage replaced', 'processOutputStep', 'outputProcessors', (args, value) => void ((args.steps as Array<Record<string, unknown>>)[0]!.usage = value)],
    ['processLLMResponse: args.steps[0].usage.outputTokens', 'processLLMResponse', 'inputProcessors', (args, value) => void ((args.steps as Array<{ usage: Record<string, unknown> }>)[0]!.usage.outputTokens = value)],
    ['processLLMResponse: args.steps[0].usage.inputTokenDetails replaced', 'processLLMResponse', 'inputProcessors', (args, value) => void ((args.steps as Array<{ usage: Record<string, unknown> }>)[0]!.usage.inputTokenDetails = value)],
  ];

  for (const [way, hook, list, corrupt] of WAYS) {
    it.each(BAD_COUNTS)(`${way} = %s: a ProcessorError naming the processor and ${hook}`, async (_name, value) => {
      const makeAgent = (): Agent => {
        let done = false;
        const hostile = {
          id: 'hostile',
          [hook]: (args: Record<string, unknown>) => {
            if (done) return undefined;
            done = true;
            corrupt(args, value());
            return undefined;
          },
        } as unknown as Processor;
        return new Agent({ id: 'a', model: twoSteps(), tools: { weather }, [list]: [hostile] });
      };
      // the message names where (`steps[0].usage.inputTokens = number NaN`), or says it cannot be read (a Proxy)
      const message = await expectProcessorError(makeAgent, hook);
      expect(message).toMatch(/left (steps\[0\]\.)?usage.* = |left a token usage that cannot be read/);
    });
  }

  // the hooks that get `steps` without a usage of their own corrupt an earlier step's
  const STEP_HOOKS: Array<[ProcessorHookName, 'inputProcessors' | 'outputProcessors']> = [
    ['processInputStep', 'inputProcessors'],
    ['processLLMRequest', 'inputProcessors'],
    ['processToolResult', 'outputProcessors'],
    ['processOutputResult', 'outputProcessors'],
  ];
  it.each(STEP_HOOKS)('%s corrupting an earlier step\'s usage: a ProcessorError naming it', async (hook, list) => {
    const makeAgent = (): Agent => {
      let done = false;
      const hostile = {
        id: 'hostile',
        [hook]: (args: Record<string, unknown>) => {
          const steps = (hook === 'processOutputResult' ? (args.result as { steps: unknown[] }).steps : args.steps) as Array<{ usage: Record<string, unknown> }>;
          if (done || steps.length === 0) return undefined;
          done = true;
          steps[0]!.usage.totalTokens = Symbol('tokens');
          return undefined;
        },
      } as unknown as Processor;
      // processToolResult runs in the first step (no step recorded before it in this run): a three-step run
      const model =
        hook === 'processToolResult'
          ? mockModel({
              parts: ({ callIndex }) =>
                callIndex < 2
                  ? [...toolCallParts('weather', { city: 'Paris' }, { toolCallId: `c${callIndex}` }), finishPart('tool-calls', { inputTokens: 3, outputTokens: 4 })]
                  : [...textParts('Sunny.'), finishPart('stop', { inputTokens: 5, outputTokens: 6 })],
            })
          : twoSteps();
      return new Agent({ id: 'a', model, tools: { weather }, [list]: [hostile] });
    };
    expect(await expectProcessorError(makeAgent, hook)).toMatch(/steps\[0\]\.usage\.totalTokens = symbol/);
  });

  it('processOutputResult corrupting the run\'s usage (result.usage): a ProcessorError naming it', async () => {
    const makeAgent = (): Agent =>
      new Agent({
        id: 'a',
        model: twoSteps(),
        tools: { weather },
        outputProcessors: [
          {
            id: 'hostile',
            processOutputResult: ({ result }) => {
              (result.usage as Record<string, unknown>).inputTokens = throwingProxy();
              return undefined;
            },
          },
        ],
      });
    expect(await expectProcessorError(makeAgent, 'processOutputResult')).toMatch(/result\.usage\.inputTokens/);
  });

  it('processLLMRequest returning a cached response whose finish usage is corrupt: a ProcessorError naming it', async () => {
    const model = answer();
    const makeAgent = (): Agent =>
      new Agent({
        id: 'a',
        model,
        inputProcessors: [
          {
            id: 'hostile',
            processLLMRequest: () => ({
              response: {
                chunks: [
                  { type: 'text-delta', payload: { id: 't', text: 'cached' } },
                  { type: 'finish', payload: { stepResult: { reason: 'stop' }, output: { usage: { ...emptyUsage(), inputTokens: 7n } } } },
                ],
              },
            }),
          },
        ],
      });
    expect(await expectProcessorError(makeAgent, 'processLLMRequest')).toMatch(/usage\.inputTokens = bigint/);
    expect(model.calls).toHaveLength(0);
  });

  it('a hook that sets a count to another number is within the contract: the run finishes with it', async () => {
    const agent = new Agent({
      id: 'a',
      model: twoSteps(),
      tools: { weather },
      outputProcessors: [{ id: 'recount', processOutputStep: ({ usage }) => void ((usage as { inputTokens: number }).inputTokens = 100) }],
    });
    const result = await agent.generate('Weather in Paris?');
    expect(result.steps.map((step) => step.usage.inputTokens)).toEqual([100, 100]);
    expect(result.usage.inputTokens).toBe(200);
  });

  it('returning a usage is no result of processOutputStep (a ProcessorError), and processLLMResponse\'s result is not read (the usage stands)', async () => {
    const returning = (): Agent =>
      new Agent({ id: 'a', model: twoSteps(), tools: { weather }, outputProcessors: [{ id: 'hostile', processOutputStep: () => ({ usage: Number.NaN }) as never }] });
    await expectProcessorError(returning, 'processOutputStep', /unknown field "usage"/);
    const ignored = new Agent({ id: 'a', model: twoSteps(), tools: { weather }, inputProcessors: [{ id: 'ignored', processLLMResponse: () => ({ usage: Number.NaN }) as never }] });
    const result = await ignored.generate('Weather in Paris?');
    expect(result.usage).toMatchObject({ inputTokens: 8, outputTokens: 10, totalTokens: 18 });
  });

  it('a usage that was already unsound before the hook (a provider\'s NaN) is not blamed on the processor', async () => {
    const model = mockModel({ parts: [...textParts('ok'), finishPart('stop', { inputTokens: Number.NaN, outputTokens: 2 })] });
    const agent = new Agent({ id: 'a', model, outputProcessors: [{ id: 'innocent', processOutputStep: () => undefined }] });
    const chunks = await collect(agent);
    expect(chunks.at(-1)?.type).toBe('finish');
  });
});

describe('2. closeBrackets() given a value that is not a chunk', () => {
  const R = 'r';
  const NOT_CHUNKS: Array<[string, unknown]> = [
    ['null', null],
    ['undefined', undefined],
    ['a number', 42],
    ['a string', 'text-delta'],
    ['a Symbol', Symbol('chunk')],
    ['a function', () => undefined],
  ];

  it.each(NOT_CHUNKS)('%s: what is open is closed, then a TypeError saying it is not a chunk; the source is cut', (_name, value) => {
    let after = 0;
    let tornDown = 0;
    const values: unknown[] = [makeChunk(R, 'step-start', { stepNumber: 0 }), makeChunk(R, 'text-delta', { id: 't', text: 'a' }), value, makeChunk(R, 'text-delta', { id: 't', text: 'b' })];
    const source = (from(values) as Observable<ChunkType>).pipe(finalize(() => tornDown++));
    const seen: ChunkType[] = [];
    let error: unknown;
    source.pipe(closeBrackets()).subscribe({
      next: (chunk) => {
        seen.push(chunk);
        if (chunk.type === 'text-delta' && chunk.payload.text === 'b') after++;
      },
      error: (thrown: unknown) => {
        error = thrown;
      },
    });
    expect(seen.map((chunk) => chunk.type)).toEqual(['step-start', 'text-start', 'text-delta', 'text-end', 'step-finish']);
    expect(seen.at(-1)).toMatchObject({ type: 'step-finish', payload: { stepResult: { reason: 'error' } } });
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(/^closeBrackets\(\): .* is not a chunk/);
    expect(after).toBe(0);
    expect(tornDown).toBe(1);
  });
});

describe('3. a chunk carrying another run\'s id', () => {
  const RUN = 'run-mine';
  /** Every chunk of the run carries its id. */
  const expectRunIds = (chunks: readonly ChunkType[]): void => {
    expect(chunks.filter((chunk) => chunk.runId !== RUN).map((chunk) => `${chunk.type}:${String(chunk.runId)}`)).toEqual([]);
  };

  it('a chunk processOutputStream returns with another run\'s id goes out with this run\'s (the processor\'s object, frozen, is not touched)', async () => {
    const returned: ChunkType[] = [];
    const agent = new Agent({
      id: 'a',
      model: answer(),
      outputProcessors: [
        {
          id: 'foreign',
          processOutputStream: ({ part }) => {
            if (part.type !== 'text-delta') return part;
            const chunk = Object.freeze({ ...part, runId: 'another-run' });
            returned.push(chunk);
            return chunk;
          },
        },
      ],
    });
    const chunks = await collect(agent, { runId: RUN });
    expectRunIds(chunks);
    expect(chunks.filter((chunk) => chunk.type === 'text-delta').map((chunk) => (chunk as { payload: { text: string } }).payload.text)).toEqual(['ok']);
    expect(returned.map((chunk) => chunk.runId)).toEqual(['another-run']);
  });

  it('writer.custom() in processOutputStream, in processInputStep and in a tool: another run\'s id is replaced with this run\'s', async () => {
    const agent = new Agent({
      id: 'a',
      model: twoSteps(),
      tools: {
        weather: {
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }: { city: string }, { writer }) => {
            await writer.custom({ type: 'data-tool', data: { city }, runId: 'another-run' });
            return 'sunny';
          },
        },
      },
      inputProcessors: [
        {
          id: 'input-writer',
          processInputStep: async ({ writer, stepNumber }) => {
            await writer.custom({ type: 'data-input', data: { stepNumber }, runId: 'another-run' });
          },
        },
      ],
      outputProcessors: [
        {
          id: 'stream-writer',
          processOutputStream: async ({ part, writer }) => {
            if (part.type === 'text-delta') {
              await writer.custom({ type: 'data-stream', data: 1, runId: 'another-run' });
              await writer.custom({ type: 'data-anonymous', data: 2 });
            }
            return part;
          },
        },
      ],
    });
    const chunks = await collect(agent, { runId: RUN });
    expect(chunks.filter((chunk) => chunk.type.startsWith('data-')).map((chunk) => chunk.type).sort()).toEqual(['data-anonymous', 'data-input', 'data-input', 'data-stream', 'data-tool']);
    // a data chunk written without an id (the spec's writer.custom() example) is left so; no other run's id passes
    expectRunIds(chunks.filter((chunk) => chunk.type !== 'data-anonymous'));
    expect(chunks.find((chunk) => chunk.type === 'data-anonymous')?.runId).toBeUndefined();
  });

  it('a follow-up chunk a processor queues with another run\'s id: stamped', async () => {
    const agent = new Agent({
      id: 'a',
      model: answer(),
      outputProcessors: [
        {
          id: 'follow-up',
          processOutputStream: ({ part, state }) => {
            if (part.type === 'text-delta') state[FOLLOW_UP_CHUNKS_KEY] = [{ ...part, runId: 'another-run', payload: { ...part.payload, text: '!' } }];
            return part;
          },
        },
      ],
    });
    const chunks = await collect(agent, { runId: RUN });
    expect(chunks.filter((chunk) => chunk.type === 'text-delta')).toHaveLength(2);
    expectRunIds(chunks);
  });
});

describe('4. abort() with options that cannot be read', () => {
  const OPTIONS: Array<[string, () => unknown]> = [
    ['a retry getter that throws', () => throwingGetter('retry')],
    ['a metadata getter that throws', () => throwingGetter('metadata')],
    ['a Proxy that throws on every get', throwingProxy],
    ['a revoked Proxy', revokedProxy],
  ];
  const HOOKS: Array<[ProcessorHookName, 'inputProcessors' | 'outputProcessors']> = [
    ['processInput', 'inputProcessors'],
    ['processOutputStream', 'outputProcessors'],
    ['processOutputStep', 'outputProcessors'],
    ['processOutputResult', 'outputProcessors'],
  ];

  for (const [hook, list] of HOOKS) {
    it.each(OPTIONS)(`${hook}: abort('no', %s) is a ProcessorError naming the processor and the hook`, async (_name, options) => {
      const makeAgent = (): Agent => {
        const hostile = {
          id: 'hostile',
          [hook]: (args: { part?: ChunkType; abort: (reason: string, options: unknown) => never }) => {
            if (hook === 'processOutputStream' && args.part?.type !== 'text-delta') return args.part;
            return args.abort('no', options());
          },
        } as unknown as Processor;
        return new Agent({ id: 'a', model: answer(), [list]: [hostile], maxProcessorRetries: 2 });
      };
      expect(await expectProcessorError(makeAgent, hook)).toMatch(/abort\(\)/);
    });
  }

  // they threw where the loop read them again (the retry decision, the tripwire chunk): read once now
  it.each(HOOKS)('%s: options whose getters throw from their second read are read once: the abort stands as a tripwire', async (hook, list) => {
    for (const field of ['retry', 'metadata']) {
      const hostile = {
        id: 'hostile',
        [hook]: (args: { part?: ChunkType; abort: (reason: string, options: unknown) => never }) => {
          if (hook === 'processOutputStream' && args.part?.type !== 'text-delta') return args.part;
          return args.abort('no', throwingGetter(field, 1));
        },
      } as unknown as Processor;
      const agent = new Agent({ id: 'a', model: answer(), [list]: [hostile], maxProcessorRetries: 2 });
      const chunks = await collect(agent);
      expect(chunks.at(-1)).toMatchObject({ type: 'tripwire', payload: { reason: 'no', processorId: 'hostile' } });
    }
  });

  it('a TripWire the processor builds itself with such options: a ProcessorError naming it', async () => {
    const makeAgent = (): Agent =>
      new Agent({
        id: 'a',
        model: answer(),
        inputProcessors: [
          {
            id: 'hostile',
            processInput: () => {
              throw new TripWire('no', throwingGetter('retry') as never);
            },
          },
        ],
      });
    await expectProcessorError(makeAgent, 'processInput');
  });

  it('an abort() with such options made after its hook returned (a timer) throws at nobody: ignored and reported, the run finishes', async () => {
    let lateAbort: Promise<void> | undefined;
    const violations: string[] = [];
    const agent = new Agent({
      id: 'a',
      model: answer(),
      outputProcessors: [
        {
          id: 'late',
          onViolation: ({ message }) => void violations.push(message),
          processOutputStep: ({ abort }) => {
            lateAbort = new Promise((resolve) =>
              setTimeout(() => {
                try {
                  abort('late', throwingGetter('retry') as never);
                } finally {
                  resolve();
                }
              }, 0),
            );
          },
        },
      ],
    });
    const chunks = await collect(agent);
    await lateAbort;
    expect(chunks.at(-1)?.type).toBe('finish');
    expect(violations).toEqual([expect.stringMatching(/^abort\(\) called after processOutputStep returned \(ignored\): .*hostile retry/)]);
  });

  it('readable options still abort as before: the tripwire carries reason and metadata', async () => {
    const agent = new Agent({
      id: 'a',
      model: answer(),
      outputProcessors: [{ id: 'guard', processOutputStep: ({ abort }) => abort('blocked', { metadata: { rule: 'x' } }) }],
    });
    const chunks = await collect(agent);
    expect(chunks.at(-1)).toMatchObject({ type: 'tripwire', payload: { reason: 'blocked', metadata: { rule: 'x' }, processorId: 'guard' } });
  });
});

describe('5. modelSettings from processInputStep and prepareStep', () => {
  const BAD_SETTINGS: Array<[string, Record<string, unknown>, RegExp]> = [
    ['temperature NaN', { temperature: Number.NaN }, /modelSettings\.temperature/],
    ['topP Infinity', { topP: Number.POSITIVE_INFINITY }, /modelSettings\.topP/],
    ['maxOutputTokens -5', { maxOutputTokens: -5 }, /modelSettings\.maxOutputTokens/],
    ['maxOutputTokens 1.5', { maxOutputTokens: 1.5 }, /modelSettings\.maxOutputTokens/],
    ['topK 0.5', { topK: 0.5 }, /modelSettings\.topK/],
    ['seed NaN', { seed: Number.NaN }, /modelSettings\.seed/],
    ['maxRetries -1', { maxRetries: -1 }, /modelSettings\.maxRetries/],
    ['stopSequences with a number', { stopSequences: ['a', 1] }, /modelSettings\.stopSequences/],
    ['a header that is a number', { headers: { 'x-user': 42 } }, /modelSettings\.headers\["x-user"\]/],
    ['a header value with CR/LF', { headers: { 'x-user': 'a\r\nx-admin: 1' } }, /modelSettings\.headers\["x-user"\].*CR, LF or NUL/],
    ['a header value with a lone LF', { headers: { 'x-user': 'a\nb' } }, /modelSettings\.headers\["x-user"\].*CR, LF or NUL/],
    ['a header name with CR/LF', { headers: { 'x-a\r\nx-admin': '1' } }, /modelSettings\.headers.*not a valid header name/],
    ['a header name with a colon', { headers: { 'x-a: b': '1' } }, /modelSettings\.headers.*not a valid header name/],
  ];

  it.each(BAD_SETTINGS)('processInputStep returning %s: a ProcessorError naming the processor and the field; the provider is not called', async (_name, modelSettings, message) => {
    const model = answer();
    const makeAgent = (): Agent => new Agent({ id: 'a', model, inputProcessors: [{ id: 'hostile', processInputStep: () => ({ modelSettings }) as never }] });
    await expectProcessorError(makeAgent, 'processInputStep', message);
    expect(model.calls).toHaveLength(0);
  });

  it.each(BAD_SETTINGS)('processInputStep editing its modelSettings argument to %s: a ProcessorError naming it; the provider is not called', async (_name, modelSettings, message) => {
    const model = answer();
    const makeAgent = (): Agent =>
      new Agent({
        id: 'a',
        model,
        defaultOptions: { modelSettings: { temperature: 0 } },
        inputProcessors: [{ id: 'hostile', processInputStep: (args) => void Object.assign(args.modelSettings as object, modelSettings) }],
      });
    await expectProcessorError(makeAgent, 'processInputStep', message);
    expect(model.calls).toHaveLength(0);
  });

  /** `prepareStep` failing the checks is an option error: a TypeError naming it, as the stream's error and generate()'s rejection. */
  async function expectPrepareStepRefused(prepareStep: NonNullable<AgentCallOptions['prepareStep']>, message: RegExp): Promise<void> {
    const model = answer();
    const agent = new Agent({ id: 'a', model });
    const chunks = await collect(agent, { prepareStep, modelSettings: { temperature: 0 } });
    const error = errorOf(chunks);
    expect(error).toBeInstanceOf(TypeError);
    expect(isOptionError(error)).toBe(true);
    expect((error as Error).message).toMatch(/^prepareStep\(\)\.modelSettings/);
    expect((error as Error).message).toMatch(message);
    const rejected = await agent.generate('hi', { prepareStep, modelSettings: { temperature: 0 } }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(rejected).toBeInstanceOf(TypeError);
    expect((rejected as Error).message).toMatch(message);
    expect(model.calls).toHaveLength(0);
  }

  it.each(BAD_SETTINGS)('prepareStep returning %s: the option error (a TypeError naming prepareStep()); the provider is not called', async (_name, modelSettings, message) => {
    await expectPrepareStepRefused(() => ({ modelSettings }) as never, message);
  });

  it.each(BAD_SETTINGS)('prepareStep editing its modelSettings argument to %s: the option error', async (_name, modelSettings, message) => {
    await expectPrepareStepRefused((args) => void Object.assign(args.modelSettings as object, modelSettings), message);
  });

  it('an async prepareStep is checked the same way', async () => {
    await expectPrepareStepRefused(async () => ({ modelSettings: { headers: { 'x-user': 'a\r\nb' } } }), /CR, LF or NUL/);
  });

  it('settings that cannot be read (a getter that throws): a ProcessorError naming the processor', async () => {
    const makeAgent = (): Agent =>
      new Agent({ id: 'a', model: answer(), inputProcessors: [{ id: 'hostile', processInputStep: () => ({ modelSettings: throwingGetter('temperature') }) as never }] });
    await expectProcessorError(makeAgent, 'processInputStep', /could not be read/);
  });

  it('settings a step came with that already break the rules (an AI SDK call\'s, through the operator) are not blamed on a hook that left them alone', async () => {
    const ctx = createRunContext();
    const step = { stepNumber: 0, model: answer(), modelSettings: { topK: 0.5 } } as unknown as StepInput;
    const result = await lastValueFrom(of(step).pipe(processInputStep([{ id: 'innocent', processInputStep: () => undefined }], ctx)));
    expect(result.modelSettings).toEqual({ topK: 0.5 });
  });

  it('settings read once: a header getter that changes after the check never reaches the provider', async () => {
    const model = answer();
    let reads = 0;
    const headers = Object.defineProperty({}, 'x-user', {
      enumerable: true,
      get: () => (reads++ === 0 ? 'safe' : 'a\r\nx-admin: 1'),
    });
    const agent = new Agent({ id: 'a', model, inputProcessors: [{ id: 'shifty', processInputStep: () => ({ modelSettings: { headers } }) as never }] });
    const chunks = await collect(agent);
    expect(chunks.at(-1)?.type).toBe('finish');
    expect(model.calls[0]?.headers).toEqual({ 'x-user': 'safe' });
  });

  it('valid settings from processInputStep and prepareStep reach the provider as given', async () => {
    const model = answer();
    const agent = new Agent({
      id: 'a',
      model,
      inputProcessors: [{ id: 'tune', processInputStep: () => ({ modelSettings: { temperature: 0.5, maxOutputTokens: 50, headers: { 'x-user': 'u-1', 'x-unset': undefined } } }) }],
    });
    await agent.generate('hi', { prepareStep: ({ modelSettings }) => ({ modelSettings: { ...modelSettings, seed: -3, stopSequences: ['END'] } }) });
    expect(model.calls[0]).toMatchObject({ temperature: 0.5, maxOutputTokens: 50, seed: -3, stopSequences: ['END'], headers: { 'x-user': 'u-1' } });
  });
});
