/**
 * Red team, December 2026 (d): processors we did not write, where the earlier passes
 * (test/contract/hostile-processors.adversarial.property.test.ts, test/loop/known-faults and
 * leftover-faults, test/reliability/late-calls) did not look.
 *
 * 1. A hook edits the messages it was given in place (the list's own objects — that is how an edit
 *    takes effect) into something no stored message can be: `content: 42`, a part that is `null`,
 *    a text that is a number, a revoked Proxy pushed into `parts`, an id that is a number. Before:
 *    an untyped `TypeError` from a converter far from the hook, or — worse — the run finished and
 *    the corrupted message reached the model (and memory). Now: a `ProcessorError` naming the
 *    processor and the hook, before the model is called again.
 * 2. `processOutputStream` hands back a new tool chunk whose `toolCallId` / `toolName` is not a
 *    non-empty string, or whose payload throws where it is read. Before: the call vanished
 *    silently (the run finished without running the tool) or a raw `Error` ended the run. Now: a
 *    `ProcessorError` naming the processor, the hook and the field. (The chunk it got, edited in
 *    place and handed back as the same object: test/reliability/stream-hook-leftovers.)
 * 3. `writer.custom()` given a data chunk that cannot be read or written as JSON (a `BigInt`, a
 *    cycle, a Proxy that throws, a `transient` getter that throws). Before: a chunk no consumer
 *    can encode went out (and a getter threw later, a raw `Error` ending the run). Now: the write
 *    throws where it is made, so the run ends with a `ProcessorError` naming the processor and the
 *    hook; a bad write from a timer after the run ended is dropped unread, never thrown at nobody.
 * 4. A hook edits the run's `steps` it was given: `steps.length = 0`, `pop()`, `reverse()` on the
 *    list, or a step's `text` set to a number. Before: the run's result lost its steps (and their
 *    text), or the number was added to the reply as digits ("42It is sunny."). Now: hooks get a
 *    copy of the list (what they do to it changes nothing), and a step text that is not a string
 *    is a `ProcessorError` naming the processor and the hook.
 *
 * Cases: `RXAGENT_PROPERTY_RUNS` / 10 (at least 30) per property.
 */
import fc from 'fast-check';
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { ProcessorError, type ProcessorHookName } from '../../src/contract/errors/processor-error.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { finishPart, mockModel, textParts, type MockModel } from '../../src/testing/index.js';
import { revokedProxy, throwingProxy } from '../support/hostile-values.js';
import { expectNothingUnhandled } from '../support/nothing-unhandled.js';
import { checkProperty, PROPERTY_RUNS } from './support/property.js';
import { chunksOf, processorErrorProblems, weatherModel, weatherTools } from './support/weather-run.js';

expectNothingUnhandled();

const CASES = Math.max(30, Math.floor(PROPERTY_RUNS / 10));
const TIMEOUT = 120_000;

/** What a processor we did not write reads its arguments as. */
type Loose = Record<string, any>;

const executed: string[] = [];
const tools = weatherTools(executed);
const toolModel = weatherModel;
const INPUT_HOOKS = new Set<ProcessorHookName>(['processInput', 'processInputStep', 'processLLMRequest', 'processLLMResponse']);

function agentWith(hook: ProcessorHookName, act: (args: Loose) => unknown, model: MockModel = toolModel()): Agent {
  const processor = { id: 'hostile', [hook]: act } as unknown as Processor;
  const list = hook === 'processAPIError' ? 'errorProcessors' : INPUT_HOOKS.has(hook) ? 'inputProcessors' : 'outputProcessors';
  return new Agent({ id: 'agent', model, tools, [list]: [processor] });
}

// ---------------------------------------------------------------------------------------------
// 1. messages edited in place into what no stored message can be
// ---------------------------------------------------------------------------------------------

/** The message's first text part. */
const firstText = (message: Loose): Loose => (message.content.parts as Loose[]).find((part) => part.type === 'text') as Loose;

const CORRUPTIONS: Record<string, (message: Loose) => void> = {
  'content = 42': (message) => void (message.content = 42),
  'content = null': (message) => void (message.content = null),
  'content.parts = null': (message) => void (message.content.parts = null),
  'content.parts[0] = null': (message) => void (message.content.parts[0] = null),
  'content.parts[0] = 42': (message) => void (message.content.parts[0] = 42),
  'content.parts[0].type = 42': (message) => void (message.content.parts[0].type = 42),
  'a text part\'s text = 42': (message) => void (firstText(message).text = 42),
  'a text part\'s text deleted': (message) => void delete firstText(message).text,
  'a revoked Proxy pushed into content.parts': (message) => void message.content.parts.push(revokedProxy()),
  'a Proxy that throws pushed into content.parts': (message) => void message.content.parts.push(throwingProxy()),
  "role = 'evil'": (message) => void (message.role = 'evil'),
  'id = 42': (message) => void (message.id = 42),
  'content.format = 1': (message) => void (message.content.format = 1),
};

