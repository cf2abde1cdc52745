/**
 * The pieces of text the model-backed guards send to their judge, and what a judge's verdict does
 * to them: where a streamed window ends (the adaptive schedule), how a long text is cut to the
 * judge's input budget, and which spans of a judged text a verdict replaces.
 */
import type { HeldRegion } from './held-stream.js';

/**
 * The window schedule of the streamed output checks: the first window's size in characters, then
 * the next ones'; the last size repeats. Small first windows show the first clean text soon, larger
 * later ones keep the number of judge calls low. A first window smaller than the second is judged
 * again in front of it, so a value cut by the first window's word cut is seen whole once.
 *
 * @example
 * ```ts
 * new ModerationProcessor({ model, windowSchedule: DEFAULT_WINDOW_SCHEDULE }); // 12, 48, 200, 800, 800, …
 * ```
 */
export const DEFAULT_WINDOW_SCHEDULE: readonly number[] = Object.freeze([12, 48, 200, 800]);

/**
 * The default input budget of one judge call, in characters of judged content (the instructions
 * are not counted): 8,000 characters ≈ 2,000 tokens, within any judge model's context. Longer
 * content is judged in overlapping pieces, one call each.
 *
 * @example
 * ```ts
 * new PIIDetector({ model, maxJudgeInputChars: DEFAULT_JUDGE_INPUT_CHARS / 2 });
 * ```
 */
export const DEFAULT_JUDGE_INPUT_CHARS = 8_000;

/** Characters two consecutive budget pieces share, so a value up to this long cut by a piece boundary is whole in one piece. */
export const PIECE_OVERLAP = 200;

/**
 * An output channel a model-backed guard can judge: streamed `text` and `reasoning`, a tool call's
 * input (`tool-input`: its streamed `tool-call-delta`s and the final `tool-call`'s arguments),
 * `data-*` chunks, `tool-error` chunks.
 *
 * @example
 * ```ts
 * new PIIDetector({ model, channels: ['text', 'reasoning'] satisfies GuardChannel[] });
 * ```
 */
export type GuardChannel = 'text' | 'reasoning' | 'tool-input' | 'data' | 'tool-error';

/** A channel as the gate judges it (a `tool-call` is judged whole when its input was not streamed). */
export type JudgedChannel = 'text' | 'reasoning' | 'tool-input' | WholeChannel;

/**
 * A channel judged one chunk at a time.
 *
 * @example
 * ```ts
 * const channel: WholeChannel = 'data';
 * ```
 */
export type WholeChannel = 'tool-call' | 'data' | 'tool-error' | 'object';

/** What a judge decided about one judged text. */
export type Verdict =
  | { action: 'keep' }
  | { action: 'drop' }
  | { action: 'replace'; replacements: ReadonlyMap<string, string> }
  | { action: 'block'; reason: string; metadata: Record<string, unknown> };

/** The size of window `index` (0-based) of `schedule`. */
export function windowSizeAt(schedule: readonly number[], index: number): number {
  return schedule[Math.min(index, schedule.length - 1)] ?? Number.POSITIVE_INFINITY;
}

function isSentenceEnd(text: string, index: number): boolean {
  const previous = text[index - 1] as string;
  if (previous === '\n') return true;
  return '.!?。！？'.includes(previous) && index < text.length && /\s/.test(text[index] as string);
}

/**
 * Where the next window of `text` (held, not yet judged) ends for a window of `size`: 0 while it
 * is shorter than `size`. From `size` characters on, the window ends at the last sentence boundary
 * (`. ! ?` + whitespace, or a newline) past `size / 2`; with `wordCut` (the first window, which
 * decides how soon text shows) at the last whitespace past `size / 2` when there is no sentence
 * boundary. Otherwise it waits — up to `2 × size` characters, where it ends at the last whitespace,
 * or at `2 × size` (a single word that long is cut). A window is never longer than `2 × size`.
 *
 * @example
 * ```ts
 * windowCut('One two. Three four five', 10); // 8: "One two." ends a sentence past 5 characters
 * ```
 */
