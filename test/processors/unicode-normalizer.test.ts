import { describe, expect, it } from 'vitest';
import { lastValueFrom, of } from 'rxjs';
import { processInput } from '../../src/operators/process-input.js';
import { UnicodeNormalizer } from '../../src/processors/unicode-normalizer.js';
import { contextWith, dbMessage, listWith, textMessage, textOf } from './support/harness.js';

async function normalizeInput(normalizer: UnicodeNormalizer, text: string): Promise<string> {
  const list = listWith([textMessage('m1', 'user', text)]);
  const processed = await lastValueFrom(of(list).pipe(processInput([normalizer], contextWith(list))));
  return textOf(processed.get.input.db()[0]);
}

describe('UnicodeNormalizer', () => {
  it('has the reference id', () => {
    expect(new UnicodeNormalizer().id).toBe('unicode-normalizer');
  });

  it('applies NFKC: full-width letters, ideographic spaces and ligatures become plain text', async () => {
    expect(await normalizeInput(new UnicodeNormalizer(), 'Ｈｅｌｌｏ　ｗｏｒｌｄ, ﬁne')).toBe('Hello world, fine');
  });

  it('keeps control characters by default and strips them with stripControlChars (newlines and tabs stay)', async () => {
    const text = 'hid\u200Bden\u0007 text\u202E\nnext\tline';
    expect(await normalizeInput(new UnicodeNormalizer({ collapseWhitespace: false }), text)).toBe(text);
    expect(await normalizeInput(new UnicodeNormalizer({ stripControlChars: true, collapseWhitespace: false }), text)).toBe(
      'hidden text\nnext\tline',
    );
  });

  it('leaves emoji sequences alone by default, even those NFKC would change', async () => {
    const text = 'ℹ️ family 👨‍👩‍👧 flag 🇫🇷 1️⃣';
    expect(await normalizeInput(new UnicodeNormalizer(), text)).toBe(text);
    // stripControlChars keeps emoji but turns keycaps into their plain character (issue 13 §4).
    expect(await normalizeInput(new UnicodeNormalizer({ stripControlChars: true }), text)).toBe('ℹ️ family 👨‍👩‍👧 flag 🇫🇷 1');
    expect(await normalizeInput(new UnicodeNormalizer({ preserveEmojis: false }), 'ℹ info')).toBe('i info');
  });

  it('collapses whitespace and trims by default; both can be turned off', async () => {
    expect(await normalizeInput(new UnicodeNormalizer(), '  a   b\t\tc \n\n\n\n d  ')).toBe('a b c\n\nd');
    expect(await normalizeInput(new UnicodeNormalizer({ collapseWhitespace: false, trim: false }), '  a   b  ')).toBe('  a   b  ');
  });

  it('rewrites only text parts and keeps the legacy content mirror in step', async () => {
    const message = dbMessage('m1', 'user', [
      { type: 'text', text: 'Ｈｉ' },
      { type: 'file', mimeType: 'text/plain', data: 'Ｈｉ', filename: 'ｆ.txt' },
    ]);
    message.content.content = 'Ｈｉ';
    const list = listWith([message]);
    const processed = await lastValueFrom(of(list).pipe(processInput([new UnicodeNormalizer()], contextWith(list))));
    const stored = processed.get.input.db()[0];
    expect(stored?.content.parts).toEqual([
      { type: 'text', text: 'Hi' },
      { type: 'file', mimeType: 'text/plain', data: 'Ｈｉ', filename: 'ｆ.txt' },
    ]);
    expect(stored?.content.content).toBe('Hi');
  });

  it('stripControlChars also removes variation selectors, the grapheme joiner, Hangul fillers and keycap marks', () => {
    const normalizer = new UnicodeNormalizer({ stripControlChars: true });
    expect(normalizer.normalize('pa\uFE0Fss\u034Fword')).toBe('password');
    expect(normalizer.normalize('AKIA\u{E0100}\u{E01EF}KEY')).toBe('AKIAKEY');
    expect(normalizer.normalize('hid\u3164den\u115F\u1160 \uFFA0text')).toBe('hidden text');
    expect(normalizer.normalize('PIN 1\uFE0F\u20E32\uFE0F\u20E3#\u20E3')).toBe('PIN 12#');
    // Emoji stay whole (their single presentation selector included); smuggled selectors after them go.
    expect(normalizer.normalize('ok ❤\uFE0F\u{E0101}\u{E0102} 👍🏽')).toBe('ok ❤\uFE0F 👍🏽');
    // Without stripControlChars keycaps are kept as emoji.
    expect(new UnicodeNormalizer().normalize('PIN 1\uFE0F\u20E3')).toBe('PIN 1\uFE0F\u20E3');
  });

  describe('messages as the reference hands them (issue 34)', () => {
    const hookInput = (message: unknown) => ({ messages: [message] }) as unknown as Parameters<UnicodeNormalizer['processInput']>[0];

    it('a text part with `text: null` is left as it is (no throw); the other parts are normalised', () => {
      const message = { id: 'm1', role: 'user', createdAt: new Date(0), content: { format: 2, parts: [{ type: 'text', text: null }, { type: 'text', text: ' ｈｉ ' }] } };
      const [result] = new UnicodeNormalizer().processInput(hookInput(message));
      expect(result?.content.parts).toEqual([{ type: 'text', text: null }, { type: 'text', text: 'hi' }]);
    });

    it('a legacy `content` string of its own (not a mirror of the parts) is normalised on its own', () => {
      const message = { id: 'm1', role: 'user', createdAt: new Date(0), content: { format: 2, parts: [{ type: 'text', text: '  part  ' }], content: '  ｃontent  ' } };
      const [result] = new UnicodeNormalizer().processInput(hookInput(message));
      expect(result?.content.parts).toEqual([{ type: 'text', text: 'part' }]);
      expect(result?.content.content).toBe('content');
    });

    it('collapseWhitespace turns \\r\\n and \\r into \\n; stripControlChars keeps \\r (a line ending, not an invisible character)', () => {
      expect(new UnicodeNormalizer().normalize('a\r\nb\rc\nd')).toBe('a\nb\nc\nd');
      expect(new UnicodeNormalizer({ stripControlChars: true, collapseWhitespace: false }).normalize('a\rb\u0000c')).toBe('a\rbc');
    });
  });
});
