/**
 * Issue 24 §17: the default tokenizer loads without stalling the event loop (the ranks are read
 * asynchronously and parsed in slices), and it encodes exactly as `gpt-tokenizer`'s `o200k_base`
 * does: the same token ids for any text (letters of many scripts, marks, digits, emoji and other
 * astral characters, contractions, whitespace runs and line breaks, special-token look-alikes).
 * The event-loop delay itself is measured by `bench/tokenizer-load.ts` (not a timed assertion here).
 *
 * Case counts: `RXAGENT_PROPERTY_RUNS` (CI 1,000, soak 20,000).
 */
import fc from 'fast-check';
import { decode as referenceDecode, encode as referenceEncode } from 'gpt-tokenizer/encoding/o200k_base';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadO200k, type Tokenizer } from '../../src/processors/internal/o200k-tokenizer.js';
import { checkProperty, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';

const asText = { disallowedSpecial: new Set<string>() };

/** Pieces text is built from: every class the pre-tokenizer distinguishes, and what BPE merges. */
const piece = fc.oneof(
  fc.constantFrom(' ', '  ', '\n', '\r\n', '\t', ' \n ', '\n\n', '   \t'),
  fc.constantFrom("'s", "'T", "'re", "'Ve", "'m", "'LL", "'d", "n't", "'"),
  fc.stringMatching(/^[a-zA-Z]{1,12}$/),
  fc.stringMatching(/^[0-9]{1,7}$/),
  fc.constantFrom('é', 'ß', 'ñ', 'Ω', 'Жизнь', 'δοκιμή', 'עברית', 'العربية', '日本語', '한국어', 'हिन्दी', 'e\u0301', 'Å'),
  fc.constantFrom('😀', '👩‍💻', '🇫🇷', '1️⃣', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', '\u{10FFFF}', '\u200b'),
  fc.constantFrom('<|endoftext|>', '<|im_start|>', '{"a": [1, 2]}', '...', '!!!', '/', '//', 'https://x.io/a?b=c', '$$', '—', '«»'),
  fc.string({ minLength: 1, maxLength: 6 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 4 }),
);
const textArbitrary = fc.array(piece, { maxLength: 40 }).map((pieces) => pieces.join(''));

let tokenizer: Tokenizer;
beforeAll(async () => {
  tokenizer = await loadO200k();
}, 60_000);

describe('o200k tokenizer loaded in slices (property-based)', () => {
  it(
    'encodes any text to exactly the token ids of gpt-tokenizer',
    async () => {
      await checkProperty('o200k-exact', textArbitrary, async (text) => {
        const ours = tokenizer.encode(text, asText);
        const reference = referenceEncode(text, asText);
        if (JSON.stringify(ours) !== JSON.stringify(reference)) {
          throw new Error(`${JSON.stringify(text)}: ${JSON.stringify(ours)} ≠ ${JSON.stringify(reference)}`);
        }
        if (tokenizer.countTokens(text, asText) !== reference.length) throw new Error('countTokens disagrees with encode');
      });
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'decodes any prefix of the tokens to a prefix of the text (an incomplete character is dropped, never garbled)',
    async () => {
      await checkProperty('o200k-decode-prefix', fc.tuple(textArbitrary, fc.nat()), async ([text, cut]) => {
        const tokens = tokenizer.encode(text, asText);
        if (tokenizer.decode(tokens) !== text) throw new Error(`round trip of ${JSON.stringify(text)}`);
        const prefix = tokenizer.decode(tokens.slice(0, tokens.length === 0 ? 0 : cut % (tokens.length + 1)));
        if (!text.startsWith(prefix) || prefix.includes('\uFFFD')) throw new Error(`prefix ${JSON.stringify(prefix)} of ${JSON.stringify(text)}`);
      });
    },
    PROPERTY_TIMEOUT_MS,
  );

  it('known values and long inputs agree with gpt-tokenizer', () => {
    for (const text of ['hello world', "I'm here, aren't you?", '12345678901', 'a'.repeat(600), ' '.repeat(300) + 'x', '日本語のテキスト'.repeat(50)]) {
      expect(tokenizer.encode(text, asText)).toEqual(referenceEncode(text, asText));
      expect(tokenizer.decode(tokenizer.encode(text, asText))).toBe(referenceDecode(referenceEncode(text, asText)));
    }
  });
});
