/**
 * Builders for stream chunks in tests: `chunk.textDelta('hi')` instead of a five-line object.
 * Every chunk gets `runId: 'test-run'` (or the run id given to `createChunkBuilders`) and
 * `from: 'AGENT'`, exactly as an rxagent run emits them.
 */
import type { LanguageModelUsage } from 'ai';
import type { AgentChunk, ChunkPayloads, DataChunkType, RxFinishReason, ToolCallInfo } from '../contract/index.js';

/**
 * The run id the default `chunk` builders use.
 *
 * @example
 * ```ts
 * import { TEST_RUN_ID, chunk } from 'rxagent/testing';
 * chunk.start().runId === TEST_RUN_ID; // true
 * ```
 */
export const TEST_RUN_ID = 'test-run';

/**
 * Default id of text parts, so `textStart()`, `textDelta()` and `textEnd()` match without one.
 *
 * @example
 * ```ts
 * import { DEFAULT_TEXT_ID, chunk } from 'rxagent/testing';
 * chunk.textDelta('hi').payload.id === DEFAULT_TEXT_ID; // true
 * ```
 */
export const DEFAULT_TEXT_ID = 'text-1';

/**
 * Default id of reasoning parts, so the reasoning builders match without one.
 *
 * @example
 * ```ts
 * import { DEFAULT_REASONING_ID, chunk } from 'rxagent/testing';
 * chunk.reasoningDelta('hmm').payload.id === DEFAULT_REASONING_ID; // true
 * ```
 */
export const DEFAULT_REASONING_ID = 'reasoning-1';

/**
 * Token counts for `testUsage()`; everything else is `undefined`.
 *
 * @example
 * ```ts
 * import { testUsage, type UsageCounts } from 'rxagent/testing';
 * const counts: UsageCounts = { inputTokens: 10, outputTokens: 4 };
 * testUsage(counts);
 * ```
 */
export interface UsageCounts {
  /** Tokens in the prompt. */
  inputTokens?: number;
  /** Tokens in the answer. */
  outputTokens?: number;
  /** Input plus output tokens. */
  totalTokens?: number;
}

/**
 * A `LanguageModelUsage` with the given counts (the details left `undefined`).
 *
 * @example
 * ```ts
 * import { testUsage } from 'rxagent/testing';
 * testUsage({ inputTokens: 3, outputTokens: 5 }).totalTokens; // 8
 * ```
 */
export function testUsage(counts: UsageCounts = {}): LanguageModelUsage {
  const { inputTokens, outputTokens } = counts;
  const totalTokens =
    counts.totalTokens ?? (inputTokens === undefined && outputTokens === undefined ? undefined : (inputTokens ?? 0) + (outputTokens ?? 0));
  return {
    inputTokens,
    inputTokenDetails: { noCacheTokens: undefined, cacheReadTokens: undefined, cacheWriteTokens: undefined },
    outputTokens,
    outputTokenDetails: { textTokens: undefined, reasoningTokens: undefined },
    totalTokens,
  };
}

/**
 * Fields of `chunk.stepFinish(...)`; all optional (defaults: step 0, reason `'stop'`, no text).
 *
 * @example
 * ```ts
 * import { chunk } from 'rxagent/testing';
 * chunk.stepFinish({ stepNumber: 1, reason: 'tool-calls', isContinued: true });
 * ```
 */
export interface StepFinishInit {
  /** The step's number (0 for the first step of the run). */
  stepNumber?: number;
  /** The reason. */
  reason?: RxFinishReason;
  /** True when the run continues after this step (tool calls ran, or a retry). */
  isContinued?: boolean;
  /** The text. */
  text?: string;
  /** The tool calls made. */
  toolCalls?: ToolCallInfo[];
  /** Token usage. */
  usage?: LanguageModelUsage;
  /** The id of the assistant message this belongs to. */
  messageId?: string;
}

/**
 * Fields of `chunk.toolResult(...)`.
 *
 * @example
 * ```ts
 * import { chunk } from 'rxagent/testing';
 * chunk.toolResult({ toolCallId: 'c1', toolName: 'weather', result: { tempC: 21 } });
 * ```
 */
export interface ToolResultInit extends Omit<ChunkPayloads['tool-result'], 'providerMetadata'> {}

/**
 * Fields of `chunk.tripwire(...)`.
 *
 * @example
 * ```ts
 * import { chunk } from 'rxagent/testing';
 * chunk.tripwire({ reason: 'PII found', processorId: 'pii', retry: false });
 * ```
 */
export interface TripwireInit {
  /** The reason. */
  reason: string;
  /** The `processorId` hook (see `Processor.processorId` for when it runs and what it may return). */
  processorId: string;
  /** Whether a retry of the step was asked for. */
  retry?: boolean;
  /** Free-form metadata. */
  metadata?: unknown;
}

/**
 * The chunk builders of one run id (see `chunk` and `createChunkBuilders`).
 *
 * @example
 * ```ts
 * import { createChunkBuilders, type ChunkBuilders } from 'rxagent/testing';
 * const builders: ChunkBuilders = createChunkBuilders('run-1');
 * builders.finish('length');
 * ```
 */
