/**
 * The judge of the guarding model-backed processors (Moderation, PIIDetector,
 * PromptInjectionDetector, SystemPromptScrubber, LanguageDetector), on top of `ModelJudge`:
 *
 * - **Nothing in the content switches it off.** A failure the judged content can cause — an answer
 *   that is not the expected JSON (the content asked the judge to answer in prose), a request the
 *   provider rejects as too long or refuses (4xx, context overflow, content filter) — fails closed
 *   by default (`contentErrorStrategy: 'strict'`); `errorStrategy` (default `'warn'`, fail open)
 *   applies to infrastructure failures only (network, timeouts, 408/429/5xx).
 * - **Never past its context.** Content longer than `maxJudgeInputChars` is judged in pieces
 *   (overlapping, cut at whitespace), in parallel; the verdicts are merged.
 * - **Bounded cost.** At most `maxJudgeCalls` calls per processor and run; past the bound the
 *   run is blocked (fail closed).
 */
import { APICallError } from '@ai-sdk/provider';
import type { ProcessorState } from '../../contract/index.js';
import type { TracingContext } from '../../contract/index.js';
import { ModelJudge, type ErrorStrategy, type ModelBackedOptions } from './model-backed.js';
import { budgetPieces, DEFAULT_JUDGE_INPUT_CHARS, type Verdict } from './judged-spans.js';
import type { PrivateViolations } from './private-violation.js';
import { StructuredCallError, type StructuredCallRequest } from './structured-call.js';

/**
 * The default bound on judge calls per processor and run.
 *
 * @example
 * ```ts
 * new ModerationProcessor({ model, maxJudgeCalls: DEFAULT_MAX_JUDGE_CALLS * 2 });
 * ```
 */
export const DEFAULT_MAX_JUDGE_CALLS = 100;

/**
 * Options of the guarding model-backed processors, on top of {@link ModelBackedOptions}.
 *
 * @example
 * ```ts
 * const options: GuardJudgeOptions = { model, maxJudgeInputChars: 4_000, maxJudgeCalls: 50, contentErrorStrategy: 'strict' };
 * ```
 */
export interface GuardJudgeOptions extends ModelBackedOptions {
  /**
   * Infrastructure failures of the judge (network, timeouts, 408/429/5xx): `'warn'` (default)
   * lets the content through and calls `onError`, `'strict'` blocks the run.
   */
  errorStrategy?: ErrorStrategy;
  /**
   * Failures the judged content can cause — an unreadable answer, a request rejected as too long
   * or refused (4xx, context overflow, content filter): `'strict'` (default) blocks the run, so
   * padding the content or asking the judge to answer in prose never lets it through. `'warn'`
   * lets such content through (and calls `onError`).
   */
  contentErrorStrategy?: ErrorStrategy;
  /**
   * Characters of content one judge call may carry (instructions not counted). Default 8,000 (≈ 2,000
   * tokens). Longer content is judged in overlapping pieces, one call each.
   */
  maxJudgeInputChars?: number;
  /** Judge calls this processor may make per run (input, stream, tool results together). Default 100; past it the run is blocked. */
  maxJudgeCalls?: number;
}

/**
 * Why a judge call failed, as the error strategies see it: the judged content can cause it
 * (`contentErrorStrategy`), the infrastructure (`errorStrategy`), or the run's `maxJudgeCalls`.
 *
 * @example
 * ```ts
 * const kind: JudgeFailureKind = 'content';
 * ```
 */
export type JudgeFailureKind = 'content' | 'infrastructure' | 'budget';

/**
 * A judge failure: its kind, a client-safe description, and the error.
 *
 * @example
 * ```ts
 * const verdict = await moderation.moderate(state, text);
 * if ('kind' in verdict) console.warn(verdict.kind, verdict.summary);
 * ```
 */
export interface JudgeFailure {
  /** Which strategy applies: `content`, `infrastructure`, or the run's `budget` of calls. */
  kind: JudgeFailureKind;
  /** What happened, without the content or the judge's words (safe for the client). */
  summary: string;
  /** The error itself (given to `onError` and `onViolation`, never to the client). */
  error: unknown;
}

/**
 * The hook call a judgment is made for: its abort signal, and the tracing context its judge calls
 * are reported to (`tracingContext.onJudge`).
 *
 * @example
 * ```ts
 * const call: JudgeCall = { abortSignal, tracingContext };
 * ```
 */
export interface JudgeCall {
  /** The hook's signal: a cancelled run cancels its judge calls. */
  abortSignal?: AbortSignal | undefined;
  /** The hook's tracing context: each judge call is reported to its `onJudge`. */
  tracingContext?: TracingContext | undefined;
}

/** The outcome of judging one text (all its pieces). */
export type GuardOutcome<T> = { ok: true; values: T[] } | { ok: false; failure: JudgeFailure };

const CALLS_KEY = 'rxagent.judgeCalls';

