/**
 * The output-stream gate of the model-backed processors: text is held back, judged with ONE model
 * call per span, and only judged text is released (as one merged `text-delta`).
 *
 * - `'window'`: a span is complete once it holds at least `windowSize` characters and ends at a
 *   sentence boundary (`.`, `!`, `?` followed by whitespace, or a newline); a span that found no
 *   boundary by `2 × windowSize` characters is judged whole. Every judged span but the last one of a
 *   text block has at least `windowSize` characters, so a block of `n` characters costs at most
 *   `floor(n / windowSize) + 1` calls. The client sees text one window late.
 * - `'final'`: everything is held and judged once, when the text block ends (its `text-end`, or any
 *   other non-text chunk such as `finish`). One call per text block; the client sees nothing until then.
 *
 * Any chunk that is not a `text-delta` releases the held text first, so order is kept. Only one
 * text block is held at a time (a delta of another block releases the previous block's text).
 */
import type { ChunkType } from '../../processor/chunk-types.js';
import type { ProcessorState } from '../../processor/processor-types.js';
import { textDeltaChunk } from './chunks.js';
import { emitInOrder } from './emit-in-order.js';

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
 * Judges one span of held text: returns the text to release (possibly rewritten) or `null` to drop
 * it. To block, it calls the hook's `abort()` (outside any try/catch).
 *
 * @example
 * ```ts
 * const check: SpanCheck = (text) => (text.includes('secret') ? null : text);
 * ```
 */
export type SpanCheck = (text: string) => Promise<string | null> | string | null;

interface HeldSpan {
  id: string;
  text: string;
  template: ChunkType;
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
   * Handles one chunk: holds text, releases judged text, passes everything else in order.
   * Synchronous unless a span is judged.
   */
  process(part: ChunkType, state: ProcessorState, check: SpanCheck): MaybePromise<ChunkType | null> {
    const held = state[this.stateKey] as HeldSpan | undefined;
    if (part.type === 'text-delta') {
      const payload = part.payload;
      if (held !== undefined && held.id !== payload.id) {
        return this.releaseHeld(held, state, check).then(async (released) => {
          const next: HeldSpan = { id: payload.id, text: payload.text, template: part };
          state[this.stateKey] = next;
          return emitInOrder(state, [...released, ...(await this.completeWindows(next, check))]);
        });
      }
      const current: HeldSpan = held ?? { id: payload.id, text: '', template: part };
      current.text += payload.text;
      state[this.stateKey] = current;
      if (this.mode === 'window' && windowCut(current.text, this.windowSize) > 0) {
        return this.completeWindows(current, check).then((released) => emitInOrder(state, released));
      }
      return emitInOrder(state, []);
    }
    if (held === undefined || held.text === '') {
      state[this.stateKey] = undefined;
      return emitInOrder(state, [part]);
    }
    return this.releaseHeld(held, state, check).then((released) => emitInOrder(state, [...released, part]));
  }

  /** The text currently held (not yet judged nor released). */
  heldText(state: ProcessorState): string {
    return (state[this.stateKey] as HeldSpan | undefined)?.text ?? '';
  }

  private async completeWindows(held: HeldSpan, check: SpanCheck): Promise<ChunkType[]> {
    const released: ChunkType[] = [];
    let cut = windowCut(held.text, this.windowSize);
    while (cut > 0) {
      const span = held.text.slice(0, cut);
      held.text = held.text.slice(cut);
      const text = await check(span);
      if (text !== null && text !== '') released.push(textDeltaChunk(held.template, held.id, text));
      cut = windowCut(held.text, this.windowSize);
    }
    return released;
  }

  private async releaseHeld(held: HeldSpan, state: ProcessorState, check: SpanCheck): Promise<ChunkType[]> {
    state[this.stateKey] = undefined;
    if (held.text === '') return [];
    const text = await check(held.text);
    return text === null || text === '' ? [] : [textDeltaChunk(held.template, held.id, text)];
  }
}
