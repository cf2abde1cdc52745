/**
 * The encodings a reader undoes on the way to the screen, undone before the guards match (the
 * first stage of the normalised view, see `normalized-text.ts`). Each decoded character keeps the
 * span of the original text it came from, so a match is redacted in its encoded form.
 *
 * - `json` (streamed tool-call arguments, which are JSON text): string escapes — `\uXXXX`
 *   (surrogate pairs included), `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t` — as the client's
 *   (partial) JSON parse and the tool see them.
 * - `markup` (every channel: chat clients render text as Markdown or HTML, and follow links):
 *   HTML character references (decimal `&#64;`, hex `&#x40;`, any number of digits as HTML reads
 *   them — `&#0000000064;` —, and the HTML standard's named ones,
 *   `&commat;`, `&Aopf;`…, legacy ones such as `&amp` without `;` too); Markdown backslash escapes
 *   of ASCII punctuation (`\-`, `\@`, `\.`); and percent-encoded UTF-8 (`%40`, `%E2%80%8B`), which a
 *   link's target reaches its server (and the address bar) decoded as.
 *
 * One pass per stage, left to right, no decoding of what a decoding produced (`&amp;#64;` reads
 * `&#64;`, as on screen). Linear in the text; a text with nothing to decode is not copied.
 */
import { LEGACY_NAMES, NAMED_REFERENCES } from './html-entities.js';

/** A text derived from an original, with the original span of each of its UTF-16 units. */
export interface MappedText {
  readonly text: string;
  /** `starts[i]` / `ends[i]`: the original span unit `i` came from; `undefined`: the identity. */
  readonly starts: Int32Array | undefined;
  readonly ends: Int32Array | undefined;
}

/** Which encodings to undo. */
export interface DecodeOptions {
  json: boolean;
  markup: boolean;
}

/** Output units and their original spans, grown as a stage decodes. */
class MappedBuilder {
  private readonly units: number[] = [];
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];

  /** `text` (decoded), all of it from the original span `[start, end)`. */
  add(text: string, start: number, end: number): void {
    for (let index = 0; index < text.length; index++) {
      this.units.push(text.charCodeAt(index));
      this.starts.push(start);
      this.ends.push(end);
    }
  }

  /** The original's units `[from, to)` unchanged. */
  copy(source: string, from: number, to: number): void {
    for (let index = from; index < to; index++) {
      this.units.push(source.charCodeAt(index));
      this.starts.push(index);
      this.ends.push(index + 1);
    }
  }

  build(): MappedText {
    let text = '';
    for (let index = 0; index < this.units.length; index += 8192) text += String.fromCharCode(...this.units.slice(index, index + 8192));
    return { text, starts: Int32Array.from(this.starts), ends: Int32Array.from(this.ends) };
  }
}

const JSON_SIMPLE: Readonly<Record<string, string>> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const hex4 = /^[0-9a-fA-F]{4}$/;

/** JSON string escapes undone. */
function decodeJson(text: string): MappedText | undefined {
  if (!text.includes('\\')) return undefined;
  const out = new MappedBuilder();
  let copied = 0;
  for (let index = 0; index < text.length - 1; index++) {
    if (text.charCodeAt(index) !== 0x5c) continue;
    const next = text[index + 1] as string;
    let decoded: string | undefined;
    let length = 2;
    if (next === 'u' && hex4.test(text.slice(index + 2, index + 6))) {
      decoded = String.fromCharCode(Number.parseInt(text.slice(index + 2, index + 6), 16));
      length = 6;
    } else decoded = JSON_SIMPLE[next];
    if (decoded === undefined) {
      index++; // `\x`: not an escape; its second character starts nothing either
      continue;
    }
    out.copy(text, copied, index);
    out.add(decoded, index, index + length);
    copied = index + length;
    index += length - 1;
  }
  if (copied === 0) return undefined;
  out.copy(text, copied, text.length);
  return out.build();
}

let namedReferences: Map<string, string> | undefined;
let legacyNames: Set<string> | undefined;

