/**
 * More than one chunk out of one `processOutputStream` call, in order.
 *
 * The contract lets a hook return one chunk (or drop it). Processors that hold text back
 * (batching, carry-over redaction, windowed guards) must sometimes emit two chunks for one input:
 * the held text, then the part that made them release it (`text-end`, `finish`, a tool call…).
 * Their logic is written as "part in → ordered outputs"; {@link emitInOrder} returns the first
 * output and leaves the rest in the processor's `state` under {@link FOLLOW_UP_CHUNKS_KEY}.
 *
 * rxagent's `processOutputStream` drains that key right after the hook returns (emitting the
 * chunks after the returned one, through the processors after this one), which gives exact
 * "nothing lost, order kept" semantics. Under a runtime that does not drain it, nothing is lost
 * while more chunks follow: the next call emits the leftovers first and queues its own outputs
 * behind them (a one-chunk lag); only chunks still queued when the stream ends would wait.
 */
import { type ChunkType, FOLLOW_UP_CHUNKS_KEY, type ProcessorState } from '../../contract/index.js';

export { FOLLOW_UP_CHUNKS_KEY };

/** Removes and returns the chunks queued under {@link FOLLOW_UP_CHUNKS_KEY} (a draining runtime calls this). */
export function takeFollowUpChunks(state: ProcessorState): ChunkType[] {
  const queued = state[FOLLOW_UP_CHUNKS_KEY];
  if (!Array.isArray(queued) || queued.length === 0) return [];
  state[FOLLOW_UP_CHUNKS_KEY] = [];
  return queued as ChunkType[];
}

/**
 * Returns the first of `outputs` (after any leftovers a previous call queued and nobody drained)
 * and queues the rest under {@link FOLLOW_UP_CHUNKS_KEY}; `null` when there is nothing to emit.
 */
export function emitInOrder(state: ProcessorState, outputs: readonly ChunkType[]): ChunkType | null {
  const undrained = takeFollowUpChunks(state);
  const ordered = undrained.length === 0 ? outputs : [...undrained, ...outputs];
  const [first, ...rest] = ordered;
  if (rest.length > 0) state[FOLLOW_UP_CHUNKS_KEY] = rest;
  return first ?? null;
}
