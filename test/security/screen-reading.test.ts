/**
 * The normalised view reads like the screen (issue 31 §2), by example: what each fold does, how a
 * match in display order maps back to the written span, and what stays as it is.
 */
import { describe, expect, it } from 'vitest';
import { normalizeForMatching, originalSpan } from '../../src/processors/internal/normalized-text.js';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { runOutputStream, streamedText, textBlock } from '../processors/support/harness.js';

const redact = (text: string) => new RegexFilterProcessor({ presets: ['pii', 'secrets', 'urls'], strategy: 'redact' }).redactText(text);
const stored = (text: string) => {
  const view = normalizeForMatching(text);
  return view.text.slice(0, view.storedLength ?? view.text.length);
};

describe('confusables and dashes', () => {
  it('folds look-alikes to the ASCII character they read as, by word and category', () => {
    expect(stored('ЗОО–12—1234')).toBe('300-12-1234'); // Cyrillic Ze and O among digits, en and em dash
    expect(stored('аdа@ехаmрlе.соm')).toBe('ada@example.com'); // a word of look-alikes alone
    expect(stored('1О.О.О.1')).toBe('10.0.0.1'); // a lone `О` takes the reading of the next word
    expect(stored('ІD 〇7')).toBe('ID 07'); // Cyrillic І is a capital I; U+3007 a number
    expect(stored('𝛒ꮪ')).toBe('ps'); // an astral look-alike is one character of the view
  });

  it('folds every dash (\\p{Pd}) and the minus signs to `-`', () => {
    const dashes = ['\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2e3a', '\ufe58', '\u2212', '\u2796', '\u02d7'];
    for (const dash of dashes) expect(redact(`ssn 123${dash}45${dash}6789 ok`), `U+${(dash.codePointAt(0) as number).toString(16)}`).toBe('ssn [SSN] ok');
  });

  it('leaves text written in another script alone', () => {
    expect(stored('Привет, мир')).toBe('Привет, мир');
    expect(stored('Καλημέρα')).toBe('Καλημέρα');
  });
});

describe('display order', () => {
  it('adds paragraphs with bidi controls in display order, mapped back to the written span', () => {
    const text = 'key \u202EELPMAXE7NNDOFSOIAIKA\u202C ok';
    const view = normalizeForMatching(text);
    expect(view.text.slice(0, view.storedLength)).toBe('key ELPMAXE7NNDOFSOIAIKA ok');
    const at = view.text.indexOf('AKIAIOSFODNN7EXAMPLE');
    expect(at).toBeGreaterThan(view.storedLength as number);
    expect(originalSpan(view, at, at + 20)).toEqual({ start: 5, end: 25 });
    expect(redact(text)).toBe('key \u202E[AWS_KEY]\u202C ok');
  });

  it('a value written backwards behind RLO, streamed in pieces, is redacted before any of it shows', async () => {
    const filter = new RegexFilterProcessor({ presets: ['pii'], strategy: 'redact' });
    const output = await runOutputStream([filter], [...textBlock(['mail: \u202Emoc.elp', 'maxe@ev', 'olada\u202C', ' done']), chunk.finish()]);
    expect(streamedText(output)).toBe('mail: \u202E[EMAIL]\u202C done');
  });

  it('costs nothing for text without bidi controls (no display part)', () => {
    expect(normalizeForMatching('שלום ada@example.com').storedLength).toBeUndefined();
  });
});

describe('numeric character references as browsers read them', () => {
  it('of any length, leading zeros included', () => {
    expect(stored('ada&#0000000064;example.com')).toBe('ada@example.com');
    expect(stored('ada&#x00000000040;example.com')).toBe('ada@example.com');
    expect(redact('ada&#000000000000000000000000064;example.com')).toBe('[EMAIL]');
  });

  it('out of range reads U+FFFD, and U+0080–U+009F as Windows-1252', () => {
    expect(stored('&#99999999999999999999;')).toBe('\uFFFD');
    expect(stored('&#150;')).toBe('-'); // U+2013 EN DASH, folded
    expect(stored('&#128;')).toBe('€');
  });
});
