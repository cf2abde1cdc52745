import { createHmac, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { MastraDBMessage, MessageList } from '../message-list/index.js';
import type {
  DurableStateOption,
  ChunkType,
  ProcessInputArgs,
  Processor,
  ProcessorState,
  ProcessorViolation,
  ProcessOutputResultArgs,
  ProcessOutputStreamArgs,
  ProcessToolResultArgs,
} from '../contract/index.js';

import { CheckedStream, GUARD_STREAM_OPTION_NAMES, withholdDroppedObject, type GuardChannel, type GuardStreamOptionName, type StreamMode } from './internal/checked-stream.js';
import { GUARD_JUDGE_OPTION_NAMES, GuardJudge, type GuardJudgeOptions, type JudgeCall, type JudgeFailure } from './internal/guard-judge.js';
import { judgeInputMessages, quoted, type BatchVerdict } from './internal/input-messages.js';
import type { Verdict } from './internal/judged-spans.js';
import { LabelReader, locateValue, readScores, type LocatedValue } from './internal/judge-answer.js';
import { judgedPosition, positionsWithin } from './internal/judged-positions.js';
import { PII_SYNONYMS } from './internal/judge-synonyms.js';
import { mapJudgedText, replaceAllValues } from './internal/message-text.js';
import { mapStrings } from './internal/deep-strings.js';
import { applyRedactionsToObject, applyRedactionsToReply, rememberRedactions } from './internal/redactions.js';
import { PrivateViolations } from './internal/private-violation.js';
import { answerFormat } from './internal/structured-call.js';
import { stringsOf } from './internal/whole-chunks.js';
import { keepStateExcept } from './internal/step-scoped-state.js';
import { booleanOption, labelListOption, oneOfOption, probabilityOption } from './internal/guard-options.js';
import { checkOptionKeys, optionKeys, optionNames } from './internal/option-keys.js';
import { InvalidProcessorOptionError } from '../contract/index.js';

/**
 * What to do with detected PII: abort, report only, drop the message / output span, or redact the values.
 *
 * @example
 * ```ts
 * const strategy: PIIStrategy = 'redact';
 * ```
 */
export type PIIStrategy = 'block' | 'warn' | 'filter' | 'redact';

/**
 * How a detected value is redacted.
 *
 * @example
 * ```ts
 * const method: PIIRedactionMethod = 'placeholder'; // jane@x.io → [EMAIL]
 * ```
 */
export type PIIRedactionMethod = 'mask' | 'hash' | 'remove' | 'placeholder';

/**
 * Options of {@link PIIDetector}.
 *
 * @example
 * ```ts
 * const options: PIIDetectorOptions = { model, detectionTypes: ['email', 'phone'], redactionMethod: 'hash' };
 * ```
 */
export interface PIIDetectorOptions extends GuardJudgeOptions {
  /** PII types to look for. Default: {@link DEFAULT_PII_TYPES}. */
  detectionTypes?: string[];
  /** Confidence (0..1) from which a detection counts. Default 0.5. */
  threshold?: number;
  /** Default `'redact'`. */
  strategy?: PIIStrategy;
  /**
   * Default `'mask'` (`*` per character), `'hash'` (`[HASH:<8 hex>]`, a keyed HMAC-SHA-256 of the
   * value, see `hashKey`), `'remove'`, or `'placeholder'` (`[EMAIL]`, `[PHONE]`…).
   */
  redactionMethod?: PIIRedactionMethod;
  /**
   * Key of the `'hash'` redaction (HMAC-SHA-256). Default: 32 random bytes per processor
   * instance, so a hash cannot be reversed by hashing candidate values (a phone number or a
   * 4-digit PIN would be brute-forced in moments from a plain hash). Equal values get equal hashes
   * within one instance; pass the same key to correlate across instances or processes, and keep it
   * secret. A durable run needs it with `'hash'` (`submit()` refuses the processor without it).
   */
  hashKey?: string | Uint8Array;
  /** With `'mask'`, keep separators (`@ . - +` and spaces) so the shape stays readable. Default `true`. */
  preserveFormat?: boolean;
  /**
   * Put the detected values in the `onViolation` detail (server side). Default `false`. The values
   * never reach the client: the tripwire carries the PII types and a count only.
   */
  includeDetections?: boolean;
  /** Judge only the last user message of the input. Default `false`. */
  lastMessageOnly?: boolean;
  /**
   * How streamed output is checked: `'window'` (default; judged per window of `windowSchedule`,
   * each window while the earlier ones show) or `'final'` (each stream judged once, when it ends).
   * Never a call per token; the client only sees judged content.
   */
  streamMode?: StreamMode;
  /** Window sizes in characters, the last one repeating. Default `[12, 48, 200, 800]` (`DEFAULT_WINDOW_SCHEDULE`). */
  windowSchedule?: readonly number[];
  /** Fixed windows of this many characters (the schedule `[windowSize]`). */
  windowSize?: number;
  /**
   * Output channels judged. Default: all a client receives — `text`, `reasoning`, `tool-input`
   * (streamed arguments and the final call; the tool runs with the redacted arguments), `data`
   * (`data-*` chunks), `tool-error`. Tool results are judged in `processToolResult` regardless.
   */
  channels?: GuardChannel[];
  /** @deprecated The reference's streaming buffer: accepted without effect (warned once); output is judged per window (`streamMode`, `windowSchedule`). */
  bufferSize?: number;
  /** @deprecated The reference's detection callback: accepted without effect (warned once); use `onViolation`, told of every violation with its detail. */
  onDetection?: (event: never) => unknown;
}

/** The option names {@link PIIDetector} knows (the reference's among them). */
const PII_OPTION_KEYS = optionKeys(
  'pii-detector',
  [
    ...GUARD_JUDGE_OPTION_NAMES,
    ...GUARD_STREAM_OPTION_NAMES,
    ...optionNames<Omit<PIIDetectorOptions, keyof GuardJudgeOptions | GuardStreamOptionName>>({
      detectionTypes: true,
      threshold: true,
      strategy: true,
      redactionMethod: true,
      hashKey: true,
      preserveFormat: true,
      includeDetections: true,
      lastMessageOnly: true,
      bufferSize: true,
      onDetection: true,
    }),
  ],
  {
    bufferSize: 'streamed output is judged per window (streamMode, windowSchedule, windowSize)',
    onDetection: 'use onViolation, told of every violation with its detail',
  },
);

/**
 * The PII types looked for by default.
 *
 * @example
 * ```ts
 * new PIIDetector({ model, detectionTypes: DEFAULT_PII_TYPES.filter((type) => type !== 'name') });
 * ```
 */
export const DEFAULT_PII_TYPES = [
  'email',
  'phone',
  'credit-card',
  'ssn',
  'passport',
  'iban',
  'ip-address',
  'api-key',
  'name',
  'address',
  'date-of-birth',
] as const;

/**
 * One detection as the judge may write it: rxagent's `{type, value, confidence}` or the
 * reference's, which adds `start`, `end` (the value's place in the judged text) and
 * `redacted_value`. Strict: any other key makes the answer unreadable (the response format sent
 * says `additionalProperties: false`). Positions are checked against the judged text by
 * `positionsWithin` (the one strict path, shared with `SystemPromptScrubber`); they are never used
 * to redact (the value is searched in the text), and `redacted_value` is never written into it:
 * the replacement is the guard's `redactionMethod`, as in the reference.
 */
const piiDetection = z.strictObject({
  /** What kind of value this is. */
  type: z.string(),
  /** The matched value. */
  value: z.string(),
  /** How sure the model is (0..1). */
  confidence: z.number().min(0).max(1).optional(),
  /** The reference's: where the value starts in the judged text (UTF-16 index). */
  start: judgedPosition.optional(),
  /** The reference's: where it ends (exclusive). */
  end: judgedPosition.optional(),
  /** The reference's redacted form of the value: accepted, never used. */
  redacted_value: z.string().nullable().optional(),
});

/** The answer format the judge is sent: rxagent's `{ detections }`. */
const piiAnswer = z.strictObject({ detections: z.array(piiDetection) });

/** The reference's category score: a PII type, and how sure the judge is that the text holds one. */
const piiCategory = z.strictObject({ type: z.string(), score: z.number().min(0).max(1) });

/**
 * The answer as read: rxagent's, or the reference's whole `PIIDetectionResult` — `detections`
 * (`null`: none), `categories` (`[{type, score}]` or `null`) and `redacted_content` (a string or
 * `null`). Strict about every other key, at the top and inside entries. Categories are read through
 * the detection types' labels (see `PIIDetector.read`); `redacted_content` is never written into the
 * text, only compared with the judged piece (`unnamedRedaction`).
 */
const piiReading = z.strictObject({
  detections: z.array(piiDetection).nullable(),
  categories: z.array(piiCategory).nullable().optional(),
  redacted_content: z.string().nullable().optional(),
});

/** Text as compared with the judge's `redacted_content`: runs of whitespace as one space, trimmed. */
function squashed(text: string): string {
  return text.replace(/\s+/gu, ' ').trim();
}

/**
 * `answer` (read from `piece`) with `unnamedRedaction`: the judge's `redacted_content` differs from
 * the piece (whitespace aside) while the answer names nothing — no detection, no category, at any
 * score —, so the judge redacted something the guard cannot place.
 */
function withUnnamedRedaction(answer: z.infer<typeof piiReading>, piece: string): z.infer<typeof piiReading> & { unnamedRedaction: boolean } {
  const named = (answer.detections ?? []).length > 0 || (answer.categories ?? []).length > 0;
  const redacted = answer.redacted_content;
  return { ...answer, unnamedRedaction: !named && typeof redacted === 'string' && squashed(redacted) !== squashed(piece) };
}

/**
 * The `hashKey`, checked: a non-empty string or byte array (an empty key would make every hash
 * guessable). Bytes are copied: a caller that wipes its buffer after construction (`key.fill(0)`)
 * must not leave the guard hashing with an all-zero key.
 */
function hashKeyOption(value: unknown): string | Uint8Array | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && value.length > 0) return value;
  if (value instanceof Uint8Array && value.length > 0) return Uint8Array.from(value);
  throw new InvalidProcessorOptionError('pii-detector', 'hashKey', value, 'a non-empty string or Uint8Array');
}