function statusOf(error: unknown): number | undefined {
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    if (APICallError.isInstance(current)) return current.statusCode;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Whether the judged content can have caused `error`: an unreadable or refused answer, or a
 * request the provider rejected (4xx other than 408/429: too long, invalid, refused), or an error
 * naming the context length. Everything else is infrastructure.
 *
 * @example
 * ```ts
 * classifyFailure(new StructuredCallError('malformed', 'not JSON')).kind; // 'content'
 * ```
 */
export function classifyFailure(error: StructuredCallError): JudgeFailure {
  if (error.kind === 'malformed') return { kind: 'content', summary: "the judge's answer could not be read", error };
  if (error.kind === 'refused') return { kind: 'content', summary: 'the judge refused the content', error };
  const status = statusOf(error.cause);
  if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) {
    return { kind: 'content', summary: `the judge rejected the request (HTTP ${status})`, error };
  }
  if (/context|too long|too many tokens|maximum.{0,20}tokens|token limit/i.test(error.message)) {
    return { kind: 'content', summary: 'the content exceeded what the judge accepts', error };
  }
  return { kind: 'infrastructure', summary: 'the judge could not be reached', error };
}

/**
 * The judge of a guarding processor: budgeted, chunked calls, and the error strategies.
 *
 * @example
 * ```ts
 * const judge = new GuardJudge('moderation', options);
 * const outcome = await judge.judge(state, text, (piece) => ({ system, prompt: piece, schema }), { abortSignal, tracingContext });
 * ```
 */
export class GuardJudge {
  readonly model: ModelJudge;
  readonly maxInputChars: number;
  private readonly maxCalls: number;
  private readonly infrastructureStrategy: ErrorStrategy;
  private readonly contentStrategy: ErrorStrategy;
  private readonly onError: ((error: unknown) => void) | undefined;

  constructor(
    private readonly processorId: string,
    options: GuardJudgeOptions,
  ) {
    this.model = new ModelJudge(options);
    this.maxInputChars = Math.max(200, Math.floor(options.maxJudgeInputChars ?? DEFAULT_JUDGE_INPUT_CHARS));
    this.maxCalls = Math.max(1, Math.floor(options.maxJudgeCalls ?? DEFAULT_MAX_JUDGE_CALLS));
    this.infrastructureStrategy = options.errorStrategy ?? 'warn';
    this.contentStrategy = options.contentErrorStrategy ?? 'strict';
    this.onError = options.onError;
  }

  /** Calls made in this run so far. */
  callsMade(state: ProcessorState): number {
    return (state[CALLS_KEY] as number | undefined) ?? 0;
  }

  /**
   * Judges `text`: one call per budget piece (in parallel), each built by `request` and reported
   * to `tracingContext.onJudge`. Fails with kind `'budget'` without calling when the run's bound
   * would be passed.
   */
  async judge<T>(
    state: ProcessorState,
    text: string,
    request: (piece: string) => Omit<StructuredCallRequest<T>, 'model' | 'providerOptions' | 'abortSignal'>,
    call: JudgeCall,
    budget = this.maxInputChars,
  ): Promise<GuardOutcome<T>> {
    const pieces = budgetPieces(text, budget);
    // a hook called by hand without its run's state (unit tests) gets a bound of its own
    state ??= {};
    const used = this.callsMade(state);
    if (used + pieces.length > this.maxCalls) {
      state[CALLS_KEY] = this.maxCalls;
      return {
        ok: false,
        failure: { kind: 'budget', summary: `the judge call budget is used up (maxJudgeCalls: ${this.maxCalls})`, error: new Error(`${this.processorId}: more than ${this.maxCalls} judge calls in one run`) },
      };
    }
    state[CALLS_KEY] = used + pieces.length;
    const tracing = { processorId: this.processorId, tracingContext: call.tracingContext };
    const abortSignal = call.abortSignal;
    const outcomes = await Promise.all(pieces.map((piece) => this.model.ask({ ...request(piece), tracing, ...(abortSignal === undefined ? {} : { abortSignal }) })));
    const values: T[] = [];
    for (const outcome of outcomes) {
      if (!outcome.ok) return { ok: false, failure: classifyFailure(outcome.error) };
      values.push(outcome.value);
    }
    return { ok: true, values };
  }

  /**
   * What a failure means: a block verdict (reported privately with the error) when it fails
   * closed, `undefined` when the content passes (`onError` is called either way).
   */
  failureVerdict(failure: JudgeFailure, violations: PrivateViolations): Extract<Verdict, { action: 'block' }> | undefined {
    try {
      this.onError?.(failure.error);
    } catch {
      // a failing onError never changes the outcome
    }
    const strategy = failure.kind === 'budget' ? 'strict' : failure.kind === 'content' ? this.contentStrategy : this.infrastructureStrategy;
    if (strategy !== 'strict') return undefined;
    const why = failure.kind === 'infrastructure' ? "errorStrategy is 'strict'" : failure.kind === 'content' ? 'the content can cause this failure' : 'the bound fails closed';
    return violations.block(`${this.processorId}: the check could not be completed (${failure.summary}); blocked because ${why}`, { kind: failure.kind }, {
      message: `${this.processorId}: judge failure (${failure.kind})`,
      detail: { kind: failure.kind, error: failure.error instanceof Error ? failure.error.message : String(failure.error) },
    });
  }
}

export { StructuredCallError };
