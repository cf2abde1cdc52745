import { describe, expect, it, vi } from 'vitest';
import { lastValueFrom, of } from 'rxjs';
import { processInput } from '../../src/operators/process-input.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import { LabelReader, labelKey, locateValue, parseJsonAnswer, readScores } from '../../src/processors/internal/judge-answer.js';
import { MODERATION_SYNONYMS, PII_SYNONYMS } from '../../src/processors/internal/judge-synonyms.js';
import { PIIDetector } from '../../src/processors/pii-detector.js';
import { LanguageDetector } from '../../src/processors/language-detector.js';
import { contextWith, judgeModel, listWith, textMessage, textOf } from './support/harness.js';

describe('judge answer reader: labels', () => {
  it('one key for every spelling of a label', () => {
    const spellings = ['self-harm', 'self_harm', 'Self Harm', 'selfHarm', 'SELF-HARM', 'self.harm', 'ｓｅｌｆ－ｈａｒｍ'];
    expect(new Set(spellings.map(labelKey))).toEqual(new Set(['selfharm']));
  });

  it('resolves synonyms to the configured label, leaves known-but-unconfigured labels alone, and reports unknown ones', () => {
    const reader = new LabelReader(['email', 'credit-card'], PII_SYNONYMS);
    for (const written of ['credit_card', 'creditCard', 'credit card number', 'card', 'Card Number']) expect(reader.read(written)).toMatchObject({ kind: 'known', label: 'credit-card' });
    for (const written of ['e-mail', 'Email Address', 'EMAIL']) expect(reader.read(written)).toMatchObject({ kind: 'known', label: 'email' });
    expect(reader.read('Phone Number')).toMatchObject({ kind: 'ignored', label: 'phone' });
    expect(reader.read('favourite colour')).toEqual({ kind: 'unknown', written: 'favourite colour' });
  });

  it('reads scores: flagged under the configured label, unknown ones at the threshold listed, below it neither', () => {
    const reader = new LabelReader(['self-harm', 'violence'], MODERATION_SYNONYMS);
    const read = readScores([['Self Harm', 0.9], ['violent', 0.4], ['weapons', 0.8], ['spam', 0.2], ['hate', 0.99]], reader, 0.5);
    expect(read.flagged).toEqual(['self-harm']);
    expect(read.unrecognized).toEqual(['weapons']);
    expect(read.scores).toMatchObject({ 'self-harm': 0.9, violence: 0.4, weapons: 0.8, hate: 0.99 });
  });
});

describe('judge answer reader: values as displayed', () => {
  it.each([
    ['a character reference', 'mail jane&#64;x.io now', 'jane&#64;x.io'],
    ['a named reference', 'mail jane&commat;x&period;io now', 'jane&commat;x&period;io'],
    ['a zero-width space', 'mail ja\u200bne@x.io now', 'ja\u200bne@x.io'],
    ['no-break spaces', 'card 4111\u00a01111\u00a01111\u00a01111 ok', '4111\u00a01111\u00a01111\u00a01111'],
    ['a JSON escape (tool-call input)', '{"to":"jane\\u0040x.io"}', 'jane\\u0040x.io'],
  ])('finds a value stored with %s, and names the stored span', (_, text, storedSpan) => {
    const value = storedSpan.includes('4111') ? '4111 1111 1111 1111' : 'jane@x.io';
    expect(locateValue(text, value).map((place) => place.stored)).toContain(storedSpan);
  });

  it('falls back to case- and whitespace-insensitive matching; finds nothing that is not there', () => {
    expect(locateValue('Hello JANE   DOE here', 'Jane Doe')).toEqual([{ stored: 'JANE   DOE', shown: 'JANE   DOE' }]);
    expect(locateValue('nothing to see', 'jane@x.io')).toEqual([]);
  });
});

describe('judge answer reader: near-JSON', () => {
  it('reads fences with prose, single quotes, trailing commas and Python literals', () => {
    expect(parseJsonAnswer("Sure:\n```json\n{'detections': [{'type': 'email', 'value': \"o'neil@x.io\",},],}\n```\nDone.")).toEqual({
      detections: [{ type: 'email', value: "o'neil@x.io" }],
    });
    expect(parseJsonAnswer("{'flagged': True, 'reason': None}")).toEqual({ flagged: true, reason: null });
    expect(parseJsonAnswer('no json here')).toBeUndefined();
  });
});

describe('guards read answers through the reader', () => {
  async function piiInput(answer: string, text: string, options: Record<string, unknown> = {}) {
    const onViolation = vi.fn();
    const list = listWith([textMessage('u1', 'user', text)]);
    const detector = new PIIDetector({ model: judgeModel(() => answer), onViolation, redactionMethod: 'placeholder', ...options });
    const result = await lastValueFrom(of(list).pipe(processInput([detector], contextWith(list)))).catch((error: unknown) => error);
    return { result, onViolation, text: textOf(list.get.input.db()[0]) };
  }

  it('PIIDetector redacts the stored span of a value the content encodes, typed however the judge spelled it', async () => {
    const { text, onViolation } = await piiInput('{"detections": [{"type": "E-Mail Address", "value": "jane@x.io"}]}', 'Write to jane&#64;x.io today');
    expect(text).toBe('Write to [EMAIL] today');
    expect(onViolation).toHaveBeenCalledTimes(1);
  });

  it('PIIDetector: an unknown type is still redacted (as [PII]) and reported; a value nowhere in the text drops the message', async () => {
    const unknown = await piiInput('{"detections": [{"type": "pet name", "value": "Rex"}]}', 'My dog Rex is old');
    expect(unknown.text).toBe('My dog [PII] is old');
    expect(JSON.stringify(unknown.onViolation.mock.calls[0]?.[0])).toContain('"unrecognizedTypes":["pet name"]');
    const unlocated = await piiInput('{"detections": [{"type": "email", "value": "ghost@x.io"}]}', 'Nothing like that here, promise');
    // the only message dropped: the built-ins end the run rather than answer nothing
    expect(TripWire.isInstance(unlocated.result)).toBe(true);
    expect(JSON.stringify(unlocated.onViolation.mock.calls[0]?.[0])).toContain('"unlocated":1');
    const blocked = await piiInput('{"detections": [{"type": "email", "value": "ghost@x.io"}]}', 'Nothing like that here, promise', { strategy: 'block' });
    expect(TripWire.isInstance(blocked.result)).toBe(true);
  });

  it('LanguageDetector reads language names, ISO 639-2 codes and region tags', () => {
    const detector = new LanguageDetector({ model: judgeModel(() => '{}'), targetLanguages: ['en', 'Français'] });
    for (const language of ['en-US', 'English', 'eng', 'EN_gb', 'fr', 'fra', 'French (Canada)']) expect(detector.isTargetLanguage(language)).toBe(true);
    expect(detector.isTargetLanguage('de')).toBe(false);
  });
});
