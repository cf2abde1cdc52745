import { from, type Observable } from 'rxjs';
import type { CachedLLMStepResponse } from '../contract/processor-types.js';
import type { ModelEvent } from './model-events.js';

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
