/**
 * `release: 'accepted'` of `toUIMessageStream`: holds the UI chunks of every step until the run
 * finishes, so a client never receives a part the run may still reject. Pure and synchronous, one
 * instance per stream; it post-processes what `UIChunkEncoder` made of each rxagent chunk.
 */
import type { UIMessageChunk } from 'ai';
import { TRIPWIRE_PART_TYPE } from '../ui-data-types.js';

/**
 * Where the run stands after the chunk whose UI chunks are passed: still `open`, `finished` (a
 * `finish` chunk: nothing can reject its parts any more) or `rejected` (a tripwire, an error, an
 * abort: none of its parts was accepted).
 */
export type RunStanding = 'open' | 'finished' | 'rejected';

/** Sent at once in every standing: the message start and chunks that never become parts. */
function sentAtOnce(chunk: UIMessageChunk): boolean {
  return chunk.type === 'start' || ('transient' in chunk && chunk.transient === true);
}

/** What a rejected run still sends: the start, the tripwire notice and the terminal chunks. */
function sentWhenRejected(chunk: UIMessageChunk): boolean {
  return sentAtOnce(chunk) || chunk.type === TRIPWIRE_PART_TYPE || chunk.type === 'error' || chunk.type === 'finish' || chunk.type === 'abort';
}

/** Holds step chunks until the run finishes; drops them when it is rejected. */
export class AcceptedRelease {
  #held: UIMessageChunk[] = [];
  #closed = false;

  /** The UI chunks to send now, given one rxagent chunk's UI chunks and where the run stands after it. */
  pass(encoded: readonly UIMessageChunk[], standing: RunStanding): UIMessageChunk[] {
    if (this.#closed) return [];
    if (standing === 'finished') {
      this.#closed = true;
      const released = [...this.#held, ...encoded];
      this.#held = [];
      return released;
    }
    if (standing === 'rejected') {
      this.#closed = true;
      this.#held = [];
      return encoded.filter(sentWhenRejected);
    }
    const now: UIMessageChunk[] = [];
    for (const chunk of encoded) {
      if (sentAtOnce(chunk)) now.push(chunk);
      else if (chunk.type === 'reset-step') this.#resetStep();
      else this.#held.push(chunk);
    }
    return now;
  }

  /** What the client's `reset-step` does to a message, done to the held chunks: the rejected attempt goes. */
  #resetStep(): void {
    const stepStart = this.#held.findLastIndex((chunk) => chunk.type === 'start-step');
    this.#held.length = stepStart + 1;
  }
}
