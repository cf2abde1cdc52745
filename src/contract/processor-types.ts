/**
 * The processor contract: the `Processor` interface with its nine optional hooks, each hook's
 * argument object and result, exactly as the processor specification lists them.
 *
 * rxagent fills every listed argument for real. Beyond the specification's lists, every hook also
 * receives `state`, `abortSignal`, `writer` and `runId` (the reference implementation leaves some
 * of them undefined in some hooks; rxagent never does).
 */
import type { Observable } from 'rxjs';
import type { LanguageModelUsage, ProviderMetadata } from 'ai';
import type {
  LanguageModelV2,
  LanguageModelV3,
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Prompt,
  SharedV4ProviderOptions,
} from '@ai-sdk/provider';
import type { MessageList } from '../message-list/message-list.js';
import type { LanguageModelV1 } from './language-model-v1.js';
import type { CoreSystemMessage, MastraDBMessage } from '../message-list/types.js';
import type { CachedLLMStepChunk, ChunkType, RxFinishReason, ToolCallInfo, ToolResultInfo, TripwirePayload } from './chunk-types.js';
import type { TripWireOptions } from './errors/trip-wire.js';
import type { RequestContext } from './request-context.js';
import type { SendSignalFunction } from './signal-types.js';
import type { ProcessorStreamWriter } from './stream-writer.js';
import type { AgentToolChoice, AgentToolSet } from './tool-types.js';
import type { TracingContext } from './tracing-context.js';

/** `abort(reason?, { retry?, metadata? })`: throws a `TripWire`; never returns. */
export type AbortFunction<TTripwireMetadata = unknown> = (
  reason?: string,
  options?: TripWireOptions<TTripwireMetadata>,
) => never;

/** Per-processor, per-run mutable state shared by all hooks of one processor in one run. */
export type ProcessorState = Record<string, unknown>;

/** What `onViolation` receives. */
export interface ProcessorViolation {
  processorId: string;
  message: string;
  detail?: unknown;
}

/** Any model rxagent accepts: an AI SDK `LanguageModelV1`/`V2`/`V3`/`V4` object or a `'provider/model'` id. */
export type ModelInput = LanguageModelV1 | LanguageModelV2 | LanguageModelV3 | LanguageModelV4 | string;

/** Call settings (temperature, maxOutputTokens, …) as the AI SDK names them. */
export interface CallSettings {
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  stopSequences?: string[];
  seed?: number;
  /** Transport retries for a failed call are not made by rxagent; use `processAPIError`. */
  maxRetries?: number;
  headers?: Record<string, string | undefined>;
}

/** Structured output configuration: a zod (or AI SDK) schema for the final object. */
export interface StructuredOutputOptions<TSchema = unknown> {
  schema: TSchema;
  /** A second model that turns the text into the object (used by `StructuredOutputProcessor`). */
  model?: ModelInput;
  instructions?: string;
}

/** The result of one model step. */
export interface StepResult {
  stepNumber: number;
  text: string;
  reasoningText?: string;
  toolCalls: ToolCallInfo[];
  toolResults: ToolResultInfo[];
  finishReason: RxFinishReason;
  usage: LanguageModelUsage;
  warnings: unknown[];
  providerMetadata?: ProviderMetadata;
  /** Set when a processor rejected this step (its text then counts as `''`). */
  tripwire?: TripwirePayload;
  /** The validated structured output of this step (with `structuredOutput`). */
  object?: unknown;
  response?: { id?: string; modelId?: string; timestamp?: Date; messageId?: string };
}

/** What `processOutputResult` receives as `result`. */
export interface OutputResult {
  text: string;
  usage: LanguageModelUsage;
  finishReason: RxFinishReason;
  steps: StepResult[];
  object?: unknown;
}

/** A cached model response that replaces the model call (from `processLLMRequest`). */
export interface CachedLLMStepResponse {
  chunks: CachedLLMStepChunk[];
  warnings?: unknown[];
  request?: unknown;
  rawResponse?: unknown;
}