/** The named references, parsed on first use. */
function named(): Map<string, string> {
  if (namedReferences === undefined) {
    namedReferences = new Map();
    for (const entry of NAMED_REFERENCES.split(' ')) {
      const [name, codes] = entry.split(':') as [string, string];
      namedReferences.set(name, String.fromCodePoint(...codes.split('.').map((code) => Number.parseInt(code, 16))));
    }
    legacyNames = new Set(LEGACY_NAMES.split(' '));
  }
  return namedReferences;
}

const ASCII_PUNCTUATION = new Set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~');
/** Any number of digits, leading zeros included, as the HTML tokenizer reads them (`&#0000000064;` is `@`). */
const numericReference = /&#(?:[xX]([0-9a-fA-F]+)|([0-9]+));?/y;
const namedReference = /&([A-Za-z][A-Za-z0-9]{0,31})(;?)/y;
const percentByte = /%([0-9a-fA-F]{2})/y;

/**
 * What HTML reads a numeric reference to U+0080–U+009F as (the Windows-1252 characters; the HTML
 * standard's "numeric character reference end state"); the five left out read as themselves.
 */
const C1_READINGS: Readonly<Record<number, number>> = {
  0x80: 0x20ac, 0x82: 0x201a, 0x83: 0x0192, 0x84: 0x201e, 0x85: 0x2026, 0x86: 0x2020, 0x87: 0x2021, 0x88: 0x02c6, 0x89: 0x2030,
  0x8a: 0x0160, 0x8b: 0x2039, 0x8c: 0x0152, 0x8e: 0x017d, 0x91: 0x2018, 0x92: 0x2019, 0x93: 0x201c, 0x94: 0x201d, 0x95: 0x2022,
  0x96: 0x2013, 0x97: 0x2014, 0x98: 0x02dc, 0x99: 0x2122, 0x9a: 0x0161, 0x9b: 0x203a, 0x9c: 0x0153, 0x9e: 0x017e, 0x9f: 0x0178,
};

/** The value of a reference's digits, capped just above U+10FFFF (so any length reads as one number). */
function referenceValue(digits: string, radix: number): number {
  let value = 0;
  for (let index = 0; index < digits.length && value <= 0x10ffff; index++) value = value * radix + Number.parseInt(digits[index] as string, radix);
  return value;
}

/** The character of a numeric reference (invalid code points read as U+FFFD, as in HTML). */
function fromCodePoint(codePoint: number): string {
  if (codePoint === 0 || codePoint > 0x10ffff || (codePoint >= 0xd800 && codePoint <= 0xdfff)) return '\uFFFD';
  return String.fromCodePoint(C1_READINGS[codePoint] ?? codePoint);
}

/** A character reference at `index` (`&…`): its text and length, or `undefined`. */
function reference(text: string, index: number): [string, number] | undefined {
  numericReference.lastIndex = index;
  const numeric = numericReference.exec(text);
  if (numeric !== null) {
    const codePoint = numeric[1] === undefined ? referenceValue(numeric[2] as string, 10) : referenceValue(numeric[1], 16);
    return [fromCodePoint(codePoint), numeric[0].length];
  }
  namedReference.lastIndex = index;
  const match = namedReference.exec(text);
  if (match === null) return undefined;
  const name = match[1] as string;
  const table = named();
  if (match[2] === ';') {
    const value = table.get(name);
    if (value !== undefined) return [value, name.length + 2];
  }
  // legacy names decode without `;`: the longest one the run starts with
  for (let length = Math.min(name.length, 6); length >= 2; length--) {
    const prefix = name.slice(0, length);
    if (legacyNames?.has(prefix) === true) return [table.get(prefix) as string, length + 1];
  }
  return undefined;
}

