/**
 * Secrets that read the same to a person are caught (issue 13 §4): invisible characters,
 * full-width and other-script digits, homoglyphs — matched on a normalised view, the original
 * span redacted. And the preset misses fixed as a class (IPv4 at a sentence end or in a list).
 */
import { describe, expect, it } from 'vitest';
import { normalizeForMatching, originalSpan } from '../../src/processors/internal/normalized-text.js';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { runOutputStream, streamedText, textBlock } from '../processors/support/harness.js';

const redact = (text: string) => new RegexFilterProcessor({ presets: ['pii', 'secrets'], strategy: 'redact' }).redactText(text);

describe('normalised view', () => {
  it('maps each view character back to its original span', () => {
    const original = 'Ｋey:\u200bА1';
    const view = normalizeForMatching(original);
    expect(view.text).toBe('Key:A1');
    expect(originalSpan(view, 0, 1)).toEqual({ start: 0, end: 1 });
    expect(originalSpan(view, 4, 6)).toEqual({ start: 5, end: 7 });
  });

  it('leaves words written in Cyrillic or Greek alone and ASCII text untouched (no copy)', () => {
    expect(normalizeForMatching('Привет, мир').text).toBe('Привет, мир');
    expect(normalizeForMatching('Καλημέρα').text).toBe('Καλημέρα');
    const ascii = 'plain text';
    expect(normalizeForMatching(ascii).starts).toBeUndefined();
  });
});

describe('obfuscated secrets are redacted in their original form', () => {
  const cases: Array<[string, string, string]> = [
    ['zero-width space inside an AWS key', 'key AKIA\u200bQWERTYUIOPASDFGH end', 'key [AWS_KEY] end'],
    ['soft hyphens inside an e-mail address', 'mail ada\u00ad.love\u00adlace@example.com now', 'mail [EMAIL] now'],
    ['word joiner and BOM', 'mail ada\u2060@exa\ufeffmple.com now', 'mail [EMAIL] now'],
    ['variation selector and combining grapheme joiner', 'key AKIA\ufe0fQWERTYUIOP\u034fASDFGH end', 'key [AWS_KEY] end'],
    ['full-width letters and digits', 'key ＡＫＩＡＱＷＥＲＴＹＵＩＯＰＡＳＤＦＧＨ end', 'key [AWS_KEY] end'],
    ['full-width @', 'mail ada＠example.com now', 'mail [EMAIL] now'],
    ['Cyrillic А and К in the key prefix', 'key АКIAQWERTYUIOPASDFGH end', 'key [AWS_KEY] end'],
    ['Greek Κ in the key prefix', 'key AΚIAQWERTYUIOPASDFGH end', 'key [AWS_KEY] end'],
    ['Arabic-Indic digits in an SSN', 'ssn ١٢٣-٤٥-٦٧٨٩ ok', 'ssn [SSN] ok'],
    ['Devanagari digits in a card number', 'card ४१११ ११११ ११११ ११११ ok', 'card [CREDIT_CARD] ok'],
    ['mathematical digits in an IPv4 address', 'ip 𝟏𝟗𝟐.𝟏𝟔𝟖.𝟎.𝟏 ok', 'ip [IP_ADDRESS] ok'],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => {
      expect(redact(input)).toBe(expected);
    });
  }

  it('normalisation can be turned off (`normalize: false`)', () => {
    const filter = new RegexFilterProcessor({ presets: ['secrets'], strategy: 'redact', normalize: false });
    expect(filter.redactText('key AKIA\u200bQWERTYUIOPASDFGH end')).toBe('key AKIA\u200bQWERTYUIOPASDFGH end');
  });

  it('an obfuscated secret split across stream chunks is redacted before any of it streams', async () => {
    const filter = new RegexFilterProcessor({ presets: ['secrets'], strategy: 'redact' });
    const output = await runOutputStream([filter], [...textBlock(['key: АК', 'IA\u200bQWERTY', 'UIOPASDFGH', ' done']), chunk.finish()]);
    expect(streamedText(output)).toBe('key: [AWS_KEY] done');
  });
});

describe('IPv4 addresses in sentences and lists', () => {
  const cases: Array<[string, string]> = [
    ['The server is 10.0.0.1.', 'The server is [IP_ADDRESS].'],
    ['Hosts: 10.0.0.1, 10.0.0.2 and 192.168.1.20.', 'Hosts: [IP_ADDRESS], [IP_ADDRESS] and [IP_ADDRESS].'],
    ['Hosts: 10.0.0.1,10.0.0.2;172.16.0.3', 'Hosts: [IP_ADDRESS],[IP_ADDRESS];[IP_ADDRESS]'],
    ['(8.8.8.8)', '([IP_ADDRESS])'],
    ['- 1.1.1.1\n- 1.0.0.1!', '- [IP_ADDRESS]\n- [IP_ADDRESS]!'],
    ['Is it 127.0.0.1?', 'Is it [IP_ADDRESS]?'],
  ];
  for (const [input, expected] of cases) {
    it(JSON.stringify(input), () => {
      expect(redact(input)).toBe(expected);
    });
  }

  it('does not take version numbers or out-of-range octets for addresses', () => {
    expect(redact('version 1.2.3.4.5 and 999.1.1.1')).toBe('version 1.2.3.4.5 and 999.1.1.1');
  });
});