/** Fields every hook receives. */
export interface ProcessorContext<TTripwireMetadata = unknown> {
  abort: AbortFunction<TTripwireMetadata>;
  /** Processor-triggered retries so far in this run (0 first). */
  retryCount: number;
  tracingContext: TracingContext;
  requestContext: RequestContext;
  /** This processor's state for this run (rxagent passes it to every hook). */
  state: ProcessorState;
  /** Fires when the run is cancelled. */
  abortSignal: AbortSignal;
  /** Writes `data-*` chunks into the stream. */
  writer: ProcessorStreamWriter;
  runId: string;
  /**
   * This processor's position in this run's list (input, output and error lists are numbered on
   * their own). Exact per run, even when one processor instance is shared by agents at different
   * positions (`this.processorIndex` is only the last value written).
   */
  processorIndex: number;
  /**
   * Sends a signal to the run's next model request: a user turn after the history (e.g.
   * `<system-reminder>continue</system-reminder>`), for that request only, never stored in memory.
   */
  sendSignal: SendSignalFunction;
}

/** Arguments of `processInput`. */
export interface ProcessInputArgs<TTripwireMetadata = unknown> extends ProcessorContext<TTripwireMetadata> {
  /** The run's new input messages (no system messages). */
  messages: MastraDBMessage[];
  /** The untagged system messages (agent instructions, user-provided ones). */
  systemMessages: CoreSystemMessage[];
  messageList: MessageList;
}

/** What `processInput` may return. */
export type ProcessInputResult =
  | MessageList
  | MastraDBMessage[]
  | { messages: MastraDBMessage[]; systemMessages: CoreSystemMessage[] };

/** Arguments of `processInputStep`. */
export interface ProcessInputStepArgs<TTripwireMetadata = unknown> extends ProcessorContext<TTripwireMetadata> {
  /** All messages, including earlier steps' tool calls and results (a snapshot). */
  messages: MastraDBMessage[];
  messageList: MessageList;
  stepNumber: number;
  steps: StepResult[];
  /** The untagged system messages (a snapshot; return `systemMessages` to replace them for this step). */
  systemMessages: CoreSystemMessage[];
  model: LanguageModelV4;
  toolChoice?: AgentToolChoice;
  activeTools?: string[];
  tools?: AgentToolSet;
  providerOptions?: SharedV4ProviderOptions;
  modelSettings?: CallSettings;
  structuredOutput?: StructuredOutputOptions;
  /**
   * `true` when this processor's `processLLMRequest` will run on this step's request: a processor
   * that trims the prompt can then leave the run's messages (and memory) alone here and trim only
   * the outgoing prompt there. `undefined` otherwise.
   */
  llmRequestStage?: true;
}

/** The object form of a `processInputStep` result: any of these replaces the step's value. */
export interface ProcessInputStepResult {
  model?: ModelInput;
  toolChoice?: AgentToolChoice;
  activeTools?: string[];
  tools?: AgentToolSet;
  messages?: MastraDBMessage[];
  messageList?: MessageList;
  systemMessages?: CoreSystemMessage[];
  providerOptions?: SharedV4ProviderOptions;
  modelSettings?: CallSettings;
  structuredOutput?: StructuredOutputOptions;
  /** Accepted for compatibility with the reference implementation; rxagent ignores it. */
  messageId?: string;
  /** Accepted for compatibility with the reference implementation; rxagent ignores it. */
  retryCount?: number;
}

/** Arguments of `processLLMRequest`. */
export interface ProcessLLMRequestArgs<TTripwireMetadata = unknown> extends ProcessorContext<TTripwireMetadata> {
  /** The prompt about to be sent (rewrites apply to this call only). */
  prompt: LanguageModelV4Prompt;
  model: LanguageModelV4;
  stepNumber: number;
  steps: StepResult[];
  /** Read-only here: prompt rewrites never reach the list or storage. */
  messageList: MessageList;
  /** The step's model settings (rxagent addition, e.g. for cache keys). */
  modelSettings: CallSettings;
}

/** What `processLLMRequest` may return. */
export type ProcessLLMRequestResult = { prompt?: LanguageModelV4Prompt; response?: CachedLLMStepResponse } | undefined | void;

