import type { DataChunkType } from './chunk-types.js';

/**
 * Puts custom `data-*` chunks into the run's stream, in stream order. The chunk's `type` must start
 * with `data-` (anything else is rejected with a clear error). `transient: true` streams it without
 * storing it in memory.
 *
 * @example
 * ```ts
 * await writer.custom({ type: 'data-moderation', data: { level: 'warn' }, transient: true });
 * ```
 */
export interface ProcessorStreamWriter {
  /** Writes a `data-*` chunk into the run's stream (stored with the reply unless `transient`). */
  custom(chunk: DataChunkType, options?: {
    /** The id of the assistant message this belongs to. */
    messageId?: string;
  }): Promise<void>;
}
