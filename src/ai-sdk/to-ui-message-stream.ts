/** An rxagent run as an AI SDK 7 UI message stream (what `useChat` reads). */
import type { UIMessageChunk } from 'ai';
import type { Observable } from 'rxjs';
import type { ChunkType } from '../processor/chunk-types.js';
import { UIChunkEncoder, type UIChunkEncoderOptions } from './internal/ui-chunk-encoder.js';
import { observableToReadable } from './internal/streams.js';
import { pacedRunOf } from '../loop/paced-run.js';

/**
 * Options of {@link toUIMessageStream}.
 *
 * @example
 * ```ts
 * import type { ToUIMessageStreamOptions } from 'rxagent/ai-sdk';
 * const options: ToUIMessageStreamOptions = { sendReasoning: false, onError: (error) => String(error) };
 * ```
 */
export type ToUIMessageStreamOptions = UIChunkEncoderOptions;

/**
 * Converts a run's chunks (`agent.stream$(…)`) into a `ReadableStream` of AI SDK 7 UI message
 * chunks, the protocol `useChat` and `readUIMessageStream` consume.
 *
 * The stream subscribes when it is created, and cancelling it (the client went away)
 * unsubscribes, which cancels the run (provider request, tools). Given `agent.stream$(…)` itself
 * (not a piped copy), it reads the run only as fast as its reader pulls: while 16 UI chunks wait
 * unread, the run stops reading the provider. Mapping:
 * `start` → `start`; `step-start`/`step-finish` → `start-step`/`finish-step`; text, reasoning,
 * tool input (streamed and complete), tool output (result / error), sources and files → their
 * UI chunks; `data-*` chunks pass with their `id` (the client merges parts with the same id) and
 * `transient` flag; `finish` → `finish` with the finish reason.
 *
 * - A **tripwire** (chunk, or a `TripWire` error notification) closes the open step, then sends a
 *   `data-tripwire` part `{ reason, retry, metadata, processorId }`, an `error` chunk (see
 *   `tripwireError`) and `finish` with `finishReason: 'other'`.
 * - A **rejected retry attempt** (`step-finish` with `stepResult.reason: 'retry'`) sends
 *   `reset-step` — the client removes every part of the attempt — and a transient
 *   `data-rxagent-retry` part naming the discarded part ids; the retried attempt continues the
 *   same step (no second `start-step`), so the finished message holds only what was accepted.
 * - An `error` chunk (or error notification) → `error` (text from `onError`) and `finish` with
 *   `finishReason: 'error'`; `abort` → `abort`.
 *
 * @example
 * ```ts
 * import { readUIMessageStream } from 'ai';
 * import { toUIMessageStream } from 'rxagent/ai-sdk';
 * const stream = toUIMessageStream(agent.stream$('Where is order 123?'));
 * for await (const message of readUIMessageStream({ stream })) console.log(message.parts);
 * ```
 */
export function toUIMessageStream(chunks$: Observable<ChunkType>, options: ToUIMessageStreamOptions = {}): ReadableStream<UIMessageChunk> {
  const encoder = new UIChunkEncoder(options);
  let runId = 'run';
  const paced = pacedRunOf(chunks$);
  return observableToReadable(chunks$, {
    ...(paced === undefined ? {} : { paced }),
    encode: (chunk) => {
      if (typeof chunk.runId === 'string') runId = chunk.runId;
      return encoder.encode(chunk);
    },
    onError: (error) => encoder.fail(error, runId),
    done: () => encoder.ended,
  });
}