/**
 * One PII value the judge found.
 *
 * @example
 * ```ts
 * const detection: PIIDetection = { type: 'email', value: 'jane@x.io', confidence: 0.98 };
 * ```
 */
export type PIIDetection = z.infer<typeof piiDetection>;

/** What one judgment found: the located detections (where they are stored), and what could not be placed. */
interface PIIReading {
  /** Detections whose value was located, with the stored spans that display as it. */
  located: Array<{ detection: PIIDetection; places: LocatedValue[]; unrecognizedType: boolean }>;
  /** Detections whose value is nowhere in the text, as stored or as displayed. */
  unlocated: PIIDetection[];
  /** Types the judge named (at or above the threshold) that are none of the known ones, as written. */
  unrecognizedTypes: string[];
  /**
   * The reference's categories scored at or above the threshold that no detection of that type
   * (at or above it) places: the configured label, or the unknown type as written.
   */
  unplacedCategories: string[];
  /** A piece's `redacted_content` differs from it while its answer names nothing (see `withUnnamedRedaction`). */
  unnamedRedaction: boolean;
}

/**
 * Detects personal data (e-mail addresses, phone numbers, card numbers, names, addresses…) with a
 * model, in the input and in the streamed output, and blocks, reports, drops or redacts it.
 *
 * The judge answers with JSON `{"detections": [{"type": "email", "value": "jane@x.io", "confidence": 0.98}]}`;
 * each detected value is redacted wherever it occurs (`redactionMethod`). The reference's entries
 * (`start`, `end`, `redacted_value` besides) read too: positions must be whole numbers within the
 * judged text, or the answer is unreadable; `redacted_value` is never used. The reference's whole
 * answer reads too: `detections: null`, `categories` (`[{type, score}]`: one at or above `threshold`
 * that no detection places, or an unknown one, is a violation) and `redacted_content` (never written
 * into the text; one that redacts while the answer names nothing is a violation). An unreadable answer or a
 * request the judge rejects blocks (`contentErrorStrategy`, default `'strict'`); an infrastructure
 * failure follows `errorStrategy` (retried within `judgeDeadlineMs`, then `'strict'` default: blocks; `'fail-open'` explicit, reported to `onFailOpen`). Every detection reaches
 * `onViolation` once; the client's tripwire carries the types, never the values.
 *
 * Every output channel a client receives is judged (`channels`): text and reasoning (per block;
 * interleaved blocks each on their own text), a tool call's input (streamed deltas and the final
 * call: the tool runs with the redacted arguments), `data-*` and `tool-error` chunks, structured
 * objects (`object`, `object-result`, and `result.object` in `processOutputResult`) — held back
 * until judged, per window of an adaptive schedule or once per stream (`'final'`), never one call
 * per token. A value split across two consecutive text blocks is judged whole; windows end at
 * sentence or word boundaries, so a value without spaces is never cut by one. Tool results are
 * judged in `processToolResult`. The stored reply gets every redaction of the run in all its parts
 * (no further model call). Input messages are judged in batches of up to `maxJudgeInputChars`.
 *
 * Hooks: `processInput`, `processOutputStream`, `processToolResult`, `processOutputResult`.
 *
 * @example
 * ```ts
 * import { PIIDetector } from 'rxagent/processors';
 * const pii = new PIIDetector({ model: openai('gpt-4.1-nano'), strategy: 'redact', redactionMethod: 'placeholder' });
 * const agent = new Agent({ id: 'a', instructions: '…', model, inputProcessors: [pii], outputProcessors: [pii] });
 * ```
 */
