/**
 * Text in the order a reader sees it: paragraphs that hold a bidi override or isolate control
 * (U+202A–U+202E, U+2066–U+2069) reordered by the Unicode Bidirectional Algorithm (UAX #9, through
 * `bidi-js`), with right-to-left mirrored characters swapped, each character mapped back to the
 * span it was written at. A value written backwards behind RIGHT-TO-LEFT OVERRIDE
 * (`\u202E` + `moc.elpmaxe@ada`) reads forwards here (`ada@example.com`).
 *
 * Only paragraphs holding such a control are reordered; text without one (the common case) costs
 * one regex test. Paragraphs are joined with `\n`.
 */
import bidiModule, { type Bidi } from 'bidi-js';
import type { MappedText } from './decoded-text.js';

/**
 * The package's factory: `bidi-js` is CommonJS (`module.exports = bidiFactory`) typed as an ES
 * module with a default export, so the default import is the factory at run time in every loader.
 */
const bidiFactory: () => Bidi = ((bidiModule as unknown as { default?: () => Bidi }).default ?? bidiModule) as unknown as () => Bidi;

/** The explicit embedding, override and isolate controls (LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI). */
const bidiControl = /[\u202A-\u202E\u2066-\u2069]/;

/** The algorithm's tables, built on first use (static data, shared by every run). */
let bidi: Bidi | undefined;

/** Whether `text` holds a bidi embedding, override or isolate control. */
export function hasBidiControls(text: string): boolean {
  return bidiControl.test(text);
}

/**
 * The paragraphs of `text` that hold a bidi control, in display order, or `undefined` when there
 * is none.
 *
 * @example
 * ```ts
 * displayOrder('key \u202Emoc.elpmaxe@ada\u202C')?.text; // 'key \u202C' + 'ada@example.com' + '\u202E' (controls kept; the view drops them)
 * ```
 */
export function displayOrder(text: string): MappedText | undefined {
  if (!bidiControl.test(text)) return undefined;
  bidi ??= bidiFactory();
  const levels = bidi.getEmbeddingLevels(text);
  const units: number[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  for (const paragraph of levels.paragraphs) {
    if (!bidiControl.test(text.slice(paragraph.start, paragraph.end + 1))) continue;
    if (units.length > 0) {
      units.push(0x0a);
      starts.push(paragraph.start);
      ends.push(paragraph.start);
    }
    const mirrored = bidi.getMirroredCharactersMap(text, levels.levels, paragraph.start, paragraph.end);
    const order = bidi.getReorderedIndices(text, levels, paragraph.start, paragraph.end);
    for (let position = 0; position < order.length; position++) {
      const index = order[position] as number;
      // a reversed run reverses surrogate pairs too: keep each pair in its order
      const next = order[position + 1];
      if (next === index - 1 && isLowSurrogate(text.charCodeAt(index)) && isHighSurrogate(text.charCodeAt(next))) {
        pushUnit(units, starts, ends, text.charCodeAt(next), next, index + 1);
        pushUnit(units, starts, ends, text.charCodeAt(index), next, index + 1);
        position++;
        continue;
      }
      const swapped = mirrored.get(index);
      pushUnit(units, starts, ends, swapped === undefined ? text.charCodeAt(index) : swapped.charCodeAt(0), index, index + 1);
    }
  }
  let result = '';
  for (let index = 0; index < units.length; index += 8192) result += String.fromCharCode(...units.slice(index, index + 8192));
  return { text: result, starts: Int32Array.from(starts), ends: Int32Array.from(ends) };
}

function pushUnit(units: number[], starts: number[], ends: number[], unit: number, start: number, end: number): void {
  units.push(unit);
  starts.push(start);
  ends.push(end);
}

const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;
