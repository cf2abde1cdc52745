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
 * - folds dashes: every `\p{Pd}` character, and the look-alikes of `-` (U+2212 MINUS SIGN…), to `-`;
 * - folds Unicode's confusables (UTS #39, `confusables-data.ts`) of printable ASCII characters
 *   to the ASCII character they read as. A look-alike of a letter or digit (`А`, `К`, `Ѕ`, `З`,
 *   `Ο`) is folded inside a word that holds an ASCII letter or digit or that reads wholly as ASCII,
 *   so text written in Cyrillic or Greek is left alone; which ASCII character it becomes follows
 *   its word where Unicode's class has several (`О` is `0` among digits, `O` among capitals);
 * - and, for paragraphs that hold a bidi override or isolate control, adds the same paragraphs in
 *   display order (`display-order.ts`) after the text, on lines of their own: a value written
 *   backwards behind RIGHT-TO-LEFT OVERRIDE is matched as it is read, as well as as stored.
 *
 * Pure ASCII text with nothing to decode (the common case) is returned as is, with no map and no
 * allocation.
 */
import { CONFUSABLE_GROUPS } from './confusables-data.js';
import { composeMapped, decodeForReading, type MappedText } from './decoded-text.js';
import { displayOrder } from './display-order.js';

/**
 * The normalised view of a text and the way back to the original offsets: `starts[i]` / `ends[i]`
 * is the original span the view's character `i` came from (`undefined`: the view is the original).
 * `storedLength`, when set, is where the text in stored order ends: after it come the paragraphs
 * with bidi controls in display order (behind a separator no rule matches across).
 */
export interface NormalizedText extends MappedText {
  readonly storedLength?: number;
}

/** What the view decodes besides the folding (see `decoded-text.ts`). */
export interface NormalizeOptions {
  /** The text is JSON (streamed tool-call arguments): undo JSON string escapes. Default `false`. */
  json?: boolean;
  /** Undo HTML character references, Markdown escapes and percent-encoding. Default `true`. */
  decode?: boolean;
}

/** The ASCII characters a look-alike may read as (char codes, 0: none). */
interface LookAlike {
  /** By itself: by its category (an uppercase letter: the uppercase member…), else Unicode's prototype. */
  readonly preferred: number;
  /** `preferred` follows from its general category (a letter of a case, a number). */
  readonly byCategory: boolean;
  readonly upper: number;
  readonly lower: number;
  readonly digit: number;
}

let lookAlikes: Map<number, LookAlike> | undefined;

/** The look-alike entry of a code point (the generated table, parsed on first use). */
function lookAlikeOf(codePoint: number): LookAlike | undefined {
  if (lookAlikes === undefined) {
    lookAlikes = new Map();
    const code = (char: string) => (char === ' ' ? 0 : char.charCodeAt(0));
    for (const group of CONFUSABLE_GROUPS) {
      const entry: LookAlike = {
        preferred: code(group[0] as string),
        upper: code(group[1] as string),
        lower: code(group[2] as string),
        digit: code(group[3] as string),
        byCategory: group[4] === 'c',
      };
      for (const point of group.slice(5).split('.')) lookAlikes.set(Number.parseInt(point, 36), entry);
    }
  }
  return lookAlikes.get(codePoint);
}

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
/** Dashes: every dash punctuation character, and minus signs that are symbols (U+2212, U+2796). */
const dashChar = /^[\p{Pd}\u2212\u2796]$/u;
const letterOrDigit = /[\p{L}\p{N}]/u;
const asciiOnly = /^[\x00-\x7f]*$/;
/** Builds the view from its UTF-16 code units (a lone surrogate becomes U+FFFD: still one unit). */
const utf16 = new TextDecoder('utf-16le');

/** What a character tells about its word (for the look-alikes in it). */
const UPPER = 1;
const LOWER = 2;
const DIGIT = 4;
/** A letter or digit that reads as nothing in ASCII: the word is written in another script. */
const FOREIGN = 8;
/** Not part of a word: the word before it ends. */
const BREAK = 16;
/** A letter or digit written in ASCII (or one NFKC or its digit value makes ASCII), not a look-alike. */
const ASCII = 32;

/** The word flags of an ASCII code unit. */
function asciiFlags(unit: number): number {
  if (unit >= 0x30 && unit <= 0x39) return DIGIT | ASCII;
  if (unit >= 0x41 && unit <= 0x5a) return UPPER | ASCII;
  if (unit >= 0x61 && unit <= 0x7a) return LOWER | ASCII;
  return BREAK;
}

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

/** How one non-ASCII code point enters the view. */
interface Folding {
  /** The view's text for it ('' when invisible; the original character for a letter/digit look-alike). */
  folded: string;
  /** A look-alike of a letter or digit, resolved by its word. */
  lookAlike: LookAlike | undefined;
  /** What it tells about its word ({@link UPPER}, {@link LOWER}, {@link DIGIT}, {@link FOREIGN}, {@link BREAK}). */
  flags: number;
}

