import { z } from 'zod';
import type { MastraDBMessage, MessageList } from '../message-list/index.js';
import type {
  AbortFunction,
  ChunkType,
  ProcessInputArgs,
  Processor,
  ProcessorViolation,
  ProcessOutputStreamArgs,
  TracingContext,
} from '../contract/index.js';
import { CheckedTextStream, type SpanVerdict, type StreamMode } from './internal/checked-stream.js';
import { judgeInputMessages, quoted, type MessageVerdict } from './internal/input-messages.js';
import { flaggedCategories, ModelJudge, type CategoryScores, type ModelBackedOptions } from './internal/model-backed.js';
import { answerFormat } from './internal/structured-call.js';
import { reportViolation } from './internal/violation.js';

/**
 * What to do with flagged content: abort the run, report it and let it through, or remove it.
 *
 * @example
 * ```ts
 * const strategy: ModerationStrategy = 'filter';
 * ```
 */
export type ModerationStrategy = 'block' | 'warn' | 'filter';

/**
 * Options of {@link ModerationProcessor}.
 *
 * @example
 * ```ts
 * const options: ModerationOptions = { model, threshold: 0.7, streamMode: 'final' };
 * ```
 */
export interface ModerationOptions extends ModelBackedOptions {
  /** Categories to score. Default: the OpenAI moderation categories. */
  categories?: string[];
  /** Score (0..1) from which a category is flagged. Default 0.5. */
  threshold?: number;
  /** Default `'block'`. `'filter'` drops a flagged input message or a flagged span of output. */
  strategy?: ModerationStrategy;
  /** Put the scores in violations and tripwire metadata. Default `false`. */
  includeScores?: boolean;
  /** Judge only the last user message of the input. Default `false`. */
  lastMessageOnly?: boolean;
  /**
   * How streamed output is checked. `'window'` (default): text is held back and judged per
   * window of `windowSize` characters ending at a sentence boundary (a window may span text
   * blocks) — one model call per window, the client sees text one window late. `'final'`: a run
   * of consecutive text blocks is judged once, when a non-text chunk ends it (a tool call, the
   * step's end, the run's `finish`) — one call, the client sees the text only after it. Neither
   * makes a call per token.
   */
  streamMode?: StreamMode;
  /** Characters per window in `'window'` mode. Default 200. */
  windowSize?: number;
  /**
   * The reference's per-delta context size. Accepted so its configurations compile, but without
   * effect: output is judged per window (`streamMode`, `windowSize`), never per delta.
   */
  chunkWindow?: number;
}

/**
 * The categories the OpenAI moderation endpoint uses (the default).
 *
 * @example
 * ```ts
 * new ModerationProcessor({ model, categories: [...DEFAULT_MODERATION_CATEGORIES, 'spam'] });
 * ```
 */
export const DEFAULT_MODERATION_CATEGORIES = [
  'hate',
  'hate/threatening',
  'harassment',
  'harassment/threatening',
  'self-harm',
  'self-harm/intent',
  'self-harm/instructions',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
] as const;

/** The answer the judge is asked for (the reference's shape): flagged categories with scores. */
const referenceModerationAnswer = z.object({
  category_scores: z.array(z.object({ category: z.string(), score: z.number().min(0).max(1) })).nullable(),
  reason: z.string().nullish(),
});

/** rxagent's earlier shape, still accepted: a record of scores. */
const recordModerationAnswer = z.object({
  categories: z.record(z.string(), z.number().min(0).max(1)),
  reason: z.string().nullish(),
});

const moderationAnswer = z.union([referenceModerationAnswer, recordModerationAnswer]).transform((answer): ModerationAnswer => {
  const categories: CategoryScores =
    'category_scores' in answer
      ? Object.fromEntries((answer.category_scores ?? []).map((entry) => [entry.category, entry.score]))
      : answer.categories;
  return answer.reason == null ? { categories } : { categories, reason: answer.reason };
});

/**
 * The judge's answer, read from `{"category_scores": [{"category": "violence", "score": 0.9}],
 * "reason": "…"}` (the shape it is asked for) or `{"categories": {"violence": 0.9}, "reason": "…"}`.
 *
 * @example
 * ```ts
 * const answer: ModerationAnswer = { categories: { violence: 0.9 }, reason: 'threat' };
 * ```
 */
export interface ModerationAnswer {
  /** Score (0..1) per category. */
  categories: CategoryScores;
  /** Why (a human-readable reason). */
  reason?: string;
}

/**
 * Moderates the input and the streamed output with a model: each text is scored per category and
 * a category at or above `threshold` is a violation, handled by `strategy` (`block` aborts the run,
 * `warn` reports and lets it through, `filter` removes the message or the span of output).
 *
 * The judge answers with JSON `{"category_scores": [{"category": "violence", "score": 0.9}], "reason":
 * "…"}` (the reference's shape; `{"categories": {"violence": 0.9}}` is read too; fences and
 * surrounding prose are tolerated). A failed call or an unreadable answer follows `errorStrategy`:
 * `'warn'` (default) fails open, `'strict'` aborts. Every violation reaches `onViolation` (a block
 * through `abort()`); the abort never happens inside the processor's own try/catch.
 *
 * Streaming costs one call per window (`streamMode: 'window'`, `windowSize` characters) or one per
 * run of consecutive text blocks (`'final'`) — never one per token: the output is held back until
 * judged, so clients only ever see checked text. A block boundary does not end a judged span, so a
 * sentence split across two text blocks is judged whole. Latency versus cost: a smaller window
 * shows text sooner and costs more calls; `'final'` is cheapest and shows nothing until the text
 * is complete.
 *
 * Hooks: `processInput` (user messages) and `processOutputStream`.
 *
 * @example
 * ```ts
 * import { ModerationProcessor } from 'rxagent/processors';
 * const moderation = new ModerationProcessor({ model: openai('gpt-4.1-nano'), threshold: 0.7, streamMode: 'window' });
 * const agent = new Agent({ id: 'a', instructions: '…', model, inputProcessors: [moderation], outputProcessors: [moderation] });
 * ```
 */
