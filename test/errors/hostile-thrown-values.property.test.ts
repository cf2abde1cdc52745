/**
 * Whatever user code throws — a processor hook, a tool, a `stopWhen` condition, a provider
 * (`doStream`/`doGenerate` rejecting or throwing at once, a stream `error` part), a memory store, a
 * guard's `onViolation`/`onError`, a guard's judge model — may be hostile: a Proxy whose traps
 * throw, a revoked Proxy, an object whose `message`/`name`/`toString`/`Symbol.toPrimitive` throws,
 * a null-prototype object, a BigInt, a Symbol, a cyclic object, an `Error` whose `message` is a
 * Symbol or whose `cause` is any of these (nested).
 *
 * The guarantee, for every value and every entry point, through `stream$` (with and without a
 * recording tracer), `generate()` and `toUIMessageStream`: the run ends with exactly one terminal
 * chunk, last; its error (if any) is one of rxagent's own errors naming who threw — or, where the
 * contract passes the caller's own error on (a provider's readable error, `processAPIError`'s "not
 * handled"), that error; every chunk a client can be served encodes as JSON, every UI chunk too;
 * no unhandled rejection; nothing hangs (the test timeout). rxagent's own errors built around such
 * a value (`AgentRunError`, `StopConditionError`, `ModelCallError`, any `isInstance`) never throw
 * while reading it.
 *
 * Cases: `RXAGENT_PROPERTY_RUNS` / 5 (at least 40), seeded by `RXAGENT_PROPERTY_SEED`.
 */
import fc from 'fast-check';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { lastValueFrom, Observable, throwError, toArray } from 'rxjs';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import type { UIMessageChunk } from 'ai';
import { Agent } from '../../src/loop/agent.js';
import type { AgentConfig } from '../../src/loop/agent-types.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { clientSafeChunk } from '../../src/contract/client-safe-chunk.js';
import { encodeJson } from '../../src/contract/json-codec.js';
import { ProcessorError, type ProcessorHookName } from '../../src/contract/errors/processor-error.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { RxAgentError } from '../../src/errors/rxagent-error.js';
import { isReadableError } from '../../src/errors/thrown-message.js';
import { AgentRunError } from '../../src/loop/run/agent-run-error.js';
import { StopConditionError } from '../../src/loop/step/stop-condition-error.js';
import { ToolExecutionError } from '../../src/loop/tools/tool-execution-error.js';
import { ModelCallError } from '../../src/model/errors/model-call-error.js';
import { InvalidModelResponseError } from '../../src/model/errors/invalid-model-response-error.js';
import { Memory, InMemoryStorage } from '../../src/memory/index.js';
import { PIIDetector, RegexFilterProcessor } from '../../src/processors/index.js';
import { toUIMessageStream, traceRun, withTelemetry } from '../../src/ai-sdk/index.js';
import { UIChunkEncoder } from '../../src/ai-sdk/internal/ui-chunk-encoder.js';
import { finishPart, mockModel, textParts, toolCallParts } from '../../src/testing/index.js';
import { checkProperty, PROPERTY_RUNS } from '../reliability/support/property.js';
import { PROCESSOR_HOOKS } from '../../src/contract/processor-checks.js';
import { StructuredCallError, structuredCall } from '../../src/processors/internal/structured-call.js';
import { serialiseContent } from '../../src/storage/internal/validate-messages.js';
import { InvalidMessageError } from '../../src/message-list/errors/invalid-message-error.js';
import type { MastraDBMessage } from '../../src/message-list/types.js';

const CASES = Math.max(40, Math.floor(PROPERTY_RUNS / 5));

// ---------------------------------------------------------------------------------------------
// Hostile values: described by plain data (so fast-check can print and shrink a case), built fresh
// inside the predicate.

const BASE_KINDS = [
  'proxy-throwing-traps',
  'revoked-proxy',
  'proxy-posing-as-error',
  'throwing-message-getter',
  'throwing-name-getter',
  'throwing-toString',
  'throwing-toPrimitive',
  'null-prototype',
  'bigint',
  'symbol',
  'cyclic',
  'error-symbol-message',
  'error-throwing-message-getter',
  'error-throwing-name-getter',
] as const;
type BaseKind = (typeof BASE_KINDS)[number];

