/**
 * Processors we did not write, trying to break the processor contract
 * (/work/shared/spec/processor-interface.zh.md): every hook returns every wrong kind of value (null,
 * a number, a string, a wrong-shaped object, an array of non-messages, a Proxy that throws on every
 * get, a getter that throws on the field the check reads, a frozen object, a revoked Proxy, a
 * thenable rejecting with a non-Error, a promise that never settles while the run's abortSignal
 * aborts), throws non-Errors (a string, undefined, a Symbol, a hostile Proxy), calls `abort()` twice
 * or after returning, writes with `writer.custom()` and mutates `state` after the run ended, or
 * hands back (and later mutates) structure shared with its input.
 *
 * The guarantee, for every case: the run ends — a `tripwire`, or an `error` chunk carrying a
 * `ProcessorError` naming the processor and the hook, or (where the spec accepts the value) a
 * normal `finish`; `processAPIError` failing counts as "not handled" (the reference's rule), so the
 * run ends with the provider's own error. Never an untyped TypeError from inside the loop, never an
 * unhandled rejection, and a clean second run of the same Agent equals a fresh agent's run.
 *
 * Cases: `RXAGENT_PROPERTY_RUNS` / 5 (default 200; the soak run 4,000), seeded by
 * `RXAGENT_PROPERTY_SEED` like the other properties.
 */
import fc from 'fast-check';
import { lastValueFrom, toArray } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent } from '../../src/loop/agent.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { ProcessorError, type ProcessorHookName } from '../../src/contract/errors/processor-error.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { finishPart, mockModel, textParts, toolCallParts, type MockModel } from '../../src/testing/index.js';
import { checkProperty, PROPERTY_RUNS } from '../reliability/support/property.js';
import { PROCESSOR_HOOKS } from '../../src/contract/processor-checks.js';
import { revokedProxy, throwingProxy } from '../support/hostile-values.js';

const CASES = Math.max(20, Math.floor(PROPERTY_RUNS / 5));

const HOOKS: readonly ProcessorHookName[] = PROCESSOR_HOOKS;
const INPUT_HOOKS: ReadonlySet<ProcessorHookName> = new Set(['processInput', 'processInputStep', 'processLLMRequest', 'processLLMResponse']);

/** The hook's arguments, as loosely as a processor we did not write reads them. */
type Args = Record<string, unknown> & {
  part?: ChunkType;
  abort: (reason?: string, options?: { retry?: boolean }) => never;
  writer: { custom(chunk: { type: string; data?: unknown }): Promise<void> };
  state: Record<string, unknown>;
};

/** The field each hook's result check reads first. */
const READ_FIELD: Record<ProcessorHookName, string> = {
  processInput: 'messages',
  processInputStep: 'messages',
  processLLMRequest: 'prompt',
  processLLMResponse: 'messages',
  processAPIError: 'retry',
  processOutputStream: 'type',
  processOutputStep: 'messages',
  processToolResult: 'messages',
  processOutputResult: 'messages',
};
const throwingGetter = (hook: ProcessorHookName): object =>
  Object.defineProperty({}, READ_FIELD[hook], {
    enumerable: true,
    get() {
      throw new Error('hostile getter');
    },
  });
/** A right-shaped result, frozen (deeply where the hook's value is nested). */
function frozenRightShape(hook: ProcessorHookName, args: Args): unknown {
  switch (hook) {
    case 'processOutputStream':
      return Object.freeze({ ...args.part, payload: Object.freeze({ ...(args.part as { payload?: object }).payload }) });
    case 'processLLMRequest':
      return Object.freeze({ prompt: Object.freeze((args.prompt as object[]).map((message) => Object.freeze({ ...message }))) });
    case 'processInputStep':
      return Object.freeze({ toolChoice: 'auto' });
    case 'processAPIError':
      return Object.freeze({ retry: false });
    case 'processLLMResponse':
      return Object.freeze({});
    default:
      return Object.freeze([...(args.messages as object[])]);
  }
}
const rejectingThenable = (reason: unknown): PromiseLike<never> => ({
  then(_resolve, reject) {
    reject?.(reason);
    return undefined as unknown as PromiseLike<never>;
  },
});