/** The hooks that get the list's messages (`messages`, or `messageList` for processLLMRequest), and how they reach one. */
const MESSAGE_HOOKS: Array<[ProcessorHookName, (args: Loose) => Loose]> = [
  ['processInput', (args) => args.messages[0]],
  ['processInputStep', (args) => args.messages[0]],
  ['processLLMRequest', (args) => args.messageList.get.all.db()[0]],
  ['processOutputStep', (args) => args.messages[0]],
  ['processToolResult', (args) => args.messages[0]],
  ['processOutputResult', (args) => args.messages.at(-1)],
];

describe('1. a hook that edits its messages in place into what no stored message can be', () => {
  it(
    'property: any such edit, from any hook that gets the messages, sync or after an await: a ProcessorError naming it; the model is not called on them',
    async () => {
      await checkProperty(
        'red-team-12d: messages edited in place',
        fc.record({
          hook: fc.constantFrom(...MESSAGE_HOOKS),
          corruption: fc.constantFrom(...Object.keys(CORRUPTIONS)),
          async: fc.boolean(),
        }),
        async ({ hook: [hook, reach], corruption, async }) => {
          let done = false;
          const act = (args: Loose): unknown => {
            const edit = (): void => {
              if (done) return;
              done = true;
              (CORRUPTIONS[corruption] as (message: Loose) => void)(reach(args));
            };
            if (!async) return void edit();
            return Promise.resolve().then(edit);
          };
          const model = toolModel();
          const chunks = await chunksOf(agentWith(hook, act, model));
          expect(processorErrorProblems(chunks, 'hostile', hook, /left (a )?message/)).toEqual([]);
          // the model never got the corrupted message (a call made before the hook is fine)
          const callsAfter = hook === 'processOutputStep' || hook === 'processToolResult' ? 1 : hook === 'processOutputResult' ? 2 : 0;
          expect(model.calls).toHaveLength(callsAfter);
        },
        CASES,
      );
    },
    TIMEOUT,
  );

  it('generate() rejects with the same ProcessorError', async () => {
    const agent = agentWith('processInputStep', (args) => void (args.messages[0].content = 42));
    const error = await agent.generate('Weather in Paris?').then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(ProcessorError.isInstance(error) && error.processorId === 'hostile' && error.hook === 'processInputStep').toBe(true);
    expect((error as Error).message).toMatch(/left message .*content/);
  });

  it('processAPIError editing a message in place and asking for a retry: a ProcessorError naming it (the retry would send it)', async () => {
    let failed = false;
    const model = mockModel({
      error: () => (failed ? undefined : ((failed = true), new Error('api down'))),
      parts: [...textParts('Hi'), finishPart('stop')],
    });
    const agent = new Agent({
      id: 'agent',
      model,
      maxProcessorRetries: 1,
      errorProcessors: [
        {
          id: 'hostile',
          processAPIError: ({ messages }: Loose) => {
            messages[0].content.parts[0] = null;
            return { retry: true };
          },
        } as unknown as Processor,
      ],
    });
    expect(processorErrorProblems(await chunksOf(agent), 'hostile', 'processAPIError', /left message/)).toEqual([]);
    expect(model.calls).toHaveLength(1);
  });

  it('edits that leave stored messages are within the contract: the run finishes with them', async () => {
    const model = toolModel();
    const agent = agentWith('processInputStep', (args) => {
      const part = args.messages[0].content.parts[0];
      if (part.text === 'Weather in Paris?') part.text = 'Weather in Rome?';
    }, model);
    expect((await chunksOf(agent)).at(-1)?.type).toBe('finish');
    expect(JSON.stringify(model.calls[0]?.prompt)).toContain('Weather in Rome?');
  });
});

// ---------------------------------------------------------------------------------------------
// 2. processOutputStream handing back a tool chunk whose ids or name are not strings
// ---------------------------------------------------------------------------------------------

const BAD_FIELD_VALUES: Array<[string, () => unknown]> = [
  ['42', () => 42],
  ['an object', () => ({ id: 'c1' })],
  ["''", () => ''],
  ['null', () => null],
  ['undefined', () => undefined],
  ['a Symbol', () => Symbol('id')],
];

