/**
 * A model call's events into rxagent chunks and step facts: `modelPartToChunk` converts content
 * (the one part → chunk conversion of rxagent), `withFact` folds what a step reports besides
 * content (`call-info`, `stream-start`, `response-metadata`, `finish`). An `error` part is an
 * error notification, so no raw per-attempt error chunk reaches processors or clients before
 * `processAPIError` was asked.
 */
import type { LanguageModelV4StreamPart, SharedV4ProviderMetadata } from '@ai-sdk/provider';
import type { CachedLLMStepChunk, ChunkType, RxFinishReason } from '../contract/chunk-types.js';
import type { LanguageModelUsage } from 'ai';
import type { MastraDBMessage } from '../message-list/types.js';
import { makeChunk } from '../contract/make-chunk.js';
import { MAX_PART_DEPTH, measureJson } from './checked-part.js';
import { ModelCallError } from './errors/model-call-error.js';
import { emptyUsage, fromV4Usage } from './usage.js';
import type { ModelEvent } from './model-events.js';

/**
 * What a step's model call reported besides content: the finish reason and usage of its `finish`
 * part, the warnings of `stream-start`, the response metadata, and the call's request/response
 * (`call-info`). The step-output kernel folds them with {@link withFact}.
 */
export interface StepFacts {
  readonly finishReason: RxFinishReason;
  readonly rawFinishReason: string | undefined;
  readonly usage: LanguageModelUsage;
  readonly warnings: unknown[];
  readonly providerMetadata: SharedV4ProviderMetadata | undefined;
  readonly response: { id?: string; modelId?: string; timestamp?: Date };
  /** Whether the call's `finish` arrived. */
  readonly finished: boolean;
  /** The request `doStream` reported (`call-info`). */
  readonly request: { url?: string; body?: unknown } | undefined;
  /** The raw response `doStream` reported (`call-info`: headers). */
  readonly rawResponse: { headers?: Record<string, string> } | undefined;
}

/** The facts of a step before its model call reported any. */
export function newStepFacts(usage: LanguageModelUsage = emptyUsage()): StepFacts {
  return {
    finishReason: 'other',
    rawFinishReason: undefined,
    usage,
    warnings: [],
    providerMetadata: undefined,
    response: {},
    finished: false,
    request: undefined,
    rawResponse: undefined,
  };
}

/** The finish reasons a step reports as the model gave them. */
const MODEL_FINISH_REASONS: ReadonlySet<string> = new Set<RxFinishReason>(['stop', 'length', 'content-filter', 'tool-calls', 'error', 'other']);

/**
 * A provider's unified finish reason as the step's: one rxagent knows as it is; `interrupted` and
 * any reason the spec does not name (a later spec version, a proxy's own) is `other` — the step
 * ends, as for `other`.
 */
function stepFinishReason(unified: unknown): RxFinishReason {
  return typeof unified === 'string' && MODEL_FINISH_REASONS.has(unified) ? (unified as RxFinishReason) : 'other';
}

/**
 * The response metadata of a `response-metadata` part (its defined fields only); a timestamp given
 * as a date string — what JSON carries, e.g. through a proxy — is a `Date` (as the AI SDK's gateway
 * does it).
 */
function responseOf(part: Extract<LanguageModelV4StreamPart, { type: 'response-metadata' }>): StepFacts['response'] {
  const timestamp: unknown = part.timestamp;
  return {
    ...(part.id === undefined ? {} : { id: part.id }),
    ...(part.modelId === undefined ? {} : { modelId: part.modelId }),
    ...(timestamp === undefined ? {} : { timestamp: typeof timestamp === 'string' ? new Date(timestamp) : (timestamp as Date) }),
  };
}

/**
 * `facts` after `event`: a new object for the events that carry facts (`call-info`,
 * `stream-start`, `response-metadata`, `finish`, a replayed `finish` or `tool-call`), `facts`
 * itself for every other event.
 */