/** Percent-encoded UTF-8 at `index`: the decoded characters with their spans, or `undefined`. */
function percentEncoded(text: string, index: number): { chars: Array<[string, number, number]>; end: number } | undefined {
  const bytes: number[] = [];
  const at: number[] = [];
  percentByte.lastIndex = index;
  for (let match = percentByte.exec(text); match !== null; match = percentByte.exec(text)) {
    at.push(match.index);
    bytes.push(Number.parseInt(match[1] as string, 16));
  }
  if (bytes.length === 0) return undefined;
  const chars: Array<[string, number, number]> = [];
  for (let next = 0; next < bytes.length; ) {
    const lead = bytes[next] as number;
    const size = lead < 0x80 ? 1 : lead >> 5 === 6 ? 2 : lead >> 4 === 14 ? 3 : lead >> 3 === 30 ? 4 : 0;
    let codePoint = size === 1 ? lead : size === 2 ? lead & 0x1f : size === 3 ? lead & 0x0f : lead & 0x07;
    let valid = size > 0 && next + size <= bytes.length;
    for (let offset = 1; valid && offset < size; offset++) {
      const byte = bytes[next + offset] as number;
      valid = (byte & 0xc0) === 0x80;
      codePoint = (codePoint << 6) | (byte & 0x3f);
    }
    const minimum = [0, 0, 0x80, 0x800, 0x10000][size] as number;
    if (valid && codePoint >= minimum && codePoint <= 0x10ffff && !(codePoint >= 0xd800 && codePoint <= 0xdfff)) {
      chars.push([String.fromCodePoint(codePoint), at[next] as number, (at[next + size - 1] as number) + 3]);
      next += size;
    } else {
      chars.push([text.slice(at[next] as number, (at[next] as number) + 3), -1, at[next] as number]);
      next++;
    }
  }
  return { chars, end: (at[at.length - 1] as number) + 3 };
}

const markupTrigger = /[&\\%]/;

/** HTML character references, Markdown backslash escapes and percent-encoded UTF-8 undone. */
function decodeMarkup(text: string): MappedText | undefined {
  if (!markupTrigger.test(text)) return undefined;
  const out = new MappedBuilder();
  let copied = 0;
  let changed = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === 0x5c) {
      const next = text[index + 1];
      if (next === undefined || !ASCII_PUNCTUATION.has(next)) continue;
      out.copy(text, copied, index);
      out.add(next, index, index + 2);
      copied = index + 2;
      index++;
      changed = true;
    } else if (code === 0x26) {
      const found = reference(text, index);
      if (found === undefined) continue;
      out.copy(text, copied, index);
      out.add(found[0], index, index + found[1]);
      copied = index + found[1];
      index = copied - 1;
      changed = true;
    } else if (code === 0x25) {
      const found = percentEncoded(text, index);
      if (found === undefined) continue;
      out.copy(text, copied, index);
      for (const [chars, start, end] of found.chars) {
        if (start === -1) out.copy(text, end, end + 3);
        else {
          out.add(chars, start, end);
          changed = true;
        }
      }
      copied = found.end;
      index = copied - 1;
    }
  }
  if (!changed) return undefined;
  out.copy(text, copied, text.length);
  return out.build();
}

/**
 * `outer` (a mapping over `inner.text`) mapped back to `inner`'s original: the spans compose.
 */
export function composeMapped(outer: MappedText, inner: MappedText): MappedText {
  if (inner.starts === undefined || inner.ends === undefined) return outer;
  if (outer.starts === undefined || outer.ends === undefined) return { text: outer.text, starts: inner.starts, ends: inner.ends };
  const starts = new Int32Array(outer.text.length);
  const ends = new Int32Array(outer.text.length);
  for (let index = 0; index < outer.text.length; index++) {
    starts[index] = inner.starts[outer.starts[index] as number] as number;
    ends[index] = inner.ends[(outer.ends[index] as number) - 1] as number;
  }
  return { text: outer.text, starts, ends };
}

/**
 * `text` with the chosen encodings undone (JSON first, then markup), or `undefined` when nothing
 * was decoded.
 *
 * @example
 * ```ts
 * decodeForReading('{"to":"ada\\u0040example.com"}', { json: true, markup: true })?.text; // '{"to":"ada@example.com"}'
 * ```
 */
export function decodeForReading(text: string, options: DecodeOptions): MappedText | undefined {
  const json = options.json ? decodeJson(text) : undefined;
  if (!options.markup) return json;
  if (json === undefined) return decodeMarkup(text);
  const markup = decodeMarkup(json.text);
  return markup === undefined ? json : composeMapped(markup, json);
}