/** Memo of {@link classify} (a pure function of the code point; bounded). */
const foldings = new Map<number, Folding>();
const MAX_MEMO = 4096;

/** A look-alike entry as a folding: letters and digits wait for their word, the rest fold now. */
function lookAlikeFolding(char: string, lookAlike: LookAlike): Folding {
  const preferredFlags = asciiFlags(lookAlike.preferred);
  if (preferredFlags === BREAK) return { folded: String.fromCharCode(lookAlike.preferred), lookAlike: undefined, flags: BREAK };
  // what it tells about its word: only what all its readings agree on
  const readings = (lookAlike.upper === 0 ? 0 : UPPER) | (lookAlike.lower === 0 ? 0 : LOWER) | (lookAlike.digit === 0 ? 0 : DIGIT);
  // (never ASCII: a word of look-alikes alone is folded only when nothing in it is foreign)
  const flags = readings === UPPER || readings === LOWER || readings === DIGIT ? readings : 0;
  // The view keeps one unit for it until its word resolves it: the character itself, or its NFKC
  // form (`𝛒` → `ρ`); a look-alike outside the BMP (two units) takes its preferred reading at once.
  const kept = char.normalize('NFKC');
  return { folded: kept.length === 1 ? kept : String.fromCharCode(lookAlike.preferred), lookAlike, flags };
}