describe('2. processOutputStream handing back a tool chunk the step cannot bind to its call', () => {
  it(
    'property: toolCallId or toolName of a tool-call or tool-result it returns anew: a ProcessorError naming the field; the tool does not run on it',
    async () => {
      await checkProperty(
        'red-team-12d: tool chunk fields',
        fc.record({
          type: fc.constantFrom('tool-call', 'tool-result'),
          field: fc.constantFrom('toolCallId', 'toolName'),
          value: fc.constantFrom(...BAD_FIELD_VALUES),
        }),
        async ({ type, field, value: [name, make] }) => {
          fc.pre(!(type === 'tool-result' && field === 'toolName' && name === "''")); // a result's tool name may be empty
          executed.length = 0;
          const act = ({ part }: Loose): unknown => {
            if (part.type !== type) return part;
            return { ...part, payload: { ...part.payload, [field]: make() } };
          };
          const chunks = await chunksOf(agentWith('processOutputStream', act));
          expect(processorErrorProblems(chunks, 'hostile', 'processOutputStream', new RegExp(`payload\\.${field} is`))).toEqual([]);
          if (type === 'tool-call') expect(executed).toHaveLength(0);
        },
        CASES,
      );
    },
    TIMEOUT,
  );

  it.each([
    ['a payload that is a Proxy that throws', () => throwingProxy()],
    ['a payload that is a revoked Proxy', () => revokedProxy()],
  ])('a tool-call with %s: a ProcessorError naming the processor (not the raw error)', async (_name, make) => {
    const chunks = await chunksOf(agentWith('processOutputStream', ({ part }) => (part.type === 'tool-call' ? { ...part, payload: make() } : part)));
    expect(processorErrorProblems(chunks, 'hostile', 'processOutputStream')).toEqual([]);
  });

  it('a well-formed tool-call rewritten in place (another city) still runs', async () => {
    executed.length = 0;
    const chunks = await chunksOf(
      agentWith('processOutputStream', ({ part }) => {
        if (part.type === 'tool-call') part.payload.args = { city: 'Rome' };
        return part;
      }),
    );
    expect(chunks.at(-1)?.type).toBe('finish');
    expect(executed).toHaveLength(1);
  });
});

// ---------------------------------------------------------------------------------------------
// 3. writer.custom() given a data chunk that cannot be read or written as JSON
// ---------------------------------------------------------------------------------------------

const cycle = (): object => {
  const value: Loose = { name: 'loop' };
  value.self = value;
  return value;
};
const HOSTILE_CHUNKS: Array<[string, () => unknown, RegExp]> = [
  ['data: a BigInt', () => ({ type: 'data-x', data: 1n }), /is not JSON at chunk\.data/],
  ['data: a cycle', () => ({ type: 'data-x', data: cycle() }), /is not JSON|cycle/],
  ['data: a Proxy that throws', () => ({ type: 'data-x', data: throwingProxy() }), /cannot be read/],
  ['data: NaN', () => ({ type: 'data-x', data: { score: Number.NaN } }), /is not JSON at chunk\.data\.score/],
  [
    'a transient getter that throws',
    () => ({
      type: 'data-x',
      data: 1,
      get transient(): boolean {
        throw new Error('hostile transient');
      },
    }),
    /cannot be read \(hostile transient\)/,
  ],
  ['the chunk: a Proxy that throws', () => throwingProxy(), /cannot be read/],
  ['the chunk: a revoked Proxy', () => revokedProxy(), /cannot be read/],
  ['type: a Symbol', () => ({ type: Symbol('data-x'), data: 1 }), /must start with "data-" \(got a symbol\)/],
];
const WRITING_HOOKS: ProcessorHookName[] = ['processInputStep', 'processLLMRequest', 'processOutputStream', 'processOutputStep', 'processToolResult', 'processOutputResult'];

