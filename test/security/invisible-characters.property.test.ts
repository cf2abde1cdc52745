/**
 * Invisible characters (issue 24 §3): every default-ignorable code point of the Unicode version
 * the pinned Node ships — the full property set, enumerated with `\p{Default_Ignorable_Code_Point}`
 * — is dropped from the guards' normalised view and by `UnicodeNormalizer({ stripControlChars })`;
 * no other character folds into one.
 *
 * Property case counts: `RXAGENT_PROPERTY_RUNS` each (CI default 1,000; `npm run test:soak` 20,000).
 */
import fc from 'fast-check';
import { from, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { processOutputStream } from '../../src/operators/process-output-stream.js';
import { createRunContext } from '../../src/operators/run-context.js';
import { normalizeForMatching, originalSpan } from '../../src/processors/internal/normalized-text.js';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { UnicodeNormalizer } from '../../src/processors/unicode-normalizer.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { checkProperty, expectNone, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';
import { flattenChunks, leaks } from './support/leak-harness.js';
import { presetSecret } from './support/secrets.js';

const defaultIgnorable = /^\p{Default_Ignorable_Code_Point}$/u;
const anyInvisible = /[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Me}]/u;

/** Every default-ignorable code point (surrogates excluded: they are not characters). */
const IGNORABLE: readonly string[] = (() => {
  const found: string[] = [];
  for (let codePoint = 0; codePoint <= 0x10ffff; codePoint++) {
    if (codePoint >= 0xd800 && codePoint <= 0xdfff) continue;
    const char = String.fromCodePoint(codePoint);
    if (defaultIgnorable.test(char)) found.push(char);
  }
  return found;
})();

const hex = (char: string) => `U+${(char.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`;

describe(`every Default_Ignorable_Code_Point of Unicode ${process.versions.unicode ?? '?'}`, () => {
  it('the property set is the full one (Unicode 15.1+ lists 4,174 code points)', () => {
    expect(IGNORABLE.length).toBeGreaterThanOrEqual(4174);
    // the ones hand-made lists used to miss, among them
    for (const char of ['\u17B4', '\u17B5', '\u180B', '\u180F', '\u2065', '\uFFF0', '\u{E0000}', '\u{E0FFF}']) expect(IGNORABLE).toContain(char);
  });

  it('is dropped from the normalised view, and the view maps back around it', () => {
    const problems: string[] = [];
    for (const char of IGNORABLE) {
      const original = `A${char}B`;
      const view = normalizeForMatching(original);
      // (a bidi control also adds its paragraph in display order after the stored text: `storedLength`)
      const stored = view.text.slice(0, view.storedLength ?? view.text.length);
      if (stored !== 'AB') problems.push(`${hex(char)}: view ${JSON.stringify(view.text)}`);
      else if (originalSpan(view, 0, 2).end !== original.length) problems.push(`${hex(char)}: span ${JSON.stringify(originalSpan(view, 0, 2))}`);
    }
    expectNone(problems, 'normalised view');
  });

  it('inside a secret, the secret is still found and redacted whole', () => {
    const filter = new RegexFilterProcessor({ presets: ['secrets'], strategy: 'redact' });
    const problems = IGNORABLE.filter((char) => filter.redactText(`key AKIA${char}QWERTYUIOPASDFGH end`) !== 'key [AWS_KEY] end').map(hex);
    expectNone(problems, 'AKIA… with the character inside');
  });

  it('is removed by UnicodeNormalizer({ stripControlChars: true }), with and without preserveEmojis', () => {
    const problems: string[] = [];
    for (const preserveEmojis of [true, false]) {
      const normalizer = new UnicodeNormalizer({ stripControlChars: true, preserveEmojis });
      for (const char of IGNORABLE) {
        const result = normalizer.normalize(`pass${char}word`);
        if (result !== 'password') problems.push(`${hex(char)} (preserveEmojis ${preserveEmojis}): ${JSON.stringify(result)}`);
      }
    }
    expectNone(problems, 'UnicodeNormalizer');
  });

  it('no other code point folds (NFKC) into an invisible one, so the view never keeps one', () => {
    const problems: string[] = [];
    for (let codePoint = 0; codePoint <= 0x10ffff; codePoint++) {
      if (codePoint >= 0xd800 && codePoint <= 0xdfff) continue;
      const char = String.fromCodePoint(codePoint);
      if (!anyInvisible.test(char) && anyInvisible.test(char.normalize('NFKC'))) problems.push(hex(char));
    }
    expectNone(problems, 'NFKC forms holding an invisible character');
  });
});

/** A secret with default-ignorable code points inserted anywhere (1–8 of them). */
const obfuscatedSecret = fc
  .record({
    secret: presetSecret.map(({ prefix, rest }) => prefix + rest),
    inserted: fc.array(fc.tuple(fc.nat(), fc.nat({ max: IGNORABLE.length - 1 })), { minLength: 1, maxLength: 8 }),
  })
  .map(({ secret, inserted }) => {
    const chars = [...secret];
    for (const [at, pick] of inserted) chars.splice(1 + (at % (chars.length - 1)), 0, IGNORABLE[pick] as string);
    return { plain: secret, written: chars.join('') };
  });

describe('invisible characters (property-based)', () => {
  it(
    'a secret with any default-ignorable characters inside, split anywhere, never streams',
    async () => {
      const sizes = fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 20 });
      await checkProperty('invisible-stream', fc.tuple(obfuscatedSecret, sizes), async ([{ written }, cut]) => {
        const text = `Here it is: ${written} and done.`;
        const deltas: string[] = [];
        for (let at = 0, index = 0; at < text.length; index++) {
          const size = cut[index % cut.length] as number;
          deltas.push(text.slice(at, at + size));
          at += size;
        }
        const input = [chunk.textStart(), ...deltas.map((delta) => chunk.textDelta(delta)), chunk.textEnd(), chunk.finish()];
        const filter = new RegexFilterProcessor({ presets: ['pii', 'secrets', 'urls'], strategy: 'redact' });
        const output = await lastValueFrom(from(input).pipe(processOutputStream([filter], createRunContext()), toArray()));
        const seen = leaks([{ consumer: 'stream', seen: flattenChunks(output) }], written);
        if (seen.length > 0) throw new Error(`leaked ${JSON.stringify(written)}`);
      });
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'UnicodeNormalizer: text with default-ignorable characters inserted normalises like the text without them',
    async () => {
      const normalizer = new UnicodeNormalizer({ stripControlChars: true, preserveEmojis: false });
      // letters with combining accents, full-width forms, ligatures and spaces: NFKC has work to do
      const visible = fc.string({ unit: fc.constantFrom(...'abcé\u0301\u0308ＡＢ１ﬁ ñ\u0303'), minLength: 1, maxLength: 20 });
      const inserted = fc.array(fc.tuple(fc.nat(), fc.nat({ max: IGNORABLE.length - 1 })), { minLength: 1, maxLength: 6 });
      await checkProperty('invisible-normalizer', fc.tuple(visible, inserted), async ([text, picks]) => {
        const chars = [...text];
        for (const [at, pick] of picks) chars.splice(at % (chars.length + 1), 0, IGNORABLE[pick] as string);
        const written = chars.join('');
        const expected = normalizer.normalize(text);
        const actual = normalizer.normalize(written);
        if (actual !== expected) throw new Error(`${JSON.stringify(written)} → ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
      });
    },
    PROPERTY_TIMEOUT_MS,
  );
});