/** A hostile value: a base kind, wrapped in `Error`s (as their `cause`) `wraps` times. */
interface HostileSpec {
  kind: BaseKind;
  wraps: number;
}

const hostileSpec: fc.Arbitrary<HostileSpec> = fc.record({ kind: fc.constantFrom(...BASE_KINDS), wraps: fc.nat({ max: 2 }) });

const hostile = (what: string) => () => {
  throw new Error(`hostile ${what}`);
};

function baseValue(kind: BaseKind): unknown {
  switch (kind) {
    case 'proxy-throwing-traps':
      return new Proxy(
        {},
        {
          get: hostile('get'),
          has: hostile('has'),
          getPrototypeOf: hostile('getPrototypeOf'),
          ownKeys: hostile('ownKeys'),
          getOwnPropertyDescriptor: hostile('getOwnPropertyDescriptor'),
        },
      );
    case 'revoked-proxy': {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return proxy;
    }
    case 'proxy-posing-as-error':
      return new Proxy(new Error('posing'), { get: hostile('get'), has: hostile('has'), ownKeys: hostile('ownKeys') });
    case 'throwing-message-getter':
      return Object.defineProperty({}, 'message', { enumerable: true, get: hostile('message getter') });
    case 'throwing-name-getter':
      return Object.defineProperty({}, 'name', { enumerable: true, get: hostile('name getter') });
    case 'throwing-toString':
      return { toString: hostile('toString'), valueOf: hostile('valueOf') };
    case 'throwing-toPrimitive':
      return { [Symbol.toPrimitive]: hostile('toPrimitive') };
    case 'null-prototype':
      return Object.assign(Object.create(null) as object, { code: 7 });
    case 'bigint':
      return 10n ** 20n;
    case 'symbol':
      return Symbol('hostile');
    case 'cyclic': {
      const cyclic: Record<string, unknown> = { message: 'cyclic' };
      cyclic.self = cyclic;
      return cyclic;
    }
    case 'error-symbol-message':
      return Object.assign(new Error('x'), { message: Symbol('message') });
    case 'error-throwing-message-getter':
      return Object.defineProperty(new Error('x'), 'message', { get: hostile('message getter') });
    case 'error-throwing-name-getter':
      return Object.defineProperty(new Error('x'), 'name', { get: hostile('name getter') });
  }
}

function build(spec: HostileSpec): unknown {
  let value = baseValue(spec.kind);
  for (let index = 0; index < spec.wraps; index++) value = new Error(`wrapper ${index}`, { cause: value });
  return value;
}

// ---------------------------------------------------------------------------------------------
// Entry points: where user code throws into a run, and what the run must end with.

const HOOKS: readonly ProcessorHookName[] = PROCESSOR_HOOKS;
const INPUT_HOOKS: ReadonlySet<ProcessorHookName> = new Set(['processInput', 'processInputStep', 'processLLMRequest', 'processLLMResponse']);

const ENTRY_POINTS = [
  ...HOOKS.map((hook) => `hook:${hook}` as const),
  'tool-execute-throws',
  'tool-execute-rejects',
  'stop-when',
  'do-stream-throws',
  'do-stream-rejects',
  'do-generate-throws',
  'do-generate-rejects',
  'stream-errors',
  'stream-error-part',
  'memory-load',
  'memory-save',
  'guard-on-violation',
  'guard-on-error',
  'guard-judge-model',
] as const;
type EntryPoint = (typeof ENTRY_POINTS)[number];

/**
 * What the run must end with: `finish`; a `tripwire` of `processorId`; an `error` chunk whose error
 * `accepts`. `generate()` then resolves (finish, tripwire) or rejects with `rejects`.
 */
type Expectation =
  | { end: 'finish'; toolError?: boolean }
  | { end: 'tripwire'; processorId: string }
  | { end: 'error'; accepts: (error: unknown) => boolean; what: string };

interface Setup {
  agent: Agent;
  expect: Expectation;
  /** What `stream$` (and the UI stream) end with, when it differs: `doGenerate` is only `generate()`'s. */
  streamExpect?: Expectation;
  options?: { memory?: { thread: string; resource: string } };
}

