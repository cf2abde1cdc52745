import type { MastraDBMessage } from '../message-list/index.js';
import type { ProcessInputArgs, Processor } from '../contract/index.js';
import { mapMessageText } from './internal/message-text.js';
import { booleanOption } from './internal/guard-options.js';
import { checkOptionKeys, optionKeys, optionNames } from './internal/option-keys.js';

/**
 * Options of {@link UnicodeNormalizer}.
 *
 * @example
 * ```ts
 * const options: UnicodeNormalizerOptions = { stripControlChars: true, collapseWhitespace: false };
 * ```
 */
export interface UnicodeNormalizerOptions {
  /**
   * Remove control and invisible characters (keeps `\n`, `\t`, `\r`), chosen by Unicode property:
   * controls (`\p{Cc}`), format characters (`\p{Cf}`), every default-ignorable code point
   * (`\p{Default_Ignorable_Code_Point}`: zero-width characters, joiners, soft hyphen, bidi controls,
   * tags, variation selectors — except the one that makes a kept emoji —, the combining grapheme
   * joiner, Hangul fillers, and the code points Unicode reserves for more of them) and enclosing
   * marks (`\p{Me}`: keycaps, `1️⃣` → `1`). Default `false`.
   */
  stripControlChars?: boolean;
  /** Leave emoji (and the joiners / variation selectors they are built with) untouched. Default `true`. */
  preserveEmojis?: boolean;
  /** Turn `\r\n` and `\r` into `\n`, collapse runs of spaces/tabs to one space and 3+ line breaks to a blank line. Default `true`. */
  collapseWhitespace?: boolean;
  /** Trim each text part. Default `true`. */
  trim?: boolean;
}

/** The option names {@link UnicodeNormalizer} knows (the reference's are the same). */
const UNICODE_NORMALIZER_OPTION_KEYS = optionKeys('unicode-normalizer', optionNames<UnicodeNormalizerOptions>({ stripControlChars: true, preserveEmojis: true, collapseWhitespace: true, trim: true }));

const emojiSequence =
  /(?:\p{Regional_Indicator}{2}|\p{Extended_Pictographic}(?:\uFE0F|\p{Emoji_Modifier})?(?:\u200D\p{Extended_Pictographic}(?:\uFE0F|\p{Emoji_Modifier})?)*|[#*0-9]\uFE0F?\u20E3)/gu;
/** Emoji kept whole when control characters are stripped: keycaps (`1️⃣`) become their plain character. */
const emojiSequenceWithoutKeycaps =
  /(?:\p{Regional_Indicator}{2}|\p{Extended_Pictographic}(?:\uFE0F|\p{Emoji_Modifier})?(?:\u200D\p{Extended_Pictographic}(?:\uFE0F|\p{Emoji_Modifier})?)*)/gu;
/**
 * Invisible characters removed by `stripControlChars`, by Unicode property: controls, format
 * characters, default-ignorable code points and enclosing marks (see the option).
 */
const controlChars = /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{Me}]/gu;
const keptControls = new Set(['\n', '\t', '\r']);
/** A surrogate without its other half: not a character (UTF-8 cannot carry it; a screen shows U+FFFD). */
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/**
 * Combining marks one character keeps: Unicode's stream-safe limit (UAX #15 §13, 30 — far more
 * than real text stacks). Past it a flood of marks is cut: NFKC reorders a run of marks in time
 * quadratic in its length (200,000 marks took seconds).
 */
const MAX_MARKS = 30;
const markFlood = new RegExp(`(\\p{M}{${MAX_MARKS}})\\p{M}+`, 'gu');

/** `text` with every run of combining marks cut to {@link MAX_MARKS}. */
function capMarks(text: string): string {
  return text.replace(markFlood, '$1');
}

/**
 * Normalises the text of the input messages before the model sees them: Unicode NFKC (full-width
 * letters, ligatures and look-alike compatibility characters become their plain forms), optional
 * removal of control / invisible characters, whitespace collapsing and trimming. No model call.
 *
 * Use it first in `inputProcessors`, so later guards (regex filters, detectors) see canonical text.
 *
 * Hook: `processInput` (text parts only; other parts are untouched).
 *
 * @example
 * ```ts
 * import { UnicodeNormalizer } from 'rxagent/processors';
 * const agent = new Agent({ id: 'a', instructions: '…', model, inputProcessors: [new UnicodeNormalizer({ stripControlChars: true })] });
 * ```
 */
export class UnicodeNormalizer implements Processor<'unicode-normalizer'> {
  /** The processor's id. */
  readonly id = 'unicode-normalizer';
  /** A human-readable name. */
  readonly name = 'Unicode Normalizer';
  /** What the processor does. */
  readonly description = 'Normalises input text (NFKC, control characters, whitespace).';
  private readonly options: Required<UnicodeNormalizerOptions>;

  constructor(options: UnicodeNormalizerOptions = {}) {
    checkOptionKeys(UNICODE_NORMALIZER_OPTION_KEYS, options);
    this.options = {
      stripControlChars: booleanOption(this.id, 'stripControlChars', options.stripControlChars, false),
      preserveEmojis: booleanOption(this.id, 'preserveEmojis', options.preserveEmojis, true),
      collapseWhitespace: booleanOption(this.id, 'collapseWhitespace', options.collapseWhitespace, true),
      trim: booleanOption(this.id, 'trim', options.trim, true),
    };
  }

  /**
   * Normalises one string with this processor's options. A lone surrogate becomes U+FFFD; a
   * character keeps at most 30 combining marks. Time linear in the length of `text`.
   */
  normalize(text: string): string {
    const { stripControlChars, preserveEmojis, collapseWhitespace, trim } = this.options;
    const wellFormed = text.replace(loneSurrogate, '\uFFFD');
    let result = preserveEmojis ? normalizeAroundEmoji(wellFormed, stripControlChars) : stripAndNormalize(wellFormed, stripControlChars);
    if (collapseWhitespace) result = result.replace(/\r\n?/g, '\n').replace(/[^\S\n]+/g, ' ').replace(/ ?\n ?/g, '\n').replace(/\n{3,}/g, '\n\n');
    if (trim) result = result.trim();
    return result;
  }

  /** The input, normalised; the same array when no text changed. */
  processInput({ messages }: ProcessInputArgs): MastraDBMessage[] {
    const normalized = messages.map((message) => mapMessageText(message, (text) => this.normalize(text)));
    return normalized.every((message, index) => message === messages[index]) ? messages : normalized;
  }
}

function strip(text: string): string {
  return text.replace(controlChars, (char) => (keptControls.has(char) ? char : ''));
}

/**
 * NFKC, with invisible characters removed first when asked (one between a letter and its accent
 * would block the composition) and again after (a compatibility form may decompose into one).
 * Runs of combining marks are cut before NFKC (its cost) and after (a decomposition adds marks).
 */
function stripAndNormalize(text: string, stripControlChars: boolean): string {
  if (!stripControlChars) return capMarks(capMarks(text).normalize('NFKC'));
  return capMarks(strip(capMarks(strip(text)).normalize('NFKC')));
}

/** NFKC everything except emoji sequences (NFKC would turn e.g. ℹ️ into "i"). */
function normalizeAroundEmoji(text: string, stripControlChars: boolean): string {
  let result = '';
  let last = 0;
  for (const match of text.matchAll(stripControlChars ? emojiSequenceWithoutKeycaps : emojiSequence)) {
    const start = match.index;
    result += stripAndNormalize(text.slice(last, start), stripControlChars);
    result += match[0];
    last = start + match[0].length;
  }
  return result + stripAndNormalize(text.slice(last), stripControlChars);
}
