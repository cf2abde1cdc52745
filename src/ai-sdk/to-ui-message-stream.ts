/** An rxagent run as an AI SDK 7 UI message stream (what `useChat` reads). */
import type { UIMessageChunk } from 'ai';
import type { Observable } from 'rxjs';
import { DemandGate, type ChunkType } from '../contract/index.js';
import { UIChunkEncoder, type UIChunkEncoderOptions } from './internal/ui-chunk-encoder.js';
import { AcceptedRelease, type RunStanding } from './internal/accepted-release.js';
import { observableToReadable } from './internal/streams.js';
import { optionError, pacedRunOf } from '../loop/index.js';

/**
 * Options of {@link toUIMessageStream}.
 *
 * @example
 * ```ts
 * import type { ToUIMessageStreamOptions } from 'rxagent/ai-sdk';
 * const options: ToUIMessageStreamOptions = { sendReasoning: false, release: 'accepted', onError: (error) => String(error) };
 * ```
 */
export interface ToUIMessageStreamOptions extends UIChunkEncoderOptions {
  /**
   * When the parts of a step reach the client. `'live'` (default): as the run streams them; a
   * tripwire removes only the current step (`reset-step`), so parts of earlier steps stay in the
   * client's message. `'accepted'`: `start` at once, every step's parts only when the run ends
   * with `finish` — a tripwire, an error or an abort sends none of them. Transient `data-*`
   * chunks (`data-rxagent-retry`, a tool's progress) are sent at once in both modes.
   */
  release?: 'live' | 'accepted';
  /**
   * The gate the run reads its provider by — the one given to `agent.stream$(input, { demand })` —
   * held while 16 UI chunks wait unread. Needed when operators stand between the run and this
   * stream (`agent.stream$(…).pipe(…)`); given `agent.stream$(…)` itself, the stream paces the run
   * with a gate of its own. An invalid `demand` is a `TypeError` thrown here.
   */
  demand?: DemandGate;
}

const RELEASE_MODES: ReadonlyArray<unknown> = ['live', 'accepted'];

function describeValue(value: unknown): string {
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  if (value === null) return 'null';
  return typeof value;
}

/**
 * Converts a run's chunks (`agent.stream$(…)`) into a `ReadableStream` of AI SDK 7 UI message
 * chunks, the protocol `useChat` and `readUIMessageStream` consume.
 *
 * The stream subscribes when it is created, and cancelling it (the client went away)
 * unsubscribes, which cancels the run (provider request, tools). Given `agent.stream$(…)` itself,
 * or any Observable of a run given a `demand` gate that is passed here too, it reads the run only
 * as fast as its reader pulls: while 16 UI chunks wait unread, the run stops reading the provider.
 * Mapping:
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
 * - With `release: 'accepted'`, the stream sends `start` (and transient `data-*` chunks) at once and
 *   holds everything else until the run ends: `finish` sends what was held, then `finish`; a
 *   tripwire, an error or an abort drops it and sends only its own chunks (`data-tripwire`,
 *   `error`, `finish` / `abort`), so the client's message holds no part of the rejected reply. A
 *   rejected retry attempt is dropped while held (no `reset-step`). Held chunks do not count
 *   against the 16-chunk bound: the run is read at its own pace and its reply kept until the end.
 *   An invalid `release` is a `TypeError` thrown here.
 *
 * @example
 * ```ts
 * import { readUIMessageStream } from 'ai';
 * import { map } from 'rxjs';
 * import { DemandGate } from 'rxagent';
 * import { toUIMessageStream } from 'rxagent/ai-sdk';
 * const stream = toUIMessageStream(agent.stream$('Where is order 123?'));
 * for await (const message of readUIMessageStream({ stream })) console.log(message.parts);
 *
 * // operators between the run and the stream: one gate, given to both
 * const demand = new DemandGate();
 * const redacted = toUIMessageStream(agent.stream$('Hi', { demand }).pipe(map(redact)), { demand });
 * ```
 */
export function toUIMessageStream(chunks$: Observable<ChunkType>, options: ToUIMessageStreamOptions = {}): ReadableStream<UIMessageChunk> {
  const { release = 'live', demand: given, ...encoderOptions } = options;
  if (!RELEASE_MODES.includes(release)) {
    throw optionError(`toUIMessageStream: options.release must be 'live' or 'accepted' (got ${describeValue(release)}).`);
  }
  if (given !== undefined && !DemandGate.isInstance(given)) {
    throw optionError(`toUIMessageStream: options.demand must be a DemandGate (got ${describeValue(given)}).`);
  }
  // the run itself (agent.stream$(…)) is subscribed with a gate made here, unless one was given
  let demand = given;
  let source$ = chunks$;
  const withDemand = given === undefined ? pacedRunOf(chunks$) : undefined;
  if (withDemand !== undefined) {
    demand = new DemandGate();
    source$ = withDemand(demand);
  }
  const encoder = new UIChunkEncoder(encoderOptions);
  const held = release === 'accepted' ? new AcceptedRelease() : undefined;
  const send = (encoded: UIMessageChunk[], standing: RunStanding): UIMessageChunk[] => (held === undefined ? encoded : held.pass(encoded, standing));
  let runId = 'run';
  return observableToReadable(source$, {
    ...(demand === undefined ? {} : { demand }),
    encode: (chunk) => {
      if (typeof chunk.runId === 'string') runId = chunk.runId;
      const encoded = encoder.encode(chunk);
      return send(encoded, !encoder.ended ? 'open' : chunk.type === 'finish' ? 'finished' : 'rejected');
    },
    onError: (error) => send(encoder.fail(error, runId), 'rejected'),
    onComplete: () => send(encoder.complete(), 'rejected'),
    done: () => encoder.ended,
  });
}
