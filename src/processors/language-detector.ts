import { z } from 'zod';
import type { MastraDBMessage, MessageList } from '../message-list/index.js';
import type { DurableStateOption, ProcessInputArgs, Processor, ProcessorState, ProcessorViolation, TracingContext } from '../contract/index.js';
import { GUARD_JUDGE_OPTION_NAMES, GuardJudge, type GuardJudgeOptions } from './internal/guard-judge.js';
import { checkOptionKeys, optionKeys, optionNames } from './internal/option-keys.js';
import { keepStateExcept } from './internal/step-scoped-state.js';
import { booleanOption, oneOfOption, probabilityOption, wholeNumberOption } from './internal/guard-options.js';
import { judgeInputMessages, quoted, type BatchVerdict, type MessageVerdict } from './internal/input-messages.js';
import { replaceMessageText, withMetadata } from './internal/message-text.js';
import { PrivateViolations } from './internal/private-violation.js';
import { answerFormat, StructuredCallError } from './internal/structured-call.js';
import { InvalidProcessorOptionError } from '../contract/index.js';
import { canonicalLabel, labelKey } from './internal/judge-answer.js';
import { LANGUAGE_SYNONYMS } from './internal/judge-synonyms.js';

/**
 * What to do with input in another language: annotate it (`detect`), translate it into the first
 * target language, abort the run, or report it.
 *
 * @example
 * ```ts
 * const strategy: LanguageStrategy = 'translate';
 * ```
 */
export type LanguageStrategy = 'detect' | 'translate' | 'block' | 'warn';

/**
 * Options of {@link LanguageDetector}.
 *
 * @example
 * ```ts
 * const options: LanguageDetectorOptions = { model, targetLanguages: ['en', 'fr'], strategy: 'block' };
 * ```
 */
export interface LanguageDetectorOptions extends GuardJudgeOptions {
  /** Accepted languages, as ISO 639-1 codes (`'en'`) or names (`'English'`). The first is the translation target. */
  targetLanguages: string[];
  /**
   * Confidence (0..1) below which the detection is ignored (the message passes). Default 0.7. A
   * detection without a confidence (`"confidence": null`, no translation) is not below it: another
   * language of unknown confidence is a violation.
   */
  threshold?: number;
  /** Default `'detect'`. */
  strategy?: LanguageStrategy;
  /** When translating, keep the original text in `content.metadata.originalText`. Default `true`. */
  preserveOriginal?: boolean;
  /** Texts shorter than this (characters) are not judged. Default 10. */
  minTextLength?: number;
  /** Add the detection (`language`, `confidence`, `isTargetLanguage`) to `content.metadata.languageDetection`. Default `true`. */
  includeDetectionDetails?: boolean;
  /** Judge only the last user message. Default `false`. */
  lastMessageOnly?: boolean;
  /** Accepted as the reference accepts it (where it has no effect either; a one-time warning says so). */
  translationQuality?: 'speed' | 'quality' | 'balanced';
}

/** The option names {@link LanguageDetector} knows (the reference's are all among its own). */
const LANGUAGE_OPTION_KEYS = optionKeys(
  'language-detector',
  [
    ...GUARD_JUDGE_OPTION_NAMES,
    ...optionNames<Omit<LanguageDetectorOptions, keyof GuardJudgeOptions>>({
      targetLanguages: true,
      threshold: true,
      strategy: true,
      preserveOriginal: true,
      minTextLength: true,
      includeDetectionDetails: true,
      lastMessageOnly: true,
      translationQuality: true,
    }),
  ],
  { translationQuality: 'translations are asked for as they are (the reference does not read it either)' },
);

/** The answer the judge is asked for (the reference's shape); `iso_code: null` means "no language detected". */
const referenceLanguageAnswer = z.strictObject({
  iso_code: z.string().nullable(),
  confidence: z.number().min(0).max(1).nullable(),
  translated_text: z.string().nullish(),
});

/** rxagent's earlier shape, still accepted. */
const codeLanguageAnswer = z.strictObject({
  language: z.string().min(1),
  confidence: z.number().min(0).max(1),
  translation: z.string().nullish(),
});

const languageAnswer = z.union([referenceLanguageAnswer, codeLanguageAnswer]).transform((answer): LanguageAnswer | null => {
  if ('language' in answer) {
    return { language: answer.language, confidence: answer.confidence, ...(answer.translation == null ? {} : { translation: answer.translation }) };
  }
  // only null says "no language detected"; an empty or blank code names nothing the guard can place (a violation)
  if (answer.iso_code === null) return null;
  // As the reference reads it: a translation without a confidence counts as a confident detection.
  // Without either, the confidence is unknown (`null`), never 0: the caller decides what that means.
  const confidence = answer.confidence ?? (answer.translated_text == null ? null : 0.95);
  return { language: answer.iso_code, confidence, ...(answer.translated_text == null ? {} : { translation: answer.translated_text }) };
});

