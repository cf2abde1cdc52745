import type { DataChunkType } from '../../contract/chunk-types.js';

/**
 * Where `writer.custom()` chunks written outside `processOutputStream` (by tools and by the other
 * hooks) wait for the stream: delivered live while a phase listens (tool execution), buffered
 * otherwise and drained at the next phase boundary, so they keep their place in stream order.
 */
export class CustomOutlet {
  #buffer: DataChunkType[] = [];
  #live: ((chunk: DataChunkType) => void) | undefined;

  push(chunk: DataChunkType): void {
    if (this.#live !== undefined) this.#live(chunk);
    else this.#buffer.push(chunk);
  }

  /** The buffered chunks, left in the buffer (what a run snapshot keeps). */
  pending(): readonly DataChunkType[] {
    return this.#buffer;
  }

  /** The buffered chunks, removed from the buffer. */
  drain(): DataChunkType[] {
    if (this.#buffer.length === 0) return [];
    const drained = this.#buffer;
    this.#buffer = [];
    return drained;
  }

  /** Delivers chunks to `listener` until the returned function is called. */
  listen(listener: (chunk: DataChunkType) => void): () => void {
    for (const chunk of this.drain()) listener(chunk);
    this.#live = listener;
    return () => {
      if (this.#live === listener) this.#live = undefined;
    };
  }
}
