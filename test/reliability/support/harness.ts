/**
 * Turns a generated {@link Scenario} into a real Agent (mock model, processors, tools) whose every
 * hook call, tool execution and model call is recorded, and runs it through `stream$()` or
 * `generate()`.
 */
import { Observable, concat, from, lastValueFrom, take, takeUntil, tap, throwError, toArray, timer } from 'rxjs';
import { z } from 'zod';
import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { Agent } from '../../../src/loop/agent.js';
import type { AgentCallOptions, GenerateResult } from '../../../src/loop/agent-types.js';
import { OBSERVABLE_STREAM } from '../../../src/model/observable-stream.js';
import type { ChunkType } from '../../../src/contract/chunk-types.js';
import type { Processor, ProcessorState } from '../../../src/contract/processor-types.js';
import { RequestContext } from '../../../src/contract/request-context.js';
import type { AgentToolSet } from '../../../src/contract/tool-types.js';
import { MessageList } from '../../../src/message-list/message-list.js';
import { mockModel } from '../../../src/testing/mock-model.js';
import { finishPart } from '../../../src/testing/model-parts.js';
import type { CallScript, HookAction, HookRule, ProcessorSpec, Scenario, Segment, StreamRule, ToolName } from './scenario.js';

/** One recorded hook call. */
export interface HookCall {
  runId: string;
  processorId: string;
  hook: string;
  state: ProcessorState;
  retryCount: number;
  /** Order among every event of the agent (hook calls, tool runs, ends). */
  seq: number;
}

/** What a run did, besides its chunks. */
export class Recorder {
  seq = 0;
  readonly hooks: HookCall[] = [];
  /**
   * Hooks that threw an Error (not a TripWire) or returned a wrong shape, with the chunk
   * `processOutputStream` was checking.
   */
  readonly throws: Array<{ runId: string; processorId: string; hook: string; kind: 'throw' | 'wrongShape'; part?: ChunkType }> = [];
  readonly modelSignals: AbortSignal[] = [];
  readonly toolRuns: Array<{ toolCallId: string; tool: string; signal: AbortSignal; settled: Promise<unknown> }> = [];
  readonly violations: string[] = [];
  /** Tool answers (`tool-result`/`tool-error`) a processor dropped, by toolCallId. */
  readonly droppedAnswers = new Set<string>();
  /** Promises of async work a run started (timers, tools) that tests wait for before checking "nothing after the end". */
  readonly pending: Array<Promise<unknown>> = [];
  userController: AbortController | undefined;

  next(): number {
    return ++this.seq;
  }
}

const inputSchema = z.object({ n: z.number() });

function argsJson(args: Extract<Segment, { kind: 'tool' }>['args']): string {
  switch (args) {
    case 'valid':
      return '{"n":1}';
    case 'schema-invalid':
      return '{"n":"x"}';
    case 'bad-json':
      return '{"n":';
    case 'empty':
      return '';
  }
}

