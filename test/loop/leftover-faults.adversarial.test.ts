/**
 * The faults the last round of hostile-processor work left open, each shown by a hostile caller,
 * provider or processor, and what the run does now:
 *
 * 1. `processAPIError` hooks and `stopWhen` conditions get the run's `steps` too: one that leaves a
 *    step's usage unaddable (NaN, a BigInt, a Symbol, a Proxy that throws) ends the run with the
 *    error that names it — a `ProcessorError` naming the processor and `processAPIError`, a
 *    `StopConditionError` naming `stopWhen[<index>]` — not a bare `TypeError` or NaN totals later;
 *    and a hook of any stage that corrupts the usage and then aborts (a retry too) or throws fails
 *    with that `ProcessorError`, not with its tripwire (a retry ran on the corrupted usage);
 * 2. a provider reporting a token count that is not a whole number from 0 to 2^53 − 1 (NaN,
 *    negative, infinite, fractional, a string, a BigInt, a usage that cannot be read) gets it
 *    counted as unknown (`undefined`) where its usage enters the run: the run goes on, its totals,
 *    chunks and snapshots stay numbers (JSON writes NaN as `null`, the codec refuses it);
 * 3. a tripwire's `metadata` that cannot be read or written as JSON (a Proxy that throws, a revoked
 *    Proxy, a getter that throws, a cycle, a BigInt) is refused where the processor hands it over —
 *    `abort()` or `new TripWire()` — with a `ProcessorError` naming the processor and the hook,
 *    instead of breaking the UI stream's JSON, the durable journal or whoever reads
 *    `result.tripwire`; plain metadata is kept as given, and the run's own structured-output
 *    tripwire falls back to the answer's text when the parsed answer cannot be written.
 */
import { APICallError, type LanguageModelV4StreamPart, type LanguageModelV4Usage } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { expectNothingUnhandled } from '../support/nothing-unhandled.js';
import { defer, lastValueFrom, of, tap, throwError, toArray } from 'rxjs';
import { z } from 'zod';
import { toUIMessageStream } from '../../src/ai-sdk/to-ui-message-stream.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { JsonEncodingError } from '../../src/contract/errors/json-encoding-error.js';
import { ProcessorError, type ProcessorHookName } from '../../src/contract/errors/processor-error.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import { encodeJson } from '../../src/contract/json-codec.js';
import type { Processor, StepResult } from '../../src/contract/processor-types.js';
import { Agent } from '../../src/loop/agent.js';
import type { AgentCallOptions } from '../../src/loop/agent-types.js';
import { checkRunSnapshot } from '../../src/loop/data/run-snapshot-check.js';
import type { RunSnapshot } from '../../src/loop/data/run-snapshot-types.js';
import { createRun } from '../../src/loop/run/create-run.js';
import { isChunk, isRunEnd, type RunEnd } from '../../src/loop/run/run-events.js';
import { StopConditionError } from '../../src/loop/step/stop-condition-error.js';
import type { StopCondition } from '../../src/loop/step/stop-condition.js';
import { fromV4Usage } from '../../src/model/usage.js';
import { mockModel, type MockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { snapshotOf, tellCommitPoints } from '../support/commit-points.js';
import { revokedProxy, throwingProxy } from '../support/hostile-values.js';

const weather = { inputSchema: z.object({ city: z.string() }), execute: async ({ city }: { city: string }) => ({ city, sky: 'sunny' }) };

const toolStep = (usage: Parameters<typeof finishPart>[1] = { inputTokens: 3, outputTokens: 4 }): LanguageModelV4StreamPart[] => [
  ...toolCallParts('weather', { city: 'Paris' }, { toolCallId: 'c1' }),
  finishPart('tool-calls', usage),
];
const answerStep = (usage: Parameters<typeof finishPart>[1] = { inputTokens: 5, outputTokens: 6 }): LanguageModelV4StreamPart[] => [...textParts('Sunny.'), finishPart('stop', usage)];

/** A model that calls `weather` in its first step and answers in its second, reporting usage each time. */
const twoSteps = (): MockModel => mockModel({ parts: ({ callIndex }) => (callIndex === 0 ? toolStep() : answerStep()) });

const rateLimited = (): APICallError =>
  new APICallError({ message: 'rate limited', url: 'https://api.example/v1', requestBodyValues: {}, statusCode: 429, isRetryable: true });

/** `twoSteps`, whose second call fails once with a 429 (call 1), so `processAPIError` is asked after a step was recorded. */
const failsAfterAStep = (): MockModel =>
  mockModel({
    error: ({ callIndex }: { callIndex: number }) => (callIndex === 1 ? rateLimited() : undefined),
    parts: ({ callIndex }) => (callIndex === 0 ? toolStep() : answerStep()),
  });

const collect = (agent: Agent, options?: AgentCallOptions): Promise<ChunkType[]> => lastValueFrom(agent.stream$('Weather in Paris?', options).pipe(toArray()));
const errorOf = (chunks: readonly ChunkType[]): unknown => {
  const last = chunks.at(-1);
  return last?.type === 'error' ? last.payload.error : undefined;
};
const rejectionOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );

/** The run ended with a `ProcessorError` naming `processorId` and `hook` (stream and `generate()` alike); returns its message. */
async function expectProcessorError(makeAgent: () => Agent, hook: ProcessorHookName, processorId = 'hostile'): Promise<string> {
  const chunks = await collect(makeAgent());
  expect(chunks.at(-1)?.type).toBe('error');
  const error = errorOf(chunks);
  expect(ProcessorError.isInstance(error), `not a ProcessorError: ${String(error)}`).toBe(true);
  expect(error).toMatchObject({ processorId, hook });
  const rejected = await rejectionOf(makeAgent().generate('Weather in Paris?'));
  expect(ProcessorError.isInstance(rejected), `generate() did not reject with a ProcessorError: ${String(rejected)}`).toBe(true);
  expect(rejected).toMatchObject({ processorId, hook });
  return (error as Error).message;
}


expectNothingUnhandled();

const BAD_COUNTS: Array<[string, () => unknown]> = [
  ['NaN', () => Number.NaN],
  ['-1', () => -1],
  ['a BigInt', () => 12n],
  ['a Symbol', () => Symbol('tokens')],
  ['a Proxy that throws', throwingProxy],
];

describe('1. processAPIError and stopWhen corrupting a step\'s usage', () => {
  /** How a `processAPIError` hook answers after corrupting the usage: a retry, a promise of one, a throw (counts as "not handled"). */
  const ANSWERS: Array<[string, (corrupt: () => void, abort: (reason: string, options?: { retry?: boolean }) => never) => unknown]> = [
    [
      'returns { retry: true }',
      (corrupt) => {
        corrupt();
        return { retry: true };
      },
    ],
    ['resolves { retry: true }', async (corrupt) => (await Promise.resolve(), corrupt(), { retry: true })],
    ['emits { retry: true } (an Observable)', (corrupt) => defer(() => (corrupt(), of({ retry: true })))],
    ['errors (an Observable: not handled)', (corrupt) => defer(() => (corrupt(), throwError(() => new Error('gave up'))))],
    [
      'aborts with retry: true',
      (corrupt, abort) => {
        corrupt();
        return abort('again', { retry: true });
      },
    ],
    [
      'throws (not handled: the next one is asked)',
      (corrupt) => {
        corrupt();
        throw new Error('gave up');
      },
    ],
  ];

  for (const [answerName, answerWith] of ANSWERS) {
    it.each(BAD_COUNTS)(`processAPIError setting steps[0].usage.inputTokens to %s and ${answerName}: a ProcessorError naming it`, async (_name, value) => {
      const makeAgent = (): Agent => {
        const hostile: Processor = {
          id: 'hostile',
          processAPIError: ({ steps, abort }) => answerWith(() => void ((steps[0]!.usage as Record<string, unknown>).inputTokens = value()), abort) as { retry: boolean },
        };
        // a second error processor that would retry: the run must not go on past the corruption
        const retrying: Processor = { id: 'retrying', processAPIError: () => ({ retry: true }) };
        return new Agent({ id: 'a', model: failsAfterAStep(), tools: { weather }, maxProcessorRetries: 1, errorProcessors: [hostile, retrying] });
      };
      const message = await expectProcessorError(makeAgent, 'processAPIError');
      expect(message).toMatch(/left steps\[0\]\.usage\.inputTokens = |left a token usage that cannot be read/);
    });
  }

  it('processAPIError replacing steps[0].usage with a revoked Proxy: a ProcessorError naming it', async () => {
    const makeAgent = (): Agent =>
      new Agent({
        id: 'a',
        model: failsAfterAStep(),
        tools: { weather },
        errorProcessors: [{ id: 'hostile', processAPIError: ({ steps }) => ((steps[0] as { usage: unknown }).usage = revokedProxy(), { retry: true }) }],
      });
    expect(await expectProcessorError(makeAgent, 'processAPIError')).toMatch(/cannot be read/);
  });

  it('processAPIError setting a count to another number is within the contract: the retried run finishes with it', async () => {
    const agent = new Agent({
      id: 'a',
      model: failsAfterAStep(),
      tools: { weather },
      errorProcessors: [{ id: 'recount', processAPIError: ({ steps }) => (((steps[0]!.usage as { inputTokens: number }).inputTokens = 100), { retry: true }) }],
    });
    const result = await agent.generate('Weather in Paris?');
    expect(result.finishReason).toBe('stop');
    expect(result.usage.inputTokens).toBe(105);
  });

  /**
   * A hook of the other stages that corrupts the usage and then aborts (or throws) failed the same
   * way: its tripwire was taken as it was — with `retry: true` the step ran again on the corrupted
   * usage (NaN totals, or a bare TypeError adding up a BigInt), without it `result.usage` was NaN.
   */
  const ABORTING: Array<[ProcessorHookName, 'inputProcessors' | 'outputProcessors', 'abort' | 'abort, retry' | 'async abort, retry' | 'throw']> = [
    ['processOutputStep', 'outputProcessors', 'abort, retry'],
    ['processOutputStep', 'outputProcessors', 'async abort, retry'],
    ['processLLMResponse', 'inputProcessors', 'abort'],
    ['processInputStep', 'inputProcessors', 'abort, retry'],
    ['processOutputResult', 'outputProcessors', 'abort'],
    ['processToolResult', 'outputProcessors', 'throw'],
  ];
  for (const [hook, list, how] of ABORTING) {
    it.each([
      ['NaN', () => Number.NaN],
      ['a BigInt', () => 12n],
    ] as Array<[string, () => unknown]>)(`${hook} setting a count to %s, then ${how}: a ProcessorError naming it`, async (_name, value) => {
      const makeAgent = (): Agent => {
        let done = false;
        const hostile = {
          id: 'hostile',
          [hook]: (args: { steps?: StepResult[]; result?: { steps: StepResult[] }; abort: (reason: string, options?: { retry?: boolean }) => never }) => {
            const steps = args.steps ?? args.result?.steps ?? [];
            if (done || steps.length === 0) return undefined;
            done = true;
            const corruptAndFail = (): never => {
              (steps[0]!.usage as Record<string, unknown>).inputTokens = value();
              if (how === 'throw') throw new Error('failed');
              return args.abort('again', { retry: how.endsWith('retry') });
            };
            return how.startsWith('async') ? Promise.resolve().then(corruptAndFail) : corruptAndFail();
          },
        } as unknown as Processor;
        return new Agent({ id: 'a', model: twoSteps(), tools: { weather }, maxProcessorRetries: 1, [list]: [hostile] });
      };
      // a throw was a ProcessorError naming the hook already (its own message); an abort was taken as it was
      expect(await expectProcessorError(makeAgent, hook)).toMatch(how === 'throw' ? /left steps\[0\]\.usage\.inputTokens = |failed/ : /left steps\[0\]\.usage\.inputTokens = /);
    });
  }

  /** The run ended with a `StopConditionError` for `stopWhen[index]` (stream and `generate()` alike); returns its message. */
  async function expectStopConditionError(stopWhen: StopCondition | StopCondition[], index: number): Promise<string> {
    const makeAgent = (): Agent => new Agent({ id: 'a', model: twoSteps(), tools: { weather }, stopWhen });
    const chunks = await collect(makeAgent());
    expect(chunks.at(-1)?.type).toBe('error');
    const error = errorOf(chunks);
    expect(StopConditionError.isInstance(error), `not a StopConditionError: ${String(error)}`).toBe(true);
    expect(error).toMatchObject({ index });
    const rejected = await rejectionOf(makeAgent().generate('Weather in Paris?'));
    expect(StopConditionError.isInstance(rejected), `generate() did not reject with a StopConditionError: ${String(rejected)}`).toBe(true);
    expect(rejected).toMatchObject({ index });
    return (error as Error).message;
  }

  it.each(BAD_COUNTS)('a stopWhen condition setting steps[0].usage.outputTokens to %s: a StopConditionError naming it', async (_name, value) => {
    const condition: StopCondition = ({ steps }) => {
      (steps[0]!.usage as Record<string, unknown>).outputTokens = value();
      return false;
    };
    const message = await expectStopConditionError(condition, 0);
    expect(message).toMatch(/^stopWhen\[0\] (left steps\[0\]\.usage\.outputTokens = |left a token usage that cannot be read)/);
  });

  it('an async stopWhen condition (the second of two) corrupting a usage detail after a tick: a StopConditionError naming stopWhen[1]', async () => {
    const condition: StopCondition = async ({ steps }) => {
      await Promise.resolve();
      (steps[0]!.usage.inputTokenDetails as Record<string, unknown>).cacheReadTokens = Number.NaN;
      return false;
    };
    const message = await expectStopConditionError([() => false, condition], 1);
    expect(message).toMatch(/stopWhen\[1\] left steps\[0\]\.usage\.inputTokenDetails\.cacheReadTokens = number NaN/);
  });

  it('a stopWhen condition replacing the usage of the run\'s step (not only its copy of the list): a StopConditionError', async () => {
    const condition: StopCondition = ({ steps }) => {
      (steps[0] as { usage: unknown }).usage = 'lots';
      return false;
    };
    expect(await expectStopConditionError(condition, 0)).toMatch(/steps\[0\]\.usage = string/);
  });

  it('a stopWhen condition that reads the usage and changes a count to another number: the run finishes with it', async () => {
    const seen: number[] = [];
    const agent = new Agent({
      id: 'a',
      model: twoSteps(),
      tools: { weather },
      stopWhen: ({ steps }) => {
        seen.push(steps.reduce((sum, step) => sum + (step.usage.totalTokens ?? 0), 0));
        (steps[0]!.usage as { outputTokens: number }).outputTokens = 40;
        return false;
      },
    });
    const result = await agent.generate('Weather in Paris?');
    expect(seen).toEqual([7]);
    expect(result.usage.outputTokens).toBe(46);
  });
});