export class PIIDetector implements Processor<'pii-detector'> {
  /** The processor's id. */
  readonly id = 'pii-detector';
  /** A human-readable name. */
  readonly name = 'PII Detector';
  /** What the processor does. */
  readonly description = 'Detects and redacts personal data with a model.';
  /** Data chunks must not overtake the held output. */
  readonly processDataParts = true;
  readonly onViolation: ((violation: ProcessorViolation) => void | Promise<void>) | undefined;
  /**
   * In a durable run: the state is kept as JSON; the output gate (`piiHeld`, step-scoped) starts fresh
   * after a takeover. Not durable with `redactionMethod: 'hash'` and no `hashKey` (refused at submit).
   */
  readonly durableState: DurableStateOption;
  private readonly judge: GuardJudge;
  private readonly violations: PrivateViolations;
  private readonly detectionTypes: readonly string[];
  private readonly labels: LabelReader;
  private readonly threshold: number;
  private readonly strategy: PIIStrategy;
  private readonly redactionMethod: PIIRedactionMethod;
  private readonly preserveFormat: boolean;
  private readonly hashKey: string | Uint8Array;
  private readonly includeDetections: boolean;
  private readonly lastMessageOnly: boolean;
  private readonly stream: CheckedStream;
  private readonly system: string;