/** The V4 parts of one model call. */
export function partsOf(script: CallScript, callIndex: number): LanguageModelV4StreamPart[] {
  const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  let lastOpenEnd = -1;
  script.segments.forEach((segment, index) => {
    const id = `${segment.kind}-${callIndex}-${index}`;
    switch (segment.kind) {
      case 'text':
      case 'reasoning': {
        const kind = segment.kind;
        parts.push({ type: `${kind}-start`, id } as LanguageModelV4StreamPart);
        for (const delta of segment.deltas) parts.push({ type: `${kind}-delta`, id, delta } as LanguageModelV4StreamPart);
        lastOpenEnd = parts.length;
        parts.push({ type: `${kind}-end`, id } as LanguageModelV4StreamPart);
        return;
      }
      case 'tool': {
        const toolCallId = `call-${callIndex}-${index}`;
        const input = argsJson(segment.args);
        const executed = segment.provider === undefined ? {} : { providerExecuted: true };
        if (segment.streamed) {
          parts.push({ type: 'tool-input-start', id: toolCallId, toolName: segment.tool, ...executed });
          if (input !== '') parts.push({ type: 'tool-input-delta', id: toolCallId, delta: input });
          parts.push({ type: 'tool-input-end', id: toolCallId });
        }
        parts.push({ type: 'tool-call', toolCallId, toolName: segment.tool, input, ...executed });
        if (segment.provider === 'answered') parts.push({ type: 'tool-result', toolCallId, toolName: segment.tool, result: { provider: true } });
        lastOpenEnd = -1;
        return;
      }
      case 'source':
        parts.push({ type: 'source', sourceType: 'url', id, url: 'https://example.com/doc', title: 'doc' });
        return;
      case 'file':
        parts.push({ type: 'file', mediaType: 'text/plain', data: { type: 'data', data: 'aGk=' } } as LanguageModelV4StreamPart);
        return;
      case 'raw':
        parts.push({ type: 'raw', rawValue: { raw: index } });
        return;
      case 'metadata':
        parts.push({ type: 'response-metadata', id: `resp-${callIndex}`, modelId: 'mock-model' });
        return;
      case 'unknown':
        parts.push({ type: 'mystery-part', id } as unknown as LanguageModelV4StreamPart);
        return;
    }
  });
  const end = script.end;
  if (end.kind === 'finish') parts.push(finishPart(end.reason, { inputTokens: 3, outputTokens: 2 }));
  if (end.kind === 'error-part') parts.push({ type: 'error', error: new Error(`provider error part (call ${callIndex})`) });
  if (end.kind === 'early-end' && end.cut && lastOpenEnd >= 0 && lastOpenEnd === parts.length - 1) parts.splice(lastOpenEnd, 1);
  return parts;
}

/** The default for calls the script does not cover: a plain answer. */
const DEFAULT_CALL: CallScript = { preThrow: false, segments: [{ kind: 'text', deltas: ['fine'] }], end: { kind: 'finish', reason: 'stop' } };

/** A mock model playing `calls` (per model instance, so build one agent per run for determinism). */
export function scriptedMock(calls: readonly CallScript[], recorder: Recorder, readable: boolean): LanguageModelV4 {
  const model = mockModel({
    error: ({ callIndex, options }: { callIndex: number; options: { abortSignal?: AbortSignal } }) => {
      if (options.abortSignal) recorder.modelSignals.push(options.abortSignal);
      return (calls[callIndex] ?? DEFAULT_CALL).preThrow ? new Error(`provider refused (call ${callIndex})`) : undefined;
    },
    stream: ({ callIndex }) => {
      const script = calls[callIndex] ?? DEFAULT_CALL;
      const parts = from(partsOf(script, callIndex));
      return script.end.kind === 'throw-mid'
        ? concat(parts, throwError(() => new Error(`connection reset (call ${callIndex})`)))
        : parts;
    },
  });
  if (!readable) return model;
  // Without the Observable fast path: `doStream` and a ReadableStream read one part at a time.
  const { [OBSERVABLE_STREAM]: _fast, ...rest } = model;
  return rest as LanguageModelV4;
}

function fires(rule: { nth: number; repeat: boolean }, count: number): boolean {
  return count === rule.nth || (rule.repeat && count > rule.nth);
}

function counter(state: ProcessorState, key: string): number {
  const current = (state[key] as number | undefined) ?? 0;
  state[key] = current + 1;
  return current;
}

interface HookArgsLike {
  runId: string;
  state: ProcessorState;
  retryCount: number;
  abort: (reason?: string, options?: { retry?: boolean }) => never;
  messageList?: MessageList;
  part?: ChunkType;
}