const API_ERROR = new Error('api down');
const isProcessorError = (processorId: string, hook: string) => (error: unknown): boolean =>
  ProcessorError.isInstance(error) && error.processorId === processorId && error.hook === hook;
/** A provider's failure: rxagent's error saying it could not be read, or the provider's own (readable, JSON) error as it is. */
const isProviderFailure = (thrown: unknown) => (error: unknown): boolean => InvalidModelResponseError.isInstance(error) || (error === thrown && !RxAgentError.isInstance(error));

/** A model that calls the `weather` tool, then answers; the hostile value is thrown where `entry` says. */
function weatherParts(prompt: ReadonlyArray<{ role: string }>): LanguageModelV4StreamPart[] {
  return prompt.some((message) => message.role === 'tool')
    ? [...textParts('It is sunny.'), finishPart('stop')]
    : [...toolCallParts('weather', { city: 'Paris' }), finishPart('tool-calls')];
}

/** A raw V4 model (no mock fast path): `doStream`/`doGenerate` as given. */
function rawModel(overrides: Partial<Pick<LanguageModelV4, 'doStream' | 'doGenerate'>>): LanguageModelV4 {
  const model: LanguageModelV4 = {
    specificationVersion: 'v4',
    provider: 'hostile',
    modelId: 'hostile-1',
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('doGenerate not used')),
    doStream: (options) =>
      Promise.resolve({
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            for (const part of weatherParts(options.prompt)) controller.enqueue(part);
            controller.close();
          },
        }),
      }),
    ...overrides,
  };
  return model;
}

const weatherTool = (execute: (input: { city: string }) => unknown) => ({
  weather: { inputSchema: z.object({ city: z.string() }), execute },
});
const goodTools = weatherTool(async ({ city }) => ({ city, sky: 'sunny' }));

