import { describe, expect, it, vi } from 'vitest';
import { lastValueFrom, of } from 'rxjs';
import { processInput } from '../../src/operators/process-input.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import { InvalidProcessorOptionError } from '../../src/contract/index.js';
import { LanguageDetector, type LanguageDetectorOptions } from '../../src/processors/language-detector.js';
import { contextWith, judgeFailures, judgeModel, listWith, textMessage, textOf } from './support/harness.js';

const FRENCH = 'Bonjour, pouvez-vous m’aider avec ma facture ?';
/** French for texts starting with "Bonjour", English otherwise; translates when asked. */
const identifier = () =>
  judgeModel(({ prompt, system }) =>
    prompt.includes('Bonjour')
      ? JSON.stringify({ language: 'fr', confidence: 0.97, ...(system.includes('translation') ? { translation: 'Hello, can you help me with my invoice?' } : {}) })
      : '{"language": "en", "confidence": 0.99}',
  );

async function detect(options: Omit<LanguageDetectorOptions, 'targetLanguages'> & { targetLanguages?: string[] }, text: string) {
  const processor = new LanguageDetector({ targetLanguages: ['en'], ...options });
  const list = listWith([textMessage('u1', 'user', text)]);
  const result = await lastValueFrom(of(list).pipe(processInput([processor], contextWith(list)))).catch((error: unknown) => error);
  const message = list.get.input.db()[0];
  return { result, text: textOf(message), metadata: message?.content.metadata };
}

describe('LanguageDetector', () => {
  it('has the reference id and needs a target language', () => {
    expect(new LanguageDetector({ model: identifier(), targetLanguages: ['en'] }).id).toBe('language-detector');
    expect(() => new LanguageDetector({ model: identifier(), targetLanguages: [] })).toThrow(InvalidProcessorOptionError);
  });

  it('matches codes and names', () => {
    const detector = new LanguageDetector({ model: identifier(), targetLanguages: ['French', 'de'] });
    expect(detector.isTargetLanguage('fr')).toBe(true);
    expect(detector.isTargetLanguage('de-AT')).toBe(true);
    expect(detector.isTargetLanguage('German')).toBe(true);
    expect(detector.isTargetLanguage('en')).toBe(false);
  });

  it('input in a target language passes, annotated', async () => {
    const { text, metadata, result } = await detect({ model: identifier() }, 'Can you help me with my invoice?');
    expect(TripWire.isInstance(result)).toBe(false);
    expect(text).toBe('Can you help me with my invoice?');
    expect(metadata).toEqual({ languageDetection: { language: 'en', confidence: 0.99, isTargetLanguage: true } });
  });

  it('detect (default): annotates other languages and reports them', async () => {
    const onViolation = vi.fn();
    const { text, metadata } = await detect({ model: identifier(), onViolation }, FRENCH);
    expect(text).toBe(FRENCH);
    expect(metadata).toEqual({ languageDetection: { language: 'fr', confidence: 0.97, isTargetLanguage: false } });
    expect(onViolation).toHaveBeenCalledTimes(1);
  });

  it('translate: replaces the text and keeps the original in metadata', async () => {
    const { text, metadata } = await detect({ model: identifier(), strategy: 'translate' }, FRENCH);
    expect(text).toBe('Hello, can you help me with my invoice?');
    expect(metadata).toEqual(expect.objectContaining({ originalText: FRENCH, translatedFrom: 'fr' }));
  });

  it('translate without a translation: warn keeps the text (onError), strict aborts', async () => {
    const noTranslation = () => judgeModel(() => '{"language": "fr", "confidence": 0.97}');
    const onError = vi.fn();
    const kept = await detect({ model: noTranslation(), strategy: 'translate', onError }, FRENCH);
    expect(kept.text).toBe(FRENCH);
    expect(onError).toHaveBeenCalledTimes(1);
    const strict = await detect({ model: noTranslation(), strategy: 'translate', errorStrategy: 'strict' }, FRENCH);
    expect(TripWire.isInstance(strict.result)).toBe(true);
  });

  it('block aborts; warn keeps', async () => {
    const blocked = await detect({ model: identifier(), strategy: 'block' }, FRENCH);
    expect(TripWire.isInstance(blocked.result)).toBe(true);
    expect((blocked.result as TripWire).metadata).toEqual({ processorId: 'language-detector', language: 'fr', confidence: 0.97, targetLanguages: ['en'], strategy: 'block' });
    expect((await detect({ model: identifier(), strategy: 'warn' }, FRENCH)).text).toBe(FRENCH);
  });

  it('skips short texts and low-confidence detections', async () => {
    const model = identifier();
    await detect({ model, strategy: 'block' }, 'Bonjour');
    expect(model.calls).toHaveLength(0);
    const unsure = await detect({ model: judgeModel(() => '{"language": "fr", "confidence": 0.4}'), strategy: 'block' }, FRENCH);
    expect(TripWire.isInstance(unsure.result)).toBe(false);
  });

  describe('errorStrategy', () => {
    for (const [name, { kind, model: makeModel }] of Object.entries(judgeFailures)) {
      const lenient = kind === 'content' ? 'contentErrorStrategy' : 'errorStrategy';
      // judgeDeadlineMs: the infrastructure failures are permanent here; no time spent retrying them
      it(`${kind} failure, ${lenient} 'fail-open': fails open on ${name}`, async () => {
        const { result, text } = await detect({ model: makeModel(), strategy: 'block', judgeDeadlineMs: 50, [lenient]: 'fail-open' }, FRENCH);
        expect(TripWire.isInstance(result)).toBe(false);
        expect(text).toBe(FRENCH);
      });
      it(`${kind} failure, the default: fails closed on ${name}`, async () => {
        const { result } = await detect({ model: makeModel(), judgeDeadlineMs: 50 }, 'An English sentence here.');
        expect(TripWire.isInstance(result)).toBe(true);
      });
    }
  });
});