  constructor(options: PIIDetectorOptions) {
    checkOptionKeys(PII_OPTION_KEYS, options);
    this.judge = new GuardJudge('pii-detector', options);
    this.violations = new PrivateViolations('pii-detector', options.onViolation);
    this.onViolation = this.violations.onViolation;
    this.detectionTypes = labelListOption('pii-detector', 'detectionTypes', options.detectionTypes, DEFAULT_PII_TYPES);
    this.labels = new LabelReader(this.detectionTypes, PII_SYNONYMS);
    this.threshold = probabilityOption('pii-detector', 'threshold', options.threshold, 0.5);
    this.strategy = oneOfOption('pii-detector', 'strategy', options.strategy, ['block', 'warn', 'filter', 'redact'], 'redact');
    this.redactionMethod = oneOfOption('pii-detector', 'redactionMethod', options.redactionMethod, ['mask', 'hash', 'remove', 'placeholder'], 'mask');
    this.preserveFormat = booleanOption('pii-detector', 'preserveFormat', options.preserveFormat, true);
    this.hashKey = hashKeyOption(options.hashKey) ?? randomBytes(32);
    // each worker would draw its own key: a value hashed before a takeover would hash differently after it
    this.durableState =
      this.redactionMethod === 'hash' && options.hashKey === undefined
        ? { notDurable: "redactionMethod 'hash' without a hashKey draws a random key per process, so a value would hash differently after a takeover: pass the same hashKey to every worker" }
        : keepStateExcept(['piiHeld']);
    this.includeDetections = booleanOption('pii-detector', 'includeDetections', options.includeDetections, false);
    this.lastMessageOnly = booleanOption('pii-detector', 'lastMessageOnly', options.lastMessageOnly, false);
    this.stream = new CheckedStream({ ...options, stateKey: 'piiHeld', processorId: 'pii-detector' });
    this.system = [
      options.instructions ??
        'You detect personally identifiable information (PII) in text. List every PII value exactly as it appears in the text.',
      `PII types: ${this.detectionTypes.join(', ')}.`,
      'Use an empty list when there is none.',
      answerFormat('{"detections": [{"type": "<pii type>", "value": "<exact text>", "confidence": <0..1>}]}'),
    ].join('\n');
  }

