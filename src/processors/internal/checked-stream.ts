/**
 * The output-stream gate of the model-backed processors: text is held back, judged with ONE model
 * call per span, and only judged text is released.
 *
 * The text channel is held as one logical text across its blocks: a block boundary (`text-end`,
 * the next `text-start`) is held with the text before it, so a judged span may cover the end of
 * one block and the start of the next — a value split across two text blocks of a step is judged
 * whole, like one split across deltas. The judged text is released re-split into its blocks
 * (`text-start` / `text-delta` / `text-end` in order, each block's text under its own id, one
 * merged delta per block and span); a redaction spanning a boundary lands in the block where the
 * value started, and the covered characters of the next block are removed.
 *
 * - `'window'`: a span is complete once it holds at least `windowSize` characters and ends at a
 *   sentence boundary (`.`, `!`, `?` followed by whitespace, or a newline); a span that found no
 *   boundary by `2 × windowSize` characters is judged whole. A span may cover several blocks.
 *   Every judged span but the last one of a run of text blocks has at least `windowSize`
 *   characters, so `n` characters cost at most `floor(n / windowSize) + 1` calls. The client sees
 *   text one window late.
 * - `'final'`: everything is held and judged once, when a chunk outside the text channel releases
 *   it (`finish` at the end of the run's last step, a tool call, `step-finish`, a data chunk…).
 *   One call per run of consecutive text blocks; the client sees none of their text until then.
 *
 * Any chunk that is neither a `text-delta` nor a boundary following held text releases the held
 * text first (judged), so order is kept. A `text-start` with nothing held passes at once.
 *
 * Cost: each character is appended once and judged once; a window scan looks at the held text
 * only, which `'window'` mode bounds by `2 × windowSize`.
 */
import type { ChunkType, ProcessorState } from '../../contract/index.js';
import { emitInOrder } from './emit-in-order.js';
import { holdChunk, holdText, openChannel, releaseHeld, type HeldChannel, type HeldRegion } from './held-stream.js';

/**
 * How a model-backed processor checks streamed output: per window of text, or once at the end.
 *
 * @example
 * ```ts
 * const streamMode: StreamMode = 'final';
 * ```
 */
export type StreamMode = 'final' | 'window';

/**
 * The default window: about two sentences, one model call per ~200 characters.
 *
 * @example
 * ```ts
 * new ModerationProcessor({ model, windowSize: DEFAULT_WINDOW_SIZE * 2 });
 * ```
 */
export const DEFAULT_WINDOW_SIZE = 200;

/**
 * What to do with a judged span: release it as it is, drop its text, or replace values in it
 * (every occurrence, longest value first; see {@link valueRegions}).
 *
 * @example
 * ```ts
 * const verdict: SpanVerdict = { action: 'replace', replacements: new Map([['jane@x.io', '[EMAIL]']]) };
 * ```
 */
export type SpanVerdict = { action: 'keep' } | { action: 'drop' } | { action: 'replace'; replacements: ReadonlyMap<string, string> };

/**
 * Judges one span of held text (possibly covering several text blocks, joined). To block, it
 * calls the hook's `abort()` (outside any try/catch).
 *
 * @example
 * ```ts
 * const check: SpanCheck = (text) => (text.includes('secret') ? { action: 'drop' } : { action: 'keep' });
 * ```
 */
export type SpanCheck = (text: string) => Promise<SpanVerdict> | SpanVerdict;

/** The held text channel, and its text joined (not yet judged). */
interface CheckedHold {
  held: HeldChannel;
  text: string;
}

type MaybePromise<T> = T | Promise<T>;

/**
 * The end of the first sentence boundary at or after `windowSize`, `text.length` past the hard cap, else 0.
 *
 * @example
 * ```ts
 * windowCut('One. Two. Three.', 5); // 9: the first sentence end at or after 5 characters ("One. Two.")
 * ```
 */
export function windowCut(text: string, windowSize: number): number {
  if (text.length < windowSize) return 0;
  for (let index = Math.max(windowSize, 1); index < text.length; index++) {
    const previous = text[index - 1] as string;
    if (previous === '\n') return index;
    if ('.!?。！？'.includes(previous) && /\s/.test(text[index] as string)) return index;
  }
  return text.length >= 2 * windowSize ? text.length : 0;
}