export function withFact(facts: StepFacts, event: ModelEvent): StepFacts {
  switch (event.type) {
    case 'call-info':
      return { ...facts, request: event.request, rawResponse: event.response };
    case 'stream-start':
      return { ...facts, warnings: event.warnings };
    case 'response-metadata':
      return { ...facts, response: responseOf(event) };
    case 'finish':
      return {
        ...facts,
        finished: true,
        finishReason: stepFinishReason(event.finishReason.unified),
        rawFinishReason: event.finishReason.raw,
        usage: fromV4Usage(event.usage),
        providerMetadata: event.providerMetadata,
      };
    case 'replayed-chunk': {
      const { chunk } = event;
      if (chunk.type !== 'finish') return facts;
      const payload = (chunk.payload ?? {}) as { stepResult?: { reason?: RxFinishReason }; output?: { usage?: LanguageModelUsage } };
      return { ...facts, finished: true, finishReason: payload.stepResult?.reason ?? facts.finishReason, usage: payload.output?.usage ?? facts.usage };
    }
    default:
      return facts;
  }
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

/** Fresh tool call ids for a step; `usedBefore` lists the ids earlier steps and the history already use. */
export function newToolCallIds(usedBefore: () => Iterable<string> = () => []): ToolCallIds {
  return { used: undefined, usedBefore, current: undefined };
}

/**
 * A tool call's input as its arguments: the parsed JSON, `{}` for no input, or the text itself when
 * it is not JSON — or is JSON nested deeper than `MAX_PART_DEPTH` levels: with the chunk, the
 * message and the snapshot around them no consumer could encode such arguments; the tool's input
 * check refuses the text, as it refuses any input that is not JSON.
 */
function parseToolInput(input: string): unknown {
  if (input.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(input) as unknown;
  } catch {
    return input;
  }
  return measureJson(parsed).depth > MAX_PART_DEPTH ? input : parsed;
}

function fileData(part: Extract<LanguageModelV4StreamPart, { type: 'file' }>): string {
  const data = part.data;
  if (data.type === 'url') return String(data.url);
  return typeof data.data === 'string' ? data.data : Buffer.from(data.data).toString('base64');
}

/** Run-level and lifecycle chunk types a replayed response may hold but the step makes itself. */
const NOT_REPLAYED = new Set(['start', 'step-start', 'step-finish', 'finish', 'tripwire', 'error', 'abort']);

/** A chunk of a cached response as the step's own chunk (`null` for what the step makes itself). */
function replayedChunk(chunk: CachedLLMStepChunk, runId: string): ChunkType | null {
  if (NOT_REPLAYED.has(chunk.type)) return null;
  if (chunk.type.startsWith('data-')) return { type: chunk.type as `data-${string}`, data: chunk.data } as ChunkType;
  return { type: chunk.type, runId, from: 'AGENT', payload: chunk.payload } as ChunkType;
}

/**
 * The run's chunk for one model event: the one place where the provider's V4 parts (and a cached
 * response's chunks) become rxagent chunks. `null` for events that carry facts only (see
 * {@link withFact}) and parts rxagent does not surface; `ids` keeps tool call ids unique in the run.
 * Throws a `ModelCallError` on an `error` part.
 */
export function modelPartToChunk(part: ModelEvent, runId: string, ids: ToolCallIds): ChunkType | null {
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
        toolCallId: openCall(ids, part.id),
        toolName: part.toolName,
        ...(part.providerExecuted === undefined ? {} : { providerExecuted: part.providerExecuted }),
        ...(part.dynamic === undefined ? {} : { dynamic: part.dynamic }),
      });
    case 'tool-input-delta':
      // as for text: a delta that is not a string adds nothing to the streamed input
      return makeChunk(runId, 'tool-call-delta', { toolCallId: runToolCallId(ids, part.id), argsTextDelta: typeof part.delta === 'string' ? part.delta : '' });
    case 'tool-input-end':
      return makeChunk(runId, 'tool-call-input-streaming-end', { toolCallId: runToolCallId(ids, part.id) });
    case 'tool-call':
      return makeChunk(runId, 'tool-call', {
        toolCallId: callId(ids, part.toolCallId),
        toolName: part.toolName,
        args: parseToolInput(part.input),
        ...(part.providerExecuted === undefined ? {} : { providerExecuted: part.providerExecuted }),
        ...(part.providerMetadata ? { providerMetadata: part.providerMetadata } : {}),
        ...(part.dynamic === undefined ? {} : { dynamic: part.dynamic }),
      });
    case 'tool-result':
      return makeChunk(runId, 'tool-result', {
        toolCallId: runToolCallId(ids, part.toolCallId),
        toolName: part.toolName,
        result: part.result,
        providerExecuted: true,
        ...(part.isError === undefined ? {} : { isError: part.isError }),
        ...(part.providerMetadata ? { providerMetadata: part.providerMetadata } : {}),
      });
    case 'tool-approval-request':
      return makeChunk(runId, 'tool-call-approval', { toolCallId: runToolCallId(ids, part.toolCallId), toolName: '', approvalId: part.approvalId });
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
      return makeChunk(runId, 'response-metadata', responseOf(part));
    case 'replayed-chunk':
      return replayedChunk(part.chunk, runId);
    case 'raw':
      return makeChunk(runId, 'raw', { rawValue: part.rawValue });
    case 'error':
      throw new ModelCallError({ cause: part.error, source: 'stream-part' });
    default:
      return null; // ping, custom, reasoning-file: not surfaced
  }
}