function classify(codePoint: number): Folding {
  const known = foldings.get(codePoint);
  if (known !== undefined) return known;
  const char = String.fromCodePoint(codePoint);
  let folding: Folding;
  const compatible = char.normalize('NFKC');
  const compatibleCodePoint = compatible.codePointAt(0) as number;
  const lookAlike = lookAlikeOf(codePoint) ?? (compatible.length === String.fromCodePoint(compatibleCodePoint).length ? lookAlikeOf(compatibleCodePoint) : undefined);
  if (isInvisible(codePoint)) folding = { folded: '', lookAlike: undefined, flags: 0 };
  else if (compatible.length === 1 && compatibleCodePoint < 0x80) folding = { folded: compatible, lookAlike: undefined, flags: asciiFlags(compatibleCodePoint) };
  else if (dashChar.test(char)) folding = { folded: '-', lookAlike: undefined, flags: BREAK };
  else {
    const digit = asciiDigit(char, codePoint);
    if (digit !== undefined) folding = { folded: digit, lookAlike: undefined, flags: DIGIT | ASCII };
    else if (lookAlike !== undefined) folding = lookAlikeFolding(char, lookAlike);
    else if (/^[A-Za-z0-9]+$/.test(compatible)) {
      let flags = 0;
      for (let index = 0; index < compatible.length; index++) flags |= asciiFlags(compatible.charCodeAt(index));
      folding = { folded: compatible, lookAlike: undefined, flags: flags | ASCII };
    } else folding = { folded: compatible, lookAlike: undefined, flags: letterOrDigit.test(compatible) ? FOREIGN : BREAK };
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
 * normalizeForMatching('key \u202Emoc.elpmaxe@ada').text; // 'key moc.elpmaxe@ada\n<\nkey ada@example.com'
 * ```
 */
export function normalizeForMatching(text: string, options: NormalizeOptions = {}): NormalizedText {
  const decoded = decodeForReading(text, { json: options.json ?? false, markup: options.decode ?? true });
  const base = decoded?.text ?? text;
  const stored = decoded === undefined ? fold(base) : composeMapped(fold(base), decoded);
  if (asciiOnly.test(base)) return stored;
  const display = displayOrder(base);
  if (display === undefined) return stored;
  const reordered = composeMapped(fold(display.text), display);
  return appendDisplay(stored, decoded === undefined ? reordered : composeMapped(reordered, decoded), text.length);
}

/**
 * Between the stored text and the display-order paragraphs: a line holding `<`, which ends every
 * preset rule (no rule's characters include `<` or crosses a line with it).
 */
const DISPLAY_SEPARATOR = '\n<\n';

/** `stored` followed by `display` (both mapped to the original, of length `originalLength`). */
function appendDisplay(stored: MappedText, display: MappedText, originalLength: number): NormalizedText {
  const storedLength = stored.text.length;
  const length = storedLength + DISPLAY_SEPARATOR.length + display.text.length;
  const starts = new Int32Array(length);
  const ends = new Int32Array(length);
  for (let index = 0; index < storedLength; index++) {
    starts[index] = stored.starts === undefined ? index : (stored.starts[index] as number);
    ends[index] = stored.ends === undefined ? index + 1 : (stored.ends[index] as number);
  }
  starts.fill(originalLength, storedLength, storedLength + DISPLAY_SEPARATOR.length);
  ends.fill(originalLength, storedLength, storedLength + DISPLAY_SEPARATOR.length);
  const offset = storedLength + DISPLAY_SEPARATOR.length;
  for (let index = 0; index < display.text.length; index++) {
    starts[offset + index] = display.starts === undefined ? index : (display.starts[index] as number);
    ends[offset + index] = display.ends === undefined ? index + 1 : (display.ends[index] as number);
  }
  return { text: stored.text + DISPLAY_SEPARATOR + display.text, starts, ends, storedLength };
}

/** Punctuation inside a value (`1.0.0.1`, `12-34`, `a:b`, `a/b`): a word with no reading of its own takes the next one's. */
const JOINERS = [0x2e, 0x2d, 0x3a, 0x2f];

/** The folding stage of the view (invisible characters, NFKC, digits, dashes, look-alikes). */
function fold(text: string): MappedText {
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
  // Look-alikes of the current word (view offset, entry), resolved when the word ends.
  const pending: Array<[number, LookAlike]> = [];
  let wordFlags = 0;
  // Look-alikes of words that gave no reading (`О` alone), waiting for the next word's (`О.О.1`).
  let carried = 0;
  const endWord = (breakUnit: number) => {
    if (pending.length > carried) {
      const own = pending.length - carried;
      if ((wordFlags & ASCII) === 0 && (wordFlags & FOREIGN) !== 0) {
        // a word written in another script: its look-alikes stay as written
        pending.length = carried;
      } else if ((wordFlags & (UPPER | LOWER | DIGIT)) === 0 && JOINERS.includes(breakUnit)) {
        carried += own;
        wordFlags = 0;
        return;
      }
    }
    if (pending.length > 0) resolveLookAlikes(codes, pending, wordFlags);
    pending.length = 0;
    carried = 0;
    wordFlags = 0;
  };
  let at = 0;
  for (let index = 0; index < text.length; ) {
    const start = index;
    const unit = text.charCodeAt(index);
    if (unit < 0x80) {
      index++;
      const flags = asciiFlags(unit);
      if (flags === BREAK) {
        if (wordFlags !== 0 || pending.length > 0) endWord(unit);
      } else wordFlags |= flags;
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
    if (folding.flags === BREAK) endWord(folded.charCodeAt(0));
    else wordFlags |= folding.flags;
    if (folding.lookAlike !== undefined) pending.push([at, folding.lookAlike]);
    for (let offset = 0; offset < folded.length; offset++) {
      codes[at] = folded.charCodeAt(offset);
      starts[at] = start;
      ends[at] = index;
      at++;
    }
  }
  endWord(0);
  return { text: utf16.decode(codes), starts, ends };
}

/**
 * Writes the ASCII readings of look-alikes (the caller keeps those of a word written in another
 * script as they are). Where a look-alike's class has several readings, the word
 * picks, in this order: a word of digits only, or of nothing that gives a reading (`ΟΙ`, `О.О`) —
 * the digit; a letter or number — the member of its category (Cyrillic `О`: `O`; `〇`: `0`);
 * a symbol next to a digit — the digit; a symbol in a word of capitals only — the capital, of
 * lowercase only — the lowercase letter; otherwise Unicode's prototype (`l` for `∣`).
 */
function resolveLookAlikes(codes: Uint16Array, pending: ReadonlyArray<[number, LookAlike]>, flags: number): void {
  const cased = flags & (UPPER | LOWER | DIGIT);
  for (const [at, lookAlike] of pending) {
    const reading =
      cased === DIGIT || cased === 0 ? lookAlike.digit
      : lookAlike.byCategory ? lookAlike.preferred
      : isDigitUnit(codes[at - 1]) || isDigitUnit(codes[at + 1]) ? lookAlike.digit
      : (cased & (UPPER | LOWER)) === UPPER ? lookAlike.upper
      : (cased & (UPPER | LOWER)) === LOWER ? lookAlike.lower
      : 0;
    codes[at] = reading === 0 ? lookAlike.preferred : reading;
  }
}

const isDigitUnit = (unit: number | undefined) => unit !== undefined && unit >= 0x30 && unit <= 0x39;

/** The original span of the view's span `[start, end)` (`end > start`). */
export function originalSpan(view: NormalizedText, start: number, end: number): { start: number; end: number } {
  if (view.starts === undefined || view.ends === undefined) return { start, end };
  if (view.storedLength === undefined || end <= view.storedLength) return { start: view.starts[start] as number, end: view.ends[end - 1] as number };
  // display order: the characters of a span came from anywhere in the original paragraph
  let first = Number.POSITIVE_INFINITY;
  let last = 0;
  for (let index = start; index < end; index++) {
    first = Math.min(first, view.starts[index] as number);
    last = Math.max(last, view.ends[index] as number);
  }
  return { start: first, end: last };
}

/** The view's offset of original offset `offset` (the first view character at or after it). */
export function viewOffset(view: NormalizedText, offset: number): number {
  const starts = view.starts;
  if (starts === undefined) return offset;
  let low = 0;
  let high = view.storedLength ?? starts.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((starts[middle] as number) < offset) low = middle + 1;
    else high = middle;
  }
  return low;
}
