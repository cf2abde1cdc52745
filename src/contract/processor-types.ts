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
  /** The processor that saw the violation. */
  processorId: string;
  /** What happened. */
  message: string;
  /** Details of the violation (processor-specific). */
  detail?: unknown;
}

/** Any model rxagent accepts: an AI SDK `LanguageModelV1`/`V2`/`V3`/`V4` object or a `'provider/model'` id. */
export type ModelInput = LanguageModelV1 | LanguageModelV2 | LanguageModelV3 | LanguageModelV4 | string;

/** Call settings (temperature, maxOutputTokens, …) as the AI SDK names them. */
export interface CallSettings {
  /** At most this many output tokens. */
  maxOutputTokens?: number;
  /** Sampling temperature. */
  temperature?: number;
  /** Nucleus sampling. */
  topP?: number;
  /** Top-k sampling. */
  topK?: number;
  /** Presence penalty. */
  presencePenalty?: number;
  /** Frequency penalty. */
  frequencyPenalty?: number;
  /** Sequences that end the generation. */
  stopSequences?: string[];
  /** Sampling seed. */
  seed?: number;
  /** Transport retries for a failed call are not made by rxagent; use `processAPIError`. */
  maxRetries?: number;
  /** HTTP headers. */
  headers?: Record<string, string | undefined>;
}

/** Structured output configuration: a zod (or AI SDK) schema for the final object. */
export interface StructuredOutputOptions<TSchema = unknown> {
  /** The schema of the object (zod, or an AI SDK schema). */
  schema: TSchema;
  /** A second model that turns the text into the object (used by `StructuredOutputProcessor`). */
  model?: ModelInput;
  /** Instructions for the structuring model. */
  instructions?: string;
}

/** The result of one model step. */
export interface StepResult {
  /** The step's number (0 for the first step of the run). */
  stepNumber: number;
  /** The text (of this step, or of the run). */
  text: string;
  /** The step's reasoning text. */
  reasoningText?: string;
  /** The tool calls made. */
  toolCalls: ToolCallInfo[];
  /** The results of its tool calls. */
  toolResults: ToolResultInfo[];
  /** Why the model stopped. */
  finishReason: RxFinishReason;
  /** Token usage. */
  usage: LanguageModelUsage;
  /** Warnings the provider reported for the call. */
  warnings: unknown[];
  /** Provider-specific metadata, as the provider sent it. */
  providerMetadata?: ProviderMetadata;
  /** Set when a processor rejected this step (its text then counts as `''`). */
  tripwire?: TripwirePayload;
  /** The validated structured output of this step (with `structuredOutput`). */
  object?: unknown;
  /** A cached answer that replaces the model call. */
  response?: {
    /** The processor's id: names it in tripwires, errors and state. */
    id?: string;
    /** The model's id at the provider. */
    modelId?: string;
    /** When the provider created the response. */
    timestamp?: Date;
    /** The id of the assistant message this belongs to. */
    messageId?: string;
  };
}

/** What `processOutputResult` receives as `result`. */
export interface OutputResult {
  /** The text (of this step, or of the run). */
  text: string;
  /** Token usage. */
  usage: LanguageModelUsage;
  /** Why the model stopped. */
  finishReason: RxFinishReason;
  /** The steps so far, including this one. */
  steps: StepResult[];
  /** The structured output object. */
  object?: unknown;
}

/** A cached model response that replaces the model call (from `processLLMRequest`). */
export interface CachedLLMStepResponse {
  /** The step's chunks, compact (`{ type, payload }`). */
  chunks: CachedLLMStepChunk[];
  /** Warnings the provider reported for the call. */
  warnings?: unknown[];
  /** The request as sent (e.g. its body). */
  request?: unknown;
  /** The provider's raw response. */
  rawResponse?: unknown;
}

/** Fields every hook receives. */
export interface ProcessorContext<TTripwireMetadata = unknown> {
  /** `abort(reason?, { retry?, metadata? })`: throws a `TripWire` that ends the run (or retries the step); never returns. */
  abort: AbortFunction<TTripwireMetadata>;
  /** Processor-triggered retries so far in this run (0 first). */
  retryCount: number;
  /** Tracing of the run (spans of processor hooks). */
  tracingContext: TracingContext;
  /** The run's `RequestContext`. */
  requestContext: RequestContext;
  /** This processor's state for this run (rxagent passes it to every hook). */
  state: ProcessorState;
  /** Fires when the run is cancelled. */
  abortSignal: AbortSignal;
  /** Writes `data-*` chunks into the stream. */
  writer: ProcessorStreamWriter;
  /** The id of the run this belongs to. */
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
  /** The run's `MessageList`. */
  messageList: MessageList;
}

/** What `processInput` may return. */
export type ProcessInputResult =
  | MessageList
  | MastraDBMessage[]
  | {
    /** The messages (see the hook). */
    messages: MastraDBMessage[];
    /** The untagged system messages. */
    systemMessages: CoreSystemMessage[];
  };

