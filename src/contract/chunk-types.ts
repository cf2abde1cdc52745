/**
 * The stream's chunk union: `{ type, runId, from, payload }` as in the processor specification,
 * plus custom `data-*` chunks (`{ type: 'data-…', data, transient?, id? }`).
 */
import type { LanguageModelUsage, ProviderMetadata } from 'ai';
import type { ToolCallInfo, ToolResultInfo } from './tool-call-info.js';

export type { ToolCallInfo, ToolResultInfo } from './tool-call-info.js';

/** Who produced a chunk. rxagent's agent loop always says `'AGENT'`. */
export type ChunkFrom = 'AGENT' | 'USER' | 'SYSTEM' | 'WORKFLOW' | 'NETWORK';

/** Why a step or run finished: the model's reason, or rxagent's own `tripwire` / `retry`. */
export type RxFinishReason =
  | 'stop'
  | 'length'
  | 'content-filter'
  | 'tool-calls'
  | 'error'
  | 'other'
  | 'tripwire'
  | 'retry';

/** Payload of the terminal `tripwire` chunk (and of `result.tripwire`). */
export interface TripwirePayload<TMetadata = unknown> {
  /** Why the step or run ended (or was blocked). */
  reason: string;
  /** True when the processor asked for a retry (`abort(…, { retry: true })`). */
  retry?: boolean;
  /** What the processor passed as `metadata`. */
  metadata?: TMetadata;
  /** The processor that blocked the run. */
  processorId: string;
}