/**
 * The judge's answer: an ISO 639-1 code, a confidence, and (for `translate`) the translation.
 *
 * @example
 * ```ts
 * const answer: LanguageAnswer = { language: 'de', confidence: 0.95, translation: 'Hello' };
 * ```
 */
export interface LanguageAnswer {
  /** ISO 639-1 code (or a language name). */
  language: string;
  /** How sure the model is (0..1); `null` when the judge gave no confidence (the reference's `confidence: null`). */
  confidence: number | null;
  /** The text translated into the first target language (`translate`). */
  translation?: string;
}

/** A language as a comparable label: the ISO 639-1 code of a code, tag or name the table knows (`en-US`, `English`, `eng` → `en`). */
function normalizeLanguage(language: string): string {
  return canonicalLabel(language, LANGUAGE_SYNONYMS);
}

/**
 * Detects the language of the user's input with a model and, when it is not one of
 * `targetLanguages`, annotates (`detect`), translates (`translate`, into the first target
 * language), aborts (`block`) or reports (`warn`). Input in a target language passes unchanged.
 *
 * The judge answers with JSON `{"iso_code": "fr", "confidence": 0.97, "translated_text": "…"}`
 * (the reference's shape; `{"language", "confidence", "translation"}` is read too;
 * `translated_text` only asked for with `strategy: 'translate'`; a missing translation counts as a
 * failed check). An unreadable answer or a request the judge rejects blocks
 * (`contentErrorStrategy`, default `'strict'`); an infrastructure failure follows `errorStrategy`
 * (retried within `judgeDeadlineMs`, then `'strict'` default: blocks; `'fail-open'` explicit, reported to `onFailOpen`). Input outside the target languages is a violation for every
 * strategy and reaches `onViolation` once.
 *
 * Hook: `processInput` (user messages; one model call per message — a message is not batched with
 * others, since each gets its own detection; at most `maxJudgeCalls` per run, past which the run is
 * blocked: for a posted history, use `lastMessageOnly`).
 *
 * @example
 * ```ts
 * import { LanguageDetector } from 'rxagent/processors';
 * const language = new LanguageDetector({ model: openai('gpt-4.1-nano'), targetLanguages: ['en'], strategy: 'translate' });
 * const agent = new Agent({ id: 'a', instructions: '…', model, inputProcessors: [language] });
 * ```
 */
export class LanguageDetector implements Processor<'language-detector'> {
  /** The processor's id. */
  readonly id = 'language-detector';
  /** Durable runs snapshot the state as JSON, without the judge-call slots (free at every commit). */
  readonly durableState: DurableStateOption = keepStateExcept([]);
  /** A human-readable name. */
  readonly name = 'Language Detector';
  /** What the processor does. */
  readonly description = 'Detects (and optionally translates) the language of the input with a model.';
  readonly onViolation: ((violation: ProcessorViolation) => void | Promise<void>) | undefined;
  private readonly judge: GuardJudge;
  private readonly violations: PrivateViolations;
  private readonly targets: readonly string[];
  private readonly threshold: number;
  private readonly strategy: LanguageStrategy;
  private readonly preserveOriginal: boolean;
  private readonly minTextLength: number;
  private readonly includeDetails: boolean;
  private readonly lastMessageOnly: boolean;
  private readonly system: string;

  constructor(options: LanguageDetectorOptions) {
    checkOptionKeys(LANGUAGE_OPTION_KEYS, options);
    const targets: unknown = options.targetLanguages;
    if (!Array.isArray(targets) || targets.length === 0 || !targets.every((target) => typeof target === 'string' && labelKey(target) !== '')) {
      throw new InvalidProcessorOptionError('language-detector', 'targetLanguages', targets, 'a non-empty array of language codes or names');
    }
    this.judge = new GuardJudge('language-detector', options);
    this.violations = new PrivateViolations('language-detector', options.onViolation);
    this.targets = options.targetLanguages;
    this.threshold = probabilityOption('language-detector', 'threshold', options.threshold, 0.7);
    this.strategy = oneOfOption('language-detector', 'strategy', options.strategy, ['detect', 'translate', 'block', 'warn'], 'detect');
    this.preserveOriginal = booleanOption('language-detector', 'preserveOriginal', options.preserveOriginal, true);
    this.minTextLength = wholeNumberOption('language-detector', 'minTextLength', options.minTextLength, 10, 0);
    // accepted without effect (as the reference), but a misspelt value is still refused
    oneOfOption('language-detector', 'translationQuality', options.translationQuality, ['speed', 'quality', 'balanced'], 'balanced');
    this.includeDetails = booleanOption('language-detector', 'includeDetectionDetails', options.includeDetectionDetails, true);
    this.lastMessageOnly = booleanOption('language-detector', 'lastMessageOnly', options.lastMessageOnly, false);
    this.onViolation = this.violations.onViolation;
    const translate = this.strategy === 'translate';
    this.system = [
      options.instructions ?? 'You identify the language a text is written in. Give its ISO 639-1 code and your confidence.',
      translate
        ? `If the language is not one of: ${this.targets.join(', ')}, also give "translation": the text translated into ${this.targets[0] ?? ''}, faithfully and completely.`
        : '',
      answerFormat(
        translate
          ? '{"iso_code": "<ISO 639-1 code, or null>", "confidence": <0..1>, "translated_text": "<only when not a target language, else null>"}'
          : '{"iso_code": "<ISO 639-1 code, or null>", "confidence": <0..1>}',
      ),
    ]
      .filter((line) => line !== '')
      .join('\n');
  }