/** Arguments of `processInputStep`. */
export interface ProcessInputStepArgs<TTripwireMetadata = unknown> extends ProcessorContext<TTripwireMetadata> {
  /** All messages, including earlier steps' tool calls and results (a snapshot). */
  messages: MastraDBMessage[];
  /** The run's `MessageList`. */
  messageList: MessageList;
  /** The step's number (0 for the first step of the run). */
  stepNumber: number;
  /** The steps so far, including this one. */
  steps: StepResult[];
  /** The untagged system messages (a snapshot; return `systemMessages` to replace them for this step). */
  systemMessages: CoreSystemMessage[];
  /** The model for this step (any model rxagent accepts). */
  model: LanguageModelV4;
  /** How the model may use tools. */
  toolChoice?: AgentToolChoice;
  /** The names of the tools the model may call (all when unset). */
  activeTools?: string[];
  /** The tools, by name. */
  tools?: AgentToolSet;
  /** Provider-specific options (by provider name). */
  providerOptions?: SharedV4ProviderOptions;
  /** Call settings (temperature, maxOutputTokens, …). */
  modelSettings?: CallSettings;
  /** Structured output: the zod schema of the object to produce. */
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
  /** The model for this step (any model rxagent accepts). */
  model?: ModelInput;
  /** How the model may use tools. */
  toolChoice?: AgentToolChoice;
  /** The names of the tools the model may call (all when unset). */
  activeTools?: string[];
  /** The tools, by name. */
  tools?: AgentToolSet;
  /** The messages (see the hook). */
  messages?: MastraDBMessage[];
  /** The run's `MessageList`. */
  messageList?: MessageList;
  /** The untagged system messages. */
  systemMessages?: CoreSystemMessage[];
  /** Provider-specific options (by provider name). */
  providerOptions?: SharedV4ProviderOptions;
  /** Call settings (temperature, maxOutputTokens, …). */
  modelSettings?: CallSettings;
  /** Structured output: the zod schema of the object to produce. */
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
  /** The model for this step (any model rxagent accepts). */
  model: LanguageModelV4;
  /** The step's number (0 for the first step of the run). */
  stepNumber: number;
  /** The steps so far, including this one. */
  steps: StepResult[];
  /** Read-only here: prompt rewrites never reach the list or storage. */
  messageList: MessageList;
  /** The step's model settings (rxagent addition, e.g. for cache keys). */
  modelSettings: CallSettings;
}

/** What `processLLMRequest` may return. */
export type ProcessLLMRequestResult = {
  /** The prompt for this call only (never stored). */
  prompt?: LanguageModelV4Prompt;
  /** A cached answer that replaces the model call. */
  response?: CachedLLMStepResponse;
} | undefined | void;

/** Arguments of `processLLMResponse`. */
export interface ProcessLLMResponseArgs<TTripwireMetadata = unknown> extends ProcessorContext<TTripwireMetadata> {
  /** The step's chunks, compact (`{ type, payload }`). */
  chunks: CachedLLMStepChunk[];
  /** The model for this step (any model rxagent accepts). */
  model: LanguageModelV4;
  /** The step's number (0 for the first step of the run). */
  stepNumber: number;
  /** All steps so far, including this one. */
  steps: StepResult[];
  /** True when the response was replayed from a `processLLMRequest` cache hit. */
  fromCache: boolean;
  /** Warnings the provider reported for the call. */
  warnings?: unknown[];
  /** The request as sent (e.g. its body). */
  request?: unknown;
  /** The provider's raw response. */
  rawResponse?: unknown;
}

/** What `processLLMResponse` returns (reserved). */
export type ProcessLLMResponseResult = undefined | void;

/** Arguments of `processAPIError`. */
export interface ProcessAPIErrorArgs<TTripwireMetadata = unknown> extends ProcessorContext<TTripwireMetadata> {
  /** The provider error (e.g. `APICallError`), as thrown or as the stream's `error` part carried it. */
  error: unknown;
  /** The messages (see the hook). */
  messages: MastraDBMessage[];
  /** The run's `MessageList`. */
  messageList: MessageList;
  /** The step's number (0 for the first step of the run). */
  stepNumber: number;
  /** The steps so far, including this one. */
  steps: StepResult[];
}

/** What `processAPIError` may return: `{ retry: true }` re-calls the model. */
export interface ProcessAPIErrorResult {
  /** `true` re-calls the model (within the run's retry budget). */
  retry: boolean;
}

/** Arguments of `processOutputStream`. */
export interface ProcessOutputStreamArgs<TTripwireMetadata = unknown> extends ProcessorContext<TTripwireMetadata> {
  /** The chunk being processed. */
  part: ChunkType;
  /** The chunks this processor has seen so far in the run, including `part`. */
  streamParts: ChunkType[];
  /** The run's `MessageList`. */
  messageList: MessageList;
}

