/**
 * The provider seam over the whole class of what a provider — or a proxy in front of it — can hand
 * the library (see `provider-responses.arbitraries.ts`): stream part sequences in any order, with
 * ids that match or not, parts after `finish`, no `finish` or two, unknown types, fields of any
 * type, Proxies and getters that throw, streams that error or end anywhere, `doStream` rejecting or
 * throwing synchronously; `doGenerate` answers with the same faults; token usage of any value in any
 * field. Through the real `Agent` (`stream()`, `stream$()`, `generate()`), for V4 and V2 (through
 * the adapter). For every generated case:
 *
 * - the run ends (each case is bounded by a timeout), with a result or one terminal chunk; an error
 *   is an `InvalidModelResponseError` naming the provider and the model, or the provider's own
 *   error as it was injected — never a raw `TypeError`/`RangeError` of the library;
 * - nothing reaches the process as an unhandled rejection or an uncaught exception;
 * - every text and reasoning delta the consumer got came out of the output processor's
 *   `processOutputStream` (nothing bypasses the processors);
 * - every usage the run reports — the result's, each step's, every `step-finish` and `finish`
 *   chunk's — holds whole numbers from 0 to 2^53 − 1 or `undefined`; a provider's count is kept
 *   when it is one, else unknown, and the run goes on;
 * - every `fullStream` chunk has its documented shape and encodes as JSON.
 *
 * Rerun a failing property with `RXAGENT_PROPERTY_SEED=<seed>` (printed). Found here (each kept
 * below as an example test that failed before its fix):
 * - an empty tool name (tool call, provider tool result) or file media type passed the entry check
 *   and memory refused the step after the client saw it (`InvalidMessageError`); an empty streamed
 *   tool input id reached the output chain, which blamed the processor that handed it on;
 * - `providerMetadata` the codec can write but memory cannot store (a `Date`, bytes, a provider
 *   entry that is a number) passed the entry check the same way;
 * - a delta whose `delta` getter throws (read after the check) ended the run with the getter's raw
 *   error;
 * - one usage count (or group) that throws where it is read made every count unknown; through the
 *   V2 adapter it failed the run; step usages whose sum passed 2^53 − 1 gave an inexact total.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { Agent, AgentRunError, InvalidModelResponseError, RxAgentError, type ChunkType } from '../../src/index.js';
import { chunkProblem } from '../../src/contract/client-safe-chunk.js';
import { encodeJson } from '../../src/contract/json-codec.js';
import { checkProperty, PROPERTY_RUNS } from '../reliability/support/property.js';
import {
  answerArb,
  buildAnswer,
  buildError,
  callArb,
  doStreamAnswer,
  keptUsage,
  MODEL_ID,
  PROVIDER,
  usageArb,
  usageIsObject,
  type AnswerSpec,
  type CallProbe,
  type CallSpec,
  type Injected,
  type UsageSpec,
  type Version,
} from './provider-responses.arbitraries.js';

/**
 * Cases per property: a stream case is a whole run (≈ 2 ms, 40 ms when its read never settles and
 * the caller aborts), so half the reliability default (500); a `doGenerate` or usage case the
 * default (1,000). Each property stays within a few seconds on a loaded 2-core machine.
 */
const STREAM_RUNS = Math.max(60, Math.floor(PROPERTY_RUNS / 2));
const RUNS = PROPERTY_RUNS;
/** The longest one case may take before it counts as a hang (a loaded 2-core machine). */
const CASE_TIMEOUT_MS = 8_000;
/** When a case's stream may never settle, the caller's abort comes after this. */
const ABORT_AFTER_MS = 40;

// ---------------------------------------------------------------------------------------------
// Process-level errors, per case
// ---------------------------------------------------------------------------------------------

const processErrors: unknown[] = [];
const onProcessError = (reason: unknown): void => {
  processErrors.push(reason);
};
beforeEach(() => {
  processErrors.length = 0;
  process.on('unhandledRejection', onProcessError);
  process.on('uncaughtException', onProcessError);
});
afterEach(() => {
  process.off('unhandledRejection', onProcessError);
  process.off('uncaughtException', onProcessError);
});

const turns = async (count: number): Promise<void> => {
  for (let turn = 0; turn < count; turn++) await new Promise((resolve) => setImmediate(resolve));
};

// ---------------------------------------------------------------------------------------------
// The agent, its model and its output processor guard
// ---------------------------------------------------------------------------------------------

const weather = { description: 'weather', inputSchema: z.object({ city: z.string() }), execute: ({ city }: { city: string }) => ({ city, sky: 'sunny' }) };
const anything = { description: 'takes anything', inputSchema: z.any(), execute: () => 'ok' };