function setup(entry: EntryPoint, make: () => unknown): Setup {
  const base: AgentConfig = { id: 'agent', instructions: 'Be brief.', model: mockModel({ parts: ({ options }) => weatherParts(options.prompt) }), tools: goodTools };
  const thrownOnce = { value: undefined as unknown };
  const throwIt = (): never => {
    thrownOnce.value = make();
    throw thrownOnce.value;
  };
  if (entry.startsWith('hook:')) {
    const hook = entry.slice('hook:'.length) as ProcessorHookName;
    let failNextCall = hook === 'processAPIError';
    const processor = { id: 'hostile', [hook]: () => throwIt() } as unknown as Processor;
    const list = hook === 'processAPIError' ? 'errorProcessors' : INPUT_HOOKS.has(hook) ? 'inputProcessors' : 'outputProcessors';
    const model =
      hook === 'processAPIError'
        ? mockModel({
            error: () => {
              if (!failNextCall) return undefined;
              failNextCall = false;
              return API_ERROR;
            },
            parts: ({ options }) => weatherParts(options.prompt),
          })
        : base.model;
    return {
      agent: new Agent({ ...base, model, [list]: [processor] }),
      // docs/agent.md: a failing error processor is "not handled" — the run ends with the provider's own error
      expect:
        hook === 'processAPIError'
          ? { end: 'error', accepts: (error) => error === API_ERROR, what: 'the provider error' }
          : { end: 'error', accepts: isProcessorError('hostile', hook), what: `a ProcessorError naming hostile and ${hook}` },
    };
  }
  switch (entry) {
    case 'tool-execute-throws':
      return { agent: new Agent({ ...base, tools: weatherTool(() => throwIt()) }), expect: { end: 'finish', toolError: true } };
    case 'tool-execute-rejects':
      return { agent: new Agent({ ...base, tools: weatherTool(async () => throwIt()) }), expect: { end: 'finish', toolError: true } };
    case 'stop-when':
      return {
        agent: new Agent({ ...base, stopWhen: () => throwIt() }),
        expect: { end: 'error', accepts: (error) => StopConditionError.isInstance(error) && error.index === 0, what: 'a StopConditionError' },
      };
    case 'do-stream-throws':
    case 'do-stream-rejects':
    case 'do-generate-throws':
    case 'do-generate-rejects': {
      const value = make();
      const fail = entry.endsWith('throws') ? () => { throw value; } : () => Promise.reject(value);
      const model = rawModel(entry.startsWith('do-stream') ? { doStream: fail as LanguageModelV4['doStream'] } : { doGenerate: fail as LanguageModelV4['doGenerate'] });
      return {
        agent: new Agent({ ...base, model, defaultOptions: { generateWith: entry.startsWith('do-stream') ? 'doStream' : 'doGenerate' } }),
        expect: { end: 'error', accepts: isProviderFailure(value), what: 'an InvalidModelResponseError, or the readable provider error' },
        ...(entry.startsWith('do-generate') ? { streamExpect: { end: 'finish' } as const } : {}),
      };
    }
    case 'stream-errors': {
      const value = make();
      const model = rawModel({
        doStream: () =>
          Promise.resolve({
            stream: new ReadableStream<LanguageModelV4StreamPart>({
              start(controller) {
                controller.enqueue({ type: 'stream-start', warnings: [] });
                controller.error(value);
              },
            }),
          }),
      });
      return {
        agent: new Agent({ ...base, model, defaultOptions: { generateWith: 'doStream' } }),
        expect: { end: 'error', accepts: isProviderFailure(value), what: 'an InvalidModelResponseError, or the readable provider error' },
      };
    }
    case 'stream-error-part': {
      const value = make();
      const model = mockModel({ parts: [{ type: 'stream-start', warnings: [] }, { type: 'error', error: value }, finishPart('error')] });
      return {
        agent: new Agent({ ...base, model, defaultOptions: { generateWith: 'doStream' } }),
        expect: { end: 'error', accepts: isProviderFailure(value), what: 'an InvalidModelResponseError, or the readable provider error' },
      };
    }
    case 'memory-load':
    case 'memory-save': {
      const storage = new InMemoryStorage();
      const method = entry === 'memory-load' ? 'getThread' : 'saveMessages';
      storage[method] = async () => throwIt();
      return {
        agent: new Agent({ ...base, memory: new Memory({ storage }) }),
        options: { memory: { thread: 'thread-1', resource: 'user-1' } },
        expect: {
          end: 'error',
          accepts: isProcessorError(entry === 'memory-load' ? 'message-history' : 'message-history-save', entry === 'memory-load' ? 'processInput' : 'processOutputResult'),
          what: 'a ProcessorError naming the memory processor',
        },
      };
    }
    case 'guard-on-violation': {
      // docs/security.md: a guard's callbacks that throw or reject change nothing
      const guard = new RegexFilterProcessor({ rules: [{ name: 'sky', pattern: 'sunny' }], strategy: 'warn', onViolation: () => throwIt() });
      return { agent: new Agent({ ...base, outputProcessors: [guard] }), expect: { end: 'finish' } };
    }
    case 'guard-on-error': {
      const judge = rawModel({ doStream: () => Promise.reject(new Error('judge down')) });
      const guard = new PIIDetector({ model: judge, judgeDeadlineMs: 1, onError: () => throwIt() });
      return { agent: new Agent({ ...base, inputProcessors: [guard] }), expect: { end: 'tripwire', processorId: 'pii-detector' } };
    }
    case 'guard-judge-model': {
      const judge = rawModel({ doStream: () => Promise.reject(make()), doGenerate: () => Promise.reject(make()) });
      const guard = new PIIDetector({ model: judge, judgeDeadlineMs: 1 });
      return { agent: new Agent({ ...base, inputProcessors: [guard] }), expect: { end: 'tripwire', processorId: 'pii-detector' } };
    }
  }
  throw new Error(`unknown entry point ${entry}`);
}

// ---------------------------------------------------------------------------------------------
// Checks

const TERMINALS = new Set(['finish', 'error', 'tripwire', 'abort']);

/** A short description of an error, read without trusting it. */
function describeError(error: unknown): string {
  try {
    if (RxAgentError.isInstance(error)) return `${error.name}: ${error.message}`;
    return `${typeof error} ${Object.prototype.toString.call(error)}`;
  } catch {
    return 'an unreadable value';
  }
}