/** Arguments of `processLLMResponse`. */
export interface ProcessLLMResponseArgs<TTripwireMetadata = unknown> extends ProcessorContext<TTripwireMetadata> {
  /** The step's chunks, compact (`{ type, payload }`). */
  chunks: CachedLLMStepChunk[];
  model: LanguageModelV4;
  stepNumber: number;
  /** All steps so far, including this one. */
  steps: StepResult[];
  /** True when the response was replayed from a `processLLMRequest` cache hit. */
  fromCache: boolean;
  warnings?: unknown[];
  request?: unknown;
  rawResponse?: unknown;
}

/** What `processLLMResponse` returns (reserved). */
export type ProcessLLMResponseResult = undefined | void;

/** Arguments of `processAPIError`. */
export interface ProcessAPIErrorArgs<TTripwireMetadata = unknown> extends ProcessorContext<TTripwireMetadata> {
  /** The provider error (e.g. `APICallError`), as thrown or as the stream's `error` part carried it. */
  error: unknown;
  messages: MastraDBMessage[];
  messageList: MessageList;
  stepNumber: number;
  steps: StepResult[];
}

/** What `processAPIError` may return: `{ retry: true }` re-calls the model. */
export interface ProcessAPIErrorResult {
  retry: boolean;
}

/** Arguments of `processOutputStream`. */
export interface ProcessOutputStreamArgs<TTripwireMetadata = unknown> extends ProcessorContext<TTripwireMetadata> {
  /** The chunk being processed. */
  part: ChunkType;
  /** The chunks this processor has seen so far in the run, including `part`. */
  streamParts: ChunkType[];
  messageList: MessageList;
}

/** Arguments of `processOutputStep`. */
export interface ProcessOutputStepArgs<TTripwireMetadata = unknown> extends ProcessorContext<TTripwireMetadata> {
  /** All messages, including the latest response. */
  messages: MastraDBMessage[];
  messageList: MessageList;
  stepNumber: number;
  finishReason: RxFinishReason;
  providerMetadata?: ProviderMetadata;
  toolCalls: ToolCallInfo[];
  text: string;
  usage: LanguageModelUsage;
  systemMessages: CoreSystemMessage[];
  /** All steps so far, including this one. */
  steps: StepResult[];
}

/** Arguments of `processToolResult`. */
export interface ProcessToolResultArgs<TTripwireMetadata = unknown> extends ProcessorContext<TTripwireMetadata> {
  messages: MastraDBMessage[];
  messageList: MessageList;
  stepNumber: number;
  toolName: string;
  toolCallId: string;
  args: unknown;
  result: unknown;
  providerExecuted?: boolean;
  systemMessages: CoreSystemMessage[];
  steps: StepResult[];
}

/** Arguments of `processOutputResult`. */
export interface ProcessOutputResultArgs<TTripwireMetadata = unknown> extends ProcessorContext<TTripwireMetadata> {
  /** The run's response messages. */
  messages: MastraDBMessage[];
  messageList: MessageList;
  result: OutputResult;
}

/**
 * What the message-phase hooks may return (sync or async): a promise, or an Observable whose first
 * value is the result (see {@link Processor}).
 */
export type ProcessorMessageResult =
  | Promise<MessageList | MastraDBMessage[] | undefined | void>
  | Observable<MessageList | MastraDBMessage[] | undefined | void>
  | MessageList
  | MastraDBMessage[]
  | undefined
  | void;

/**
 * A hook result: now, as a promise, or as an Observable whose first value it is (an Observable that
 * completes empty counts as `undefined`).
 *
 * @example
 * ```ts
 * import { of, delay } from 'rxjs';
 * import type { HookReturn, ProcessInputResult } from 'rxagent';
 * const later: HookReturn<ProcessInputResult | undefined> = of(undefined).pipe(delay(10));
 * ```
 */
export type HookReturn<T> = T | Promise<T> | Observable<T>;

