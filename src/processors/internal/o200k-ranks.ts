/**
 * The ranks of a BPE encoding, built from a `.tiktoken` file (`base64 rank` per line) without an
 * object per token: every token's bytes live in one byte string, found through an open-addressing
 * hash table of `Int32Array` slots (why: bench/README.md, house rules). Parsing yields to the event
 * loop every couple of milliseconds.
 */

/** Longest synchronous slice of parsing (ms) before yielding to the event loop. */
const SLICE_MS = 2;

/** Lines parsed between two looks at the clock. */
const LINES_PER_CHECK = 128;

const BASE64 = new Int16Array(256).fill(-1);
for (const [index, char] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries()) BASE64[char.charCodeAt(0)] = index;

const NEWLINE = 0x0a;
const SPACE = 0x20;

/** FNV-1a over char codes 0–255 (a byte string) or bytes: the same value for the same bytes. */
function hashOf(read: (index: number) => number, length: number): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < length; index++) hash = Math.imul(hash ^ read(index), 0x01000193);
  return hash >>> 0;
}

/** Yields to the event loop (other runs' I/O and timers go first). */
const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Token bytes ↔ rank. Keys are byte strings (char codes 0–255).
 *
 * @example
 * ```ts
 * const ranks = await RankTable.parse(await readFile(path));
 * ranks.get('hello'); // the rank of the token "hello"
 * ```
 */
export class RankTable {
  private constructor(
    private readonly bytes: string,
    private readonly start: Int32Array,
    private readonly length: Int32Array,
    private readonly slots: Int32Array,
  ) {}

  /** The rank of the token made of `key`'s bytes, if there is one. */
  get(key: string): number | undefined {
    const mask = this.slots.length - 1;
    for (let slot = hashOf((index) => key.charCodeAt(index), key.length) & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot] as number;
      if (entry === 0) return undefined;
      const rank = entry - 1;
      if (this.length[rank] === key.length && this.bytes.startsWith(key, this.start[rank])) return rank;
    }
  }

  /** The bytes of token `rank` ('' for an unknown rank). */
  bytesOf(rank: number): string {
    const start = this.start[rank];
    return start === undefined || start < 0 ? '' : this.bytes.slice(start, start + (this.length[rank] as number));
  }

  /** Parses a `.tiktoken` file's content, yielding to the event loop between slices of ~2 ms. */
  static async parse(data: Uint8Array): Promise<RankTable> {
    const capacity = Math.ceil(data.length / 6) + 1; // a line holds at least 6 bytes ("AA== 0")
    const out = new Uint8Array(data.length);
    const start = new Int32Array(capacity).fill(-1);
    const length = new Int32Array(capacity);
    let size = 1;
    while (size < 2 * capacity) size *= 2;
    const slots = new Int32Array(size);
    const mask = size - 1;
    let written = 0;
    let at = 0;
    while (at < data.length) {
      const sliceStart = performance.now();
      while (at < data.length && performance.now() - sliceStart < SLICE_MS) {
        for (let line = 0; line < LINES_PER_CHECK && at < data.length; line++) {
          // base64 token, a space, the decimal rank, a newline
          const tokenStart = written;
          let bits = 0;
          let value = 0;
          for (; at < data.length && data[at] !== SPACE && data[at] !== NEWLINE; at++) {
            const digit = BASE64[data[at] as number] as number;
            if (digit < 0) continue;
            value = ((value << 6) | digit) & 0xffffff;
            bits += 6;
            if (bits >= 8) {
              bits -= 8;
              out[written++] = (value >> bits) & 0xff;
            }
          }
          let rank = -1;
          if (data[at] === SPACE) {
            rank = 0;
            for (at++; at < data.length && data[at] !== NEWLINE; at++) rank = rank * 10 + ((data[at] as number) - 48);
          }
          at++;
          if (rank < 0 || rank >= capacity || written === tokenStart) {
            written = tokenStart;
            continue;
          }
          start[rank] = tokenStart;
          length[rank] = written - tokenStart;
          let slot = hashOf((index) => out[tokenStart + index] as number, written - tokenStart) & mask;
          while (slots[slot] !== 0) slot = (slot + 1) & mask;
          slots[slot] = rank + 1;
        }
      }
      await yieldToLoop();
    }
    return new RankTable(Buffer.from(out.buffer, out.byteOffset, written).toString('latin1'), start, length, slots);
  }
}