type Expected = 'finish' | 'tripwire' | 'processor-error' | 'abort' | 'ignored';

/** One hostile behaviour: what the hook does, and what the run must end with. */
interface Behaviour {
  act(hook: ProcessorHookName, args: Args, run: RunControls): unknown;
  expect(hook: ProcessorHookName): Expected;
}
interface RunControls {
  abortRun(): void;
}

/** Values the spec gives no meaning: an error naming the processor (ignored by processLLMResponse, whose result is reserved). */
const wrongValue = (make: (hook: ProcessorHookName, args: Args) => unknown): Behaviour => ({
  act: (hook, args) => make(hook, args),
  expect: (hook) => (hook === 'processLLMResponse' ? 'ignored' : 'processor-error'),
});
/** Values nobody can read: always an error naming the processor. */
const unreadable = (make: (hook: ProcessorHookName) => unknown): Behaviour => ({ act: (hook) => make(hook), expect: () => 'processor-error' });
const thrown = (make: () => unknown): Behaviour => ({
  act: () => {
    throw make();
  },
  expect: () => 'processor-error',
});

const BEHAVIOURS: Record<string, Behaviour> = {
  'returns null': { act: () => null, expect: () => 'finish' },
  'returns a number': wrongValue(() => 42),
  'returns a string': wrongValue(() => 'not a result'),
  'returns a wrong-shaped object': wrongValue(() => ({ nope: 1 })),
  'returns an array of non-messages': wrongValue(() => [1, 'two', null]),
  'returns a frozen wrong-shaped object': wrongValue(() => Object.freeze({ nope: 1 })),
  'returns a frozen right-shaped value': { act: (hook, args) => frozenRightShape(hook, args), expect: () => 'finish' },
  'returns a Proxy that throws on every get': unreadable(throwingProxy),
  // processLLMResponse's result is reserved and never read: a getter there throws at nobody
  'returns an object whose checked field is a throwing getter': wrongValue((hook) => throwingGetter(hook)),
  'returns a revoked Proxy': unreadable(revokedProxy),
  'resolves to a Proxy that throws on every get': unreadable(async () => Promise.resolve().then(throwingProxy)),
  'resolves to a revoked Proxy': unreadable(async () => Promise.resolve().then(revokedProxy)),
  'resolves to an object whose checked field is a throwing getter': wrongValue(async (hook) => throwingGetter(hook)),
  'returns a thenable rejecting with a string': unreadable(() => rejectingThenable('nope')),
  'returns a thenable rejecting with undefined': unreadable(() => rejectingThenable(undefined)),
  'returns a thenable rejecting with a Symbol': unreadable(() => rejectingThenable(Symbol('nope'))),
  'throws a string': thrown(() => 'nope'),
  'throws undefined': thrown(() => undefined),
  'throws a Symbol': thrown(() => Symbol('nope')),
  'throws a Proxy that throws on every get': thrown(throwingProxy),
  'throws a revoked Proxy': thrown(revokedProxy),
  'throws an object whose toString throws': thrown(() => ({
    toString() {
      throw new Error('hostile toString');
    },
  })),
  'calls abort() twice': {
    act: (_hook, args) => {
      try {
        args.abort('first');
      } catch {
        // a processor that swallows its own TripWire (#18760) and aborts again
      }
      return args.abort('second');
    },
    expect: () => 'tripwire',
  },
  'calls abort() after returning': {
    act: (hook, args) => {
      setTimeout(() => args.abort('too late'), 0);
      return hook === 'processOutputStream' ? args.part : undefined;
    },
    expect: () => 'finish',
  },
  'writes with writer.custom() after the run ended': {
    act: (hook, args) => {
      setTimeout(() => void args.writer.custom({ type: 'data-late', data: 1 }), 0);
      return hook === 'processOutputStream' ? args.part : undefined;
    },
    expect: () => 'finish',
  },
  'mutates state from a timer after the run ended': {
    act: (hook, args) => {
      const state = args.state;
      setTimeout(() => {
        state.late = true;
        state.__mastraReprocessPart = { type: 'text-delta', payload: { id: 'x', text: 'LEAK' } };
      }, 0);
      return hook === 'processOutputStream' ? args.part : undefined;
    },
    expect: () => 'finish',
  },
  'never settles while the run is aborted': {
    act: (_hook, _args, run) => {
      queueMicrotask(() => run.abortRun());
      return new Promise(() => undefined);
    },
    // processOutputResult: the commit lets it settle (docs/memory.md, "An abort during the save"); see the test below
    expect: (hook) => (hook === 'processOutputResult' ? 'processor-error' : 'abort'),
  },
};

