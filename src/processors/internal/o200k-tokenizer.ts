/**
 * The `o200k_base` encoding, loaded without stalling the event loop. `gpt-tokenizer`'s own module
 * holds its 200,000 ranks as one JavaScript array literal: evaluating it and building its maps
 * blocks the thread for 250–600 ms in one go, stalling every other run of the process. Here the
 * ranks are read from the package's data file (`gpt-tokenizer/data/o200k_base.tiktoken`, one
 * `base64 rank` line per token) with asynchronous I/O and parsed in slices of about 2 ms, yielding
 * to the event loop between slices, into one byte string and a hash table (`o200k-ranks.ts`: no
 * object per token); encoding is byte-level BPE over those ranks (the
 * lowest-ranked adjacent pair merged first, leftmost on ties), checked token for token against
 * `gpt-tokenizer` by `test/processors/o200k-tokenizer.property.test.ts`.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { RankTable } from './o200k-ranks.js';

/** What the token limiter needs of an encoding (the shape of `gpt-tokenizer`'s encoding modules). */
export interface Tokenizer {
  countTokens(text: string, options: { disallowedSpecial: Set<string> }): number;
  encode(text: string, options: { disallowedSpecial: Set<string> }): number[];
  decode(tokens: Iterable<number>): string;
}

/** The data file of the encoding, resolved from the `gpt-tokenizer` package. */
export const O200K_DATA_FILE = 'gpt-tokenizer/data/o200k_base.tiktoken';

/** Yields to the event loop (other runs' I/O and timers go first). */
const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const contraction = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?";
/**
 * The encoding's pre-tokenizer: tiktoken's `o200k_base` pattern (its `(?i:…)` contractions spelled
 * out), one sticky regular expression per alternative, tried in order at each position — what the
 * single alternation does, but each part compiles on its own: the whole alternation took 25–75 ms
 * to compile on first use, in one block; the parts are compiled (and warmed up) one per turn of the
 * event loop while the ranks load.
 */
const SPLIT_PARTS = [
  `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+${contraction}`,
  `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*${contraction}`,
  '\\p{N}{1,3}',
  ' ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*',
  '\\s*[\\r\\n]+',
  '\\s+(?!\\S)',
  '\\s+',
];

/** Compiles the pre-tokenizer's parts, one per event-loop turn, each run a few times so it is compiled before a hook needs it. */
async function compileSplit(): Promise<RegExp[]> {
  const parts: RegExp[] = [];
  for (const source of SPLIT_PARTS) {
    const part = new RegExp(source, 'uy');
    for (const sample of ['Hello World', ' 123', ' ...\n', "it's", 'Ünïcödé 日本']) {
      part.lastIndex = 0;
      part.exec(sample);
    }
    parts.push(part);
    await yieldToLoop();
  }
  return parts;
}

const ASCII = /^[\x00-\x7f]*$/;

/** Bytes as a string of char codes 0–255 (a rank-table key, cheap to slice and compare); ASCII is its own bytes. */
function bytesOf(text: string): string {
  return ASCII.test(text) ? text : Buffer.from(text, 'utf8').toString('latin1');
}

/**
 * Which of the pre-tokenizer's alternatives (indexes into `SPLIT_PARTS`, in order) can match at a
 * position, by the class of the character there: a letter starts only the letter alternatives, a
 * digit only the number one, a line break only the line-break ones; whitespace and other characters
 * can also be the one-character prefix of a word. Trying only these keeps the first match of the
 * alternation (the order is kept) and saves most regular-expression runs.
 */
const CANDIDATES = {
  letter: [0, 1],
  digit: [2],
  lineBreak: [4, 5, 6],
  space: [0, 1, 3, 4, 5, 6],
  other: [0, 1, 3],
} as const;
/** Letter, number or whitespace, by capture group (one run of a small expression classifies a character). */
const CLASS = /(\p{L})|(\p{N})|(\s)/uy;
/** Classes of the non-ASCII characters seen (text repeats its characters; cleared when full). */
const classes = new Map<number, readonly number[]>();

function candidatesAt(text: string, at: number): readonly number[] {
  const code = text.charCodeAt(at);
  if (code < 0x80) {
    if ((code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a)) return CANDIDATES.letter;
    if (code >= 0x30 && code <= 0x39) return CANDIDATES.digit;
    if (code === 0x0a || code === 0x0d) return CANDIDATES.lineBreak;
    if (code === 0x20 || (code >= 0x09 && code <= 0x0c)) return CANDIDATES.space;
    return CANDIDATES.other;
  }
  const point = text.codePointAt(at) as number;
  const known = classes.get(point);
  if (known !== undefined) return known;
  CLASS.lastIndex = at;
  const match = CLASS.exec(text);
  const found = match === null ? CANDIDATES.other : match[1] !== undefined ? CANDIDATES.letter : match[2] !== undefined ? CANDIDATES.digit : CANDIDATES.space;
  if (classes.size >= 4_096) classes.clear();
  classes.set(point, found);
  return found;
}

/** Pieces encoded recently (a word, a space and a word…): their ranks, reused. Cleared when full. */
const PIECE_CACHE_SIZE = 8_192;

/** A binary min-heap of candidate merges: [rank, position of the left part, left node, end of the right part]. */
class MergeHeap {
  private readonly items: Array<[number, number, number, number]> = [];

  get size(): number {
    return this.items.length;
  }

  push(item: [number, number, number, number]): void {
    const items = this.items;
    items.push(item);
    for (let index = items.length - 1; index > 0; ) {
      const parent = (index - 1) >> 1;
      if (!less(items[index] as [number, number, number, number], items[parent] as [number, number, number, number])) break;
      [items[index], items[parent]] = [items[parent] as [number, number, number, number], items[index] as [number, number, number, number]];
      index = parent;
    }
  }