export interface ChunkBuilders {
  /** The run id every chunk carries. */
  readonly runId: string;
  /** A `start` chunk. */
  start(messageId?: string): AgentChunk<'start'>;
  /** A `step-start` chunk. */
  stepStart(stepNumber?: number): AgentChunk<'step-start'>;
  /** A `text-start` chunk. */
  textStart(id?: string): AgentChunk<'text-start'>;
  /** A `text-delta` chunk. */
  textDelta(text: string, id?: string): AgentChunk<'text-delta'>;
  /** A `text-end` chunk. */
  textEnd(id?: string): AgentChunk<'text-end'>;
  /** A `reasoning-start` chunk. */
  reasoningStart(id?: string): AgentChunk<'reasoning-start'>;
  /** A `reasoning-delta` chunk. */
  reasoningDelta(text: string, id?: string): AgentChunk<'reasoning-delta'>;
  /** A `reasoning-end` chunk. */
  reasoningEnd(id?: string): AgentChunk<'reasoning-end'>;
  /** A `tool-call` chunk. */
  toolCall(call: ToolCallInfo): AgentChunk<'tool-call'>;
  /** A `tool-result` chunk. */
  toolResult(result: ToolResultInit): AgentChunk<'tool-result'>;
  /** A `tool-error` chunk. */
  toolError(
  /** An `error` chunk. */
  error: {
    /** The id of the model's tool call. */
    toolCallId: string;
    /** The name of the tool. */
    toolName: string;
    /** An `error` chunk. */
    error: unknown;
    /** The tool call's arguments (parsed input). */
    args?: unknown;
  }): AgentChunk<'tool-error'>;
  /** A `step-finish` chunk. */
  stepFinish(init?: StepFinishInit): AgentChunk<'step-finish'>;
  /** A `finish` chunk (reason default `'stop'`). */
  finish(reason?: RxFinishReason, init?: {
    /** The text. */
    text?: string;
    /** Token usage. */
    usage?: LanguageModelUsage;
  }): AgentChunk<'finish'>;
  /** A `data-*` chunk. */
  data<TType extends `data-${string}`, TData>(
    type: TType,
    data: TData,
    options?: {
      /** Stream it, never store it. */
      transient?: boolean;
      /** The chunk's id. */
      id?: string;
    },
  ): DataChunkType<TType, TData>;
  /** A `tripwire` chunk. */
  tripwire(init: TripwireInit): AgentChunk<'tripwire'>;
  /** An `error` chunk. */
  error(error: unknown): AgentChunk<'error'>;
  /** An `abort` chunk. */
  abort(reason?: unknown): AgentChunk<'abort'>;
}

/**
 * Chunk builders stamping `runId` and `from: 'AGENT'` on every chunk.
 *
 * @example
 * ```ts
 * import { createChunkBuilders } from 'rxagent/testing';
 * const c = createChunkBuilders('run-42');
 * c.textDelta('hi'); // { type: 'text-delta', runId: 'run-42', from: 'AGENT', payload: { id: 'text-1', text: 'hi' } }
 * ```
 */
export function createChunkBuilders(runId: string = TEST_RUN_ID): ChunkBuilders {
  const make = <K extends AgentChunk['type']>(type: K, payload: AgentChunk<K>['payload']): AgentChunk<K> =>
    ({ type, runId, from: 'AGENT', payload }) as unknown as AgentChunk<K>;
  return {
    runId,
    start: (messageId) => make('start', messageId === undefined ? {} : { messageId }),
    stepStart: (stepNumber = 0) => make('step-start', { stepNumber }),
    textStart: (id = DEFAULT_TEXT_ID) => make('text-start', { id }),
    textDelta: (text, id = DEFAULT_TEXT_ID) => make('text-delta', { id, text }),
    textEnd: (id = DEFAULT_TEXT_ID) => make('text-end', { id }),
    reasoningStart: (id = DEFAULT_REASONING_ID) => make('reasoning-start', { id }),
    reasoningDelta: (text, id = DEFAULT_REASONING_ID) => make('reasoning-delta', { id, text }),
    reasoningEnd: (id = DEFAULT_REASONING_ID) => make('reasoning-end', { id }),
    toolCall: (call) => make('tool-call', { ...call }),
    toolResult: (result) => make('tool-result', { ...result }),
    toolError: (error) => make('tool-error', { ...error }),
    stepFinish: (init = {}) =>
      make('step-finish', {
        stepNumber: init.stepNumber ?? 0,
        ...(init.messageId === undefined ? {} : { messageId: init.messageId }),
        stepResult: { reason: init.reason ?? 'stop', isContinued: init.isContinued ?? false },
        output: { text: init.text ?? '', toolCalls: init.toolCalls ?? [], usage: init.usage ?? testUsage() },
      }),
    finish: (reason = 'stop', init = {}) =>
      make('finish', { stepResult: { reason }, output: { usage: init.usage ?? testUsage(), text: init.text ?? '' } }),
    data: (type, data, options = {}) => ({
      type,
      data,
      runId,
      from: 'AGENT',
      ...(options.transient === undefined ? {} : { transient: options.transient }),
      ...(options.id === undefined ? {} : { id: options.id }),
    }),
    tripwire: (init) =>
      make('tripwire', {
        reason: init.reason,
        ...(init.retry === undefined ? {} : { retry: init.retry }),
        ...(init.metadata === undefined ? {} : { metadata: init.metadata }),
        processorId: init.processorId,
      }),
    error: (error) => make('error', { error }),
    abort: (reason) => make('abort', reason === undefined ? {} : { reason }),
  };
}

/**
 * Chunk builders for tests (`runId: 'test-run'`, `from: 'AGENT'`).
 *
 * @example
 * ```ts
 * import { chunk } from 'rxagent/testing';
 * const parts = { s: chunk.start(), a: chunk.textDelta('hi'), f: chunk.finish() };
 * cold('s-a-(f|)', parts);
 * ```
 */
export const chunk: ChunkBuilders = createChunkBuilders();
