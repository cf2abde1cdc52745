/**
 * The stream's chunk union: `{ type, runId, from, payload }` as in the processor specification,
 * plus custom `data-*` chunks (`{ type: 'data-…', data, transient?, id? }`).
 */
import type { LanguageModelUsage, ProviderMetadata } from 'ai';

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
  reason: string;
  retry?: boolean;
  metadata?: TMetadata;
  processorId: string;
}

/** A tool call as steps and hooks report it. */
export interface ToolCallInfo {
  toolCallId: string;
  toolName: string;
  args: unknown;
  providerExecuted?: boolean;
}

/** A tool result as steps report it. */
export interface ToolResultInfo {
  toolCallId: string;
  toolName: string;
  args: unknown;
  result: unknown;
  isError?: boolean;
  providerExecuted?: boolean;
}

/** The payload of each agent chunk type, by `type`. */
export interface ChunkPayloads {
  start: { messageId?: string };
  'step-start': { stepNumber: number; messageId?: string; request?: { body?: unknown }; warnings?: unknown[] };
  'response-metadata': { id?: string; modelId?: string; timestamp?: Date };
  'text-start': { id: string; providerMetadata?: ProviderMetadata };
  'text-delta': { id: string; text: string; providerMetadata?: ProviderMetadata };
  'text-end': { id: string; providerMetadata?: ProviderMetadata };
  'reasoning-start': { id: string; signature?: string; providerMetadata?: ProviderMetadata };
  'reasoning-delta': { id: string; text: string; providerMetadata?: ProviderMetadata };
  'reasoning-end': { id: string; signature?: string; providerMetadata?: ProviderMetadata };
  'tool-call-input-streaming-start': {
    toolCallId: string;
    toolName: string;
    providerExecuted?: boolean;
    dynamic?: boolean;
  };
  'tool-call-delta': { toolCallId: string; toolName?: string; argsTextDelta: string };
  'tool-call-input-streaming-end': { toolCallId: string };
  'tool-call': {
    toolCallId: string;
    toolName: string;
    args: unknown;
    providerExecuted?: boolean;
    providerMetadata?: ProviderMetadata;
    dynamic?: boolean;
  };
  'tool-result': {
    toolCallId: string;
    toolName: string;
    result: unknown;
    args?: unknown;
    isError?: boolean;
    providerExecuted?: boolean;
    providerMetadata?: ProviderMetadata;
  };
  'tool-error': { toolCallId: string; toolName: string; args?: unknown; error: unknown; providerExecuted?: boolean };
  'tool-call-approval': { toolCallId: string; toolName: string; approvalId: string; args?: unknown };
  source: {
    id: string;
    sourceType: 'url' | 'document';
    url?: string;
    title?: string;
    mediaType?: string;
    filename?: string;
    providerMetadata?: ProviderMetadata;
  };
  file: { data: string; mimeType: string; filename?: string; providerMetadata?: ProviderMetadata };
  raw: { rawValue: unknown };
  'step-finish': {
    stepNumber: number;
    messageId?: string;
    stepResult: {
      reason: RxFinishReason;
      rawReason?: string;
      isContinued: boolean;
      warnings?: unknown[];
      /** Set on a step rejected by a processor (`reason: 'retry'` or `'tripwire'`). */
      tripwire?: TripwirePayload;
      /** Set on the marker a durable run's new owner writes (`reason: 'retry'`): the attempt died with its owner. */
      takeover?: { epoch: number };
    };
    output: { text: string; toolCalls: ToolCallInfo[]; usage: LanguageModelUsage };
    providerMetadata?: ProviderMetadata;
    response?: { id?: string; modelId?: string; timestamp?: Date };
  };
  finish: {
    stepResult: { reason: RxFinishReason; rawReason?: string };
    /** The run's result: usage of every step, the accepted text, the structured object if any. */
    output: { usage: LanguageModelUsage; text: string; object?: unknown };
    providerMetadata?: ProviderMetadata;
  };
  error: { error: unknown };
  abort: { reason?: unknown };
  tripwire: TripwirePayload;
  object: { object: unknown };
  'object-result': { object: unknown };
}

/** The `type` of an agent (non-data) chunk. */
export type AgentChunkKind = keyof ChunkPayloads;

/** One agent chunk of kind `K`: `{ type, runId, from, payload, metadata? }`. */
export type AgentChunk<K extends AgentChunkKind = AgentChunkKind> = K extends AgentChunkKind
  ? { type: K; runId: string; from: ChunkFrom; payload: ChunkPayloads[K]; metadata?: Record<string, unknown> }
  : never;

/** A custom data chunk written with `writer.custom()`. */
export interface DataChunkType<TType extends `data-${string}` = `data-${string}`, TData = unknown> {
  type: TType;
  data: TData;
  /** Stream it, never store it in memory. */
  transient?: boolean;
  /** Chunks with the same id update one another on the client. */
  id?: string;
  runId?: string;
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
  type: string;
  payload?: unknown;
  data?: unknown;
}