describe('2. a provider reporting token counts that cannot be counted', () => {
  /** A V4 usage whose input total is `value`, its other counts sound. */
  const usageWith = (field: 'inputTotal' | 'outputTotal' | 'cacheRead' | 'reasoning', value: unknown): LanguageModelV4Usage =>
    ({
      inputTokens: { total: field === 'inputTotal' ? value : 3, noCache: undefined, cacheRead: field === 'cacheRead' ? value : 1, cacheWrite: undefined },
      outputTokens: { total: field === 'outputTotal' ? value : 4, text: undefined, reasoning: field === 'reasoning' ? value : 2 },
    }) as LanguageModelV4Usage;

  const UNCOUNTABLE: Array<[string, unknown]> = [
    ['NaN', Number.NaN],
    ['-1', -1],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['1.5', 1.5],
    ['2^53 (past the exact integers)', 2 ** 53],
    ['the string "7"', '7'],
    ['a BigInt', 7n],
    ['null', null],
    ['true', true],
    ['an object', { total: 3 }],
  ];

  /** The step's usage the run reports everywhere for a provider usage, and that every chunk and the end is JSON. */
  async function runWith(usage: unknown, generateWith: 'doStream' | 'doGenerate'): Promise<{ step: StepResult['usage']; total: unknown; chunks: ChunkType[]; end: RunEnd }> {
    // the finish part made by hand: finishPart() reads the usage it is given
    const finishWith = { type: 'finish', finishReason: { unified: 'stop', raw: undefined }, usage } as LanguageModelV4StreamPart;
    const model = mockModel({ parts: [...textParts('ok'), finishWith] });
    // folded (as `generate()` runs it): the answer comes through doGenerate unless doStream is asked for
    const items = await lastValueFrom(createRun({ id: 'a', model }, 'Hi', { generateWith }, { folded: true }).pipe(toArray()));
    expect(model.calls).toHaveLength(1);
    const chunks = items.filter(isChunk);
    const end = items.find(isRunEnd) as RunEnd;
    expect(chunks.at(-1)?.type).toBe('finish');
    for (const chunk of chunks) expect(() => encodeJson(chunk), chunk.type).not.toThrow();
    const finish = chunks.at(-1) as ChunkType & { type: 'finish' };
    const stepFinish = chunks.find((chunk) => chunk.type === 'step-finish') as ChunkType & { type: 'step-finish' };
    expect(stepFinish.payload.output.usage).toEqual(end.steps[0]!.usage);
    expect(finish.payload.output.usage).toEqual(end.usage);
    return { step: end.steps[0]!.usage, total: end.usage, chunks, end };
  }

  for (const generateWith of ['doStream', 'doGenerate'] as const) {
    it.each(UNCOUNTABLE)(`${generateWith}: an input total of %s is unknown; the other counts stand`, async (_name, value) => {
      const { step, total } = await runWith(usageWith('inputTotal', value), generateWith);
      expect(step).toEqual({
        inputTokens: undefined,
        inputTokenDetails: { noCacheTokens: undefined, cacheReadTokens: 1, cacheWriteTokens: undefined },
        outputTokens: 4,
        outputTokenDetails: { textTokens: undefined, reasoningTokens: 2 },
        totalTokens: 4,
      });
      expect(total).toEqual(step);
    });
  }

  it.each(UNCOUNTABLE)('an output total, a cache read and a reasoning count of %s are unknown', async (_name, value) => {
    for (const field of ['outputTotal', 'cacheRead', 'reasoning'] as const) {
      const { step } = await runWith(usageWith(field, value), 'doStream');
      const counts = [step.outputTokens, step.inputTokenDetails?.cacheReadTokens, step.outputTokenDetails?.reasoningTokens];
      expect(counts.filter((count) => count === undefined), field).toHaveLength(1);
      expect(step.totalTokens).toBe(field === 'outputTotal' ? 3 : 7);
    }
  });

  // each group is read on its own (provider-responses.property.test.ts): a readable one is kept
  const UNREADABLE: Array<[string, () => unknown, number | undefined]> = [
    ['a Proxy that throws (the usage)', throwingProxy, undefined],
    ['a revoked Proxy (the usage)', revokedProxy, undefined],
    ['a usage whose inputTokens getter throws', () => Object.defineProperty({ outputTokens: { total: 4 } }, 'inputTokens', { enumerable: true, get: () => { throw new Error('hostile'); } }), 4],
    ['inputTokens a Proxy that throws', () => ({ inputTokens: throwingProxy(), outputTokens: { total: 4 } }), 4],
  ];
  it.each(UNREADABLE)('%s: what cannot be read is unknown, the rest kept; the run finishes', async (_name, make, output) => {
    for (const generateWith of ['doStream', 'doGenerate'] as const) {
      const { step, total } = await runWith(make(), generateWith);
      const expected = { ...fromV4Usage(undefined), outputTokens: output, totalTokens: output };
      expect(step).toEqual(expected);
      expect(total).toEqual(expected);
    }
  });

  it('whole counts from 0 to 2^53 − 1 are kept as reported', async () => {
    const { step } = await runWith(
      { inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: Number.MAX_SAFE_INTEGER, text: 9, reasoning: 0 } },
      'doStream',
    );
    expect(step).toEqual({
      inputTokens: 0,
      inputTokenDetails: { noCacheTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
      outputTokens: Number.MAX_SAFE_INTEGER,
      outputTokenDetails: { textTokens: 9, reasoningTokens: 0 },
      totalTokens: Number.MAX_SAFE_INTEGER,
    });
  });

  it('processors see the step\'s usage as counted (a provider\'s NaN is unknown in processOutputStep\'s usage and steps)', async () => {
    const seen: unknown[] = [];
    const agent = new Agent({
      id: 'a',
      model: mockModel({ parts: [...textParts('ok'), finishPart('stop', { inputTokens: Number.NaN, outputTokens: 2 })] }),
      outputProcessors: [{ id: 'reader', processOutputStep: ({ usage, steps }) => void seen.push(usage.inputTokens, steps[0]?.usage.inputTokens, usage.totalTokens) }],
    });
    const result = await agent.generate('Hi');
    expect(seen).toEqual([undefined, undefined, 2]);
    expect(result.usage).toMatchObject({ inputTokens: undefined, outputTokens: 2, totalTokens: 2 });
  });

  it('a processor is held to the same rule: a fractional count or one past 2^53 − 1 is a ProcessorError naming it', async () => {
    for (const value of [1.5, 2 ** 53]) {
      const makeAgent = (): Agent =>
        new Agent({
          id: 'a',
          model: twoSteps(),
          tools: { weather },
          outputProcessors: [{ id: 'hostile', processOutputStep: ({ usage }) => void ((usage as { inputTokens: number }).inputTokens = value) }],
        });
      expect(await expectProcessorError(makeAgent, 'processOutputStep')).toMatch(/left (steps\[0\]\.)?usage\.inputTokens = number (1\.5|9007199254740992); token counts are whole numbers/);
    }
  });

  it('the snapshots of a run whose provider reported NaN, -1 and 1.5 are taken, pass the restore check and restore to the same end', async () => {
    const bad = { inputTokens: Number.NaN, outputTokens: -1 } as const;
    const model = (first = 0): MockModel =>
      mockModel({ parts: ({ callIndex }) => (first + callIndex === 0 ? toolStep(bad) : answerStep({ inputTokens: 1.5, outputTokens: 6 })) });
    const options = { runId: 'run-usage' };
    const chunks: ChunkType[] = [];
    const points: Array<{ kind: string; at: number; snapshot: RunSnapshot; calls: number }> = [];
    const uninterrupted = model();
    const items = await lastValueFrom(
      createRun({ id: 'a', model: uninterrupted, tools: { weather } }, 'Weather in Paris?', options, { commitPoints: true }).pipe(
        tellCommitPoints((point) => {
          // through JSON, as a journal row gives it back
          const snapshot = JSON.parse(encodeJson(snapshotOf(point))) as RunSnapshot;
          points.push({ kind: point.kind, at: chunks.length, snapshot, calls: uninterrupted.calls.length });
        }),
        tap((item) => {
          if (isChunk(item)) chunks.push(item);
        }),
        toArray(),
      ),
    );
    expect(chunks.at(-1)?.type).toBe('finish');
    expect((items.find(isRunEnd) as RunEnd).usage).toMatchObject({ inputTokens: undefined, outputTokens: 6, totalTokens: 6 });
    expect(points.map((point) => point.kind)).toContain('step');
    for (const point of points) {
      expect(() => checkRunSnapshot(point.snapshot), `${point.kind} at chunk ${point.at}`).not.toThrow();
      const resumed = await lastValueFrom(createRun({ id: 'a', model: model(point.calls), tools: { weather } }, 'Weather in Paris?', options, { restore: point.snapshot }).pipe(toArray()));
      const resumedChunks = resumed.filter(isChunk);
      expect(resumedChunks.at(-1)?.type, `${point.kind} at chunk ${point.at}`).toBe('finish');
      expect(encodeJson((resumedChunks.at(-1) as ChunkType & { type: 'finish' }).payload.output.usage)).toBe(encodeJson((chunks.at(-1) as ChunkType & { type: 'finish' }).payload.output.usage));
    }
  });
});