  /** Whether `language` (a code or a name) is one of the target languages. */
  isTargetLanguage(language: string): boolean {
    const normalized = normalizeLanguage(language);
    return this.targets.some((target) => normalizeLanguage(target) === normalized);
  }

  /** The `processInput` hook (see `Processor.processInput` for when it runs and what it may return). */
  processInput({ messages, messageList, abort, abortSignal, state, tracingContext }: ProcessInputArgs): Promise<MastraDBMessage[] | MessageList> {
    return judgeInputMessages({
      processorId: this.id,
      messages,
      messageList,
      abort,
      lastMessageOnly: this.lastMessageOnly,
      batchChars: 0,
      judge: (batch, text) => this.judgeMessage(batch[0] as MastraDBMessage, text, state, { abortSignal, tracingContext }),
    });
  }

  private async judgeMessage(message: MastraDBMessage, text: string, state: ProcessorState, call: { abortSignal: AbortSignal; tracingContext: TracingContext }): Promise<BatchVerdict> {
    if (text.trim().length < this.minTextLength) return { action: 'keep' };
    // the language shows in the first piece: a long message is judged on its first budget's worth
    const outcome = await this.judge.judge(
      state,
      text.slice(0, this.judge.maxInputChars),
      (piece) => ({ system: this.system, prompt: quoted('Text', piece), schema: languageAnswer, responseSchema: referenceLanguageAnswer }),
      call,
    );
    if (!outcome.ok) return this.judge.failureVerdict(outcome.failure, this.violations) ?? { action: 'keep' };
    const answer = outcome.values[0] ?? null;
    if (answer === null) return { action: 'keep' };
    const { language, confidence, translation } = answer;
    const isTargetLanguage = this.isTargetLanguage(language);
    // a real confidence below the threshold is ignored (the reference's reading); an unknown one is
    // not "below": another language of unknown confidence is a violation, never a pass
    if (confidence !== null && confidence < this.threshold) return { action: 'keep' };
    const details = { language, confidence, isTargetLanguage };
    const annotated = this.includeDetails ? withMetadata(message, { languageDetection: details }) : message;
    const unchanged: MessageVerdict = annotated === message ? { action: 'keep' } : { action: 'replace', message: annotated };
    if (isTargetLanguage) return { action: 'each', verdict: () => unchanged };

    const detail = { language, confidence, targetLanguages: [...this.targets], strategy: this.strategy };
    if (this.strategy === 'block') {
      const reason = `Input language ${language} is not one of ${this.targets.join(', ')}`;
      return this.violations.block(reason, detail, { message: reason, detail });
    }
    if (this.strategy !== 'translate') {
      this.violations.report(`input in ${language}, expected ${this.targets.join(', ')}`, detail);
      return { action: 'each', verdict: () => unchanged };
    }
    if (translation === undefined || translation.trim() === '') {
      const failed = this.judge.failureVerdict({ kind: 'content', summary: 'the judge gave no translation', error: new StructuredCallError('malformed', 'the judge gave no translation') }, this.violations);
      if (failed !== undefined) return failed;
      this.violations.report(`input in ${language}, not translated (the judge gave no translation)`, detail);
      return { action: 'each', verdict: () => unchanged };
    }
    this.violations.report(`input in ${language} translated into ${this.targets[0] ?? ''}`, detail);
    return { action: 'each', verdict: () => ({ action: 'replace', message: this.translated(annotated, text, translation, language) }) };
  }

  /** `message` with its text replaced by `translation` (the original kept in metadata when asked). */
  private translated(message: MastraDBMessage, original: string, translation: string, language: string): MastraDBMessage {
    const cleaned = replaceMessageText(message, translation);
    return this.preserveOriginal ? withMetadata(cleaned, { originalText: original, translatedFrom: language }) : cleaned;
  }
}