/** Builds the processor a spec describes; every hook call goes to `recorder`. */
export function buildProcessor(spec: ProcessorSpec, recorder: Recorder): Processor {
  const processor: Processor = { id: spec.id, processDataParts: spec.processDataParts };
  const later = <T>(body: () => T, perChunk = false): T | Promise<T> => {
    if (spec.timing === 'sync') return body();
    if (spec.timing === 'promise' || perChunk) return Promise.resolve().then(body);
    const settled = new Promise<void>((resolve) => setTimeout(resolve, 1));
    recorder.pending.push(settled);
    return settled.then(body);
  };
  const record = (hook: string, args: HookArgsLike): void => {
    recorder.hooks.push({ runId: args.runId, processorId: spec.id, hook, state: args.state, retryCount: args.retryCount, seq: recorder.next() });
    // a processor's state belongs to one run: tag it on first use, and notice any other run in it
    const owner = args.state.owner as string | undefined;
    if (owner === undefined) args.state.owner = args.runId;
    else if (owner !== args.runId) recorder.violations.push(`${spec.id}.${hook}: state of run ${owner} seen in run ${args.runId}`);
  };
  const act = (hook: string, action: HookAction, args: HookArgsLike, pass: unknown): unknown => {
    switch (action) {
      case 'pass':
        return pass;
      case 'abort':
        return args.abort(`${spec.id} blocked ${hook}`);
      case 'abortRetry':
        return args.abort(`${spec.id} wants another try (${hook})`, { retry: true });
      case 'throw':
        recorder.throws.push({ runId: args.runId, processorId: spec.id, hook, kind: 'throw' });
        throw new Error(`${spec.id} crashed in ${hook}`);
      case 'returnList':
        return args.messageList;
      case 'wrongShape':
        recorder.throws.push({ runId: args.runId, processorId: spec.id, hook, kind: 'wrongShape' });
        return 42;
    }
  };
  const messageHook = (hook: keyof Processor, rule: HookRule | undefined, pass: (args: HookArgsLike) => unknown = () => undefined) => {
    (processor as unknown as Record<string, unknown>)[hook] = (args: HookArgsLike) => {
      record(hook, args);
      const count = counter(args.state, hook);
      return later(() => (rule !== undefined && fires(rule, count) ? act(hook, rule.action, args, pass(args)) : pass(args)));
    };
  };
  const isInput = spec.role === 'input' || spec.role === 'both';
  const isOutput = spec.role === 'output' || spec.role === 'both';
  if (isInput) {
    messageHook('processInput', spec.input);
    messageHook('processInputStep', spec.inputStep);
    messageHook('processLLMRequest', spec.llmRequest);
    messageHook('processLLMResponse', spec.llmResponse);
  }
  if (isOutput) {
    messageHook('processOutputStep', spec.outputStep);
    messageHook('processToolResult', spec.toolResult);
    messageHook('processOutputResult', spec.outputResult);
    const rule = spec.stream;
    processor.processOutputStream = (args) => {
      const hookArgs = args as unknown as HookArgsLike;
      record('processOutputStream', hookArgs);
      const part = args.part;
      const count = rule !== undefined && part.type === rule.target ? counter(args.state, `stream:${rule.target}`) : -1;
      const decide = (): ChunkType | null => (rule !== undefined && count >= 0 && fires(rule, count) ? streamAct(rule, hookArgs, part) : part);
      return later(decide, true) as ChunkType | null | Promise<ChunkType | null>;
    };
  }
  const streamAct = (rule: StreamRule, args: HookArgsLike, part: ChunkType): ChunkType | null => {
    switch (rule.action) {
      case 'pass':
        return part;
      case 'drop':
        if (part.type === 'tool-result' || part.type === 'tool-error') recorder.droppedAnswers.add(part.payload.toolCallId);
        return null;
      case 'rewrite':
        return part.type === 'text-delta' ? { ...part, payload: { ...part.payload, text: `[${part.payload.text.toUpperCase()}]` } } : ({ ...part } as ChunkType);
      case 'abort':
        return args.abort(`${spec.id} blocked a ${part.type}`);
      case 'abortRetry':
        return args.abort(`${spec.id} wants another ${part.type}`, { retry: true });
      case 'throw':
        recorder.throws.push({ runId: args.runId, processorId: spec.id, hook: 'processOutputStream', kind: 'throw', part });
        throw new Error(`${spec.id} crashed on a ${part.type}`);
      case 'wrongShape':
        recorder.throws.push({ runId: args.runId, processorId: spec.id, hook: 'processOutputStream', kind: 'wrongShape', part });
        return 42 as unknown as ChunkType;
    }
  };
  const apiRule = spec.apiError;
  if (apiRule !== undefined) {
    processor.processAPIError = (args) => {
      const hookArgs = args as unknown as HookArgsLike;
      record('processAPIError', hookArgs);
      const count = counter(args.state, 'processAPIError');
      return later(() => {
        if (!fires(apiRule, count) || apiRule.action === 'none') return undefined;
        if (apiRule.action === 'throw') throw new Error(`${spec.id} crashed in processAPIError`);
        return { retry: true };
      });
    };
  }
  if (spec.onViolation !== undefined) {
    const mode = spec.onViolation;
    processor.onViolation = (violation) => {
      if (mode === 'throw') throw new Error(`onViolation of ${violation.processorId} crashed`);
      if (mode === 'reject') return Promise.reject(new Error(`onViolation of ${violation.processorId} rejected`));
      return undefined;
    };
  }
  return processor;
}