/** Arguments of `processOutputStep`. */
export interface ProcessOutputStepArgs<TTripwireMetadata = unknown> extends ProcessorContext<TTripwireMetadata> {
  /** All messages, including the latest response. */
  messages: MastraDBMessage[];
  /** The run's `MessageList`. */
  messageList: MessageList;
  /** The step's number (0 for the first step of the run). */
  stepNumber: number;
  /** Why the model stopped. */
  finishReason: RxFinishReason;
  /** Provider-specific metadata, as the provider sent it. */
  providerMetadata?: ProviderMetadata;
  /** The tool calls made. */
  toolCalls: ToolCallInfo[];
  /** The text (of this step, or of the run). */
  text: string;
  /** Token usage. */
  usage: LanguageModelUsage;
  /** The untagged system messages. */
  systemMessages: CoreSystemMessage[];
  /** All steps so far, including this one. */
  steps: StepResult[];
}

/** Arguments of `processToolResult`. */
export interface ProcessToolResultArgs<TTripwireMetadata = unknown> extends ProcessorContext<TTripwireMetadata> {
  /** The messages (see the hook). */
  messages: MastraDBMessage[];
  /** The run's `MessageList`. */
  messageList: MessageList;
  /** The step's number (0 for the first step of the run). */
  stepNumber: number;
  /** The name of the tool. */
  toolName: string;
  /** The id of the model's tool call. */
  toolCallId: string;
  /** The tool call's arguments (parsed input). */
  args: unknown;
  /** The tool's result (or, in `processOutputResult`, the run's result). */
  result: unknown;
  /** True when the provider ran the tool itself (provider tools). */
  providerExecuted?: boolean;
  /** The untagged system messages. */
  systemMessages: CoreSystemMessage[];
  /** The steps so far, including this one. */
  steps: StepResult[];
}

/** Arguments of `processOutputResult`. */
export interface ProcessOutputResultArgs<TTripwireMetadata = unknown> extends ProcessorContext<TTripwireMetadata> {
  /** The run's response messages. */
  messages: MastraDBMessage[];
  /** The run's `MessageList`. */
  messageList: MessageList;
  /** The tool's result (or, in `processOutputResult`, the run's result). */
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
  /** The processor's id: names it in tripwires, errors and state. */
  readonly id: TId;
  /** A human-readable name. */
  readonly name?: string;
  /** What the processor does. */
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

  /** Once per run, before the first step: sees the new input (`messages`), the system messages and the list. Return the list, the messages to keep, `{ messages, systemMessages }` or nothing. `abort({ retry })` is a plain abort here. */
  processInput?(args: ProcessInputArgs<TTripwireMetadata>): HookReturn<ProcessInputResult | undefined | void>;
  /** Before every model attempt of every step: may change the step's model, tools, tool choice, messages, system messages, settings (return the fields to change). `abort({ retry })` is a plain abort here. */
  processInputStep?(
    args: ProcessInputStepArgs<TTripwireMetadata>,
  ): HookReturn<ProcessInputStepResult | MessageList | MastraDBMessage[] | undefined | void>;
  /** After the prompt is built, before the provider call: return `{ prompt }` to rewrite it for this call only, or `{ response }` to answer from a cache. `abort({ retry })` is a plain abort here. */
  processLLMRequest?(args: ProcessLLMRequestArgs<TTripwireMetadata>): HookReturn<ProcessLLMRequestResult>;
  /** After a step's stream ended and its message was built (`fromCache` for a cached answer). Returns nothing; `abort(…, { retry: true })` re-runs the step. */
  processLLMResponse?(args: ProcessLLMResponseArgs<TTripwireMetadata>): HookReturn<ProcessLLMResponseResult>;
  /** When the model call fails (thrown, or an `error` stream part): return `{ retry: true }` to call the model again (the first processor asking wins). */
  processAPIError?(args: ProcessAPIErrorArgs<TTripwireMetadata>): HookReturn<ProcessAPIErrorResult | undefined | void>;
  /** Each chunk of the model's stream, in order: return it, a rewritten chunk, or `null`/`undefined` to drop it (lifecycle chunks cannot be dropped). `abort(…, { retry: true })` re-runs the step. */
  processOutputStream?(args: ProcessOutputStreamArgs<TTripwireMetadata>): HookReturn<ChunkType | null | undefined>;
  /** After each step, before its tools run: sees the step's text, tool calls and finish reason. Return the list, messages or nothing (`[]` = no change); `abort(…, { retry: true })` re-runs the step. */
  processOutputStep?(args: ProcessOutputStepArgs<TTripwireMetadata>): ProcessorMessageResult;
  /** After each tool that succeeded, before its result is committed; change the result with `messageList.updateToolInvocation`. `abort(…, { retry: true })` re-runs the step. */
  processToolResult?(args: ProcessToolResultArgs<TTripwireMetadata>): ProcessorMessageResult;
  /** Once, when the run finished, before its `finish` chunk: sees the reply and the run's result. An abort here removes the reply (`text: ''`, nothing saved). */
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