/**
 * What a provider's promise does with `make()`'s value: resolving with a Proxy reads its `then`,
 * which throws — the provider's promise rejects with that (its own error, injected).
 */
function providerPromise(make: () => unknown, injected: Injected): Promise<unknown> {
  const value = make();
  return new Promise((resolve) => resolve(value)).catch((error: unknown) => {
    injected.add(error);
    throw error;
  });
}

/** A model of `version` answering its n-th `doStream` call with `calls[n]` (the last one after that) and `doGenerate` with `answers[n]`. */
function propertyModel(version: Version, injected: Injected, calls: readonly CallSpec[], answers: readonly AnswerSpec[] = [], probes: CallProbe[] = []): object {
  let streamed = 0;
  let generated = 0;
  return {
    specificationVersion: version,
    provider: PROVIDER,
    modelId: MODEL_ID,
    supportedUrls: {},
    doStream: (): Promise<unknown> => {
      const call = calls[Math.min(streamed++, calls.length - 1)] as CallSpec;
      const probe: CallProbe = { released: false, hung: false };
      probes.push(probe);
      return providerPromise(() => doStreamAnswer(call, version, injected, probe), injected);
    },
    doGenerate: (): Promise<unknown> => {
      const answer = answers[Math.min(generated++, answers.length - 1)] as AnswerSpec;
      if (answer.start.kind === 'throw') throw buildError(answer.start.error, injected);
      if (answer.start.kind === 'reject') return Promise.reject(buildError(answer.start.error, injected));
      return providerPromise(() => buildAnswer(answer, version, injected), injected);
    },
  };
}

/** What the output processor guard handed on, in order: each text or reasoning delta it returned. */
interface Guard {
  readonly deltas: string[];
}

/** The guard marks what it hands on, so a delta that bypassed it is told apart from one it saw. */
const mark = (text: string): string => `«${text}»`;

function agentOf(model: object, guard: Guard | undefined, maxSteps: number): Agent {
  return new Agent({
    id: 'property',
    instructions: 'Be brief.',
    model: model as never,
    tools: { weather, anything },
    maxSteps,
    ...(guard === undefined
      ? {}
      : {
          outputProcessors: [
            {
              id: 'guard',
              processOutputStream: ({ part }: { part: ChunkType }) => {
                if (part.type !== 'text-delta' && part.type !== 'reasoning-delta') return part;
                const text = mark(part.payload.text);
                guard.deltas.push(`${part.type}:${text}`);
                return { ...part, payload: { ...part.payload, text } };
              },
            },
          ],
        }),
  });
}

// ---------------------------------------------------------------------------------------------
// What every case must hold
// ---------------------------------------------------------------------------------------------

const USAGE_FIELDS = [
  ['inputTokens'],
  ['outputTokens'],
  ['totalTokens'],
  ['inputTokenDetails', 'noCacheTokens'],
  ['inputTokenDetails', 'cacheReadTokens'],
  ['inputTokenDetails', 'cacheWriteTokens'],
  ['outputTokenDetails', 'textTokens'],
  ['outputTokenDetails', 'reasoningTokens'],
] as const;

/** Where `usage` holds a count that is not a whole number from 0 to 2^53 − 1 or `undefined`. */
function usageProblems(usage: unknown, where: string): string[] {
  if (typeof usage !== 'object' || usage === null) return [`${where}: usage is ${String(usage)}`];
  const problems: string[] = [];
  for (const path of USAGE_FIELDS) {
    let value: unknown = usage;
    for (const key of path) value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
    if (value !== undefined && !(typeof value === 'number' && Number.isSafeInteger(value) && value >= 0)) problems.push(`${where}.${path.join('.')} = ${typeof value} ${String(value)}`);
  }
  return problems;
}

const FINISH_REASONS = new Set(['stop', 'length', 'content-filter', 'tool-calls', 'error', 'other', 'tripwire', 'retry']);
const TERMINALS = new Set(['finish', 'error', 'abort', 'tripwire']);
const isString = (value: unknown): value is string => typeof value === 'string';