function endProblems(expected: Expectation, chunks: readonly ChunkType[]): string[] {
  const problems: string[] = [];
  const terminals = chunks.filter((chunk) => TERMINALS.has(chunk.type));
  const last = chunks.at(-1);
  if (last === undefined || terminals.length !== 1 || terminals[0] !== last) return [`expected one terminal chunk, last; got ${chunks.map((chunk) => chunk.type).join(',')}`];
  for (const chunk of chunks) {
    try {
      encodeJson(clientSafeChunk(chunk), `chunk ${chunk.type}`);
    } catch (error) {
      problems.push(`chunk ${chunk.type} does not encode as JSON: ${describeError(error)}`);
    }
  }
  if (expected.end === 'finish') {
    if (last.type !== 'finish') problems.push(`expected finish, got ${last.type}${last.type === 'error' ? ` (${describeError(last.payload.error)})` : ''}`);
    if (expected.toolError === true) {
      const toolErrors = chunks.filter((chunk) => chunk.type === 'tool-error');
      // execute-tool-call.ts: a tool's readable `Error` is passed on as it is, anything else is a ToolExecutionError
      const error = toolErrors[0]?.type === 'tool-error' ? toolErrors[0].payload.error : undefined;
      if (toolErrors.length !== 1 || !(ToolExecutionError.isInstance(error) || (isReadableError(error) && !RxAgentError.isInstance(error)))) {
        problems.push(`expected one tool-error chunk carrying a ToolExecutionError or the tool's own Error, got ${toolErrors.length}: ${describeError(error)}`);
      }
    }
  } else if (expected.end === 'tripwire') {
    if (last.type !== 'tripwire' || last.payload.processorId !== expected.processorId) problems.push(`expected a tripwire of ${expected.processorId}, got ${last.type}${last.type === 'error' ? ` (${describeError(last.payload.error)})` : ''}`);
  } else if (last.type !== 'error' || !expected.accepts(last.payload.error)) {
    problems.push(`expected an error chunk with ${expected.what}, got ${last.type}${last.type === 'error' ? ` (${describeError(last.payload.error)})` : ''}`);
  }
  return problems;
}

async function generateProblems({ agent, options, expect: expected }: Setup): Promise<string[]> {
  const outcome = await agent.generate('Weather in Paris?', options).then(
    (result) => ({ result }),
    (error: unknown) => ({ error }),
  );
  if ('result' in outcome) {
    if (expected.end === 'finish') return outcome.result.finishReason === 'stop' ? [] : [`generate(): expected finish, got ${outcome.result.finishReason}`];
    if (expected.end === 'tripwire') return outcome.result.tripwire?.processorId === expected.processorId ? [] : ['generate(): expected a tripwire'];
    return ['generate(): expected a rejection, got a result'];
  }
  if (expected.end !== 'error') return [`generate(): expected a result, got a rejection ${describeError(outcome.error)}`];
  if (!RxAgentError.isInstance(outcome.error)) return [`generate(): rejected with something not rxagent's: ${describeError(outcome.error)}`];
  const error = outcome.error;
  const inner = AgentRunError.isInstance(error) ? error.cause : error;
  return expected.accepts(inner) ? [] : [`generate(): expected ${expected.what}, got ${describeError(error)}`];
}

async function uiProblems({ agent, options, expect: generateExpected, streamExpect }: Setup): Promise<string[]> {
  const expected = streamExpect ?? generateExpected;
  const stream = toUIMessageStream(agent.stream$('Weather in Paris?', options));
  const chunks: UIMessageChunk[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
  }
  const problems: string[] = [];
  for (const chunk of chunks) {
    try {
      JSON.stringify(chunk);
    } catch (error) {
      problems.push(`UI chunk ${chunk.type} is not JSON: ${describeError(error)}`);
    }
  }
  const ends = chunks.filter((chunk) => chunk.type === 'finish' || chunk.type === 'abort');
  if (ends.length !== 1 || ends[0] !== chunks.at(-1)) problems.push(`UI stream: expected one finish, last; got ${chunks.map((chunk) => chunk.type).join(',')}`);
  const errors = chunks.filter((chunk) => chunk.type === 'error');
  if (expected.end === 'finish' && errors.length !== 0) problems.push('UI stream: an error chunk in a finished run');
  if (expected.end !== 'finish' && errors.length !== 1) problems.push(`UI stream: expected one error chunk, got ${errors.length}`);
  return problems.map((problem) => `toUIMessageStream: ${problem}`);
}

