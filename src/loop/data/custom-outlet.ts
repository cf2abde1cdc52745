import type { DataChunkType } from '../../contract/chunk-types.js';

/** Where the chunks waiting for an outlet are kept: the run's state (`RunState.customChunks`). */
export interface CustomChunksHolder {
  customChunks: DataChunkType[];
}

/**
 * Where `writer.custom()` chunks written outside `processOutputStream` (by tools and by the other
 * hooks) wait for the stream: delivered live while a phase listens (tool execution), buffered
 * otherwise and drained at the next phase boundary, so they keep their place in stream order. The
 * buffer is the run's state (`holder.customChunks`): the outlet reads and writes it.
 */
export class CustomOutlet {
  readonly #holder: CustomChunksHolder;
  #live: ((chunk: DataChunkType) => void) | undefined;

  constructor(holder: CustomChunksHolder = { customChunks: [] }) {
    this.#holder = holder;
  }

  push(chunk: DataChunkType): void {
    if (this.#live !== undefined) this.#live(chunk);
    else this.#holder.customChunks.push(chunk);
  }

  /** The buffered chunks, removed from the buffer. */
  drain(): DataChunkType[] {
    const holder = this.#holder;
    if (holder.customChunks.length === 0) return [];
    const drained = holder.customChunks;
    holder.customChunks = [];
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
