/**
 * Converts the provider's V4 stream parts into rxagent chunks. Parts that carry step facts rather
 * than content (`stream-start`, `response-metadata`, `finish`) update `facts` (response metadata is
 * also passed on); an `error` part becomes an error notification (so no raw per-attempt error chunk
 * reaches processors or clients before `processAPIError` was asked).
 */
import type { LanguageModelV4StreamPart, SharedV4ProviderMetadata } from '@ai-sdk/provider';
import type { ChunkType, RxFinishReason } from '../contract/chunk-types.js';
import type { LanguageModelUsage } from 'ai';
import type { MastraDBMessage } from '../message-list/types.js';
import { makeChunk } from '../contract/make-chunk.js';
import { ModelCallError } from './errors/model-call-error.js';
import { fromV4Usage } from './usage.js';

/** What a step's model stream reported besides content. */
export interface ModelStepFacts {
  finishReason: RxFinishReason;
  rawFinishReason: string | undefined;
  usage: LanguageModelUsage;
  warnings: unknown[];
  providerMetadata: SharedV4ProviderMetadata | undefined;
  response: { id?: string; modelId?: string; timestamp?: Date };
  /** Whether the model's `finish` part arrived. */
  finished: boolean;
  /** Tool call ids of this step (see {@link runToolCallId}). */
  toolCallIds: ToolCallIds;
}

/**
 * Keeps tool call ids unique within a run. A provider that repeats an id — twice in one step, or
 * one already used by an earlier step or the loaded history (some models number calls
 * `call_0`, `call_1`… afresh every step) — would otherwise make one call's result overwrite
 * another's, and leave a call without its result in the next prompt. A repeated id is renamed
 * (`call_0` → `call_0_2`) in every chunk of that call (input streaming, call, provider result,
 * approval), so the stream, the prompt and memory all see one result per call. The suffix uses only
 * `_` and digits: every provider accepts ids matching `^[a-zA-Z0-9_-]+$` (Anthropic's rule, the strictest).
 */
export interface ToolCallIds {
  /** Ids already taken in this run (computed on the first tool part of the step). */
  used: Set<string> | undefined;
  readonly usedBefore: () => Iterable<string>;
  /** Provider id → run id of the call currently using it in this step (made with the step's first tool call). */
  current: Map<string, { id: string; called: boolean }> | undefined;
}

function freshId(ids: ToolCallIds, providerId: string): string {
  ids.used ??= new Set(ids.usedBefore());
  let id = providerId;
  for (let suffix = 2; ids.used.has(id); suffix++) id = `${providerId}_${suffix}`;
  ids.used.add(id);
  return id;
}

/** The run's id for a call starting (`tool-input-start`, or a `tool-call` with no open input). */
function openCall(ids: ToolCallIds, providerId: string): string {
  const id = freshId(ids, providerId);
  (ids.current ??= new Map()).set(providerId, { id, called: false });
  return id;
}

/** The run's id of the call `providerId` currently names (for deltas, results, approvals). */
export function runToolCallId(ids: ToolCallIds, providerId: string): string {
  return ids.current?.get(providerId)?.id ?? providerId;
}

/** The run's id for a `tool-call` part: its streamed input's id, or a fresh one. */
function callId(ids: ToolCallIds, providerId: string): string {
  const open = ids.current?.get(providerId);
  if (open !== undefined && !open.called) {
    open.called = true;
    return open.id;
  }
  const id = freshId(ids, providerId);
  (ids.current ??= new Map()).set(providerId, { id, called: true });
  return id;
}

/**
 * The tool call ids in `messages` (a `MessageList` view), for {@link newStepFacts}.
 *
 * @example
 * ```ts
 * newStepFacts(emptyUsage(), () => toolCallIdsIn(messageList.get.all.db()));
 * ```
 */
export function* toolCallIdsIn(messages: readonly MastraDBMessage[]): Iterable<string> {
  for (const message of messages) {
    for (const part of message.content.parts) if (part.type === 'tool-invocation') yield part.toolInvocation.toolCallId;
  }
}

/** The error a provider reported in an `error` part, unwrapped (an `APICallError` stays one). */
export function unwrapStreamError(error: unknown): unknown {
  return ModelCallError.unwrap(error);
}

/** Fresh facts for a step; `usedToolCallIds` lists the ids earlier steps and the history already use. */
export function newStepFacts(usage: LanguageModelUsage, usedToolCallIds: () => Iterable<string> = () => []): ModelStepFacts {
  return {
    toolCallIds: { used: undefined, usedBefore: usedToolCallIds, current: undefined },
    finishReason: 'other',
    rawFinishReason: undefined,
    usage,
    warnings: [],
    providerMetadata: undefined,
    response: {},
    finished: false,
  };
}

function parseToolInput(input: string): unknown {
  if (input.trim() === '') return {};
  try {
    return JSON.parse(input) as unknown;
  } catch {
    return input;
  }
}

function fileData(part: Extract<LanguageModelV4StreamPart, { type: 'file' }>): string {
  const data = part.data;
  if (data.type === 'url') return data.url.toString();
  return typeof data.data === 'string' ? data.data : Buffer.from(data.data).toString('base64');
}