export class ModerationProcessor implements Processor<'moderation'> {
  /** The processor's id. */
  readonly id = 'moderation';
  /** A human-readable name. */
  readonly name = 'Moderation';
  /** What the processor does. */
  readonly description = 'Moderates input and output with a model.';
  /** Data chunks must not overtake the held output. */
  readonly processDataParts = true;
  readonly onViolation: ((violation: ProcessorViolation) => void | Promise<void>) | undefined;
  private readonly judge: ModelJudge;
  private readonly categories: readonly string[];
  private readonly threshold: number;
  private readonly strategy: ModerationStrategy;
  private readonly includeScores: boolean;
  private readonly lastMessageOnly: boolean;
  private readonly stream: CheckedTextStream;
  private readonly system: string;

  constructor(options: ModerationOptions) {
    this.judge = new ModelJudge(options);
    this.categories = options.categories ?? DEFAULT_MODERATION_CATEGORIES;
    this.threshold = options.threshold ?? 0.5;
    this.strategy = options.strategy ?? 'block';
    this.includeScores = options.includeScores ?? false;
    this.lastMessageOnly = options.lastMessageOnly ?? false;
    this.stream = new CheckedTextStream({ ...options, stateKey: 'moderationHeld' });
    this.onViolation = options.onViolation;
    this.system = [
      options.instructions ??
        'You are a content moderator. Score the text for each category from 0 (certainly absent) to 1 (certainly present).',
      `Categories: ${this.categories.join(', ')}.`,
      'Only list the categories that apply; with none, answer an empty category_scores array.',
      answerFormat('{"category_scores": [{"category": "<category>", "score": <0..1>}, ...], "reason": "<one short sentence, or null>"}'),
    ].join('\n');
  }

  /** Scores `text` (one model call). Resolves to the flagged categories, or `undefined` when the check failed open. */
  async moderate(text: string, abort: AbortFunction, abortSignal?: AbortSignal, tracingContext?: TracingContext): Promise<{
    /** The categories at or above the threshold. */
    flagged: string[];
    /** The judge's answer. */
    answer: ModerationAnswer;
  } | undefined> {
    const outcome = await this.judge.ask({
      system: this.system,
      prompt: quoted('Text to moderate', text),
      schema: moderationAnswer,
      responseSchema: referenceModerationAnswer,
      ...(abortSignal === undefined ? {} : { abortSignal }),
      tracing: { processorId: this.id, tracingContext },
    });
    if (!outcome.ok) {
      this.judge.failed(this.id, outcome.error, abort);
      return undefined;
    }
    return { flagged: flaggedCategories(outcome.value.categories, this.threshold, this.categories), answer: outcome.value };
  }

  /** The `processInput` hook (see `Processor.processInput` for when it runs and what it may return). */
  processInput({ messages, messageList, abort, abortSignal, tracingContext }: ProcessInputArgs): Promise<MastraDBMessage[] | MessageList> {
    return judgeInputMessages({
      processorId: this.id,
      messages,
      messageList,
      abort,
      lastMessageOnly: this.lastMessageOnly,
      judge: async (_message, text): Promise<MessageVerdict> => {
        const verdict = await this.moderate(text, abort, abortSignal, tracingContext);
        if (verdict === undefined || verdict.flagged.length === 0) return { action: 'keep' };
        return this.enforce('input', verdict.flagged, verdict.answer, abort) === 'keep' ? { action: 'keep' } : { action: 'drop' };
      },
    });
  }

  /** The `processOutputStream` hook (see `Processor.processOutputStream` for when it runs and what it may return). */
  processOutputStream({ part, state, abort, abortSignal, tracingContext }: ProcessOutputStreamArgs): ChunkType | null | Promise<ChunkType | null> {
    return this.stream.process(part, state, async (span): Promise<SpanVerdict> => {
      const verdict = await this.moderate(span, abort, abortSignal, tracingContext);
      if (verdict === undefined || verdict.flagged.length === 0) return { action: 'keep' };
      return { action: this.enforce('output', verdict.flagged, verdict.answer, abort) };
    });
  }

  /** The tripwire reason, worded as the reference words it. */
  private blockReason(flagged: readonly string[], answer: ModerationAnswer): string {
    const reason = answer.reason === undefined ? '' : `. Reason: ${answer.reason}`;
    const scores = this.includeScores
      ? `. Scores: ${Object.entries(answer.categories).map(([category, score]) => `${category}: ${String(score)}`).join(', ')}`
      : '';
    return `Content flagged for moderation. Categories: ${flagged.join(', ')}${reason}${scores}`;
  }

  /** Blocks (abort), or reports and tells the caller whether to keep (`warn`) or drop (`filter`). */
  private enforce(phase: 'input' | 'output', flagged: string[], answer: ModerationAnswer, abort: AbortFunction): 'keep' | 'drop' {
    const detail = {
      phase,
      categories: flagged,
      ...(answer.reason === undefined ? {} : { reason: answer.reason }),
      ...(this.includeScores ? { scores: answer.categories as CategoryScores } : {}),
    };
    if (this.strategy === 'block') abort(this.blockReason(flagged, answer), { metadata: detail });
    reportViolation(this, `moderation flagged the ${phase}: ${flagged.join(', ')}`, { ...detail, strategy: this.strategy });
    return this.strategy === 'warn' ? 'keep' : 'drop';
  }
}