/** Where `chunk` is not of its documented shape (`ChunkPayloads`), or cannot be written as JSON. */
function chunkShapeProblems(chunk: ChunkType, index: number): string[] {
  const where = `chunk ${index} (${String(chunk.type)})`;
  const problem = chunkProblem(chunk);
  if (problem !== undefined) return [`${where}: ${problem}`];
  const problems: string[] = [];
  try {
    encodeJson(chunk);
  } catch (error) {
    problems.push(`${where}: does not encode (${(error as Error).message})`);
  }
  if (chunk.type.startsWith('data-')) return problems;
  const payload = (chunk as { payload: Record<string, unknown> }).payload;
  const expect = (ok: boolean, what: string): void => {
    if (!ok) problems.push(`${where}: ${what}`);
  };
  switch (chunk.type) {
    case 'text-delta':
    case 'reasoning-delta':
      expect(isString(payload.text), 'text is not a string');
      break;
    case 'tool-call-delta':
      expect(isString(payload.argsTextDelta), 'argsTextDelta is not a string');
      break;
    case 'tool-call':
      expect(isString(payload.toolCallId) && payload.toolCallId !== '', 'toolCallId is not a non-empty string');
      break;
    case 'tool-result':
      expect(isString(payload.toolCallId) && payload.toolCallId !== '', 'toolCallId is not a non-empty string');
      break;
    case 'source':
      expect(isString(payload.id) && (payload.sourceType === 'url' ? isString(payload.url) : payload.sourceType === 'document' && isString(payload.title)), 'not a url or document source');
      break;
    case 'file':
      expect(isString(payload.data) && isString(payload.mimeType), 'data or mimeType is not a string');
      break;
    case 'response-metadata':
      expect(payload.id === undefined || isString(payload.id), 'id is not a string');
      expect(payload.modelId === undefined || isString(payload.modelId), 'modelId is not a string');
      expect(payload.timestamp === undefined || (payload.timestamp instanceof Date && !Number.isNaN(payload.timestamp.getTime())), 'timestamp is not a valid Date');
      break;
    case 'step-start':
      expect(Number.isSafeInteger(payload.stepNumber), 'stepNumber is not an integer');
      break;
    case 'step-finish': {
      const stepResult = payload.stepResult as { reason?: unknown; rawReason?: unknown } | undefined;
      const output = payload.output as { text?: unknown; usage?: unknown } | undefined;
      expect(FINISH_REASONS.has(String(stepResult?.reason)), `reason ${String(stepResult?.reason)}`);
      expect(stepResult?.rawReason === undefined || isString(stepResult.rawReason), 'rawReason is not a string');
      expect(isString(output?.text), 'output.text is not a string');
      problems.push(...usageProblems(output?.usage, `${where}.output.usage`));
      break;
    }
    case 'finish': {
      const stepResult = payload.stepResult as { reason?: unknown } | undefined;
      const output = payload.output as { text?: unknown; usage?: unknown } | undefined;
      expect(FINISH_REASONS.has(String(stepResult?.reason)), `reason ${String(stepResult?.reason)}`);
      expect(isString(output?.text), 'output.text is not a string');
      problems.push(...usageProblems(output?.usage, `${where}.output.usage`));
      break;
    }
    default:
      break;
  }
  return problems;
}

/** Why `error` (what ended a run) is not one the seam may end it with, or `undefined`. */
function errorProblem(error: unknown, injected: Injected): string | undefined {
  if (injected.has(error)) return undefined; // the provider's own error, passed on
  if (InvalidModelResponseError.isInstance(error)) {
    if (error.provider !== PROVIDER || error.modelId !== MODEL_ID) return `an InvalidModelResponseError naming ${error.provider}/${String(error.modelId)}`;
    return undefined;
  }
  let described: string;
  try {
    described = error instanceof Error ? `${error.name}: ${error.message}` : `${typeof error} ${String(error)}`;
  } catch {
    described = 'an unreadable value';
  }
  if (RxAgentError.isInstance(error)) return `an RxAgentError that does not name the model: ${described}`;
  return `not a typed error of the library, nor the provider's own: ${described}`;
}

/** The run's chunks checked: one start, one terminal (the last), every shape; the terminal's error checked. */
function runProblems(chunks: readonly ChunkType[], injected: Injected, aborted: boolean): string[] {
  const problems: string[] = [];
  chunks.forEach((chunk, index) => problems.push(...chunkShapeProblems(chunk, index)));
  const types = chunks.map((chunk) => chunk.type);
  if (types[0] !== 'start') problems.push(`first chunk is ${String(types[0])}, not start`);
  const terminals = types.filter((type) => TERMINALS.has(type));
  if (terminals.length !== 1 || !TERMINALS.has(types.at(-1) ?? '')) problems.push(`terminal chunks: ${terminals.join(',') || 'none'} (types ${types.join(',')})`);
  const last = chunks.at(-1);
  if (last?.type === 'error') {
    const problem = errorProblem(last.payload.error, injected);
    if (problem !== undefined) problems.push(`error chunk: ${problem}`);
  }
  if (last?.type === 'abort' && !aborted) problems.push('an abort chunk though the caller did not abort');
  if (last?.type === 'tripwire') problems.push('a tripwire chunk (no processor blocks)');
  return problems;
}