/**
 * The spans of `text` to replace for `replacements` (value → replacement): every occurrence of
 * each value, longest value first, leftmost first, never overlapping one already taken; sorted.
 *
 * @example
 * ```ts
 * valueRegions('mail a@b.co', new Map([['a@b.co', '[EMAIL]']])); // [{ start: 5, end: 11, replacement: '[EMAIL]' }]
 * ```
 */
export function valueRegions(text: string, replacements: ReadonlyMap<string, string>): HeldRegion[] {
  const values = [...replacements.keys()].filter((value) => value.length > 0).sort((a, b) => b.length - a.length);
  const covered = new Uint8Array(text.length);
  const regions: HeldRegion[] = [];
  for (const value of values) {
    const replacement = replacements.get(value) ?? '';
    let start = text.indexOf(value);
    while (start !== -1) {
      const end = start + value.length;
      if (covered.subarray(start, end).includes(1)) {
        start = text.indexOf(value, start + 1);
        continue;
      }
      covered.fill(1, start, end);
      regions.push({ start, end, replacement });
      start = text.indexOf(value, end);
    }
  }
  return regions.sort((a, b) => a.start - b.start);
}

/**
 * One processor's gate over its streamed text (state lives in the run's processor `state`).
 *
 * @example
 * ```ts
 * const gate = new CheckedTextStream({ streamMode: 'window', windowSize: 200 });
 * return gate.process(part, state, (span) => judge(span));
 * ```
 */
export class CheckedTextStream {
  private readonly mode: StreamMode;
  private readonly windowSize: number;
  private readonly stateKey: string;

  constructor(options: { streamMode?: StreamMode; windowSize?: number; stateKey?: string }) {
    this.mode = options.streamMode ?? 'window';
    this.windowSize = Math.max(1, Math.floor(options.windowSize ?? DEFAULT_WINDOW_SIZE));
    this.stateKey = options.stateKey ?? 'checkedText';
  }

  /**
   * Handles one chunk: holds text (and the block boundaries after it), releases judged text,
   * passes everything else in order. Synchronous unless a span is judged.
   */
  process(part: ChunkType, state: ProcessorState, check: SpanCheck): MaybePromise<ChunkType | null> {
    const hold = state[this.stateKey] as CheckedHold | undefined;
    if (part.type === 'text-delta') {
      const current: CheckedHold = hold ?? { held: openChannel('text'), text: '' };
      state[this.stateKey] = current;
      const text = part.payload.text ?? '';
      holdText(current.held, part.payload.id, text, part);
      current.text += text;
      if (this.mode === 'window' && windowCut(current.text, this.windowSize) > 0) {
        return this.completeWindows(current, check).then((released) => emitInOrder(state, released));
      }
      return emitInOrder(state, []);
    }
    if (hold === undefined || hold.held.items.length === 0) {
      state[this.stateKey] = undefined;
      return emitInOrder(state, [part]);
    }
    if (part.type === 'text-start' || part.type === 'text-end') {
      // a block boundary after held text: the next block may continue what is held
      holdChunk(hold.held, part);
      return emitInOrder(state, []);
    }
    return this.releaseAll(hold, state, check).then((released) => emitInOrder(state, [...released, part]));
  }

  /** The text currently held (not yet judged nor released), its blocks joined. */
  heldText(state: ProcessorState): string {
    return (state[this.stateKey] as CheckedHold | undefined)?.text ?? '';
  }

  private async completeWindows(hold: CheckedHold, check: SpanCheck): Promise<ChunkType[]> {
    const released: ChunkType[] = [];
    let cut = windowCut(hold.text, this.windowSize);
    while (cut > 0) {
      const span = hold.text.slice(0, cut);
      hold.text = hold.text.slice(cut);
      const regions = await judge(span, check);
      released.push(...releaseHeld(hold.held, cut, regions, true));
      cut = windowCut(hold.text, this.windowSize);
    }
    return released;
  }

  private async releaseAll(hold: CheckedHold, state: ProcessorState, check: SpanCheck): Promise<ChunkType[]> {
    state[this.stateKey] = undefined;
    const span = hold.text;
    const regions = span === '' ? [] : await judge(span, check);
    return releaseHeld(hold.held, span.length, regions, false);
  }
}

/** One model call for `span`: the regions of it to replace. */
async function judge(span: string, check: SpanCheck): Promise<HeldRegion[]> {
  const verdict = await check(span);
  if (verdict.action === 'keep') return [];
  if (verdict.action === 'drop') return [{ start: 0, end: span.length, replacement: '' }];
  return valueRegions(span, verdict.replacements);
}
