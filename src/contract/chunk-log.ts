/**
 * A run's chunks kept in order, compactly until someone needs them as objects.
 *
 * Two logs live as long as a run: the `streamParts` of the `processOutputStream` chain (every part
 * that entered it, never reset) and the output's replay buffer (late readers, the folded result).
 * Most of their entries are plain text deltas, `{ type: 'text-delta', runId, from, payload: { id,
 * text } }`. A plain delta is kept here as its text alone (one
 * reference), its `runId`, `from` and `id` once per run of equal values; any other chunk, and the
 * latest one, is kept as the object itself. {@link ChunkLog.toArray} makes the real array on first use (equal objects for
 * the compacted deltas, the same objects for everything else) and the log then appends to that very
 * array, so a holder of the array sees it grow as before.
 */
import type { ChunkFrom, ChunkType } from './chunk-types.js';

type TextDelta = Extract<ChunkType, { type: 'text-delta' }>;

/** The `runId`, `from` and `id` shared by consecutive compacted deltas. */
interface Segment {
  /** Index of the segment's first entry. */
  readonly start: number;
  readonly runId: string;
  readonly from: ChunkFrom;
  readonly id: string;
}

/** The own enumerable keys, in order, of a chunk and of a payload that compact losslessly. */
const CHUNK_KEYS = ['type', 'runId', 'from', 'payload'] as const;
const PAYLOAD_KEYS = ['id', 'text'] as const;

/** Whether `value` is a plain object with exactly `keys` (own, enumerable, in that order). */
function hasExactly(value: object, keys: readonly string[]): boolean {
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  let index = 0;
  for (const key in value) {
    if (key !== keys[index]) return false;
    index++;
  }
  return index === keys.length;
}

/** The text of a chunk that is exactly a plain text delta (see the module comment), else undefined. */
function plainDeltaText(chunk: ChunkType): string | undefined {
  if (chunk.type !== 'text-delta') return undefined;
  const delta = chunk as TextDelta;
  const payload = delta.payload as unknown;
  if (typeof payload !== 'object' || payload === null) return undefined;
  const { text, id } = payload as { text?: unknown; id?: unknown };
  if (typeof text !== 'string' || typeof id !== 'string' || typeof delta.runId !== 'string' || typeof delta.from !== 'string') return undefined;
  return hasExactly(chunk, CHUNK_KEYS) && hasExactly(payload, PAYLOAD_KEYS) ? text : undefined;
}

/** Chunks in order (see the module comment). Not a public API. */
export class ChunkLog {
  /** A string is a compacted text delta (its text), anything else the chunk itself. */
  #entries: Array<ChunkType | string> = [];
  /** The segments of the compacted deltas, in entry order (made with the first one). */
  #segments: Segment[] | undefined;
  /** The real array, once made: from then on the only store. */
  #array: ChunkType[] | undefined;

  /** How many chunks are logged. */
  get length(): number {
    return (this.#array ?? this.#entries).length;
  }

  /**
   * Appends `chunk`. It is kept as it is until the next append, which compacts it if it is (then
   * still) a plain text delta: a hook that edits the part it is given in place, during that part's
   * pass, is seen in the log as before.
   */
  push(chunk: ChunkType): void {
    const array = this.#array;
    if (array !== undefined) {
      array.push(chunk);
      return;
    }
    const entries = this.#entries;
    const previous = entries.length - 1;
    if (previous >= 0) {
      const prior = entries[previous] as ChunkType | string;
      if (typeof prior !== 'string') this.#compact(previous, prior);
    }
    entries.push(chunk);
  }

  /** Stores entry `index` (`chunk`) as its text when it is a plain text delta. */
  #compact(index: number, chunk: ChunkType): void {
    const text = plainDeltaText(chunk);
    if (text === undefined) return;
    const delta = chunk as TextDelta;
    const id = delta.payload.id;
    const segments = this.#segments;
    const last = segments?.[segments.length - 1];
    if (last === undefined || last.runId !== delta.runId || last.from !== delta.from || last.id !== id) {
      const segment: Segment = { start: index, runId: delta.runId, from: delta.from, id };
      if (segments === undefined) this.#segments = [segment];
      else segments.push(segment);
    }
    this.#entries[index] = text;
  }

  /** The last chunk logged (an equal object for a compacted delta). */
  last(): ChunkType | undefined {
    const array = this.#array;
    if (array !== undefined) return array[array.length - 1];
    const entries = this.#entries;
    const index = entries.length - 1;
    return index < 0 ? undefined : this.#chunkAt(index);
  }

  /**
   * The chunks as an array: made on the first call (and the compact form dropped), then the same
   * array on every call, which later {@link push}es append to.
   */
  toArray(): ChunkType[] {
    let array = this.#array;
    if (array === undefined) {
      const entries = this.#entries;
      array = new Array<ChunkType>(entries.length);
      for (let index = 0; index < entries.length; index++) array[index] = this.#chunkAt(index);
      this.#array = array;
      this.#entries = [];
      this.#segments = undefined;
    }
    return array;
  }

  /** A log of the first `length` chunks (compact as this one is), that grows on its own from now on. */
  copy(length: number = this.length): ChunkLog {
    const copy = new ChunkLog();
    if (this.#array !== undefined) copy.#array = this.#array.slice(0, length);
    else {
      copy.#entries = this.#entries.slice(0, length);
      copy.#segments = this.#segments?.filter((segment) => segment.start < length);
    }
    return copy;
  }

  /** Calls `visit` for each chunk in order (equal objects for compacted deltas), without making the array. */
  forEach(visit: (chunk: ChunkType) => void): void {
    const array = this.#array;
    if (array !== undefined) {
      for (const chunk of array) visit(chunk);
      return;
    }
    const entries = this.#entries;
    for (let index = 0; index < entries.length; index++) visit(this.#chunkAt(index));
  }

  /** The chunk at `index` of the compact form. */
  #chunkAt(index: number): ChunkType {
    const entry = this.#entries[index] as ChunkType | string;
    if (typeof entry !== 'string') return entry;
    const segment = this.#segmentOf(index);
    return { type: 'text-delta', runId: segment.runId, from: segment.from, payload: { id: segment.id, text: entry } } as ChunkType;
  }

  /** The segment holding entry `index` (a compacted delta). */
  #segmentOf(index: number): Segment {
    const segments = this.#segments as Segment[];
    let low = 0;
    let high = segments.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((segments[middle] as Segment).start <= index) low = middle;
      else high = middle - 1;
    }
    return segments[low] as Segment;
  }
}