/** Where the consumer got a text or reasoning delta the guard did not hand on (in order). */
function bypassProblems(chunks: readonly ChunkType[], guard: Guard): string[] {
  const got = chunks.flatMap((chunk) => (chunk.type === 'text-delta' || chunk.type === 'reasoning-delta' ? [`${chunk.type}:${chunk.payload.text}`] : []));
  let cursor = 0;
  const problems: string[] = [];
  for (const delta of got) {
    const at = guard.deltas.indexOf(delta, cursor);
    if (at < 0) problems.push(`the consumer got ${JSON.stringify(delta.slice(0, 60))}, which the output processor did not hand on`);
    else cursor = at + 1;
  }
  return problems;
}

function fail(problems: readonly string[], context: () => string): void {
  if (problems.length > 0) throw new Error(`${context()}:\n  - ${problems.join('\n  - ')}`);
}

/** `promise`, or a rejection naming a hang after {@link CASE_TIMEOUT_MS}. */
async function bounded<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no end after ${CASE_TIMEOUT_MS} ms (a hang)`)), CASE_TIMEOUT_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

type Consumer = 'stream' | 'stream$' | 'generate';

interface RunOutcome {
  chunks: ChunkType[];
  /** The result, when the run ended with one (`generate()`, `stream().result`). */
  result: { usage: unknown; steps: Array<{ usage: unknown }>; text: string } | undefined;
  /** What `generate()` (or `stream().result`) rejected with. */
  rejected: { error: unknown } | undefined;
}

/** One run of `agent` through `consumer`, to its end. */
async function runThrough(agent: Agent, consumer: Consumer, signal: AbortSignal | undefined, generateWith: 'doStream' | 'doGenerate'): Promise<RunOutcome> {
  const options = signal === undefined ? {} : { abortSignal: signal };
  if (consumer === 'stream$') {
    const chunks = await lastValueFrom(agent.stream$('Hello', options).pipe(toArray()));
    return { chunks, result: undefined, rejected: undefined };
  }
  if (consumer === 'stream') {
    const output = await agent.stream('Hello', options);
    const chunks: ChunkType[] = [];
    const reader = output.fullStream.getReader();
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      chunks.push(next.value);
    }
    const settled = await output.result.then(
      (result) => ({ result, rejected: undefined }),
      (error: unknown) => ({ result: undefined, rejected: { error } }),
    );
    return { chunks, ...settled };
  }
  return agent.generate('Hello', { ...options, generateWith }).then(
    (result) => ({ chunks: result.chunks, result, rejected: undefined }),
    (error: unknown) => ({ chunks: [], result: undefined, rejected: { error } }),
  );
}

/** The checks of one finished run (see the module comment). */
async function checkRun(outcome: RunOutcome, injected: Injected, aborted: boolean, guard: Guard | undefined, context: () => string): Promise<void> {
  const { chunks, result, rejected } = outcome;
  const problems: string[] = [];
  if (rejected !== undefined) {
    // generate() rejects with what ended the run: rxagent's own error, or an AgentRunError around the provider's
    const problem = errorProblem(AgentRunError.isInstance(rejected.error) && injected.has(rejected.error.cause) ? rejected.error.cause : rejected.error, injected);
    const abortedRun = aborted && rejected.error instanceof Error && /abort/i.test(rejected.error.name + rejected.error.message);
    if (problem !== undefined && !abortedRun) problems.push(`rejected: ${problem}`);
  } else problems.push(...runProblems(chunks, injected, aborted));
  if (result !== undefined) {
    problems.push(...usageProblems(result.usage, 'result.usage'));
    result.steps.forEach((step, index) => problems.push(...usageProblems(step.usage, `result.steps[${index}].usage`)));
    if (typeof result.text !== 'string') problems.push('result.text is not a string');
  }
  if (guard !== undefined) problems.push(...bypassProblems(chunks, guard));
  await turns(3);
  if (processErrors.length > 0) problems.push(`process-level errors: ${processErrors.map((error) => String((error as Error | undefined)?.message ?? error)).join('; ')}`);
  fail(problems, context);
}

const describeCase = (value: unknown): (() => string) => () => {
  try {
    return fc.stringify(value).slice(0, 4_000);
  } catch {
    return 'a case that cannot be printed';
  }
};

// ---------------------------------------------------------------------------------------------
// Streams
// ---------------------------------------------------------------------------------------------

interface StreamCase {
  readonly version: Version;
  readonly consumer: Consumer;
  readonly maxSteps: number;
  readonly calls: CallSpec[];
}

const streamCaseArb = (version: Version): fc.Arbitrary<StreamCase> =>
  fc.record({
    version: fc.constant(version),
    consumer: fc.constantFrom<Consumer>('stream', 'stream$', 'generate'),
    maxSteps: fc.constantFrom(1, 1, 2),
    calls: fc.array(callArb(version), { minLength: 1, maxLength: 2 }),
  });

/** A stream case whose calls may leave a read unsettled before `finish`: the caller aborts after a while. */
const mayHang = (calls: readonly CallSpec[]): boolean => calls.some((call) => call.end.kind === 'hang');

async function streamCase(spec: StreamCase): Promise<void> {
  const injected: Injected = new Set();
  const guard: Guard = { deltas: [] };
  const agent = agentOf(propertyModel(spec.version, injected, spec.calls), guard, spec.maxSteps);
  const controller = mayHang(spec.calls) ? new AbortController() : undefined;
  const timer = controller === undefined ? undefined : setTimeout(() => controller.abort(), ABORT_AFTER_MS);
  try {
    const outcome = await bounded(runThrough(agent, spec.consumer, controller?.signal, 'doStream'), 'the run');
    await checkRun(outcome, injected, controller !== undefined, guard, describeCase(spec));
  } finally {
    clearTimeout(timer);
  }
}

describe('stream part sequences of any order, fields of any type, streams that end anywhere', () => {
  it('V4: the run ends with a result or a typed error naming the model; processors see every delta; usage and chunks keep their shapes', async () => {
    await checkProperty('provider-responses: V4 streams', streamCaseArb('v4'), streamCase, STREAM_RUNS);
  }, 180_000);

  it('V2 (through the adapter): the same', async () => {
    await checkProperty('provider-responses: V2 streams', streamCaseArb('v2'), streamCase, STREAM_RUNS);
  }, 180_000);
});

// ---------------------------------------------------------------------------------------------
// doGenerate answers
// ---------------------------------------------------------------------------------------------

interface AnswerCase {
  readonly version: Version;
  readonly maxSteps: number;
  readonly answers: AnswerSpec[];
}

const answerCaseArb = (version: Version): fc.Arbitrary<AnswerCase> =>
  fc.record({ version: fc.constant(version), maxSteps: fc.constantFrom(1, 1, 2), answers: fc.array(answerArb(version), { minLength: 1, maxLength: 2 }) });

async function answerCase(spec: AnswerCase): Promise<void> {
  const injected: Injected = new Set();
  // no processOutputStream here: with one, generate() streams (see `generateWith`)
  const agent = agentOf(propertyModel(spec.version, injected, [], spec.answers), undefined, spec.maxSteps);
  const outcome = await bounded(runThrough(agent, 'generate', undefined, 'doGenerate'), 'generate()');
  await checkRun(outcome, injected, false, undefined, describeCase(spec));
}

describe('doGenerate answers with any content, finish reason, usage, warnings and metadata', () => {
  it('V4: generate() resolves, or rejects with a typed error naming the model or the provider\'s own error', async () => {
    await checkProperty('provider-responses: V4 doGenerate', answerCaseArb('v4'), answerCase, RUNS);
  }, 180_000);

  it('V2 (through the adapter): the same', async () => {
    await checkProperty('provider-responses: V2 doGenerate', answerCaseArb('v2'), answerCase, RUNS);
  }, 180_000);
});

// ---------------------------------------------------------------------------------------------
// Token usage
// ---------------------------------------------------------------------------------------------

interface UsageCase {
  readonly version: Version;
  readonly path: 'stream' | 'stream$' | 'generate-stream' | 'generate';
  readonly usage: UsageSpec;
  readonly text: string;
}

const usageCaseArb = (version: Version): fc.Arbitrary<UsageCase> =>
  fc.record({
    version: fc.constant(version),
    path: fc.constantFrom<UsageCase['path']>('stream', 'stream$', 'generate-stream', 'generate'),
    usage: usageArb(version),
    text: fc.string({ maxLength: 4 }),
  });

/** A well-formed answer whose only fault is its usage. */
async function usageCase(spec: UsageCase): Promise<void> {
  const injected: Injected = new Set();
  const finish = {
    kind: 'finish' as const,
    id: 0,
    callId: 0,
    toolName: 0,
    input: 0,
    text: '',
    reason: 0,
    rawReason: 'string' as const,
    providerExecuted: null,
    unknownType: 0,
    usage: spec.usage,
    fault: null,
    wrap: 'plain' as const,
  };
  const delta = { ...finish, kind: 'text-delta' as const, text: spec.text };
  const call: CallSpec = {
    start: { kind: 'ok' },
    parts: [
      { ...finish, kind: 'text-start' },
      delta,
      { ...finish, kind: 'text-end' },
      finish,
    ],
    end: { kind: 'close' },
    stream: 'web',
  };
  const answer: AnswerSpec = {
    start: { kind: 'ok' },
    whole: 'object',
    content: [{ kind: 'text', part: delta }],
    reason: 0,
    reasonWhole: 'object',
    usage: spec.usage,
    warnings: 'none',
    response: 'none',
    providerMetadata: 'none',
  };
  const streamed = spec.path !== 'generate';
  const guard: Guard | undefined = streamed ? { deltas: [] } : undefined;
  const agent = agentOf(propertyModel(spec.version, injected, [call], [answer]), guard, 1);
  const consumer: Consumer = spec.path === 'generate-stream' || spec.path === 'generate' ? 'generate' : spec.path;
  const outcome = await bounded(runThrough(agent, consumer, undefined, streamed ? 'doStream' : 'doGenerate'), 'the run');
  const context = describeCase(spec);
  await checkRun(outcome, injected, false, guard, context);
  // the usage is the only fault: the run goes on, with each count kept when it is a whole number
  // from 0 to 2^53 − 1 and unknown otherwise
  const ended = outcome.rejected === undefined ? outcome.chunks.at(-1) : undefined;
  const problems: string[] = [];
  if (outcome.rejected !== undefined || ended?.type !== 'finish') {
    // a usage that is not an object at all: a V2 `finish` (and a `doGenerate` answer) without usage is documented as malformed
    const documented = !usageIsObject(spec.usage) && (spec.version === 'v2' || spec.path === 'generate');
    if (!documented) problems.push(`the run did not finish: ${outcome.rejected === undefined ? String(ended?.type) : String((outcome.rejected.error as Error | undefined)?.message)}`);
    fail(problems, context);
    return;
  }
  const usage = (ended.payload as { output: { usage: Record<string, unknown> & { inputTokenDetails?: Record<string, unknown>; outputTokenDetails?: Record<string, unknown> } } }).output.usage;
  const kept = keptUsage(spec.usage);
  const actual = {
    input: usage.inputTokens,
    output: usage.outputTokens,
    total: usage.totalTokens,
    cacheRead: usage.inputTokenDetails?.cacheReadTokens,
    reasoning: usage.outputTokenDetails?.reasoningTokens,
  };
  for (const key of ['input', 'output', 'total', 'cacheRead', 'reasoning'] as const) {
    if (!Object.is(actual[key], kept[key]) && !(actual[key] === 0 && kept[key] === 0)) problems.push(`${key}: ${String(actual[key])}, expected ${String(kept[key])}`);
  }
  fail(problems, context);
}

describe('token usage of any value in any field', () => {
  it('V4, streamed and through doGenerate: each count kept when it is a whole number from 0 to 2^53 − 1, else unknown; the run goes on', async () => {
    await checkProperty('provider-responses: V4 usage', usageCaseArb('v4'), usageCase, RUNS);
  }, 180_000);

  it('V2 (through the adapter): the same', async () => {
    await checkProperty('provider-responses: V2 usage', usageCaseArb('v2'), usageCase, RUNS);
  }, 180_000);
});

// ---------------------------------------------------------------------------------------------
// Faults the properties found (each failed before its fix), kept as examples
// ---------------------------------------------------------------------------------------------

const v4Finish = (usage: unknown = { inputTokens: { total: 3 }, outputTokens: { total: 2 } }): Record<string, unknown> => ({ type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage });
const v2Finish = (usage: unknown): Record<string, unknown> => ({ type: 'finish', finishReason: 'stop', usage });
const textBlock = (text: string): Array<Record<string, unknown>> => [
  { type: 'text-start', id: 't' },
  { type: 'text-delta', id: 't', delta: text },
  { type: 'text-end', id: 't' },
];

/** A model streaming `parts` (each call), answering `doGenerate` with `answer`. */
function scripted(version: Version, parts: ReadonlyArray<Record<string, unknown>>, answer?: Record<string, unknown>): object {
  return {
    specificationVersion: version,
    provider: PROVIDER,
    modelId: MODEL_ID,
    supportedUrls: {},
    doStream: async () => ({
      stream: new ReadableStream({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      }),
    }),
    doGenerate: async () => answer,
  };
}

const throwingGetter = (target: Record<string, unknown>, key: string): Record<string, unknown> =>
  Object.defineProperty(target, key, {
    enumerable: true,
    get() {
      throw new Error(`${key} getter`);
    },
  });

async function endOf(agent: Agent): Promise<ChunkType> {
  const chunks = await lastValueFrom(agent.stream$('Hello').pipe(toArray()));
  return chunks.at(-1) as ChunkType;
}

function expectInvalid(end: ChunkType, problem: RegExp): void {
  const error = end.type === 'error' ? end.payload.error : undefined;
  expect(InvalidModelResponseError.isInstance(error), `${end.type}: ${String((error as Error | undefined)?.message)}`).toBe(true);
  const invalid = error as InvalidModelResponseError;
  expect([invalid.provider, invalid.modelId]).toEqual([PROVIDER, MODEL_ID]);
  expect(invalid.problem).toMatch(problem);
}

describe('faults the properties found', () => {
  // seed 1279458169 (V4 doGenerate): memory refused the step after the fact (InvalidMessageError: toolName must not be empty)
  it('a tool call or a provider tool result with an empty toolName, a streamed tool input with an empty id, a file with an empty mediaType: an InvalidModelResponseError naming the model', async () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['tool-call', { type: 'tool-call', toolCallId: 'c1', toolName: '', input: '{}' }, /"tool-call" part whose toolName is an empty string/],
      ['tool-result', { type: 'tool-result', toolCallId: 'ws1', toolName: '', result: { hits: [] } }, /"tool-result" part whose toolName is an empty string/],
      ['file', { type: 'file', mediaType: '', data: { type: 'data', data: 'iVBORw0KGgo=' } }, /"file" part whose mediaType is an empty string/],
    ];
    // seed -1002869824 (V4 streams, 20,000 runs): a streamed tool input with an empty id reached the output chain, which blamed the processor that handed it on (ProcessorError)
    for (const part of [
      { type: 'tool-input-start', id: '', toolName: 'weather' },
      { type: 'tool-input-delta', id: '', delta: '{' },
      { type: 'tool-input-end', id: '' },
    ]) {
      const end = await endOf(agentOf(scripted('v4', [...textBlock('Hi'), part, v4Finish()]), { deltas: [] }, 1));
      expectInvalid(end, new RegExp(`"${part.type}" part whose id is an empty string`));
    }
    for (const [name, part, problem] of cases) {
      expectInvalid(await endOf(agentOf(scripted('v4', [...textBlock('Hi'), part, v4Finish()]), undefined, 1)), problem);
      const { type: _type, ...content } = part;
      const answer = { content: [{ type: part.type, ...content }], finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } }, warnings: [] };
      const error: unknown = await agentOf(scripted('v4', [], answer), undefined, 1).generate('Hello').then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(InvalidModelResponseError.isInstance(error), `${name} through doGenerate: ${String((error as Error | undefined)?.message)}`).toBe(true);
      expect((error as InvalidModelResponseError).problem).toMatch(problem);
    }
  });

  // seed 1279458169 (V4 doGenerate, 10,000 runs): metadata the codec can write but memory cannot store was refused after the fact (InvalidMessageError)
  it('providerMetadata that is a Date, whose provider entry is not an object, or that holds a Date or bytes: an InvalidModelResponseError naming the model', async () => {
    const cases: Array<[string, unknown]> = [
      ['an Invalid Date', new Date(Number.NaN)],
      ['a Date', new Date(0)],
      ['a provider entry that is a number', { acme: 5 }],
      ['a provider entry that is an array', { acme: [1] }],
      ['a Date inside', { acme: { at: new Date(0) } }],
      ['bytes inside', { acme: { bytes: new Uint8Array([1]) } }],
    ];
    for (const [name, providerMetadata] of cases) {
      const parts = [{ type: 'text-start', id: 't', providerMetadata }, { type: 'text-delta', id: 't', delta: 'Hi' }, { type: 'text-end', id: 't' }, v4Finish()];
      const end = await endOf(agentOf(scripted('v4', parts), undefined, 1));
      expect(end.type, name).toBe('error');
      expectInvalid(end, /providerMetadata/);
      const answer = { content: [{ type: 'text', text: 'Hi', providerMetadata }], finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } }, warnings: [] };
      const error: unknown = await agentOf(scripted('v4', [], answer), undefined, 1).generate('Hello').then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(InvalidModelResponseError.isInstance(error), `${name} through doGenerate: ${String((error as Error | undefined)?.message)}`).toBe(true);
    }
    // plain metadata still passes, small or large
    const large = { acme: Object.fromEntries(Array.from({ length: 100 }, (_, index) => [`k${index}`, { n: index, list: [index, 'x', null, true] }])) };
    for (const providerMetadata of [{ acme: { itemId: 'i1', nested: { a: [1, 'b', null] } } }, large]) {
      const parts = [{ type: 'text-start', id: 't', providerMetadata }, { type: 'text-delta', id: 't', delta: 'Hi', providerMetadata }, { type: 'text-end', id: 't' }, v4Finish()];
      expect((await endOf(agentOf(scripted('v4', parts), undefined, 1))).type).toBe('finish');
    }
  });

  // seed 2079857930 (V2 streams, 20,000 runs): a delta read after the entry check (its `delta` a getter that throws) ended the run with the getter's raw Error
  it('a text, reasoning or tool input delta whose delta throws where it is read: an InvalidModelResponseError naming the model', async () => {
    for (const version of ['v4', 'v2'] as const) {
      for (const type of ['text-delta', 'reasoning-delta', 'tool-input-delta']) {
        const start = type === 'tool-input-delta' ? { type: 'tool-input-start', id: 'c1', toolName: 'weather' } : { type: type.replace('delta', 'start'), id: 'b' };
        const delta = throwingGetter({ type, id: type === 'tool-input-delta' ? 'c1' : 'b' }, 'delta');
        const finish = version === 'v4' ? v4Finish() : v2Finish({ inputTokens: 1, outputTokens: 1 });
        expectInvalid(await endOf(agentOf(scripted(version, [start, delta, finish]), undefined, 1)), new RegExp(`"${type}" part that throws where it is read \\(delta getter\\)`));
      }
    }
  });

  // seed -858305142 (V4 usage): one count that throws where it is read made every count unknown
  it('a V4 usage with one count (or one group) that throws where it is read: that count is unknown, the others are kept', async () => {
    const usage = { inputTokens: throwingGetter({ total: 3, cacheRead: 1 }, 'noCache'), outputTokens: { total: 2, reasoning: 1 } };
    const end = await endOf(agentOf(scripted('v4', [...textBlock('Hi'), v4Finish(usage)]), undefined, 1));
    expect(end.type).toBe('finish');
    const kept = end.type === 'finish' ? end.payload.output.usage : undefined;
    expect(kept).toMatchObject({ inputTokens: 3, outputTokens: 2, totalTokens: 5, inputTokenDetails: { noCacheTokens: undefined, cacheReadTokens: 1 }, outputTokenDetails: { reasoningTokens: 1 } });
    const group = throwingGetter({ outputTokens: { total: 2 } }, 'inputTokens');
    const result = await agentOf(scripted('v4', [...textBlock('Hi'), v4Finish(group)]), undefined, 1).generate('Hello', { generateWith: 'doStream' });
    expect([result.usage.inputTokens, result.usage.outputTokens, result.usage.totalTokens]).toEqual([undefined, 2, 2]);
  });

  // seed 651586208 (V2 usage): the adapter's read of the usage threw — the run failed with an InvalidModelResponseError
  it('a V2 usage with a count that throws where it is read, or that cannot be read at all: the run goes on, that count unknown', async () => {
    const usage = throwingGetter({ inputTokens: 3, outputTokens: 2, reasoningTokens: 1 }, 'cachedInputTokens');
    const end = await endOf(agentOf(scripted('v2', [...textBlock('Hi'), v2Finish(usage)]), undefined, 1));
    expect(end.type, end.type === 'error' ? String((end.payload.error as Error).message) : '').toBe('finish');
    const kept = end.type === 'finish' ? end.payload.output.usage : undefined;
    expect(kept).toMatchObject({ inputTokens: 3, outputTokens: 2, totalTokens: 5, inputTokenDetails: { cacheReadTokens: undefined }, outputTokenDetails: { reasoningTokens: 1 } });
    const answer = { content: [{ type: 'text', text: 'Hi' }], finishReason: 'stop', usage: throwingGetter({ outputTokens: 2 }, 'inputTokens'), warnings: [] };
    const result = await agentOf(scripted('v2', [], answer), undefined, 1).generate('Hello');
    expect([result.usage.inputTokens, result.usage.outputTokens, result.text]).toEqual([undefined, 2, 'Hi']);
  });

  // seed 2079857930 (V4 streams): two steps reporting 2^53 − 1 reasoning tokens each added up to 2^54 − 2, past what a count may be
  it('step usages whose sum passes 2^53 − 1: that total is unknown, not an inexact number', async () => {
    const big = Number.MAX_SAFE_INTEGER;
    const calls = [
      [{ type: 'tool-call', toolCallId: 'c1', toolName: 'weather', input: '{"city":"Paris"}' }, v4Finish({ inputTokens: { total: 1 }, outputTokens: { total: 1, reasoning: big } })],
      [...textBlock('Sunny.'), v4Finish({ inputTokens: { total: 1 }, outputTokens: { total: 1, reasoning: big } })],
    ];
    let call = 0;
    const model = { ...(scripted('v4', []) as Record<string, unknown>), doStream: async () => (scripted('v4', calls[Math.min(call++, 1)] ?? []) as { doStream: () => Promise<unknown> }).doStream() };
    const result = await agentOf(model, undefined, 2).generate('Hello', { generateWith: 'doStream' });
    expect(result.steps).toHaveLength(2);
    expect(result.usage.outputTokenDetails?.reasoningTokens).toBeUndefined();
    expect([result.usage.inputTokens, result.usage.outputTokens]).toEqual([2, 2]);
    const finish = result.chunks.at(-1);
    expect(finish?.type === 'finish' && finish.payload.output.usage.outputTokenDetails?.reasoningTokens).toBeUndefined();
  });
});
