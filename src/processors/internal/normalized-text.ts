/**
 * A "reads the same to a person" view of a text, for matching secrets and personal data.
 *
 * Guards match their patterns on this view and redact the *original* span: the view keeps, for
 * each of its characters, where it came from in the original text. The view:
 * - first undoes the encodings a reader undoes on the way to the screen (`decoded-text.ts`): HTML
 *   character references, Markdown backslash escapes, percent-encoded UTF-8 and, for JSON text
 *   (streamed tool-call arguments), JSON string escapes;
 * - drops invisible characters by Unicode property: every default-ignorable code point
 *   (zero-width space/joiners, soft hyphen, bidi controls, tags, variation selectors, the combining
 *   grapheme joiner, Hangul fillers…), format characters and enclosing marks (the keycap mark);
 * - applies NFKC per code point (full-width `ＡＫＩＡ１２３`, full-width `＠`, mathematical digits,
 *   ligatures and other compatibility forms become their plain forms);
 * - maps decimal digits of every script (`٣`, `३`, `３`) to ASCII `0-9`;
 * - maps common Cyrillic and Greek homoglyphs of Latin letters (`А`, `К`, `Е`, `О`, `Р`, `С`…)
 *   to Latin, but only inside a word that also holds an ASCII letter or digit (a mixed-script
 *   token such as `АKIA…`), so text written in Cyrillic or Greek is left alone.
 *
 * Pure ASCII text with nothing to decode (the common case) is returned as is, with no map and no
 * allocation.
 */
import { composeMapped, decodeForReading, type MappedText } from './decoded-text.js';

/**
 * The normalised view of a text and the way back to the original offsets: `starts[i]` / `ends[i]`
 * is the original span the view's character `i` came from (`undefined`: the view is the original).
 */
export type NormalizedText = MappedText;

/** What the view decodes besides the folding (see `decoded-text.ts`). */
export interface NormalizeOptions {
  /** The text is JSON (streamed tool-call arguments): undo JSON string escapes. Default `false`. */
  json?: boolean;
  /** Undo HTML character references, Markdown escapes and percent-encoding. Default `true`. */
  decode?: boolean;
}

const HOMOGLYPHS: Readonly<Record<string, string>> = {
  // Cyrillic
  А: 'A', В: 'B', Е: 'E', К: 'K', М: 'M', Н: 'H', О: 'O', Р: 'P', С: 'C', Т: 'T', Х: 'X', У: 'Y',
  Ѕ: 'S', І: 'I', Ј: 'J', Ԛ: 'Q', Ԝ: 'W',
  а: 'a', е: 'e', о: 'o', р: 'p', с: 'c', у: 'y', х: 'x', ѕ: 's', і: 'i', ј: 'j', ԛ: 'q', ԝ: 'w', һ: 'h', ԁ: 'd',
  // Greek
  Α: 'A', Β: 'B', Ε: 'E', Ζ: 'Z', Η: 'H', Ι: 'I', Κ: 'K', Μ: 'M', Ν: 'N', Ο: 'O', Ρ: 'P', Τ: 'T', Υ: 'Y', Χ: 'X',
  ο: 'o', ν: 'v', ι: 'i', κ: 'k', τ: 't', υ: 'u',
};

/**
 * Dropped from the view, by Unicode property (no hand-made list): default-ignorable code points
 * (`\p{Default_Ignorable_Code_Point}`: what Unicode says shows nothing when not supported —
 * zero-width characters, joiners, bidi controls, variation selectors, tags, Hangul fillers, the
 * reserved ranges kept for more of them), format characters (`\p{Cf}`, which adds the few visible
 * prepended marks such as U+0600) and enclosing marks (`\p{Me}`: a keycap, circle or square drawn
 * around the character before it, which still reads as that character).
 */
const invisibleChar = /^[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Me}]$/u;
const decimalDigit = /^\p{Nd}$/u;
const letterOrDigit = /[\p{L}\p{N}]/u;
const asciiOnly = /^[\x00-\x7f]*$/;
/** Builds the view from its UTF-16 code units (a lone surrogate becomes U+FFFD: still one unit). */
const utf16 = new TextDecoder('utf-16le');

/** Whether the code point is dropped from the view. */
export function isInvisible(codePoint: number): boolean {
  return invisibleChar.test(String.fromCodePoint(codePoint));
}

/** The ASCII digit of a decimal digit of any script, or `undefined`. */
function asciiDigit(char: string, codePoint: number): string | undefined {
  if (!decimalDigit.test(char)) return undefined;
  // Decimal digits come in runs of ten starting at zero: find the run's zero.
  let zero = codePoint;
  while (zero > codePoint - 9 && decimalDigit.test(String.fromCodePoint(zero - 1))) zero--;
  return String((codePoint - zero) % 10);
}

/** The folded form of one non-ASCII code point (before homoglyph folding). */
function foldChar(char: string, codePoint: number): string {
  const compatible = char.normalize('NFKC');
  if (compatible.length === 1 && compatible.charCodeAt(0) < 0x80) return compatible;
  return asciiDigit(char, codePoint) ?? compatible;
}

