import { z } from 'zod';
import type { MastraDBMessage, MessageList } from '../message-list/index.js';
import type { ChunkType, DurableStateOption, ProcessInputArgs, Processor, ProcessorState, ProcessorViolation, ProcessOutputResultArgs, ProcessOutputStreamArgs } from '../contract/index.js';
import { CheckedStream, GUARD_STREAM_OPTION_NAMES, withholdDroppedObject, type GuardChannel, type GuardStreamOptionName, type StreamMode } from './internal/checked-stream.js';
import { GUARD_JUDGE_OPTION_NAMES, GuardJudge, type GuardJudgeOptions, type JudgeCall, type JudgeFailure } from './internal/guard-judge.js';
import { judgeInputMessages, quoted, type BatchVerdict } from './internal/input-messages.js';
import type { Verdict } from './internal/judged-spans.js';
import { LabelReader, readScores, scoreRecord } from './internal/judge-answer.js';
import { MODERATION_SYNONYMS } from './internal/judge-synonyms.js';
import type { CategoryScores } from './internal/model-backed.js';
import { PrivateViolations } from './internal/private-violation.js';
import { answerFormat } from './internal/structured-call.js';
import { keepStateExcept } from './internal/step-scoped-state.js';
import { booleanOption, labelListOption, oneOfOption, probabilityOption, wholeNumberOption } from './internal/guard-options.js';
import { checkOptionKeys, optionKeys, optionNames } from './internal/option-keys.js';

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
export interface ModerationOptions extends GuardJudgeOptions {
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
   * How streamed output is checked. `'window'` (default): held back and judged per window (see
   * `windowSchedule`), each window judged while the earlier ones show. `'final'`: each stream (a run
   * of consecutive text blocks, a reasoning block…) is judged once, when it ends. Neither makes a
   * call per token; the client only sees judged content.
   */
  streamMode?: StreamMode;
  /** Window sizes in characters, the last one repeating. Default `[12, 48, 200, 800]` (`DEFAULT_WINDOW_SCHEDULE`). */
  windowSchedule?: readonly number[];
  /** Fixed windows of this many characters (the schedule `[windowSize]`). */
  windowSize?: number;
  /**
   * Output channels judged. Default: what the model writes — `text`, `reasoning`, `tool-input`
   * (a tool call's arguments: `filter` cannot cut them out of the call, so a flagged call blocks).
   * Add `data` / `tool-error` to judge what tools write too.
   */
  channels?: GuardChannel[];
  /**
   * Let the client see the judge's free-text reason (in the tripwire's reason and metadata).
   * Default `false`: the reason may quote the blocked text, so only `onViolation` gets it; the
   * client gets the processor id and the categories (and scores with `includeScores`).
   */
  revealJudgeReason?: boolean;
  /**
   * The reference's per-delta context size. Accepted so its configurations compile, but without
   * effect (a one-time warning says so): output is judged per window (`streamMode`, `windowSize`),
   * never per delta.
   */
  chunkWindow?: number;
}

/** The option names {@link ModerationProcessor} knows (the reference's among them). */
const MODERATION_OPTION_KEYS = optionKeys(
  'moderation',
  [
    ...GUARD_JUDGE_OPTION_NAMES,
    ...GUARD_STREAM_OPTION_NAMES,
    ...optionNames<Omit<ModerationOptions, keyof GuardJudgeOptions | GuardStreamOptionName>>({
      categories: true,
      threshold: true,
      strategy: true,
      includeScores: true,
      lastMessageOnly: true,
      revealJudgeReason: true,
      chunkWindow: true,
    }),
  ],
  { chunkWindow: 'output is judged per window (streamMode, windowSchedule, windowSize), never per delta' },
);

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
const referenceModerationAnswer = z.strictObject({
  // strict inside entries too, as the response format sent says (`additionalProperties: false`)
  category_scores: z.array(z.strictObject({ category: z.string(), score: z.number().min(0).max(1) })).nullable(),
  reason: z.string().nullish(),
});

/** rxagent's earlier shape, still accepted: a record of scores. */
const recordModerationAnswer = z.strictObject({
  categories: z.record(z.string(), z.number().min(0).max(1)),
  reason: z.string().nullish(),
});