  pop(): [number, number, number, number] {
    const items = this.items;
    const top = items[0] as [number, number, number, number];
    const last = items.pop() as [number, number, number, number];
    if (items.length > 0) {
      items[0] = last;
      for (let index = 0; ; ) {
        const left = 2 * index + 1;
        const right = left + 1;
        let smallest = index;
        if (left < items.length && less(items[left] as [number, number, number, number], items[smallest] as [number, number, number, number])) smallest = left;
        if (right < items.length && less(items[right] as [number, number, number, number], items[smallest] as [number, number, number, number])) smallest = right;
        if (smallest === index) break;
        [items[index], items[smallest]] = [items[smallest] as [number, number, number, number], items[index] as [number, number, number, number]];
        index = smallest;
      }
    }
    return top;
  }
}

function less(a: readonly number[], b: readonly number[]): boolean {
  return (a[0] as number) < (b[0] as number) || ((a[0] as number) === (b[0] as number) && (a[1] as number) < (b[1] as number));
}

/** Byte-pair encoding over loaded ranks. */
class O200k implements Tokenizer {
  private readonly cache = new Map<string, number[]>();

  constructor(
    private readonly ranks: RankTable,
    private readonly split: readonly RegExp[],
  ) {}

  /** The ranks of one pre-token's bytes (`piece` already a byte string). */
  private merge(piece: string, out: number[]): void {
    const whole = this.ranks.get(piece);
    if (whole !== undefined) {
      out.push(whole);
      return;
    }
    const length = piece.length;
    const end = new Int32Array(length);
    const next = new Int32Array(length);
    const previous = new Int32Array(length);
    for (let index = 0; index < length; index++) {
      end[index] = index + 1;
      next[index] = index + 1 < length ? index + 1 : -1;
      previous[index] = index - 1;
    }
    const heap = new MergeHeap();
    const candidate = (left: number): void => {
      const right = next[left] as number;
      if (left < 0 || right < 0) return;
      const rank = this.ranks.get(piece.slice(left, end[right]));
      if (rank !== undefined) heap.push([rank, left, end[left] as number, end[right] as number]);
    };
    for (let index = 0; index + 1 < length; index++) candidate(index);
    while (heap.size > 0) {
      const [, left, leftEnd, rightEnd] = heap.pop();
      const right = next[left] as number;
      // stale: a part of this pair was merged since it was proposed (node starts are positions)
      if (end[left] !== leftEnd || right < 0 || end[right] !== rightEnd || previous[right] !== left) continue;
      end[left] = rightEnd;
      const after = next[right] as number;
      next[left] = after;
      if (after >= 0) previous[after] = left;
      next[right] = -2;
      candidate(previous[left] as number);
      candidate(left);
    }
    for (let node = 0; node >= 0; node = next[node] as number) out.push(this.ranks.get(piece.slice(node, end[node])) as number);
  }

  encode(text: string): number[] {
    const out: number[] = [];
    for (let at = 0; at < text.length; ) {
      let length = 0;
      for (const index of candidatesAt(text, at)) {
        const part = this.split[index] as RegExp;
        part.lastIndex = at;
        const match = part.exec(text);
        if (match !== null && match[0].length > 0) {
          length = match[0].length;
          this.piece(match[0], out);
          break;
        }
      }
      // no alternative matches here: the character is skipped, as the single alternation would
      at += length === 0 ? 1 : length;
    }
    return out;
  }

  /** The ranks of one pre-token, from the cache or merged. */
  private piece(text: string, out: number[]): void {
    const cached = this.cache.get(text);
    if (cached !== undefined) {
      for (const rank of cached) out.push(rank);
      return;
    }
    const ranks: number[] = [];
    this.merge(bytesOf(text), ranks);
    if (this.cache.size >= PIECE_CACHE_SIZE) this.cache.clear();
    this.cache.set(text, ranks);
    for (const rank of ranks) out.push(rank);
  }

  countTokens(text: string): number {
    return this.encode(text).length;
  }

  decode(tokens: Iterable<number>): string {
    let bytes = '';
    for (const token of tokens) bytes += this.ranks.bytesOf(token);
    // a cut through a character drops its incomplete bytes rather than showing U+FFFD
    let cut = bytes.length;
    for (let back = 1; back <= 3 && back <= bytes.length; back++) {
      const byte = bytes.charCodeAt(bytes.length - back);
      if (byte >= 0xc0) {
        const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
        if (back < needed) cut = bytes.length - back;
        break;
      }
      if (byte < 0x80) break;
    }
    return Buffer.from(bytes.slice(0, cut), 'latin1').toString('utf8');
  }
}

/**
 * Parses `data` (the `.tiktoken` file: `base64 rank` lines) into the encoding, in slices of about
 * 2 ms with the event loop running in between.
 *
 * @example
 * ```ts
 * const tokenizer = await parseO200k(await readFile(path));
 * ```
 */
export async function parseO200k(data: Uint8Array): Promise<Tokenizer> {
  const ranks = await RankTable.parse(data);
  return new O200k(ranks, await compileSplit());
}

/**
 * Loads the encoding from the installed `gpt-tokenizer` package without a long stall: the file is
 * read asynchronously and parsed in slices. Rejects when the package is not installed.
 *
 * @example
 * ```ts
 * const tokenizer = await loadO200k();
 * tokenizer.countTokens('hello world', { disallowedSpecial: new Set() }); // 2
 * ```
 */
export async function loadO200k(): Promise<Tokenizer> {
  const path = createRequire(import.meta.url).resolve(O200K_DATA_FILE);
  return parseO200k(await readFile(path));
}