/** The payload of each agent chunk type, by `type`. */
export interface ChunkPayloads {
  /** The run started (first chunk of every run). */
  start: {
    /** The id of the assistant message this belongs to. */
    messageId?: string;
  };
  /** A step (one model call and its tools) started. */
  'step-start': {
    /** The step's number (0 for the first step of the run). */
    stepNumber: number;
    /** The id of the assistant message this belongs to. */
    messageId?: string;
    /** The request as sent to the provider. */
    request?: {
      /** The request body. */
      body?: unknown;
    };
    /** Warnings the provider reported. */
    warnings?: unknown[];
  };
  /** The provider's response metadata. */
  'response-metadata': {
    /** The id. */
    id?: string;
    /** The model's id at the provider. */
    modelId?: string;
    /** When the provider created the response. */
    timestamp?: Date;
  };
  /** A text part started. */
  'text-start': {
    /** The part's id (its start, deltas and end share it). */
    id: string;
    /** Provider-specific metadata, as the provider sent it. */
    providerMetadata?: ProviderMetadata;
  };
  /** A piece of text. */
  'text-delta': {
    /** The part's id (its start, deltas and end share it). */
    id: string;
    /** The text. */
    text: string;
    /** Provider-specific metadata, as the provider sent it. */
    providerMetadata?: ProviderMetadata;
  };
  /** A text part ended. */
  'text-end': {
    /** The part's id (its start, deltas and end share it). */
    id: string;
    /** Provider-specific metadata, as the provider sent it. */
    providerMetadata?: ProviderMetadata;
  };
  /** A reasoning part started. */
  'reasoning-start': {
    /** The part's id (its start, deltas and end share it). */
    id: string;
    /** The provider's signature of the reasoning (Anthropic). */
    signature?: string;
    /** Provider-specific metadata, as the provider sent it. */
    providerMetadata?: ProviderMetadata;
  };
  /** A piece of reasoning. */
  'reasoning-delta': {
    /** The part's id (its start, deltas and end share it). */
    id: string;
    /** The text. */
    text: string;
    /** Provider-specific metadata, as the provider sent it. */
    providerMetadata?: ProviderMetadata;
  };
  /** A reasoning part ended. */
  'reasoning-end': {
    /** The part's id (its start, deltas and end share it). */
    id: string;
    /** The provider's signature of the reasoning (Anthropic). */
    signature?: string;
    /** Provider-specific metadata, as the provider sent it. */
    providerMetadata?: ProviderMetadata;
  };
  /** The model started streaming a tool call's input. */
  'tool-call-input-streaming-start': {
    /** The id of the model's tool call. */
    toolCallId: string;
    /** The name of the tool. */
    toolName: string;
    /** True when the provider ran the tool itself (provider tools). */
    providerExecuted?: boolean;
    /** True for a dynamic tool (no static schema). */
    dynamic?: boolean;
  };
  /** A piece of a tool call's input (JSON text). */
  'tool-call-delta': {
    /** The id of the model's tool call. */
    toolCallId: string;
    /** The name of the tool. */
    toolName?: string;
    /** The next piece of the tool input's JSON text. */
    argsTextDelta: string;
  };
  /** A tool call's input is complete. */
  'tool-call-input-streaming-end': {
    /** The id of the model's tool call. */
    toolCallId: string;
  };
  /** The model called a tool. */
  'tool-call': {
    /** The id of the model's tool call. */
    toolCallId: string;
    /** The name of the tool. */
    toolName: string;
    /** The tool call's arguments (parsed input). */
    args: unknown;
    /** True when the provider ran the tool itself (provider tools). */
    providerExecuted?: boolean;
    /** Provider-specific metadata, as the provider sent it. */
    providerMetadata?: ProviderMetadata;
    /** True for a dynamic tool (no static schema). */
    dynamic?: boolean;
  };
  /** A tool's result (after `processToolResult`). */
  'tool-result': {
    /** The id of the model's tool call. */
    toolCallId: string;
    /** The name of the tool. */
    toolName: string;
    /** The tool's result (what the model gets). */
    result: unknown;
    /** The tool call's arguments (parsed input). */
    args?: unknown;
    /** True when the tool result is an error. */
    isError?: boolean;
    /** True when the provider ran the tool itself (provider tools). */
    providerExecuted?: boolean;
    /** Provider-specific metadata, as the provider sent it. */
    providerMetadata?: ProviderMetadata;
  };
  /** A tool failed (or its input was invalid): the model sees the error. */
  'tool-error': {
    /** The id of the model's tool call. */
    toolCallId: string;
    /** The name of the tool. */
    toolName: string;
    /** The tool call's arguments (parsed input). */
    args?: unknown;
    /** The run failed (terminal). */
    error: unknown;
    /** True when the provider ran the tool itself (provider tools). */
    providerExecuted?: boolean;
  };
  /** A tool call waits for approval. */
  'tool-call-approval': {
    /** The id of the model's tool call. */
    toolCallId: string;
    /** The name of the tool. */
    toolName: string;
    /** The id of the approval request. */
    approvalId: string;
    /** The tool call's arguments (parsed input). */
    args?: unknown;
  };
  /** A source the model cited. */
  source: {
    /** The id. */
    id: string;
    /** `'url'` for a web source, `'document'` for a document. */
    sourceType: 'url' | 'document';
    /** The source's URL. */
    url?: string;
    /** The title. */
    title?: string;
    /** The IANA media type. */
    mediaType?: string;
    /** The file name, if known. */
    filename?: string;
    /** Provider-specific metadata, as the provider sent it. */
    providerMetadata?: ProviderMetadata;
  };
  /** A file the model produced. */
  file: {
    /** The data. */
    data: string;
    /** The IANA media type. */
    mimeType: string;
    /** The file name, if known. */
    filename?: string;
    /** Provider-specific metadata, as the provider sent it. */
    providerMetadata?: ProviderMetadata;
  };
  /** A raw provider value (when raw chunks are asked for). */
  raw: {
    /** The provider's raw stream value, unparsed. */
    rawValue: unknown;
  };
  /** A step ended. */
  'step-finish': {
    /** The step's number (0 for the first step of the run). */
    stepNumber: number;
    /** The id of the assistant message this belongs to. */
    messageId?: string;
    /** How the step ended. */
    stepResult: {
      /** Why the step or run ended (or was blocked). */
      reason: RxFinishReason;
      /** The provider's own finish reason, as sent. */
      rawReason?: string;
      /** True when the run continues after this step (tool calls ran, or a retry). */
      isContinued: boolean;
      /** Warnings the provider reported. */
      warnings?: unknown[];
      /** Set on a step rejected by a processor (`reason: 'retry'` or `'tripwire'`). */
      tripwire?: TripwirePayload;
      /** Set on the marker a durable run's new owner writes (`reason: 'retry'`): the attempt died with its owner. */
      takeover?: {
        /** The new owner's epoch. */
        epoch: number;
      };
    };
    /** The step's output: its text, tool calls and usage. */
    output: {
      /** The text. */
      text: string;
      /** The tool calls made. */
      toolCalls: ToolCallInfo[];
      /** Token usage. */
      usage: LanguageModelUsage;
    };
    /** Provider-specific metadata, as the provider sent it. */
    providerMetadata?: ProviderMetadata;
    /** Response metadata (id, model, timestamp). */
    response?: {
      /** The id. */
      id?: string;
      /** The model's id at the provider. */
      modelId?: string;
      /** When the provider created the response. */
      timestamp?: Date;
    };
  };
  /** The run finished (terminal). */
  finish: {
    /** How the step ended. */
    stepResult: {
      /** Why the step or run ended (or was blocked). */
      reason: RxFinishReason;
      /** The provider's own finish reason, as sent. */
      rawReason?: string;
    };
    /** The run's result: usage of every step, the accepted text, the structured object if any. */
    output: {
      /** Token usage. */
      usage: LanguageModelUsage;
      /** The text. */
      text: string;
      /** The structured object so far (partial). */
      object?: unknown;
    };
    /** Provider-specific metadata, as the provider sent it. */
    providerMetadata?: ProviderMetadata;
  };
  /** The run failed (terminal). */
  /** The run failed (terminal). */
  error: {
    /** The error that ended the run (a provider's `APICallError`, a `ProcessorError`, …). */
    error: unknown;
  };
  /** The run was aborted by its signal (terminal). */
  abort: {
    /** Why the step or run ended (or was blocked). */
    reason?: unknown;
  };
  /** A processor blocked the run (terminal). */
  tripwire: TripwirePayload;
  /** The structured object so far (partial). */
  /** The structured object so far (partial). */
  object: {
    /** The object so far. */
    object: unknown;
  };
  /** The final, validated structured object. */
  'object-result': {
    /** The structured object so far (partial). */
    object: unknown;
  };
}