/** The tools every generated agent has ('ghost' is missing on purpose). */
export function buildTools(recorder: Recorder): AgentToolSet {
  const track = (toolCallId: string, tool: ToolName, signal: AbortSignal, work: () => unknown): unknown => {
    let outcome: unknown;
    try {
      outcome = work();
    } catch (error) {
      recorder.toolRuns.push({ toolCallId, tool, signal, settled: Promise.resolve() });
      throw error;
    }
    const settled = Promise.resolve(outcome).catch(() => undefined);
    recorder.toolRuns.push({ toolCallId, tool, signal, settled });
    recorder.pending.push(settled);
    return outcome;
  };
  type Options = { toolCallId: string; abortSignal: AbortSignal; requestContext: RequestContext; writer: { custom(chunk: { type: `data-${string}`; data: unknown }): Promise<void> } };
  const tool = (name: ToolName, work: (input: { n: number }, options: Options) => unknown) => ({
    description: `the ${name} tool`,
    inputSchema,
    execute: (input: { n: number }, options: Options) => track(options.toolCallId, name, options.abortSignal, () => work(input, options)),
  });
  const untilAborted = (signal: AbortSignal): Promise<never> =>
    new Promise((_, reject) => {
      if (signal.aborted) reject(signal.reason);
      else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
  return {
    ok: tool('ok', (input) => ({ ok: input.n })),
    okAsync: tool('okAsync', async (input) => ({ ok: input.n, async: true })),
    throws: tool('throws', () => {
      throw new Error('tool exploded');
    }),
    rejects: tool('rejects', async () => {
      throw new Error('tool rejected');
    }),
    slow: tool('slow', () => new Promise((resolve) => setTimeout(() => resolve({ slow: true }), 1))),
    cycle: tool('cycle', () => {
      const value: Record<string, unknown> = { name: 'loop' };
      value.self = value;
      return value;
    }),
    bigint: tool('bigint', () => ({ big: 12345678901234567890n })),
    fn: tool('fn', () => ({ keep: 1, drop: () => 2 })),
    writer: tool('writer', async (input, options) => {
      await options.writer.custom({ type: 'data-progress', data: { n: input.n } });
      return 'written';
    }),
    noExecute: { description: 'client-side', inputSchema },
    abort: tool('abort', (_input, options) => {
      (options.requestContext.get('userController') as AbortController | undefined)?.abort(new Error('caller gave up'));
      return untilAborted(options.abortSignal);
    }),
    hang: tool('hang', (_input, options) => untilAborted(options.abortSignal)),
  } as AgentToolSet;
}

/** The agent of a scenario (fresh model, processors and tools). */
export function buildAgent(scenario: Scenario, recorder: Recorder): Agent {
  const processors = scenario.processors.map((spec) => ({ spec, processor: buildProcessor(spec, recorder) }));
  const inList = (roles: ProcessorSpec['role'][]) => processors.filter(({ spec }) => roles.includes(spec.role)).map(({ processor }) => processor);
  return new Agent({
    id: 'reliability',
    instructions: 'Be reliable.',
    model: scriptedMock(scenario.calls, recorder, scenario.readable),
    tools: buildTools(recorder),
    inputProcessors: inList(['input', 'both']),
    outputProcessors: inList(['output', 'both']),
    errorProcessors: inList(['error']),
    ...(scenario.maxProcessorRetries === undefined ? {} : { maxProcessorRetries: scenario.maxProcessorRetries }),
    maxSteps: scenario.maxSteps,
    toolConcurrency: scenario.toolConcurrency,
  });
}

/** The options of a scenario's call (a fresh caller signal when it has one). */
export function callOptions(scenario: Scenario, recorder: Recorder): AgentCallOptions {
  if (!scenario.userSignal) return {};
  const controller = new AbortController();
  recorder.userController = controller;
  // the 'abort' tool finds its run's controller here (runs of one agent may overlap)
  const requestContext = new RequestContext();
  requestContext.set('userController', controller);
  return { abortSignal: controller.signal, requestContext };
}

/** What one `stream$()` run produced. */
export interface StreamRun {
  chunks: ChunkType[];
  /** The consumer left before the stream ended. */
  unsubscribed: boolean;
  /** `recorder.seq` when the consumer stopped listening (end or unsubscribe). */
  endSeq: number;
}

const HANG_LIMIT_MS = 10_000;

/** Runs `agent.stream$()` for a scenario, unsubscribing where it says. */
export async function runStream(agent: Agent, scenario: Scenario, recorder: Recorder, input = 'hello'): Promise<StreamRun> {
  let sourceEnded = false;
  let left = false;
  let stream$ = agent.stream$(input, callOptions(scenario, recorder)).pipe(
    tap({ complete: () => (sourceEnded = true), error: () => (sourceEnded = true) }),
  );
  const stop = scenario.unsubscribe;
  if (stop?.kind === 'chunks') stream$ = stream$.pipe(take(stop.after), tap({ complete: () => (left = !sourceEnded) }));
  if (stop?.kind === 'macrotask') {
    stream$ = stream$.pipe(
      takeUntil(
        new Observable<void>((subscriber) => {
          const handle = setImmediate(() => {
            left = !sourceEnded;
            subscriber.next();
          });
          return () => clearImmediate(handle);
        }),
      ),
    );
  }
  let hung = false;
  const chunks = await lastValueFrom(
    stream$.pipe(
      takeUntil(timer(HANG_LIMIT_MS).pipe(tap(() => (hung = true)))),
      toArray(),
    ),
  );
  const endSeq = recorder.next();
  if (hung) throw new Error(`run neither ended nor was unsubscribed within ${HANG_LIMIT_MS} ms (a hang): ${chunks.map((chunk) => chunk.type).join(', ')}`);
  // a stream that completed on its own without a terminal chunk is reported by the invariants
  return { chunks, unsubscribed: left, endSeq };
}

/** `generate()` for a scenario: the result or the rejection. */
export async function runGenerate(agent: Agent, scenario: Scenario, recorder: Recorder, input = 'hello'): Promise<{ result?: GenerateResult; error?: unknown }> {
  try {
    // the stream folded (the scenarios script streamed calls: a throw before the stream, an early end)
    return { result: await agent.generate(input, { ...callOptions(scenario, recorder), generateWith: 'doStream' }) };
  } catch (error) {
    return { error };
  }
}

/** Waits for the async work a run started (timers, tools) to settle, then one more macrotask. */
export async function settle(recorder: Recorder): Promise<void> {
  for (let round = 0; round < 3; round++) {
    await Promise.all(recorder.pending);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** `finish | tripwire | error | abort`. */
export const TERMINAL_TYPES = new Set(['finish', 'tripwire', 'error', 'abort']);