/** One agent whose every hook runs (a tool call, then text); its processor is hostile while armed. */
interface Scenario {
  agent: Agent;
  model: MockModel;
  controls: { armed: boolean; failNextCall: boolean; abort: AbortController };
}

const API_ERROR = new Error('api down');

function scenario(hook: ProcessorHookName, behaviour: Behaviour | undefined): Scenario {
  const controls = { armed: behaviour !== undefined, failNextCall: hook === 'processAPIError' && behaviour !== undefined, abort: new AbortController() };
  const model = mockModel({
    error: () => {
      if (!controls.failNextCall) return undefined;
      controls.failNextCall = false;
      return API_ERROR;
    },
    parts: ({ options }) =>
      options.prompt.some((message) => message.role === 'tool')
        ? [...textParts('It is sunny.'), finishPart('stop')]
        : [...toolCallParts('weather', { city: 'Paris' }), finishPart('tool-calls')],
  });
  const run: RunControls = { abortRun: () => controls.abort.abort() };
  const processor = {
    id: 'hostile',
    [hook]: (args: Args) => {
      if (controls.armed && behaviour !== undefined) return behaviour.act(hook, args, run);
      return hook === 'processOutputStream' ? args.part : undefined;
    },
  } as unknown as Processor;
  const tools = {
    weather: { inputSchema: z.object({ city: z.string() }), execute: async ({ city }: { city: string }) => ({ city, sky: 'sunny' }) },
  };
  const list = hook === 'processAPIError' ? 'errorProcessors' : INPUT_HOOKS.has(hook) ? 'inputProcessors' : 'outputProcessors';
  const agent = new Agent({
    id: 'agent',
    model,
    instructions: 'Be brief.',
    tools,
    defaultOptions: { modelSettings: { temperature: 0.5 }, providerOptions: { mock: { level: 1 } } },
    [list]: [processor],
    // only the processOutputResult hook that never settles needs it: the documented way out of a commit that waits
    ...(hook === 'processOutputResult' ? { processorTimeoutMs: 50 } : {}),
  });
  return { agent, model, controls };
}