/** The `type` of an agent (non-data) chunk. */
export type AgentChunkKind = keyof ChunkPayloads;

/** One agent chunk of kind `K`: `{ type, runId, from, payload, metadata? }`. */
export type AgentChunk<K extends AgentChunkKind = AgentChunkKind> = K extends AgentChunkKind
  ? {
    /** The chunk's kind. */
    type: K;
    /** The id of the run this belongs to. */
    runId: string;
    /** Who produced the chunk (`'AGENT'` for the agent loop). */
    from: ChunkFrom;
    /** The chunk's fields (see {@link ChunkPayloads}). */
    payload: ChunkPayloads[K];
    /** What the processor passed as `metadata`. */
    metadata?: Record<string, unknown>;
  }
  : never;

/** A custom data chunk written with `writer.custom()`. */
export interface DataChunkType<TType extends `data-${string}` = `data-${string}`, TData = unknown> {
  /** The chunk's kind. */
  type: TType;
  /** The data. */
  data: TData;
  /** Stream it, never store it in memory. */
  transient?: boolean;
  /** Chunks with the same id update one another on the client. */
  id?: string;
  /** The id of the run this belongs to. */
  runId?: string;
  /** Who produced the chunk (`'AGENT'` for the agent loop). */
  from?: ChunkFrom;
}

/** Any chunk of an rxagent run's stream. */
export type ChunkType = AgentChunk | DataChunkType;

/** The chunk type with `type` `T` (agent or data). */
export type ChunkOfType<T extends ChunkType['type']> = T extends AgentChunkKind
  ? AgentChunk<T>
  : T extends `data-${string}`
    ? DataChunkType<T>
    : never;

/** The terminal chunk kinds: a run's stream ends with exactly one of them. */
export type TerminalChunk = AgentChunk<'finish' | 'tripwire' | 'error' | 'abort'>;

/** A compact cached chunk (`{ type, payload }`) as `processLLMResponse` receives and caches replay. */
export interface CachedLLMStepChunk {
  /** The chunk's kind. */
  type: string;
  /** The chunk's fields (see {@link ChunkPayloads}). */
  payload?: unknown;
  /** The data. */
  data?: unknown;
}
