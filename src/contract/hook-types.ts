/** The argument object and result of each of the nine hooks, as the processor specification lists them. */
import type { Observable } from 'rxjs';
import type { LanguageModelUsage, ProviderMetadata } from 'ai';
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4Prompt, SharedV4ProviderOptions } from '@ai-sdk/provider';
import type { MessageList } from '../message-list/message-list.js';
import type { CoreSystemMessage, MastraDBMessage } from '../message-list/types.js';
import type { CachedLLMStepChunk, ChunkType, RxFinishReason, ToolCallInfo } from './chunk-types.js';
import type { AgentToolChoice, AgentToolSet } from './tool-types.js';

import type { ModelInput, CallSettings, StructuredOutputOptions, StepResult, OutputResult, CachedLLMStepResponse, ProcessorContext } from './processor-context.js';

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
  /**
   * What the call is sent with besides the prompt and its abort signal (rxagent addition, e.g. for
   * cache keys): the tools as the provider gets them (after `activeTools`), the tool choice, the
   * provider options, the response format and the settings — as built after every
   * `processInputStep` and `prepareStep`; under `processorsMiddleware`, the call's options after the
   * input hooks. `processLLMRequest` changes only the prompt, so these are what is sent. Read-only:
   * a frozen copy of the top level (its values are the ones sent: do not change them in place).
   * Unset when the request was handed to the operator without them.
   *
   * @example
   * ```ts
   * const audit: Processor = { id: 'audit', processLLMRequest: ({ callOptions }) => void log(callOptions?.tools?.map((tool) => tool.name)) };
   * ```
   */
  callOptions?: Readonly<Omit<LanguageModelV4CallOptions, 'prompt' | 'abortSignal'>>;
}

/** What `processLLMRequest` may return. */
export type ProcessLLMRequestResult = {
  /** The prompt for this call only (never stored). */
  prompt?: LanguageModelV4Prompt;
  /**
   * A cached answer that replaces the model call. Only from the last processor that hooks
   * `processLLMRequest`: one after it could still change the request the answer was found for, so
   * the request then ends with a `ProcessorError` naming both (fail closed).
   */
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
  /**
   * The chunks this processor has seen so far in the run, including `part`. Read-only (a view of
   * the run's log): writing to it throws a `ProcessorError`; copy it with `slice()` for a list of
   * your own. Typed as an array so that it can be passed where one is read.
   */
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