/** What a clean run looks like, to compare a second run with a fresh agent's. */
function fingerprint(chunks: readonly ChunkType[], model: MockModel, fromCall: number): string {
  const calls = model.calls.slice(fromCall).map((call) => ({
    prompt: call.prompt,
    temperature: call.temperature,
    providerOptions: call.providerOptions,
    tools: call.tools?.map((tool) => tool.name),
    toolChoice: call.toolChoice,
  }));
  const text = chunks.flatMap((chunk) => (chunk.type === 'text-delta' ? [chunk.payload.text] : [])).join('');
  return JSON.stringify({ types: chunks.map((chunk) => chunk.type), text, calls });
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

let unhandled: unknown[] = [];
const onUnhandled = (error: unknown): void => void unhandled.push(error);
beforeEach(() => {
  unhandled = [];
  process.on('unhandledRejection', onUnhandled);
});
afterEach(async () => {
  await nextTurn();
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

const baselines = new Map<ProcessorHookName, string>();
async function baseline(hook: ProcessorHookName): Promise<string> {
  let known = baselines.get(hook);
  if (known === undefined) {
    const { agent, model } = scenario(hook, undefined);
    known = fingerprint(await lastValueFrom(agent.stream$('Weather in Paris?').pipe(toArray())), model, 0);
    baselines.set(hook, known);
  }
  return known;
}

/** Problems with how a run ended, against what `expected` says. */
function endProblems(hook: ProcessorHookName, expected: Expected, chunks: readonly ChunkType[]): string[] {
  const terminals = chunks.filter((chunk) => ['finish', 'error', 'tripwire', 'abort'].includes(chunk.type));
  const last = chunks[chunks.length - 1];
  if (last === undefined || terminals.length !== 1 || terminals[0] !== last) return [`expected one terminal chunk, last; got ${chunks.map((chunk) => chunk.type).join(',')}`];
  const want: Expected = hook === 'processAPIError' && expected !== 'tripwire' && expected !== 'abort' ? 'processor-error' : expected;
  if (hook === 'processAPIError' && want === 'processor-error') {
    // a failing or answerless error processor is "not handled": the run ends with the provider's error
    return last.type === 'error' && last.payload.error === API_ERROR ? [] : [`expected the API error, got ${describeEnd(last)}`];
  }
  if (want === 'ignored' || want === 'finish') {
    if (last.type === 'finish') return [];
    if (want === 'ignored' && isHookError(last, hook)) return [];
    return [`expected finish, got ${describeEnd(last)}`];
  }
  if (want === 'processor-error') return isHookError(last, hook) ? [] : [`expected a ProcessorError naming "hostile" and ${hook}, got ${describeEnd(last)}`];
  if (want === 'tripwire') {
    return last.type === 'tripwire' && last.payload.processorId === 'hostile' && last.payload.reason === 'first' ? [] : [`expected the first abort's tripwire, got ${describeEnd(last)}`];
  }
  return last.type === 'abort' ? [] : [`expected abort, got ${describeEnd(last)}`];
}

function isHookError(chunk: ChunkType, hook: ProcessorHookName): boolean {
  if (chunk.type !== 'error') return false;
  const error = chunk.payload.error;
  return ProcessorError.isInstance(error) && error.processorId === 'hostile' && error.hook === hook;
}

function describeEnd(chunk: ChunkType | undefined): string {
  if (chunk?.type !== 'error') return chunk?.type ?? 'nothing';
  const error = chunk.payload.error as { name?: unknown; message?: unknown } | undefined;
  return `error ${String(error?.name)}: ${String(error?.message)}`;
}

/** The same outcome through generate(): resolved for finish/tripwire, rejected with the error otherwise. */
async function generateProblems(hook: ProcessorHookName, expected: Expected, agent: Agent, signal: AbortSignal): Promise<string[]> {
  const outcome = await agent.generate('Weather in Paris?', { abortSignal: signal }).then(
    (result) => ({ result }),
    (error: unknown) => ({ error }),
  );
  if ('result' in outcome) {
    if (expected === 'tripwire') return outcome.result.tripwire?.processorId === 'hostile' ? [] : ['generate(): expected a tripwire'];
    if (expected === 'finish' || (expected === 'ignored' && hook !== 'processAPIError')) return [];
    return [`generate(): expected a rejection (${expected}), got a result`];
  }
  const error = outcome.error as { name?: unknown; processorId?: unknown; hook?: unknown; cause?: unknown };
  // docs/agent.md: a run aborted by abortSignal rejects generate() with an AbortError
  if (expected === 'abort') return error.name === 'AbortError' ? [] : [`generate(): expected an AbortError, got ${String(error.name)}`];
  if (hook === 'processAPIError') return error.name === 'AgentRunError' && error.cause === API_ERROR ? [] : [`generate(): expected the API error, got ${String(error.name)}`];
  if (expected === 'processor-error' || expected === 'ignored') {
    return ProcessorError.isInstance(error) && error.processorId === 'hostile' && error.hook === hook ? [] : [`generate(): expected a ProcessorError, got ${String(error.name)}`];
  }
  return [`generate(): unexpected rejection ${String(error.name)}`];
}

/** Runs one hostile case, then a clean run of the same agent; returns the problems found. */
async function hostileCase(hook: ProcessorHookName, name: string, via: 'stream$' | 'generate'): Promise<string[]> {
  const behaviour = BEHAVIOURS[name] as Behaviour;
  const expected = behaviour.expect(hook);
  const { agent, model, controls } = scenario(hook, behaviour);
  const problems =
    via === 'stream$'
      ? endProblems(hook, expected, await lastValueFrom(agent.stream$('Weather in Paris?', { abortSignal: controls.abort.signal }).pipe(toArray())))
      : await generateProblems(hook, expected, agent, controls.abort.signal);
  await nextTurn(); // timers the processor left behind fire now, after its run
  controls.armed = false;
  const from = model.calls.length;
  const again = fingerprint(await lastValueFrom(agent.stream$('Weather in Paris?').pipe(toArray())), model, from);
  if (again !== (await baseline(hook))) problems.push(`the next run of the same agent differs from a fresh agent's:\n  ${again}\n  ${await baseline(hook)}`);
  return problems.map((problem) => `${hook} / ${name} / ${via}: ${problem}`);
}

describe('every hook, every hostile behaviour: contained as the spec says, and the next run is clean', () => {
  for (const hook of HOOKS) {
    it.each(Object.keys(BEHAVIOURS))(`${hook}: %s`, async (name) => {
      expect([...(await hostileCase(hook, name, 'stream$')), ...(await hostileCase(hook, name, 'generate'))]).toEqual([]);
    });
  }

  it(
    'property: any hook, any behaviour, stream$ or generate, in any order on one process',
    async () => {
      const arbitrary = fc.record({
        hook: fc.constantFrom(...HOOKS),
        name: fc.constantFrom(...Object.keys(BEHAVIOURS)),
        via: fc.constantFrom('stream$' as const, 'generate' as const),
      });
      await checkProperty(
        'hostile processors',
        arbitrary,
        async ({ hook, name, via }) => {
          expect(await hostileCase(hook, name, via)).toEqual([]);
        },
        CASES,
      );
    },
    60_000,
  );
});

describe('structure shared with the input, mutated by the processor', () => {
  /** A processor that mutates what it was given (while armed), and a clean second run compared with a fresh agent's. */
  const cases: Array<[string, ProcessorHookName, (args: Args) => unknown]> = [
    ['processInputStep deletes a tool from its tools argument', 'processInputStep', ({ tools }) => void delete (tools as Record<string, unknown>).weather],
    ['processInputStep changes its modelSettings argument', 'processInputStep', ({ modelSettings }) => void ((modelSettings as { temperature: number }).temperature = 2)],
    ['processInputStep changes a nested providerOptions value', 'processInputStep', ({ providerOptions }) => void ((providerOptions as { mock: { level: number } }).mock.level = 99)],
    [
      'processInputStep returns { tools } and deletes one later',
      'processInputStep',
      ({ tools }) => {
        setTimeout(() => delete (tools as Record<string, unknown>).weather, 0);
        return { tools };
      },
    ],
    ['processLLMRequest changes its modelSettings argument', 'processLLMRequest', ({ modelSettings }) => void ((modelSettings as { temperature: number }).temperature = 3)],
    [
      'processLLMRequest returns { prompt } and pushes into it later',
      'processLLMRequest',
      ({ prompt }) => {
        queueMicrotask(() => (prompt as object[]).push({ role: 'user', content: [{ type: 'text', text: 'INJECTED' }] }));
        return { prompt };
      },
    ],
    ['processInput edits its system messages in place', 'processInput', ({ systemMessages }) => void (systemMessages as Array<{ content: string }>).forEach((message) => (message.content = 'EVIL'))],
    [
      'processInput returns its messages and pushes into the array later',
      'processInput',
      ({ messages }) => {
        setTimeout(() => (messages as object[]).push({ id: 'late', role: 'user', content: { format: 2, parts: [{ type: 'text', text: 'LATE' }] } }), 0);
        return messages;
      },
    ],
    [
      'processOutputStream returns its part and rewrites its payload later',
      'processOutputStream',
      ({ part }) => {
        setTimeout(() => ((part as { payload: { text?: string } }).payload.text = 'MUTATED'), 0);
        return part;
      },
    ],
  ];
  it.each(cases)('%s: the run finishes and the next run of the same agent equals a fresh one', async (_name, hook, act) => {
    const behaviour: Behaviour = { act: (_hook, args) => act(args), expect: () => 'finish' };
    const { agent, model, controls } = scenario(hook, behaviour);
    const chunks = await lastValueFrom(agent.stream$('Weather in Paris?').pipe(toArray()));
    expect(chunks.at(-1)?.type).toBe('finish');
    await nextTurn();
    controls.armed = false;
    const from = model.calls.length;
    expect(fingerprint(await lastValueFrom(agent.stream$('Weather in Paris?').pipe(toArray())), model, from)).toBe(await baseline(hook));
  });
});

describe('processOutputStream forging chunks', () => {
  const forged = (type: string, payload: object) => (args: Args) =>
    args.part?.type === 'text-delta' ? { type, runId: args.part.runId, from: 'AGENT', payload } : args.part;
  const cases: Array<[string, (args: Args) => unknown]> = [
    ['a finish in the middle of the text', forged('finish', { stepResult: { reason: 'stop' }, output: { usage: {} } })],
    ['an error chunk', forged('error', { error: new Error('forged') })],
    ['a tripwire chunk', forged('tripwire', { reason: 'forged', processorId: 'someone-else' })],
    ['an abort chunk', forged('abort', {})],
    ['a second start', forged('start', {})],
  ];
  it.each(cases)('%s: never ends the run; the run ends once, with its own finish', async (_name, act) => {
    const behaviour: Behaviour = { act: (_hook, args) => act(args), expect: () => 'finish' };
    const { agent } = scenario('processOutputStream', behaviour);
    const chunks = await lastValueFrom(agent.stream$('Weather in Paris?').pipe(toArray()));
    expect(endProblems('processOutputStream', 'finish', chunks)).toEqual([]);
    expect(chunks.filter((chunk) => chunk.type === 'start')).toHaveLength(1);
    const result = await scenario('processOutputStream', behaviour).agent.generate('Weather in Paris?');
    expect(result.tripwire).toBeUndefined();
    expect(result.finishReason).toBe('stop');
  });

  it('writer.custom() with a forged terminal chunk: a ProcessorError naming the processor', async () => {
    const behaviour: Behaviour = {
      act: (_hook, args) => {
        if (args.part?.type === 'text-delta') void args.writer.custom({ type: 'finish' });
        return args.part;
      },
      expect: () => 'processor-error',
    };
    const { agent } = scenario('processOutputStream', behaviour);
    expect(endProblems('processOutputStream', 'processor-error', await lastValueFrom(agent.stream$('Weather in Paris?').pipe(toArray())))).toEqual([]);
  });

  it("a chunk stamped with another run's id goes out with the run's id (the run is the authority on it)", async () => {
    const behaviour: Behaviour = { act: (_hook, args) => ({ ...args.part, runId: 'another-run' }), expect: () => 'finish' };
    const { agent } = scenario('processOutputStream', behaviour);
    const chunks = await lastValueFrom(agent.stream$('Weather in Paris?').pipe(toArray()));
    expect(chunks.at(-1)?.type).toBe('finish');
    expect(new Set(chunks.map((chunk) => chunk.runId)).size).toBe(1);
    expect(chunks.some((chunk) => chunk.runId === 'another-run')).toBe(false);
  });
});

describe('documented: the commit lets processOutputResult settle, even under an abort', () => {
  it('a processOutputResult that never settles holds an aborted run until processorTimeoutMs fails it closed', async () => {
    const behaviour = BEHAVIOURS['never settles while the run is aborted'] as Behaviour;
    const { agent, controls } = scenario('processOutputResult', behaviour);
    const chunks = await lastValueFrom(agent.stream$('Weather in Paris?', { abortSignal: controls.abort.signal }).pipe(toArray()));
    expect(controls.abort.signal.aborted).toBe(true);
    expect(describeEnd(chunks.at(-1))).toMatch(/ProcessorError: Processor "hostile" failed in processOutputResult: did not settle within processorTimeoutMs/);
  });
});
