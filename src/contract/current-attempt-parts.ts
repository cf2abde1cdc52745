/** The chunks of the attempt being streamed, out of a processor's `streamParts`. */
import type { ChunkType } from './chunk-types.js';

/**
 * The part of a `processOutputStream` hook's `streamParts` that belongs to the model attempt being
 * streamed now: the chunks from its last `step-start` on (the current chunk included). `streamParts`
 * itself holds everything the processor saw in the run — earlier steps, and the parts of an attempt
 * a processor rejected with `abort(reason, { retry: true })` — so a guard that judges "the reply so
 * far" would otherwise judge the rejected text again on the retried attempt. Outside a run (a bare
 * operator fed chunks with no `step-start`) it is a copy of `streamParts`.
 *
 * @example
 * ```ts
 * import { currentAttemptParts, isTextDeltaChunk, type Processor } from 'rxagent';
 *
 * const maxLength: Processor = {
 *   id: 'max-length',
 *   processOutputStream: ({ part, streamParts, abort }) => {
 *     const text = currentAttemptParts(streamParts).filter(isTextDeltaChunk).map((chunk) => chunk.payload.text).join('');
 *     if (text.length > 500) abort('Keep it under 500 characters.', { retry: true });
 *     return part;
 *   },
 * };
 * ```
 */
export function currentAttemptParts(streamParts: readonly ChunkType[]): ChunkType[] {
  for (let index = streamParts.length - 1; index >= 0; index--) {
    if (streamParts[index]!.type === 'step-start') return streamParts.slice(index);
  }
  return streamParts.slice();
}