  /** The redacted form of `value` (of PII type `type`) under this processor's `redactionMethod`. */
  redactValue(value: string, type: string): string {
    switch (this.redactionMethod) {
      case 'remove':
        return '';
      case 'placeholder':
        return `[${type.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}]`;
      case 'hash':
        return `[HASH:${createHmac('sha256', this.hashKey).update(value).digest('hex').slice(0, 8)}]`;
      default:
        return this.preserveFormat ? value.replace(/[\p{L}\p{N}]/gu, '*') : '*'.repeat(value.length);
    }
  }

  /**
   * Finds PII in `text` (one call per `maxJudgeInputChars` piece): the detections (types as
   * configured, however the judge spelled them) whose value occurs in the text as stored or as
   * displayed (character references, no-break and zero-width spaces…), or the failure.
   */
  async detect(state: ProcessorState, text: string, call: JudgeCall = {}): Promise<PIIDetection[] | JudgeFailure> {
    const reading = await this.read(state, text, call);
    return 'kind' in reading ? reading : reading.located.map((entry) => entry.detection);
  }

  /** Judges `text` and reads the answer: located detections, unlocated ones, unknown types. */
  private async read(state: ProcessorState, text: string, call: JudgeCall): Promise<PIIReading | JudgeFailure> {
    const outcome = await this.judge.judge(
      state,
      text,
      (piece) => ({
        system: this.system,
        prompt: quoted('Text to inspect', piece),
        schema: positionsWithin(piiReading, piece).transform((answer) => withUnnamedRedaction(answer, piece)),
        responseSchema: piiAnswer,
      }),
      call,
    );
    if (!outcome.ok) return outcome.failure;
    const reading: PIIReading = { located: [], unlocated: [], unrecognizedTypes: [], unplacedCategories: [], unnamedRedaction: outcome.values.some((value) => value.unnamedRedaction) };
    for (const detection of outcome.values.flatMap((value) => value.detections ?? [])) {
      if ((detection.confidence ?? 1) < this.threshold) continue;
      const label = this.labels.read(detection.type);
      // a type the guard knows but was configured not to look for is left alone
      if (label.kind === 'ignored') continue;
      const resolved: PIIDetection = label.kind === 'known' ? { ...detection, type: label.label } : detection;
      if (label.kind === 'unknown' && !reading.unrecognizedTypes.includes(detection.type)) reading.unrecognizedTypes.push(detection.type);
      const places = locateValue(text, detection.value);
      if (places.length === 0) reading.unlocated.push(resolved);
      else reading.located.push({ detection: resolved, places, unrecognizedType: label.kind === 'unknown' });
    }
    // the reference's categories, through the same labels: one at or above the threshold is placed by a
    // detection of its type, or it is a violation of its own (a known label, or an unknown type as written)
    const named = new Set([...reading.located.map((entry) => entry.detection.type), ...reading.unlocated.map((detection) => detection.type)]);
    const categories = readScores(
      outcome.values.flatMap((value) => (value.categories ?? []).map((category) => [category.type, category.score] as const)),
      this.labels,
      this.threshold,
    );
    for (const label of [...categories.flagged, ...categories.unrecognized]) if (!named.has(label)) reading.unplacedCategories.push(label);
    for (const written of categories.unrecognized) if (!reading.unrecognizedTypes.includes(written)) reading.unrecognizedTypes.push(written);
    return reading;
  }