/** How one non-ASCII code point enters the view. */
interface Folding {
  /** The view's text for it ('' when invisible; the original character for a homoglyph). */
  folded: string;
  /** The Latin letter of a homoglyph. */
  latin: string | undefined;
  /** 'ascii': folds to ASCII letters/digits; 'word': another letter or digit; 'break': ends a word. */
  kind: 'ascii' | 'word' | 'break';
}

/** Memo of {@link classify} (a pure function of the code point; bounded). */
const foldings = new Map<number, Folding>();
const MAX_MEMO = 4096;

function classify(codePoint: number): Folding {
  const known = foldings.get(codePoint);
  if (known !== undefined) return known;
  const char = String.fromCodePoint(codePoint);
  let folding: Folding;
  if (isInvisible(codePoint)) folding = { folded: '', latin: undefined, kind: 'word' };
  else if (HOMOGLYPHS[char] !== undefined) folding = { folded: char, latin: HOMOGLYPHS[char], kind: 'word' };
  else {
    const folded = foldChar(char, codePoint);
    const kind = /^[A-Za-z0-9]+$/.test(folded) ? 'ascii' : letterOrDigit.test(folded) ? 'word' : 'break';
    folding = { folded, latin: undefined, kind };
  }
  if (foldings.size < MAX_MEMO) foldings.set(codePoint, folding);
  return folding;
}

/**
 * The normalised view of `text` (see the module comment). Linear in the length of `text`.
 *
 * @example
 * ```ts
 * normalizeForMatching('ＡＫ\u200bIA').text; // 'AKIA'
 * normalizeForMatching('ada&#64;example.com').text; // 'ada@example.com'
 * ```
 */
export function normalizeForMatching(text: string, options: NormalizeOptions = {}): NormalizedText {
  const decoded = decodeForReading(text, { json: options.json ?? false, markup: options.decode ?? true });
  return decoded === undefined ? fold(text) : composeMapped(fold(decoded.text), decoded);
}

/** The folding stage of the view (invisible characters, NFKC, digits, homoglyphs). */
function fold(text: string): NormalizedText {
  if (asciiOnly.test(text)) return { text, starts: undefined, ends: undefined };
  // First pass: the view's length (NFKC may expand a character).
  let length = 0;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (unit < 0x80) {
      length++;
      continue;
    }
    const codePoint = text.codePointAt(index) as number;
    if (codePoint > 0xffff) index++;
    length += classify(codePoint).folded.length;
  }
  const codes = new Uint16Array(length);
  const starts = new Int32Array(length);
  const ends = new Int32Array(length);
  // Homoglyphs of the current word, applied when the word turns out to hold ASCII letters/digits.
  const pending: number[] = [];
  let wordHasAscii = false;
  let at = 0;
  for (let index = 0; index < text.length; ) {
    const start = index;
    const unit = text.charCodeAt(index);
    if (unit < 0x80) {
      index++;
      const lower = unit | 0x20;
      if ((unit >= 0x30 && unit <= 0x39) || (lower >= 0x61 && lower <= 0x7a)) wordHasAscii = true;
      else if (pending.length > 0 || wordHasAscii) {
        if (wordHasAscii) applyHomoglyphs(codes, pending);
        pending.length = 0;
        wordHasAscii = false;
      }
      codes[at] = unit;
      starts[at] = start;
      ends[at] = index;
      at++;
      continue;
    }
    const codePoint = text.codePointAt(index) as number;
    index += codePoint > 0xffff ? 2 : 1;
    const folding = classify(codePoint);
    const folded = folding.folded;
    if (folded.length === 0) continue;
    if (folding.latin !== undefined) pending.push(at, folding.latin.charCodeAt(0));
    else if (folding.kind === 'ascii') wordHasAscii = true;
    else if (folding.kind === 'break') {
      if (wordHasAscii) applyHomoglyphs(codes, pending);
      pending.length = 0;
      wordHasAscii = false;
    }
    for (let offset = 0; offset < folded.length; offset++) {
      codes[at] = folded.charCodeAt(offset);
      starts[at] = start;
      ends[at] = index;
      at++;
    }
  }
  if (wordHasAscii) applyHomoglyphs(codes, pending);
  return { text: utf16.decode(codes), starts, ends };
}

/** Writes the Latin letters of the pending homoglyphs (pairs of view offset, Latin code unit). */
function applyHomoglyphs(codes: Uint16Array, pending: readonly number[]): void {
  for (let index = 0; index < pending.length; index += 2) codes[pending[index] as number] = pending[index + 1] as number;
}

/** The original span of the view's span `[start, end)` (`end > start`). */
export function originalSpan(view: NormalizedText, start: number, end: number): { start: number; end: number } {
  if (view.starts === undefined || view.ends === undefined) return { start, end };
  return { start: view.starts[start] as number, end: view.ends[end - 1] as number };
}

/** The view's offset of original offset `offset` (the first view character at or after it). */
export function viewOffset(view: NormalizedText, offset: number): number {
  const starts = view.starts;
  if (starts === undefined) return offset;
  let low = 0;
  let high = starts.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((starts[middle] as number) < offset) low = middle + 1;
    else high = middle;
  }
  return low;
}