describe('3. writer.custom() given a chunk that cannot be read or written as JSON', () => {
  it(
    'property: any such chunk, from any hook that has a writer, awaited or not: a ProcessorError naming the hook; every chunk is JSON',
    async () => {
      await checkProperty(
        'red-team-12d: writer.custom chunks',
        fc.record({ hook: fc.constantFrom(...WRITING_HOOKS), chunk: fc.constantFrom(...HOSTILE_CHUNKS), awaited: fc.boolean() }),
        async ({ hook, chunk: [, make, message], awaited }) => {
          let done = false;
          const act = async (args: Loose): Promise<unknown> => {
            if (!done && (hook !== 'processOutputStream' || args.part.type === 'text-delta')) {
              done = true;
              if (awaited) await args.writer.custom(make());
              else void args.writer.custom(make());
            }
            return hook === 'processOutputStream' ? args.part : undefined;
          };
          expect(processorErrorProblems(await chunksOf(agentWith(hook, act)), 'hostile', hook, message)).toEqual([]);
        },
        CASES,
      );
    },
    TIMEOUT,
  );

  it('a well-formed data chunk still goes out (a Date in its data too), and replacing its fields after the write changes nothing', async () => {
    const written = { type: 'data-progress', data: { done: 1, at: new Date(0) } };
    let writes = 0;
    const chunks = await chunksOf(
      agentWith('processOutputStep', async ({ writer }) => {
        if (writes++ > 0) return;
        await writer.custom(written);
        written.data = { done: 666, at: new Date(1) };
        written.type = 'finish';
      }),
    );
    expect(chunks.at(-1)?.type).toBe('finish');
    const progress = chunks.find((chunk) => chunk.type === 'data-progress') as { data?: { done?: number } } | undefined;
    expect(progress?.data?.done).toBe(1);
  });

  it.each(['processOutputStream', 'processOutputStep', 'processInputStep'] as const)(
    'a hostile write from a timer %s started, after the run ended: dropped unread, never thrown at nobody',
    async (hook) => {
      let fired!: () => void;
      const timerDone = new Promise<void>((resolve) => (fired = resolve));
      let started = false;
      const act = (args: Loose): unknown => {
        if (!started) {
          started = true;
          setTimeout(() => {
            try {
              void args.writer.custom({ type: 'data-late', data: 1n });
            } finally {
              fired();
            }
          }, 20);
        }
        return hook === 'processOutputStream' ? args.part : undefined;
      };
      expect((await chunksOf(agentWith(hook, act))).at(-1)?.type).toBe('finish');
      await timerDone;
    },
  );
});

// ---------------------------------------------------------------------------------------------
// 4. a hook that edits the run's steps it was given
// ---------------------------------------------------------------------------------------------

const LIST_EDITS: Record<string, (steps: Loose[]) => void> = {
  'length = 0': (steps) => void (steps.length = 0),
  'pop()': (steps) => void steps.pop(),
  'push(a copy of a step)': (steps) => void steps.push({ ...steps[0] }),
  'reverse()': (steps) => void steps.reverse(),
  'unshift(the last step)': (steps) => void steps.unshift(steps.at(-1) as Loose),
};
const TEXT_EDITS: Record<string, (steps: Loose[]) => void> = {
  'steps[0].text = 42': (steps) => void ((steps[0] as Loose).text = 42),
  'steps[0].text = null': (steps) => void ((steps[0] as Loose).text = null),
  'steps[0].text = an object': (steps) => void ((steps[0] as Loose).text = { text: 'x' }),
};
/** The hooks that get the run's steps once there is one, and where. */
const STEP_HOOKS: Array<[ProcessorHookName, (args: Loose) => Loose[]]> = [
  ['processInputStep', (args) => args.steps],
  ['processLLMRequest', (args) => args.steps],
  ['processLLMResponse', (args) => args.steps],
  ['processOutputStep', (args) => args.steps],
  ['processOutputResult', (args) => args.result.steps],
];

describe('4. a hook that edits the run\'s steps it was given', () => {
  it(
    'property: dropping, adding or reordering steps of its list changes nothing (hooks get a copy); a step text that is not a string is a ProcessorError naming it',
    async () => {
      await checkProperty(
        'red-team-12d: steps edited',
        fc.record({
          hook: fc.constantFrom(...STEP_HOOKS),
          edit: fc.constantFrom(...Object.keys(LIST_EDITS), ...Object.keys(TEXT_EDITS)),
          via: fc.constantFrom('stream$' as const, 'generate' as const),
        }),
        async ({ hook: [hook, reach], edit, via }) => {
          let done = false;
          const act = (args: Loose): unknown => {
            const steps = reach(args);
            if (!done && steps.length > 0) {
              done = true;
              (LIST_EDITS[edit] ?? (TEXT_EDITS[edit] as (steps: Loose[]) => void))(steps);
            }
            return undefined;
          };
          const agent = agentWith(hook, act);
          const listEdit = edit in LIST_EDITS;
          if (via === 'stream$') {
            const chunks = await chunksOf(agent);
            if (listEdit) expect(chunks.at(-1)?.type).toBe('finish');
            else expect(processorErrorProblems(chunks, 'hostile', hook, /left steps\[0\]\.text/)).toEqual([]);
            expect(done).toBe(true);
            return;
          }
          const outcome = await agent.generate('Weather in Paris?').then(
            (result) => ({ result }),
            (error: unknown) => ({ error }),
          );
          if (listEdit) {
            expect('result' in outcome && [outcome.result.steps.length, outcome.result.text]).toEqual([2, 'It is sunny.']);
          } else {
            const error = 'error' in outcome ? outcome.error : undefined;
            expect(ProcessorError.isInstance(error) && error.processorId === 'hostile' && error.hook === hook).toBe(true);
          }
        },
        CASES,
      );
    },
    TIMEOUT,
  );
});