const moderationAnswer = z.union([referenceModerationAnswer, recordModerationAnswer]).transform((answer): ModerationAnswer => {
  const categories: CategoryScores =
    'category_scores' in answer
      ? scoreRecord((answer.category_scores ?? []).map((entry) => [entry.category, entry.score]))
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
  /** Why (the judge's words: server side only unless `revealJudgeReason`). */
  reason?: string;
}

/**
 * Moderates the input and the streamed output with a model: each text is scored per category and
 * a category at or above `threshold` is a violation, handled by `strategy` (`block` aborts the run,
 * `warn` reports and lets it through, `filter` removes the message or the span of output).
 *
 * The judge answers with JSON `{"category_scores": [{"category": "violence", "score": 0.9}], "reason":
 * "…"}` (the reference's shape; `{"categories": {"violence": 0.9}}` is read too; fences and
 * surrounding prose are tolerated). An unreadable answer or a request the judge rejects (content
 * the judge cannot take) blocks the run (`contentErrorStrategy`, default `'strict'`); an
 * infrastructure failure follows `errorStrategy` (retried within `judgeDeadlineMs`, then `'strict'` default: blocks; `'fail-open'` explicit, reported to `onFailOpen`). Input messages are
 * judged in batches of up to `maxJudgeInputChars`; at most `maxJudgeCalls` calls per run. Every
 * violation reaches `onViolation` once, with the judge's reason; the client's tripwire carries the
 * categories only (`revealJudgeReason` to send the reason too).
 *
 * Streaming: output is held back until judged, per window of an adaptive schedule (12, 48, 200,
 * 800… characters) or once per stream (`'final'`) — never one call per token. A 2,000-character
 * answer costs 6 calls with the default schedule; the first clean text shows after ~12 characters
 * plus one judge round-trip. See docs/processors.md for the trade-offs.
 *
 * Hooks: `processInput` (user messages), `processOutputStream`, and `processOutputResult` (a
 * structured object the stream withheld is withheld from the result too).
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
  /** In a durable run: the state is kept as JSON; the output gate (`moderationHeld`, step-scoped) starts fresh after a takeover. */
  readonly durableState: DurableStateOption = keepStateExcept(['moderationHeld']);
  private readonly judge: GuardJudge;
  private readonly violations: PrivateViolations;
  private readonly categories: readonly string[];
  private readonly labels: LabelReader;
  private readonly threshold: number;
  private readonly strategy: ModerationStrategy;
  private readonly includeScores: boolean;
  private readonly revealJudgeReason: boolean;
  private readonly lastMessageOnly: boolean;
  private readonly stream: CheckedStream;
  private readonly system: string;

  constructor(options: ModerationOptions) {
    checkOptionKeys(MODERATION_OPTION_KEYS, options);
    this.judge = new GuardJudge('moderation', options);
    this.violations = new PrivateViolations('moderation', options.onViolation);
    this.onViolation = this.violations.onViolation;
    this.categories = labelListOption('moderation', 'categories', options.categories, DEFAULT_MODERATION_CATEGORIES);
    // accepted without effect (as the reference), but a value that is no count is still refused
    wholeNumberOption('moderation', 'chunkWindow', options.chunkWindow, 0, 0);
    this.labels = new LabelReader(this.categories, MODERATION_SYNONYMS);
    this.threshold = probabilityOption('moderation', 'threshold', options.threshold, 0.5);
    this.strategy = oneOfOption('moderation', 'strategy', options.strategy, ['block', 'warn', 'filter'], 'block');
    this.includeScores = booleanOption('moderation', 'includeScores', options.includeScores, false);
    this.revealJudgeReason = booleanOption('moderation', 'revealJudgeReason', options.revealJudgeReason, false);
    this.lastMessageOnly = booleanOption('moderation', 'lastMessageOnly', options.lastMessageOnly, false);
    this.stream = new CheckedStream({
      ...options,
      channels: options.channels === undefined ? ['text', 'reasoning', 'tool-input'] : options.channels,
      stateKey: 'moderationHeld',
      processorId: 'moderation',
    });
    this.system = [
      options.instructions ??
        'You are a content moderator. Score the text for each category from 0 (certainly absent) to 1 (certainly present).',
      `Categories: ${this.categories.join(', ')}.`,
      'Only list the categories that apply; with none, answer an empty category_scores array.',
      answerFormat('{"category_scores": [{"category": "<category>", "score": <0..1>}, ...], "reason": "<one short sentence, or null>"}'),
    ].join('\n');
  }

  /**
   * Scores `text` (one call per `maxJudgeInputChars` piece; a category's score is its highest in
   * any piece). Resolves to the flagged categories and the merged answer, or the failure.
   */
  async moderate(
    state: ProcessorState,
    text: string,
    call: JudgeCall = {},
  ): Promise<
    | {
        /** The configured categories at or above the threshold (however the judge spelled them). */
        flagged: string[];
        /** Categories the judge named at or above the threshold that are none of the known ones (as written): a violation too. */
        unrecognized: string[];
        /** The judge's answer (merged over the pieces). */
        answer: ModerationAnswer;
      }
    | JudgeFailure
  > {
    const outcome = await this.judge.judge(
      state,
      text,
      (piece) => ({ system: this.system, prompt: quoted('Text to moderate', piece), schema: moderationAnswer, responseSchema: referenceModerationAnswer }),
      call,
    );
    if (!outcome.ok) return outcome.failure;
    const reasons = outcome.values.flatMap((value) => (value.reason === undefined ? [] : [value.reason]));
    const read = readScores(
      outcome.values.flatMap((value) => Object.entries(value.categories)),
      this.labels,
      this.threshold,
    );
    const answer: ModerationAnswer = reasons.length === 0 ? { categories: read.scores } : { categories: read.scores, reason: reasons.join(' ') };
    return { flagged: read.flagged, unrecognized: read.unrecognized, answer };
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
        return batch.length === 1 ? { action: 'each', verdict: () => ({ action: 'drop' }) } : { action: 'split' };
      },
    });
  }

  /** The `processOutputStream` hook (see `Processor.processOutputStream` for when it runs and what it may return). */
  processOutputStream({ part, state, abort, abortSignal, tracingContext }: ProcessOutputStreamArgs): ChunkType | null | Promise<ChunkType | null> {
    return this.stream.process(part, state, abort, (request) => this.verdictFor('output', state, request.text, { abortSignal, tracingContext }));
  }

  /**
   * The `processOutputResult` hook: under `filter`, a structured object the stream withheld (its
   * `object` chunk was flagged) is withheld from the run's result too. No model call.
   */
  processOutputResult({ result, state }: ProcessOutputResultArgs): undefined {
    withholdDroppedObject(result, state);
    return undefined;
  }

  /** Judges `text` and decides: block (reported with the judge's reason), keep (warn), drop (filter). */
  private async verdictFor(phase: 'input' | 'output', state: ProcessorState, text: string, call: JudgeCall): Promise<Verdict> {
    const result = await this.moderate(state, text, call);
    if ('kind' in result) return this.judge.failureVerdict(result, this.violations) ?? { action: 'keep' };
    const { answer, unrecognized } = result;
    // a category the judge flagged that this guard cannot place is a violation, never "nothing found"
    const flagged = unrecognized.length === 0 ? result.flagged : [...result.flagged, 'unrecognized'];
    if (flagged.length === 0) return { action: 'keep' };
    const scores = this.includeScores ? { scores: answer.categories } : {};
    const server = {
      phase,
      categories: flagged,
      ...(unrecognized.length === 0 ? {} : { unrecognized }),
      ...(answer.reason === undefined ? {} : { reason: answer.reason }),
      scores: answer.categories,
    };
    const message = `moderation flagged the ${phase}: ${flagged.join(', ')}${unrecognized.length === 0 ? '' : ` (categories it cannot place: ${unrecognized.join(', ')})`}${answer.reason === undefined ? '' : ` (${answer.reason})`}`;
    if (this.strategy === 'block') {
      const reveal = this.revealJudgeReason && answer.reason !== undefined ? { reason: answer.reason } : {};
      return this.violations.block(this.blockReason(flagged, answer), { phase, categories: flagged, ...scores, ...reveal }, { message, detail: server });
    }
    this.violations.report(message, { ...server, strategy: this.strategy });
    return this.strategy === 'warn' ? { action: 'keep' } : { action: 'drop' };
  }

  /** The tripwire reason, as the client sees it: the categories (the judge's words only with `revealJudgeReason`). */
  private blockReason(flagged: readonly string[], answer: ModerationAnswer): string {
    const reason = this.revealJudgeReason && answer.reason !== undefined ? `. Reason: ${answer.reason}` : '';
    const scores = this.includeScores
      ? `. Scores: ${Object.entries(answer.categories).map(([category, score]) => `${category}: ${String(score)}`).join(', ')}`
      : '';
    return `Content flagged for moderation. Categories: ${flagged.join(', ')}${reason}${scores}`;
  }
}
