/**
 * What every hook of the processor contract gets: the base context (`abort`, `state`, `retryCount`,
 * the writer, the request and tracing contexts…), and the run's shapes the hooks see (step results,
 * call settings, a cached response).
 */
import type { LanguageModelUsage, ProviderMetadata } from 'ai';
import type { LanguageModelV2, LanguageModelV3, LanguageModelV4 } from '@ai-sdk/provider';
import type { LanguageModelV1 } from './language-model-v1.js';
import type { CachedLLMStepChunk, RxFinishReason, ToolCallInfo, ToolResultInfo, TripwirePayload } from './chunk-types.js';
import type { TripWireOptions } from './errors/trip-wire.js';
import type { RequestContext } from './request-context.js';
import type { SendSignalFunction } from './signal-types.js';
import type { ProcessorStreamWriter } from './stream-writer.js';
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