// ---------------------------------------------------------------------------------------------
// 5. providers: the cases this pass tried that held (kept, so they keep holding)
// ---------------------------------------------------------------------------------------------

/** A V4 model streaming `parts` once, then text; a raw reader whose `cancel` is `cancel`. */
function rawModel(parts: readonly unknown[], cancel: () => unknown = () => Promise.resolve()): MockModel {
  let call = 0;
  return {
    specificationVersion: 'v4',
    provider: 'acme',
    modelId: 'raw-1',
    supportedUrls: {},
    calls: [],
    abortSignals: [],
    doGenerate: () => Promise.reject(new Error('not used')),
    doStream: async () => {
      const queue = call++ === 0 ? [...parts] : [...textParts('done'), finishPart('stop')];
      return {
        stream: {
          getReader: () => ({
            read: () => (queue.length > 0 ? Promise.resolve({ done: false, value: queue.shift() }) : new Promise(() => undefined)),
            cancel,
            releaseLock() {},
          }),
        },
      };
    },
  } as unknown as MockModel;
}
const weatherCall = (id: string, city: string): unknown => ({ type: 'tool-call', toolCallId: id, toolName: 'weather', input: JSON.stringify({ city }) });

describe('5. providers: ids reused, tool input without a start, a reader cancel that misbehaves', () => {
  it('one tool call id used twice in a step: both run, each result bound to its own call in the next prompt', async () => {
    executed.length = 0;
    const model = rawModel([weatherCall('c1', 'Paris'), weatherCall('c1', 'Rome'), finishPart('tool-calls')]);
    const agent = new Agent({ id: 'agent', model, tools });
    const result = await agent.generate('Weather?', { generateWith: 'doStream' });
    expect(executed).toHaveLength(2);
    const calls = result.steps[0]?.toolCalls.map((call) => call.toolCallId) ?? [];
    expect(new Set(calls).size).toBe(2);
    expect(result.steps[0]?.toolResults.map((toolResult) => toolResult.toolCallId)).toEqual(calls);
  });

  it.each([
    ['a tool-input-delta without its start', [{ type: 'tool-input-delta', id: 'c1', delta: '{"city":' }]],
    ['a tool-input-end without its start', [{ type: 'tool-input-end', id: 'c1' }]],
  ])('%s, then the call: it runs once; the run finishes', async (_name, stray) => {
    executed.length = 0;
    const agent = new Agent({ id: 'agent', model: rawModel([...stray, weatherCall('c1', 'Paris'), finishPart('tool-calls')]), tools });
    const chunks = await lastValueFrom(agent.stream$('Weather?').pipe(toArray()));
    expect(chunks.at(-1)?.type).toBe('finish');
    expect(executed).toHaveLength(1);
  });

  const CANCELS: Array<[string, () => unknown]> = [
    ['never settles', () => new Promise(() => undefined)],
    ['rejects later', () => new Promise((_resolve, reject) => setTimeout(() => reject(new Error('cancel rejected')), 1))],
    [
      'returns a thenable whose then throws',
      () => ({
        then() {
          throw new Error('then threw');
        },
      }),
    ],
  ];
  it.each(CANCELS)('a reader whose cancel %s: the caller\'s abort ends the run; a stream open after finish ends at finish', async (_name, cancel) => {
    const open = rawModel([{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'Hi' }], cancel);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const aborted = await lastValueFrom(new Agent({ id: 'agent', model: open }).stream$('Hi', { abortSignal: controller.signal }).pipe(toArray()));
    expect(aborted.at(-1)?.type).toBe('abort');
    const finished = rawModel([...textParts('Hi'), finishPart('stop')], cancel);
    expect((await lastValueFrom(new Agent({ id: 'agent', model: finished }).stream$('Hi').pipe(toArray()))).at(-1)?.type).toBe('finish');
    await new Promise((resolve) => setTimeout(resolve, 1_200)); // past FINISH_GRACE_MS: the reader is cancelled, and nothing escapes
  }, 20_000);
});