const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = tracerProvider.getTracer('hostile-thrown-values');
afterAll(async () => tracerProvider.shutdown());

async function streamProblems({ agent, options, expect: generateExpected, streamExpect }: Setup, traced: boolean): Promise<string[]> {
  const expected = streamExpect ?? generateExpected;
  const run$ = traced ? traceRun((tracingContext) => agent.stream$('Weather in Paris?', { ...options, tracingContext }), { tracer }) : agent.stream$('Weather in Paris?', options);
  const problems = endProblems(expected, await lastValueFrom(run$.pipe(toArray())));
  if (traced) {
    const spans = exporter.getFinishedSpans();
    if (!spans.some((span) => span.name === 'rxagent.run')) problems.push('no rxagent.run span ended');
    exporter.reset();
  }
  return problems.map((problem) => `stream$${traced ? ' (traced)' : ''}: ${problem}`);
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

let unhandled: unknown[] = [];
const onUnhandled = (error: unknown): void => void unhandled.push(error);
beforeEach(() => {
  exporter.reset();
  unhandled = [];
  process.on('unhandledRejection', onUnhandled);
});
afterEach(async () => {
  await nextTurn();
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled.map(describeError)).toEqual([]);
});

// ---------------------------------------------------------------------------------------------

describe('rxagent errors built around a hostile value never throw while reading it', () => {
  it.each(BASE_KINDS.flatMap((kind) => [0, 1, 2].map((wraps) => ({ kind, wraps }))))('%o', ({ kind, wraps }) => {
    const value = build({ kind, wraps });
    for (const isInstance of [RxAgentError.isInstance, ProcessorError.isInstance, AgentRunError.isInstance, StopConditionError.isInstance, ModelCallError.isInstance]) {
      expect(isInstance(value)).toBe(false);
    }
    expect(RxAgentError.isInstance(new AgentRunError(value))).toBe(true);
    expect(new AgentRunError(value).cause).toBe(value);
    expect(new StopConditionError({ index: 0, cause: value }).message).toMatch(/^stopWhen\[0\] failed: /);
    expect(ModelCallError.isInstance(new ModelCallError({ cause: value }))).toBe(true);
    for (const error of [new AgentRunError(value), new StopConditionError({ index: 0, cause: value }), new ModelCallError({ cause: value })]) {
      expect(typeof error.message).toBe('string');
      expect(() => encodeJson(clientSafeChunk({ type: 'error', runId: 'r', from: 'AGENT', payload: { error } } as ChunkType))).not.toThrow();
    }
  });

  it('a revoked Proxy is no rxagent error (isInstance answers false instead of throwing)', () => {
    expect(RxAgentError.isInstance(build({ kind: 'revoked-proxy', wraps: 0 }))).toBe(false);
  });
});

describe('consumers of a run meet a hostile value', () => {
  it.each(BASE_KINDS.map((kind) => ({ kind })))('a UI stream and spans of a run that errors with %o', async ({ kind }) => {
    const value = build({ kind, wraps: 0 });
    const source = (): Observable<ChunkType> => throwError(() => value);
    const chunks: UIMessageChunk[] = [];
    const reader = toUIMessageStream(source()).getReader();
    for (;;) {
      const { done, value: chunk } = await reader.read();
      if (done) break;
      chunks.push(chunk);
    }
    expect(chunks.map((chunk) => chunk.type)).toEqual(['start', 'error', 'finish']);
    for (const chunk of chunks) expect(() => JSON.stringify(chunk)).not.toThrow();
    const notification = await lastValueFrom(source().pipe(withTelemetry({ tracer }), toArray())).then(
      () => ({ error: 'none' }),
      (error: unknown) => ({ error }),
    );
    expect(notification.error).toBe(value);
    expect(exporter.getFinishedSpans().filter((span) => span.name === 'rxagent.run')).toHaveLength(1);
  });

  it.each(BASE_KINDS.map((kind) => ({ kind })))('a failed tool result of %o encodes as a UI chunk', ({ kind }) => {
    const encoder = new UIChunkEncoder({ messageId: 'm' });
    const out = [
      ...encoder.encode({ type: 'start', runId: 'r', from: 'AGENT', payload: {} } as ChunkType),
      ...encoder.encode({ type: 'tool-call', runId: 'r', from: 'AGENT', payload: { toolCallId: 'c1', toolName: 'weather', args: {} } } as ChunkType),
      ...encoder.encode({ type: 'tool-result', runId: 'r', from: 'AGENT', payload: { toolCallId: 'c1', toolName: 'weather', args: {}, result: build({ kind, wraps: 0 }), isError: true } } as ChunkType),
    ];
    for (const chunk of out) expect(() => JSON.stringify(chunk)).not.toThrow();
    expect(out.at(-1)).toMatchObject({ type: 'tool-output-error', toolCallId: 'c1', errorText: expect.any(String) });
  });
});

