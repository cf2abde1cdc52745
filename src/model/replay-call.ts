import { from, type Observable } from 'rxjs';
import type { CachedLLMStepResponse } from '../contract/processor-types.js';
import type { ModelEvent } from './model-events.js';
import { jsonProblem, shapeOf } from './checked-part.js';

/** How a payload field the step reads must be. */
type FieldRule = 'a string' | 'a non-empty string';

/**
 * The payload fields the step reads of a replayed chunk, by chunk type: ids bind the chunks of a
 * block or a call together, and memory stores the rest (it refuses an empty tool call id).
 */
const REPLAYED_FIELDS: Readonly<Record<string, ReadonlyArray<readonly [string, FieldRule]>>> = {
  'text-start': [['id', 'a string']],
  'text-delta': [['id', 'a string']],
  'text-end': [['id', 'a string']],
  'reasoning-start': [['id', 'a string']],
  'reasoning-delta': [['id', 'a string']],
  'reasoning-end': [['id', 'a string']],
  'tool-call': [
    ['toolCallId', 'a non-empty string'],
    ['toolName', 'a non-empty string'],
  ],
  'tool-call-input-streaming-start': [
    ['toolCallId', 'a non-empty string'],
    ['toolName', 'a string'],
  ],
  'tool-call-delta': [
    ['toolCallId', 'a non-empty string'],
    ['argsTextDelta', 'a string'],
  ],
  'tool-call-input-streaming-end': [['toolCallId', 'a non-empty string']],
  'tool-result': [
    ['toolCallId', 'a non-empty string'],
    ['toolName', 'a string'],
  ],
  'tool-error': [
    ['toolCallId', 'a non-empty string'],
    ['toolName', 'a string'],
  ],
  'tool-call-approval': [['toolCallId', 'a non-empty string']],
  file: [
    ['data', 'a string'],
    ['mimeType', 'a string'],
  ],
  source: [['id', 'a string']],
};

/**
 * Why a chunk's payload fields the step reads (ids binding a block or a call together, a tool's
 * name, a source's kind and URL) are missing or of the wrong type, as a path from the chunk and
 * what is wrong there, or `undefined` (also for a chunk type with no such fields). The first part
 * of {@link replayedChunkProblem}, without its JSON measure: cheap enough for every tool chunk a
 * processor hands the run.
 *
 * @example
 * ```ts
 * chunkFieldsProblem({ type: 'tool-call', payload: { toolCallId: 'c1', toolName: 42, args: {} } });
 * // '.payload.toolName is number 42, not a non-empty string'
 * ```
 */
export function chunkFieldsProblem(chunk: { readonly type: string; readonly payload?: unknown }): string | undefined {
  const { type, payload } = chunk;
  const rules = REPLAYED_FIELDS[type];
  if (rules === undefined) return undefined;
  if (!isRecord(payload)) return `.payload is ${shapeOf(payload)}, not an object (a ${type} chunk's fields)`;
  for (const [name, rule] of rules) {
    const value = payload[name];
    if (typeof value !== 'string' || (rule === 'a non-empty string' && value === '')) return `.payload.${name} is ${shapeOf(value)}, not ${rule}`;
  }
  if (type === 'source') {
    if (payload.sourceType === 'url') {
      if (typeof payload.url !== 'string') return `.payload.url is ${shapeOf(payload.url)}, not a string (a url source)`;
    } else if (payload.sourceType !== 'document') {
      return `.payload.sourceType is ${shapeOf(payload.sourceType)}, not 'url' or 'document'`;
    }
  }
  return undefined;
}

/** The finish reasons a cached step may give (the model's; `tripwire` and `retry` are the run's own). */
const CACHED_FINISH_REASONS: ReadonlySet<unknown> = new Set(['stop', 'length', 'content-filter', 'tool-calls', 'error', 'other']);

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Why a chunk `{ type, payload }` of a cached response cannot be replayed, as a path from the
 * chunk and what is wrong there (`.payload.toolCallId is an empty string, not a non-empty
 * string`), or `undefined`: a field the step reads (an id, a tool name, a source's `sourceType`
 * and URL, a `finish`'s reason) is missing or of the wrong type, or the chunk cannot be written as
 * JSON (it reaches the client and memory as it is). A store or processor that serves cached
 * responses can call it to treat such an entry as a miss; the run refuses it with the processor's
 * `ProcessorError`.
 *
 * @example
 * ```ts
 * replayedChunkProblem({ type: 'tool-call', payload: { toolCallId: '', toolName: 'weather', args: {} } });
 * // '.payload.toolCallId is an empty string, not a non-empty string'
 * ```
 */
export function replayedChunkProblem(chunk: { readonly type: string; readonly payload?: unknown }): string | undefined {
  const { type, payload } = chunk;
  const fields = chunkFieldsProblem(chunk);
  if (fields !== undefined) return fields;
  if (type === 'finish' && isRecord(payload) && isRecord(payload.stepResult)) {
    const reason = payload.stepResult.reason;
    if (reason !== undefined && !CACHED_FINISH_REASONS.has(reason)) {
      return `.payload.stepResult.reason is ${typeof reason === 'string' ? JSON.stringify(reason.slice(0, 40)) : shapeOf(reason)}, not a model's finish reason ('stop', 'length', 'content-filter', 'tool-calls', 'error', 'other')`;
    }
  }
  const problem = jsonProblem(chunk);
  return problem === undefined ? undefined : ` ${problem} (a cached chunk reaches the client and memory as it is)`;
}

/**
 * A cached response (`processLLMRequest` returned `{ response }`) as the model call it replaces:
 * `call-info` with the cached request and raw response, `stream-start` with its warnings, then its
 * chunks as `replayed-chunk` events — the step reads it exactly like a live call. A cached `finish`
 * gives the step its finish reason and usage; without one the reason is `tool-calls` when the
 * response calls a tool, else `stop`.
 *
 * ```
 * cached:  { chunks: [a, b] }
 * result:  (i s a b f|)        (i = call-info, s = stream-start, f = the finish it implies)
 * ```
 *
 * @example
 * ```ts
 * replayCall({ chunks: [{ type: 'text-delta', payload: { id: 't', text: 'cached' } }] }).subscribe(console.log);
 * ```
 */
export function replayCall(cached: CachedLLMStepResponse): Observable<ModelEvent> {
  const events: ModelEvent[] = [
    { type: 'call-info', request: cached.request as { body?: unknown } | undefined, response: cached.rawResponse as { headers?: Record<string, string> } | undefined },
    { type: 'stream-start', warnings: (cached.warnings ?? []) as Extract<ModelEvent, { type: 'stream-start' }>['warnings'] },
  ];
  let finished = false;
  let calls = false;
  for (const chunk of cached.chunks) {
    if (chunk.type === 'finish') finished = true;
    if (chunk.type === 'tool-call') calls = true;
    events.push({ type: 'replayed-chunk', chunk });
  }
  if (!finished) events.push({ type: 'replayed-chunk', chunk: { type: 'finish', payload: { stepResult: { reason: calls ? 'tool-calls' : 'stop' } } } });
  return from(events);
}
