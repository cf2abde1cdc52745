/**
 * Guards see content as the client will see it (issue 24 §1): secrets written with JSON escapes
 * in streamed tool-call arguments, and with the encodings a Markdown/HTML renderer or a browser
 * undoes, are caught; encodings a reader must undo deliberately are not decoded (docs/security.md).
 */
import { describe, expect, it } from 'vitest';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { normalizeForMatching } from '../../src/processors/internal/normalized-text.js';
import { chunk as builders } from '../../src/testing/chunk-builders.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { runOutputStream } from '../processors/support/harness.js';
import { ENCODED_INPUT_PATHS, pieces, shownToolInput } from './support/encoded-input.js';

const chunk = {
  ...builders,
  toolCallDeltaLike: (argsTextDelta: string): ChunkType => ({ type: 'tool-call-delta', runId: builders.runId, from: 'AGENT', payload: { toolCallId: 'c1', argsTextDelta } }),
};

const guards = () => [new RegexFilterProcessor({ presets: ['pii', 'secrets', 'urls'], strategy: 'redact' })];
const view = (text: string) => normalizeForMatching(text).text;

describe('JSON escapes in streamed tool-call arguments', () => {
  const cases: Array<[string, string, string]> = [
    ['sk\\u002dproj…', '{"query":"key sk\\u002dproj1234567890abcdefghij now"}', 'sk-proj1234567890abcdefghij'],
    ['ada\\u0040example.com', '{"query":"mail ada\\u0040example.com now"}', 'ada@example.com'],
    ['https:\\/\\/…', '{"query":"see https:\\/\\/evil.example\\/x?k=1 now"}', 'https://evil.example/x?k=1'],
    ['every character escaped', `{"query":"${[...'AKIAQWERTYUIOPASDFGH'].map((char) => `\\u00${char.charCodeAt(0).toString(16)}`).join('')}"}`, 'AKIAQWERTYUIOPASDFGH'],
    ['a surrogate pair and an escaped key', '{"ada\\u0040example.com":"\\ud83d\\ude00"}', 'ada@example.com'],
  ];
  for (const path of ENCODED_INPUT_PATHS) {
    for (const [name, argsText, secret] of cases) {
      it(`${path}: ${name} — not shown at any point of the client's partial parse`, async () => {
        for (const size of [1, 3, 7, argsText.length]) {
          const shown = await shownToolInput(path, pieces(argsText, [size]), guards);
          expect(shown.length, `${path} split ${size}: the client was shown something`).toBeGreaterThan(0);
          const leaked = shown.filter((text) => view(text).includes(secret));
          expect(leaked, `${path} split ${size}`).toEqual([]);
        }
      });
    }
  }

  it('JSON escapes in tool input are decoded even with normalize: false (they are what the arguments mean)', async () => {
    const raw = () => [new RegexFilterProcessor({ presets: ['pii'], strategy: 'redact', normalize: false })];
    const shown = await shownToolInput('processOutputStream', pieces('{"query":"mail ada\\u0040example.com now"}', [5]), raw);
    expect(shown.filter((text) => text.includes('ada@example.com'))).toEqual([]);
    expect(raw()[0]!.redactText('mail ada&#64;example.com')).toBe('mail ada&#64;example.com'); // no markup decoding without normalize
  });

  it('the redaction is written as JSON: a replacement with quotes and backslashes keeps the arguments parseable', async () => {
    const filter = new RegexFilterProcessor({ rules: [{ name: 'id', pattern: /ID-\d+/, replacement: '"[id]" \\ ' }], strategy: 'redact' });
    const streamed = pieces('{"query":"ID-\\u00312345 ok"}', [4]).map((argsTextDelta) => chunk.toolCallDeltaLike(argsTextDelta));
    const output = await runOutputStream([filter], [...streamed, chunk.finish()]);
    const argsText = output.map((part) => (part.type === 'tool-call-delta' ? part.payload.argsTextDelta : '')).join('');
    expect(JSON.parse(argsText)).toEqual({ query: '"[id]" \\  ok' });
  });
});

describe('encodings a renderer or a browser undoes', () => {
  const redact = (text: string) => guards()[0]!.redactText(text);
  const cases: Array<[string, string, string]> = [
    ['decimal character reference', 'mail ada&#64;example.com now', 'mail [EMAIL] now'],
    ['hex character reference', 'mail ada&#x40;example.com now', 'mail [EMAIL] now'],
    ['named character reference', 'mail ada&commat;example&period;com now', 'mail [EMAIL] now'],
    ['named references of other letters (𝔸 reads A)', 'key &Aopf;KIAQWERTYUIOPASDFGH end', 'key [AWS_KEY] end'],
    ['legacy reference without ;', 'card 4111&nbsp1111 1111 1111 ok', 'card [CREDIT_CARD] ok'],
    ['an invisible character as a reference', 'key AKIA&#8203;QWERTYUIOPASDFGH end', 'key [AWS_KEY] end'],
    ['Markdown backslash escapes', 'key sk\\-proj1234567890abcdefghij and ada\\@example\\.com', 'key [SECRET_KEY] and [EMAIL]'],
    ['percent-encoding', 'key sk%2Dproj1234567890abcdefghij, mail ada%40example.com', 'key [SECRET_KEY], mail [EMAIL]'],
    ['percent-encoded UTF-8 of an invisible character', 'key AKIA%E2%80%8BQWERTYUIOPASDFGH end', 'key [AWS_KEY] end'],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => {
      expect(redact(input)).toBe(expected);
    });
  }

  it('what is decoded once is not decoded again (as on screen), and lone markers stay text', () => {
    expect(view('&amp;#64; 50% off, 100%, a \\ b, AT&T, &nosuchname;')).toBe('&#64; 50% off, 100%, a \\ b, AT&T, &nosuchname;');
    expect(view('%41%ZZ%4')).toBe('A%ZZ%4');
    expect(view('%C3%28')).toBe('%C3(');
  });

  it('encodings a reader must undo deliberately are not decoded', () => {
    const notDecoded = [
      'key c2stcHJvajEyMzQ1Njc4OTBhYmNkZWZnaGlq', // base64 of an sk- key
      'mail 616461406578616d706c652e636f6d', // hex of an e-mail address
      'key NXVNDJREGLHVBCNFQSTU', // rot13 of an AWS key
      'mail ada at example dot com',
      'mail ada\\u0040example.com', // JSON escapes in plain text (not JSON)
    ];
    for (const text of notDecoded) expect(guards()[0]!.scan(text).filter((match) => match.rule !== 'url'), text).toEqual([]);
  });
});