  /** The `processInput` hook (see `Processor.processInput` for when it runs and what it may return). */
  processInput({ messages, messageList, abort, abortSignal, state, tracingContext }: ProcessInputArgs): Promise<MastraDBMessage[] | MessageList> {
    return judgeInputMessages({
      processorId: this.id,
      messages,
      messageList,
      abort,
      lastMessageOnly: this.lastMessageOnly,
      batchChars: this.judge.maxInputChars,
      judge: async (batch, text): Promise<BatchVerdict> => {
        const verdict = await this.verdictFor('input', state, text, { abortSignal, tracingContext });
        if (verdict.action === 'block') return verdict;
        if (verdict.action === 'keep') return { action: 'keep' };
        if (verdict.action === 'drop') return batch.length === 1 ? { action: 'each', verdict: () => ({ action: 'drop' }) } : { action: 'split' };
        const { replacements } = verdict;
        return {
          action: 'each',
          verdict: (message) => {
            const replaced = mapJudgedText(message, (partText) => replaceAllValues(partText, replacements));
            return replaced === message ? { action: 'keep' } : { action: 'replace', message: replaced };
          },
        };
      },
    });
  }

  /** The `processOutputStream` hook (see `Processor.processOutputStream` for when it runs and what it may return). */
  processOutputStream({ part, state, abort, abortSignal, tracingContext }: ProcessOutputStreamArgs): ChunkType | null | Promise<ChunkType | null> {
    return this.stream.process(part, state, abort, async (request) => {
      const verdict = await this.verdictFor('output', state, request.text, { abortSignal, tracingContext });
      if (verdict.action === 'replace') rememberRedactions(state, verdict.replacements);
      return verdict;
    });
  }

