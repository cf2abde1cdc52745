import { createHmac, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { MastraDBMessage, MessageList } from '../message-list/index.js';
import type {
  AbortFunction,
  ChunkType,
  ProcessInputArgs,
  Processor,
  ProcessorViolation,
  ProcessOutputResultArgs,
  ProcessOutputStreamArgs,
  ProcessToolResultArgs,
  TracingContext,
} from '../contract/index.js';
import { CheckedTextStream, type SpanVerdict, type StreamMode } from './internal/checked-stream.js';
import { judgeInputMessages, quoted, type MessageVerdict } from './internal/input-messages.js';
import { mapJudgedText, mapMessageText, replaceAllValues } from './internal/message-text.js';
import { collectStrings, mapStrings } from './internal/deep-strings.js';
import { applyRememberedRedactions, rememberedRedactions, rememberRedactions } from './internal/redactions.js';
import { ModelJudge, type ModelBackedOptions } from './internal/model-backed.js';
import { answerFormat } from './internal/structured-call.js';
import { reportViolation } from './internal/violation.js';

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
export interface PIIDetectorOptions extends ModelBackedOptions {
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
   * secret.
   */
  hashKey?: string | Uint8Array;
  /** With `'mask'`, keep separators (`@ . - +` and spaces) so the shape stays readable. Default `true`. */
  preserveFormat?: boolean;
  /** Put the detected values in violations and tripwire metadata. Default `false`. */
  includeDetections?: boolean;
  /** Judge only the last user message of the input. Default `false`. */
  lastMessageOnly?: boolean;
  /**
   * How streamed output is checked: `'window'` (default, one call per `windowSize` characters ending
   * at a sentence boundary, text released one window late; a window may span text blocks) or
   * `'final'` (one call per run of consecutive text blocks, text released when a non-text chunk
   * ends the run: a tool call, the step's end, the run's `finish`). Never a call per token.
   */
  streamMode?: StreamMode;
  /** Characters per window. Default 200. */
  windowSize?: number;
}

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

const piiAnswer = z.object({
  detections: z.array(
    z.object({
      /** What kind of value this is. */
      type: z.string(),
      /** The matched value. */
      value: z.string(),
      /** How sure the model is (0..1). */
      confidence: z.number().min(0).max(1).optional(),
    }),
  ),
});

/**
 * One PII value the judge found.
 *
 * @example
 * ```ts
 * const detection: PIIDetection = { type: 'email', value: 'jane@x.io', confidence: 0.98 };
 * ```
 */
export type PIIDetection = z.infer<typeof piiAnswer>['detections'][number];

/**
 * Detects personal data (e-mail addresses, phone numbers, card numbers, names, addresses…) with a
 * model, in the input and in the streamed output, and blocks, reports, drops or redacts it.
 *
 * The judge answers with JSON `{"detections": [{"type": "email", "value": "jane@x.io", "confidence": 0.98}]}`;
 * each detected value is redacted wherever it occurs (`redactionMethod`). A failed call or an
 * unreadable answer follows `errorStrategy`: `'warn'` (default) fails open, `'strict'` aborts.
 * Every detection reaches `onViolation` (a block through `abort()`, never inside the processor's
 * own try/catch).
 *
 * Streaming costs one call per window (`streamMode: 'window'`) or per run of consecutive text
 * blocks (`'final'`), never one per token; the output is held back until judged, so the client
 * only sees redacted text. A block boundary does not end a judged span: a value split across two
 * text blocks of a step is judged whole and redacted in the block where it started. A value split
 * across two windows can be missed — windows end at sentence boundaries to make that rare; so can
 * one split by a tool call (the text before it is released first). `processOutputResult` applies
 * the stream's redactions to the stored reply (no further model call).
 *
 * Tool results are judged too (`processToolResult`, one call per result), and the stored reply
 * gets every redaction of the run in all its parts (text, reasoning, tool calls, results, errors,
 * data parts).
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
  private readonly judge: ModelJudge;
  private readonly detectionTypes: readonly string[];
  private readonly threshold: number;
  private readonly strategy: PIIStrategy;
  private readonly redactionMethod: PIIRedactionMethod;
  private readonly preserveFormat: boolean;
  private readonly hashKey: string | Uint8Array;
  private readonly includeDetections: boolean;
  private readonly lastMessageOnly: boolean;
  private readonly stream: CheckedTextStream;
  private readonly system: string;

  constructor(options: PIIDetectorOptions) {
    this.judge = new ModelJudge(options);
    this.detectionTypes = options.detectionTypes ?? DEFAULT_PII_TYPES;
    this.threshold = options.threshold ?? 0.5;
    this.strategy = options.strategy ?? 'redact';
    this.redactionMethod = options.redactionMethod ?? 'mask';
    this.preserveFormat = options.preserveFormat ?? true;
    this.hashKey = options.hashKey ?? randomBytes(32);
    this.includeDetections = options.includeDetections ?? false;
    this.lastMessageOnly = options.lastMessageOnly ?? false;
    this.stream = new CheckedTextStream({ ...options, stateKey: 'piiHeld' });
    this.onViolation = options.onViolation;
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

  /** Finds PII in `text` (one model call); `undefined` when the check failed open. */
  async detect(text: string, abort: AbortFunction, abortSignal?: AbortSignal, tracingContext?: TracingContext): Promise<PIIDetection[] | undefined> {
    const outcome = await this.judge.ask({
      system: this.system,
      prompt: quoted('Text to inspect', text),
      schema: piiAnswer,
      ...(abortSignal === undefined ? {} : { abortSignal }),
      tracing: { processorId: this.id, tracingContext },
    });
    if (!outcome.ok) {
      this.judge.failed(this.id, outcome.error, abort);
      return undefined;
    }
    const types = new Set(this.detectionTypes);
    return outcome.value.detections.filter(
      (detection) => types.has(detection.type) && (detection.confidence ?? 1) >= this.threshold && detection.value !== '' && text.includes(detection.value),
    );
  }

  /** The `processInput` hook (see `Processor.processInput` for when it runs and what it may return). */
  processInput({ messages, messageList, abort, abortSignal, tracingContext }: ProcessInputArgs): Promise<MastraDBMessage[] | MessageList> {
    return judgeInputMessages({
      processorId: this.id,
      messages,
      messageList,
      abort,
      lastMessageOnly: this.lastMessageOnly,
      judge: async (message, text): Promise<MessageVerdict> => {
        const detections = await this.detect(text, abort, abortSignal, tracingContext);
        if (detections === undefined || detections.length === 0) return { action: 'keep' };
        const replacements = this.enforce('input', detections, abort);
        if (replacements === 'keep') return { action: 'keep' };
        if (replacements === 'drop') return { action: 'drop' };
        return { action: 'replace', message: mapJudgedText(message, (partText) => replaceAllValues(partText, replacements)) };
      },
    });
  }

  /** The `processOutputStream` hook (see `Processor.processOutputStream` for when it runs and what it may return). */
  processOutputStream({ part, state, abort, abortSignal, tracingContext }: ProcessOutputStreamArgs): ChunkType | null | Promise<ChunkType | null> {
    return this.stream.process(part, state, async (span): Promise<SpanVerdict> => {
      const detections = await this.detect(span, abort, abortSignal, tracingContext);
      if (detections === undefined || detections.length === 0) return { action: 'keep' };
      const replacements = this.enforce('output', detections, abort);
      if (replacements === 'keep') return { action: 'keep' };
      if (replacements === 'drop') return { action: 'drop' };
      rememberRedactions(state, replacements);
      return { action: 'replace', replacements };
    });
  }

  /**
   * Judges each tool result (its strings, one model call) before the stream, the model and memory
   * see it: blocks, reports, or redacts the detected values in every string of the result.
   */
  async processToolResult({ result, toolCallId, toolName, args, messageList, state, abort, abortSignal, tracingContext }: ProcessToolResultArgs): Promise<undefined> {
    const text = collectStrings(result).join('\n');
    if (text.trim() === '') return undefined;
    const detections = await this.detect(text, abort, abortSignal, tracingContext);
    if (detections === undefined || detections.length === 0) return undefined;
    const replacements = this.enforce('output', detections, abort);
    if (replacements === 'keep') return undefined;
    const redacted =
      replacements === 'drop' ? '[filtered by pii-detector]' : mapStrings(result, (value) => replaceAllValues(value, replacements));
    if (replacements !== 'drop') rememberRedactions(state, replacements);
    messageList.updateToolInvocation({ type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId, toolName, args, result: redacted } });
    return undefined;
  }

  /**
   * Applies every redaction made in this run (stream and tool results) to the stored reply — text,
   * reasoning, tool calls, results and errors, data parts — with no model call.
   */
  processOutputResult({ messages, state }: ProcessOutputResultArgs): MastraDBMessage[] | undefined {
    const texts = applyRememberedRedactions(messages, state);
    const replacements = rememberedRedactions(state);
    if (replacements.size === 0) return texts;
    let changed = texts !== undefined;
    const result = (texts ?? messages).map((message) => {
      const parts = message.content.parts.map((part) => {
        if (part.type === 'text' || part.type === 'step-start') return part;
        const next = mapStrings(part, (value) => replaceAllValues(value, replacements)) as typeof part;
        if (next !== part) changed = true;
        return next;
      });
      return parts.every((part, index) => part === message.content.parts[index]) ? message : { ...message, content: { ...message.content, parts } };
    });
    return changed ? result : undefined;
  }

  /** Blocks, or reports and returns what to do: keep, drop, or the value → replacement map. */
  private enforce(phase: 'input' | 'output', detections: PIIDetection[], abort: AbortFunction): 'keep' | 'drop' | Map<string, string> {
    const types = [...new Set(detections.map((detection) => detection.type))];
    const detail = {
      phase,
      types,
      count: detections.length,
      ...(this.includeDetections ? { detections } : {}),
    };
    if (this.strategy === 'block') abort(`PII detected in the ${phase}: ${types.join(', ')}`, { metadata: detail });
    reportViolation(this, `PII detected in the ${phase}: ${types.join(', ')}`, { ...detail, strategy: this.strategy });
    if (this.strategy === 'warn') return 'keep';
    if (this.strategy === 'filter') return 'drop';
    return new Map(detections.map((detection) => [detection.value, this.redactValue(detection.value, detection.type)]));
  }
}
