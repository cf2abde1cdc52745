/**
 * State keys a `processOutputStream` hook can use to emit more than one chunk for one input.
 * The contract lets a hook return one chunk (or drop it); processors that hold text back
 * (batching, carry-over redaction, windowed guards) sometimes release several at once.
 */

/**
 * Chunks queued here (an array in the processor's `state`) are emitted right after the chunk the
 * hook returned, passing only the processors after this one.
 */
export const FOLLOW_UP_CHUNKS_KEY = 'rxagent.followUpChunks';

/**
 * The reference implementation's key: a chunk stashed here is re-driven through the whole chain
 * after the current one (kept for processors written for it).
 */
export const REPROCESS_PART_KEY = '__mastraReprocessPart';