  /**
   * Judges each tool result (its strings, one call per budget piece) before the stream, the model
   * and memory see it: blocks, reports, or redacts the detected values in every string of the result.
   */
  async processToolResult({ result, toolCallId, toolName, args, messageList, state, abort, abortSignal, tracingContext }: ProcessToolResultArgs): Promise<undefined> {
    const text = stringsOf(result);
    if (text.trim() === '') return undefined;
    const verdict = await this.verdictFor('output', state, text, { abortSignal, tracingContext });
    if (verdict.action === 'block') return abort(verdict.reason, { metadata: verdict.metadata });
    if (verdict.action === 'keep') return undefined;
    let redacted: unknown = '[filtered by pii-detector]';
    if (verdict.action === 'replace') {
      redacted = mapStrings(result, (value) => replaceAllValues(value, verdict.replacements));
      rememberRedactions(state, verdict.replacements);
    }
    messageList.updateToolInvocation({ type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId, toolName, args, result: redacted } });
    return undefined;
  }

  /**
   * Applies every redaction made in this run (stream and tool results) to the stored reply — text,
   * reasoning, tool calls, results and errors, data parts — with no model call.
   */
  processOutputResult({ messages, state, result }: ProcessOutputResultArgs): MastraDBMessage[] | undefined {
    // the structured object too: a structurer before this guard read the text unredacted
    withholdDroppedObject(result, state);
    applyRedactionsToObject(result, state);
    return applyRedactionsToReply(messages, state);
  }

  /**
   * Judges `text` and decides: block, keep (warn), drop (filter) or the stored span → replacement
   * map (redact). What the judge reported but the guard cannot place is a violation too: a type it
   * does not know (redacted as `pii`), a value nowhere in the text, a reference category scored at
   * or above the threshold that no detection places, a `redacted_content` that redacts while the
   * answer names nothing (under `redact`, the whole judged text is dropped for these three, as no
   * span can be named).
   */
  private async verdictFor(phase: 'input' | 'output', state: ProcessorState, text: string, call: JudgeCall): Promise<Verdict> {
    const reading = await this.read(state, text, call);
    if ('kind' in reading) return this.judge.failureVerdict(reading, this.violations) ?? { action: 'keep' };
    const { located, unlocated, unrecognizedTypes, unplacedCategories, unnamedRedaction } = reading;
    const count = located.length + unlocated.length + unplacedCategories.length + (unnamedRedaction ? 1 : 0);
    if (count === 0) return { action: 'keep' };
    const known = [
      ...located.filter((entry) => !entry.unrecognizedType).map((entry) => entry.detection.type),
      ...unlocated.filter((detection) => !unrecognizedTypes.includes(detection.type)).map((detection) => detection.type),
      ...unplacedCategories.filter((type) => !unrecognizedTypes.includes(type)),
    ];
    const types = [...new Set(known), ...(unrecognizedTypes.length === 0 && !unnamedRedaction ? [] : ['unrecognized'])];
    const client = { phase, types, count };
    const notUnderstood = {
      ...(unrecognizedTypes.length === 0 ? {} : { unrecognizedTypes }),
      ...(unlocated.length === 0 ? {} : { unlocated: unlocated.length }),
      ...(unplacedCategories.length === 0 ? {} : { unplacedCategories }),
      ...(unnamedRedaction ? { unnamedRedaction } : {}),
    };
    const detections = [...located.map((entry) => entry.detection), ...unlocated];
    const server = { ...client, ...notUnderstood, ...(this.includeDetections ? { detections, ...(unlocated.length === 0 ? {} : { unlocatedDetections: unlocated }) } : {}) };
    const unplaced = [
      ...(unlocated.length === 0 ? [] : [`${unlocated.length} value(s) the judge named could not be located in the text`]),
      ...(unplacedCategories.length === 0 ? [] : [`${unplacedCategories.length} type(s) the judge scored without naming a value`]),
      ...(unnamedRedaction ? ['the judge redacted the text without naming what'] : []),
    ];
    const message = `PII detected in the ${phase}: ${types.join(', ')}${unplaced.length === 0 ? '' : ` (${unplaced.join('; ')})`}`;
    if (this.strategy === 'block') return this.violations.block(`PII detected in the ${phase}: ${types.join(', ')}`, client, { message, detail: server });
    this.violations.report(message, { ...server, strategy: this.strategy });
    if (this.strategy === 'warn') return { action: 'keep' };
    // what has no value to redact cannot be redacted by value: the judged text is dropped
    if (this.strategy === 'filter' || unplaced.length > 0) return { action: 'drop' };
    const replacements = new Map<string, string>();
    for (const { detection, places, unrecognizedType } of located) {
      for (const place of places) replacements.set(place.stored, this.redactValue(place.shown, unrecognizedType ? 'pii' : detection.type));
    }
    return { action: 'replace', replacements };
  }
}