/**
 * A processor: an object with an `id` and any of the nine hooks. A class instance or a plain
 * object literal both work.
 *
 * A hook returns its result, a promise of it, or an RxJS `Observable` (or interop observable) of it:
 * the Observable's first value is the result (it is unsubscribed then; completing without a value
 * counts as returning `undefined`), its error is a throw. An Observable is timed by its own
 * scheduler, so a `delay` inside it runs on a `TestScheduler`'s virtual time in marble tests.
 * Arrays keep their meaning (messages), never "values of an Observable".
 *
 * @example
 * ```ts
 * import { delay, of } from 'rxjs';
 * import type { Processor } from 'rxagent';
 * export const shout: Processor<'shout'> = {
 *   id: 'shout',
 *   processOutputStream: ({ part }) =>
 *     part.type === 'text-delta' ? { ...part, payload: { ...part.payload, text: part.payload.text.toUpperCase() } } : part,
 * };
 * // an Observable result: each part half a second later (virtual time under a TestScheduler)
 * export const slow: Processor<'slow'> = { id: 'slow', processOutputStream: ({ part }) => of(part).pipe(delay(500)) };
 * ```
 */
export interface Processor<TId extends string = string, TTripwireMetadata = unknown> {
  readonly id: TId;
  readonly name?: string;
  readonly description?: string;
  /** Position in the merged processor list of the run (set by rxagent). */
  processorIndex?: number;
  /** When true, `processOutputStream` also receives `data-*` chunks. Default false. */
  processDataParts?: boolean;
  /**
   * Called on every violation (abort, or a built-in's warn strategy); its throws are swallowed.
   * `undefined` is accepted (a class may declare the field and leave it unset).
   */
  onViolation?: ((violation: ProcessorViolation) => void | Promise<void>) | undefined;

  processInput?(args: ProcessInputArgs<TTripwireMetadata>): HookReturn<ProcessInputResult | undefined | void>;
  processInputStep?(
    args: ProcessInputStepArgs<TTripwireMetadata>,
  ): HookReturn<ProcessInputStepResult | MessageList | MastraDBMessage[] | undefined | void>;
  processLLMRequest?(args: ProcessLLMRequestArgs<TTripwireMetadata>): HookReturn<ProcessLLMRequestResult>;
  processLLMResponse?(args: ProcessLLMResponseArgs<TTripwireMetadata>): HookReturn<ProcessLLMResponseResult>;
  processAPIError?(args: ProcessAPIErrorArgs<TTripwireMetadata>): HookReturn<ProcessAPIErrorResult | undefined | void>;
  processOutputStream?(args: ProcessOutputStreamArgs<TTripwireMetadata>): HookReturn<ChunkType | null | undefined>;
  processOutputStep?(args: ProcessOutputStepArgs<TTripwireMetadata>): ProcessorMessageResult;
  processToolResult?(args: ProcessToolResultArgs<TTripwireMetadata>): ProcessorMessageResult;
  processOutputResult?(args: ProcessOutputResultArgs<TTripwireMetadata>): ProcessorMessageResult;
}

type WithHook<K extends keyof Processor> = Processor & Required<Pick<Processor, K>>;

/**
 * A processor with at least one input-side hook: `processInput`, `processInputStep`,
 * `processLLMRequest` or `processLLMResponse`.
 *
 * @example
 * ```ts
 * import type { InputProcessor } from 'rxagent';
 * const trim: InputProcessor = { id: 'trim', processInput: ({ messages }) => messages };
 * ```
 */
export type InputProcessor =
  | WithHook<'processInput'>
  | WithHook<'processInputStep'>
  | WithHook<'processLLMRequest'>
  | WithHook<'processLLMResponse'>;

/**
 * A processor with at least one output-side hook: `processOutputStream`, `processOutputStep`,
 * `processOutputResult` or `processToolResult`.
 *
 * @example
 * ```ts
 * import type { OutputProcessor } from 'rxagent';
 * const pass: OutputProcessor = { id: 'pass', processOutputStream: ({ part }) => part };
 * ```
 */
export type OutputProcessor =
  | WithHook<'processOutputStream'>
  | WithHook<'processOutputStep'>
  | WithHook<'processOutputResult'>
  | WithHook<'processToolResult'>;

/**
 * A processor with `processAPIError`.
 *
 * @example
 * ```ts
 * import type { ErrorProcessor } from 'rxagent';
 * const retryOnce: ErrorProcessor = { id: 'retry-once', processAPIError: ({ retryCount }) => ({ retry: retryCount === 0 }) };
 * ```
 */
export type ErrorProcessor = WithHook<'processAPIError'>;

/** The call options rxagent builds for the provider (AI SDK `LanguageModelV4CallOptions`). */
export type ModelCallOptions = LanguageModelV4CallOptions;