describe('3. a tripwire\'s metadata that cannot be read or written as JSON', () => {
  const cycle = (): object => {
    const value: Record<string, unknown> = { rule: 'email' };
    value['self'] = value;
    return value;
  };
  const HOSTILE: Array<[string, () => unknown, RegExp]> = [
    ['a Proxy that throws on every trap', throwingProxy, /tripwire metadata cannot be read: hostile/],
    ['a revoked Proxy', revokedProxy, /tripwire metadata cannot be read: .*revoked/],
    ['a getter that throws', () => Object.defineProperty({ rule: 'email' }, 'matches', { enumerable: true, get: () => { throw new Error('hostile getter'); } }), /tripwire metadata cannot be read: hostile getter/],
    ['a cycle', cycle, /tripwire metadata is not JSON at \$\.self: cycle/],
    ['a BigInt', () => 5n, /tripwire metadata is not JSON at \$: bigint/],
    ['a BigInt inside', () => ({ count: 5n }), /tripwire metadata is not JSON at \$\.count: bigint/],
    ['NaN inside', () => ({ score: Number.NaN }), /tripwire metadata is not JSON at \$\.score: NaN/],
    ['a Map', () => new Map([['rule', 'email']]), /tripwire metadata is not JSON at \$: Map/],
  ];

  /** How a processor hands a tripwire over: `abort()` in a hook, or `throw new TripWire()`. */
  const WAYS: Array<[string, ProcessorHookName, 'inputProcessors' | 'outputProcessors', (metadata: unknown) => Processor]> = [
    ['abort() in processInput', 'processInput', 'inputProcessors', (metadata) => ({ id: 'hostile', processInput: ({ abort }) => abort('blocked', { metadata }) })],
    [
      'abort() in processOutputStream',
      'processOutputStream',
      'outputProcessors',
      (metadata) => ({ id: 'hostile', processOutputStream: ({ part, abort }) => (part.type === 'text-delta' ? abort('blocked', { metadata }) : part) }),
    ],
    [
      'throw new TripWire() in processOutputStep',
      'processOutputStep',
      'outputProcessors',
      (metadata) => ({
        id: 'hostile',
        processOutputStep: () => {
          throw new TripWire('blocked', { metadata });
        },
      }),
    ],
  ];

  for (const [way, hook, list, make] of WAYS) {
    it.each(HOSTILE)(`${way} with %s: a ProcessorError naming the processor and ${hook}`, async (_name, metadata, message) => {
      const makeAgent = (): Agent => new Agent({ id: 'a', model: mockModel({ parts: [...textParts('hi'), finishPart()] }), [list]: [make(metadata())] });
      expect(await expectProcessorError(makeAgent, hook)).toMatch(message);
      // the UI stream a client reads is JSON to the end, and ends with the error
      const ui: string[] = [];
      const reader = toUIMessageStream(makeAgent().stream$('Weather in Paris?')).getReader();
      for (let next = await reader.read(); !next.done; next = await reader.read()) ui.push(JSON.stringify(next.value));
      expect(ui.some((part) => part.includes('"type":"error"'))).toBe(true);
      expect(ui.some((part) => part.includes('data-tripwire'))).toBe(false);
    });
  }

  it.each(HOSTILE)('new TripWire() with %s outside a hook throws where it is made (a JsonEncodingError naming the path, or a TypeError)', (name, metadata, message) => {
    let thrown: unknown;
    try {
      new TripWire('blocked', { metadata: metadata() }, 'guard');
    } catch (error) {
      thrown = error;
    }
    expect(String((thrown as Error | undefined)?.message)).toMatch(message);
    if (/cannot be read/.test(message.source)) expect(thrown, name).toBeInstanceOf(TypeError);
    else expect(JsonEncodingError.isInstance(thrown), name).toBe(true);
  });

  it('the run\'s own structured-output tripwire whose parsed answer nests past the codec\'s depth: still the tripwire, its metadata the text', async () => {
    const deep = `${'['.repeat(1_100)}${']'.repeat(1_100)}`;
    const agent = new Agent({ id: 'a', model: mockModel({ parts: [...textParts(deep), finishPart()] }) });
    const chunks = await collect(agent, { structuredOutput: { schema: z.object({ city: z.string() }) } });
    const last = chunks.at(-1) as ChunkType & { type: 'tripwire' };
    expect(last.type).toBe('tripwire');
    expect(last.payload.reason).toMatch(/does not match the schema/);
    expect(last.payload.metadata).toEqual({ text: deep });
    expect(() => encodeJson(last)).not.toThrow();
  });

  it('a late abort() with such metadata harms nobody: reported as a late abort, the run finishes', async () => {
    const violations: unknown[] = [];
    let late: (() => void) | undefined;
    const agent = new Agent({
      id: 'a',
      model: mockModel({ parts: [...textParts('hi'), finishPart()] }),
      inputProcessors: [
        {
          id: 'late',
          processInput: ({ abort, messages }) => {
            late = () => abort('too late', { metadata: cycle() });
            return messages;
          },
          onViolation: (violation) => void violations.push(violation),
        },
      ],
    });
    const chunks = await collect(agent);
    late?.();
    expect(chunks.at(-1)?.type).toBe('finish');
    expect(violations).toHaveLength(1);
    expect(String((violations[0] as { message: string }).message)).toMatch(/after processInput returned/);
  });

  it('plain metadata (nested values, a Date, an Error, null) reaches the tripwire chunk, result.tripwire and the UI stream as it was given', async () => {
    const metadata = { rule: 'email', spans: [[1, 4]], at: new Date(0), cause: new TypeError('bad'), none: null };
    const makeAgent = (): Agent =>
      new Agent({
        id: 'a',
        model: mockModel({ parts: [...textParts('hi'), finishPart()] }),
        outputProcessors: [{ id: 'guard', processOutputStream: ({ part, abort }) => (part.type === 'text-delta' ? abort('blocked', { metadata }) : part) }],
      });
    const chunks = await collect(makeAgent());
    const last = chunks.at(-1);
    expect(last?.type).toBe('tripwire');
    expect((last as ChunkType & { type: 'tripwire' }).payload.metadata).toBe(metadata);
    expect(() => encodeJson(last)).not.toThrow();
    const result = await makeAgent().generate('Weather in Paris?');
    expect(result.tripwire?.metadata).toBe(metadata);
    const ui: string[] = [];
    const reader = toUIMessageStream(makeAgent().stream$('Weather in Paris?')).getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) ui.push(JSON.stringify(next.value));
    expect(ui.find((part) => part.includes('data-tripwire'))).toContain('"at":"1970-01-01T00:00:00.000Z"');
  });
});

describe('a text stream whose run ends in a tripwire chunk with metadata a TripWire refuses', () => {
  it('still errors with the tripwire (without the metadata), never throws inside the output', async () => {
    const { AgentOutput } = await import('../../src/loop/consumers/agent-output.js');
    const { runEnd } = await import('../../src/loop/run/run-events.js');
    const { emptyUsage } = await import('../../src/model/usage.js');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const chunks = [
      { type: 'start', runId: 'r', from: 'AGENT', payload: {} },
      { type: 'tripwire', runId: 'r', from: 'AGENT', payload: { reason: 'blocked', processorId: 'guard', metadata: cyclic } },
    ];
    const { from: fromArray, concat: concatAll, of: ofValue } = await import('rxjs');
    const output = new AgentOutput(concatAll(fromArray(chunks as never[]), ofValue(runEnd('r', [], emptyUsage()))));
    const reader = output.textStream.getReader();
    const failure = await reader.read().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ name: 'TripWire', reason: 'blocked', processorId: 'guard' });
    expect((failure as { metadata?: unknown }).metadata).toBeUndefined();
  });
});
