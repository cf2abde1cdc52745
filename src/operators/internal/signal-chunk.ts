/**
 * The chunk a sent signal shows as in the run's stream, so a UI can show it (the reference emits
 * the same): `data-signal` (`data-user-message` for a `'user'` signal), transient (streamed, never
 * stored), with the signal's id, type, tag, contents and creation time.
 */
import type { DataChunkType } from '../../contract/chunk-types.js';
import type { ProcessorSignal } from '../../contract/signal-types.js';

/** What a `data-signal` chunk carries. */
export interface SignalChunkData {
  /** The signal's id. */
  id: string;
  /** `'reactive'`, `'user'`, `'notification'` or `'state'`. */
  type: ProcessorSignal['type'];
  /** The XML tag of its turn (`system-reminder`, …). */
  tagName: string;
  /** Its text. */
  contents: string;
  /** When it was sent (ISO 8601). */
  createdAt: string;
  /** The tag's attributes, as sent. */
  attributes?: ProcessorSignal['attributes'];
  /** Metadata, as sent. */
  metadata?: Record<string, unknown>;
}

/**
 * The transient data chunk for `signal`.
 *
 * @example
 * ```ts
 * signalDataChunk(signal); // { type: 'data-signal', transient: true, data: { id, type: 'reactive', tagName: 'system-reminder', … } }
 * ```
 */
export function signalDataChunk(signal: ProcessorSignal): DataChunkType<'data-signal' | 'data-user-message', SignalChunkData> {
  return {
    type: signal.type === 'user' ? 'data-user-message' : 'data-signal',
    data: {
      id: signal.id,
      type: signal.type,
      tagName: signal.tagName,
      contents: signal.contents,
      createdAt: signal.createdAt.toISOString(),
      ...(signal.attributes === undefined ? {} : { attributes: signal.attributes }),
      ...(signal.metadata === undefined ? {} : { metadata: signal.metadata }),
    },
    transient: true,
  };
}