describe("rxagent's internal readers of a hostile value", () => {
  it.each(BASE_KINDS.map((kind) => ({ kind })))("a judge's call aborted with %o as the reason is a StructuredCallError", async ({ kind }) => {
    const reason = build({ kind, wraps: 0 });
    const controller = new AbortController();
    // a provider that honours its signal, as fetch does: it rejects with the signal's reason
    const model = rawModel({
      doStream: ({ abortSignal }) =>
        new Promise((_resolve, reject) => {
          abortSignal?.addEventListener('abort', () => reject(abortSignal.reason as Error));
          setTimeout(() => controller.abort(reason), 0);
        }),
    });
    const outcome = await structuredCall({ model, system: 'Judge.', prompt: 'Text.', schema: z.object({}), abortSignal: controller.signal }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(outcome).toBeInstanceOf(StructuredCallError);
    expect(typeof (outcome as StructuredCallError).message).toBe('string');
  });

  it.each(BASE_KINDS.map((kind) => ({ kind })))('message content whose toJSON throws %o is an InvalidMessageError', ({ kind }) => {
    const thrown = build({ kind, wraps: 0 });
    const message = {
      id: 'm1',
      role: 'user',
      createdAt: new Date(0),
      content: {
        format: 2,
        parts: [],
        toJSON: () => {
          throw thrown;
        },
      },
    } as unknown as MastraDBMessage;
    let caught: unknown;
    try {
      serialiseContent(message, 0);
    } catch (error) {
      caught = error;
    }
    expect(InvalidMessageError.isInstance(caught)).toBe(true);
  });
});

describe('every entry point, every hostile value: contained as the contract says', () => {
  it(
    'property: stream$ (traced or not), generate() and toUIMessageStream',
    async () => {
      const arbitrary = fc.record({ entry: fc.constantFrom(...ENTRY_POINTS), value: hostileSpec, traced: fc.boolean() });
      await checkProperty(
        'hostile thrown values',
        arbitrary,
        async ({ entry, value, traced }) => {
          const problems = [
            ...(await streamProblems(setup(entry, () => build(value)), traced)),
            ...(await generateProblems(setup(entry, () => build(value)))),
            ...(await uiProblems(setup(entry, () => build(value)))),
          ];
          await nextTurn();
          expect(problems.map((problem) => `${entry} / ${value.kind} (wrapped ${value.wraps}): ${problem}`)).toEqual([]);
        },
        CASES,
      );
    },
    240_000,
  );

  // every entry point with every base value at least once, whatever the seed
  it.each(ENTRY_POINTS.map((entry) => ({ entry })))(
    '%o: every hostile value',
    async ({ entry }) => {
      const problems: string[] = [];
      for (const kind of BASE_KINDS) {
        for (const wraps of [0, 1]) {
          const spec = { kind, wraps };
          const found = [
            ...(await streamProblems(setup(entry, () => build(spec)), wraps === 1)),
            ...(await generateProblems(setup(entry, () => build(spec)))),
            ...(await uiProblems(setup(entry, () => build(spec)))),
          ];
          problems.push(...found.map((problem) => `${kind} (wrapped ${wraps}): ${problem}`));
        }
      }
      expect(problems).toEqual([]);
    },
    120_000,
  );
});