export function windowCut(text: string, size: number, wordCut = true): number {
  if (text.length < size) return 0;
  const limit = Math.min(text.length, 2 * size);
  const from = Math.floor(size / 2);
  let word = 0;
  for (let index = limit; index > from; index--) {
    if (isSentenceEnd(text, index)) return index;
    if (word === 0 && index < text.length && /\s/.test(text[index] as string)) word = index + 1;
  }
  if (word > 0 && wordCut) return word;
  if (text.length < 2 * size) return 0;
  for (let index = limit - 1; index > 0; index--) if (/\s/.test(text[index] as string)) return index + 1;
  return limit;
}

/**
 * `text` cut into pieces of at most `budget` characters, each starting {@link PIECE_OVERLAP}
 * characters (or less, at a whitespace) before the previous one ended, cut at a whitespace where
 * there is one in the last quarter of the piece. One piece when the text fits.
 *
 * @example
 * ```ts
 * budgetPieces('a'.repeat(20_000), 8_000).length; // 3
 * ```
 */
export function budgetPieces(text: string, budget: number): string[] {
  const size = Math.max(1, Math.floor(budget));
  if (text.length <= size) return [text];
  const overlap = Math.min(PIECE_OVERLAP, Math.floor(size / 4));
  const pieces: string[] = [];
  let start = 0;
  for (;;) {
    let end = Math.min(text.length, start + size);
    if (end < text.length) {
      for (let index = end; index > start + Math.floor((3 * size) / 4); index--) {
        if (/\s/.test(text[index - 1] as string)) {
          end = index;
          break;
        }
      }
    }
    pieces.push(text.slice(start, end));
    if (end >= text.length) return pieces;
    start = Math.max(start + 1, end - overlap);
  }
}

/** A value as it is written inside a JSON string (quotes, backslashes and control characters escaped). */
export function jsonEscaped(value: string): string {
  return JSON.stringify(value).slice(1, -1);
}

/**
 * The spans of `text` to replace for `replacements` (value → replacement): every occurrence of
 * each value, longest value first, leftmost first, never overlapping one already taken; sorted.
 * With `json`, `text` is JSON source (streamed tool-call input): a value is also found in its
 * escaped form, and the replacement is written escaped, so the JSON stays valid.
 *
 * @example
 * ```ts
 * valueRegions('mail a@b.co', new Map([['a@b.co', '[EMAIL]']])); // [{ start: 5, end: 11, replacement: '[EMAIL]' }]
 * ```
 */
export function valueRegions(text: string, replacements: ReadonlyMap<string, string>, json = false): HeldRegion[] {
  const forms: Array<[string, string]> = [];
  for (const [value, replacement] of replacements) {
    if (value === '') continue;
    const written = json ? jsonEscaped(replacement) : replacement;
    forms.push([value, written]);
    if (json && jsonEscaped(value) !== value) forms.push([jsonEscaped(value), written]);
  }
  forms.sort((a, b) => b[0].length - a[0].length);
  const covered = new Uint8Array(text.length);
  const regions: HeldRegion[] = [];
  for (const [value, replacement] of forms) {
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
 * The verdict of a text judged in several calls (budget pieces, or batched messages): a block
 * wins, then a drop; replacements are merged; all keeps keep.
 *
 * @example
 * ```ts
 * mergeVerdicts([{ action: 'keep' }, { action: 'replace', replacements: new Map([['a', '*']]) }]); // replace a → *
 * ```
 */
export function mergeVerdicts(verdicts: readonly Verdict[]): Verdict {
  const block = verdicts.find((verdict) => verdict.action === 'block');
  if (block !== undefined) return block;
  if (verdicts.some((verdict) => verdict.action === 'drop')) return { action: 'drop' };
  const replacements = new Map<string, string>();
  for (const verdict of verdicts) if (verdict.action === 'replace') for (const [value, replacement] of verdict.replacements) replacements.set(value, replacement);
  return replacements.size === 0 ? { action: 'keep' } : { action: 'replace', replacements };
}