/** Converts one V4 part; `null` for parts that only update `facts`. Throws on an `error` part. */
export function modelPartToChunk(part: LanguageModelV4StreamPart, runId: string, facts: ModelStepFacts): ChunkType | null {
  switch (part.type) {
    // The per-token cases build each payload directly: one object, no spread of a temporary.
    case 'text-delta': {
      const text = typeof part.delta === 'string' ? part.delta : ''; // a malformed part never adds "undefined" to text
      return makeChunk(runId, 'text-delta', part.providerMetadata ? { id: part.id, text, providerMetadata: part.providerMetadata } : { id: part.id, text });
    }
    case 'text-start':
      return makeChunk(runId, 'text-start', part.providerMetadata ? { id: part.id, providerMetadata: part.providerMetadata } : { id: part.id });
    case 'text-end':
      return makeChunk(runId, 'text-end', part.providerMetadata ? { id: part.id, providerMetadata: part.providerMetadata } : { id: part.id });
    case 'reasoning-start':
      return makeChunk(runId, 'reasoning-start', part.providerMetadata ? { id: part.id, providerMetadata: part.providerMetadata } : { id: part.id });
    case 'reasoning-delta': {
      const text = typeof part.delta === 'string' ? part.delta : ''; // a malformed part never adds "undefined" to text
      return makeChunk(runId, 'reasoning-delta', part.providerMetadata ? { id: part.id, text, providerMetadata: part.providerMetadata } : { id: part.id, text });
    }
    case 'reasoning-end':
      return makeChunk(runId, 'reasoning-end', part.providerMetadata ? { id: part.id, providerMetadata: part.providerMetadata } : { id: part.id });
    case 'tool-input-start':
      return makeChunk(runId, 'tool-call-input-streaming-start', {
        toolCallId: openCall(facts.toolCallIds, part.id),
        toolName: part.toolName,
        ...(part.providerExecuted === undefined ? {} : { providerExecuted: part.providerExecuted }),
        ...(part.dynamic === undefined ? {} : { dynamic: part.dynamic }),
      });
    case 'tool-input-delta':
      return makeChunk(runId, 'tool-call-delta', { toolCallId: runToolCallId(facts.toolCallIds, part.id), argsTextDelta: part.delta });
    case 'tool-input-end':
      return makeChunk(runId, 'tool-call-input-streaming-end', { toolCallId: runToolCallId(facts.toolCallIds, part.id) });
    case 'tool-call':
      return makeChunk(runId, 'tool-call', {
        toolCallId: callId(facts.toolCallIds, part.toolCallId),
        toolName: part.toolName,
        args: parseToolInput(part.input),
        ...(part.providerExecuted === undefined ? {} : { providerExecuted: part.providerExecuted }),
        ...(part.providerMetadata ? { providerMetadata: part.providerMetadata } : {}),
        ...(part.dynamic === undefined ? {} : { dynamic: part.dynamic }),
      });
    case 'tool-result':
      return makeChunk(runId, 'tool-result', {
        toolCallId: runToolCallId(facts.toolCallIds, part.toolCallId),
        toolName: part.toolName,
        result: part.result,
        providerExecuted: true,
        ...(part.isError === undefined ? {} : { isError: part.isError }),
        ...(part.providerMetadata ? { providerMetadata: part.providerMetadata } : {}),
      });
    case 'tool-approval-request':
      return makeChunk(runId, 'tool-call-approval', { toolCallId: runToolCallId(facts.toolCallIds, part.toolCallId), toolName: '', approvalId: part.approvalId });
    case 'source':
      return part.sourceType === 'url'
        ? makeChunk(runId, 'source', { id: part.id, sourceType: 'url', url: part.url, ...(part.title === undefined ? {} : { title: part.title }) })
        : makeChunk(runId, 'source', {
            id: part.id,
            sourceType: 'document',
            title: part.title,
            mediaType: part.mediaType,
            ...(part.filename === undefined ? {} : { filename: part.filename }),
          });
    case 'file':
      return makeChunk(runId, 'file', { data: fileData(part), mimeType: part.mediaType });
    case 'response-metadata':
      facts.response = {
        ...(part.id === undefined ? {} : { id: part.id }),
        ...(part.modelId === undefined ? {} : { modelId: part.modelId }),
        ...(part.timestamp === undefined ? {} : { timestamp: part.timestamp }),
      };
      return makeChunk(runId, 'response-metadata', facts.response);
    case 'stream-start':
      facts.warnings = part.warnings;
      return null;
    case 'finish':
      facts.finished = true;
      facts.finishReason = part.finishReason.unified === 'interrupted' ? 'other' : part.finishReason.unified;
      facts.rawFinishReason = part.finishReason.raw;
      facts.usage = fromV4Usage(part.usage);
      facts.providerMetadata = part.providerMetadata;
      return null;
    case 'raw':
      return makeChunk(runId, 'raw', { rawValue: part.rawValue });
    case 'error':
      throw new ModelCallError({ cause: part.error, source: 'stream-part' });
    default:
      return null; // ping, custom, reasoning-file: not surfaced
  }
}
