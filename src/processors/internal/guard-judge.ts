/**
 * The judge of the guarding model-backed processors (Moderation, PIIDetector,
 * PromptInjectionDetector, SystemPromptScrubber, LanguageDetector), on top of `ModelJudge`:
 *
 * - **Fails closed.** A failure the judged content can cause — an answer that is not the expected
 *   JSON (the content asked the judge to answer in prose), a request the provider rejects as too
 *   long or refuses (4xx, context overflow, content filter) — blocks (`contentErrorStrategy`,
 *   default `'strict'`). Infrastructure failures (network, timeouts, 408/429/5xx) are retried with
 *   backoff (honouring `Retry-After`) within `judgeDeadlineMs`; after that `errorStrategy` applies,
 *   default `'strict'` too. Failing open is explicit (`'fail-open'`) and reported to `onFailOpen`
 *   each time it lets content through.
 * - **Never past its context.** Content longer than `maxJudgeInputChars` is judged in pieces
 *   (overlapping, cut at whitespace); the verdicts are merged.
 * - **Bounded cost and load.** At most `maxJudgeCalls` calls per processor and run (past the bound
 *   the run is blocked) and at most `maxConcurrentJudgeCalls` of them at once (the others wait).
 */
import { MAX_TIMER_MS, type ProcessorState } from '../../contract/index.js';
import type { TracingContext } from '../../contract/index.js';
import { InvalidProcessorOptionError, thrownMessage } from '../../contract/index.js';
import { MODEL_BACKED_OPTION_NAMES, ModelJudge, type ModelBackedOptions } from './model-backed.js';
import { callWithRetry, JudgeDeadlineError, JudgeSlots, outageOf, readCallError, type JudgeClock } from './judge-retry.js';
import { JUDGE_SLOTS_KEY } from './step-scoped-state.js';
import { budgetPieces, DEFAULT_JUDGE_INPUT_CHARS, type Verdict } from './judged-spans.js';
import { callQuietly, type PrivateViolations } from './private-violation.js';
import { StructuredCallError, type StructuredCallRequest } from './structured-call.js';
import { functionOption } from './guard-options.js';
import { optionNames } from './option-keys.js';

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
 * The default bound on judge calls of one guard in one run running at the same time.
 *
 * @example
 * ```ts
 * new ModerationProcessor({ model, maxConcurrentJudgeCalls: DEFAULT_MAX_CONCURRENT_JUDGE_CALLS + 2 });
 * ```
 */
export const DEFAULT_MAX_CONCURRENT_JUDGE_CALLS = 2;

/**
 * The default time one judge call may take, retries of infrastructure failures included.
 *
 * @example
 * ```ts
 * new PIIDetector({ model, judgeDeadlineMs: DEFAULT_JUDGE_DEADLINE_MS / 2 });
 * ```
 */
export const DEFAULT_JUDGE_DEADLINE_MS = 10_000;

/**
 * What a guard does when its judge could not give a verdict: `'strict'` (the default) blocks the
 * run (fails closed); `'fail-open'` lets the content through unchecked and calls `onFailOpen`.
 * `'warn'` is a deprecated alias of `'fail-open'` (its meaning before 0.x: it was the default).
 *
 * @example
 * ```ts
 * new ModerationProcessor({ model, errorStrategy: 'fail-open', onFailOpen: (info) => metrics.increment(info.processorId) });
 * ```
 */
export type GuardErrorStrategy = 'strict' | 'fail-open' | 'warn';

/**
 * What `onFailOpen` is told each time a guard with a `'fail-open'` strategy lets content through
 * unchecked.
 *
 * @example
 * ```ts
 * const onFailOpen = (info: FailOpenInfo) => console.warn(`${info.processorId} let content through: ${info.summary} after ${info.attempts} attempts`);
 * ```
 */
export interface FailOpenInfo {
  /** The guard's id. */
  processorId: string;
  /** Which strategy let it through: `infrastructure` (`errorStrategy`) or `content` (`contentErrorStrategy`). */
  kind: 'infrastructure' | 'content';
  /** What happened, without the content (safe to log). */
  summary: string;
  /** The last attempt's error. */
  error: unknown;
  /** Judge attempts made for the piece that failed (1 when nothing was retried). */
  attempts: number;
}

/**
 * Options of the guarding model-backed processors, on top of {@link ModelBackedOptions}.
 *
 * @example
 * ```ts
 * const options: GuardJudgeOptions = { model, maxJudgeInputChars: 4_000, maxJudgeCalls: 50, maxConcurrentJudgeCalls: 2, judgeDeadlineMs: 10_000 };
 * ```
 */
export interface GuardJudgeOptions extends Omit<ModelBackedOptions, 'errorStrategy'> {
  /**
   * Infrastructure failures of the judge (network, timeouts, 408/429/5xx) that retries within
   * `judgeDeadlineMs` did not cure: `'strict'` (default) blocks the run; `'fail-open'` lets the
   * content through and calls `onFailOpen` (and `onError`). `'warn'`: deprecated alias of `'fail-open'`.
   */
  errorStrategy?: GuardErrorStrategy;
  /**
   * Failures the judged content can cause — an unreadable answer, a request rejected as too long
   * or refused (4xx, context overflow, content filter): `'strict'` (default) blocks the run, so
   * padding the content or asking the judge to answer in prose never lets it through.
   * `'fail-open'` lets such content through (and calls `onFailOpen`). Never retried.
   */
  contentErrorStrategy?: GuardErrorStrategy;
  /** Called each time a `'fail-open'` strategy lets content through unchecked; its throws are swallowed. */
  onFailOpen?: (info: FailOpenInfo) => void;
  /**
   * Characters of content one judge call may carry (instructions not counted). Default 8,000 (≈ 2,000
   * tokens). Longer content is judged in overlapping pieces, one call each.
   */
  maxJudgeInputChars?: number;
  /** Judge calls this processor may make per run (input, stream, tool results together). Default 100; past it the run is blocked. */
  maxJudgeCalls?: number;
  /**
   * Judge calls of this processor in one run at the same time, as the provider counts them (a call
   * abandoned at its deadline holds its slot until the provider's call settles). Default 2; the
   * others wait their turn, and one that sees no slot freed within `judgeDeadlineMs` fails as a
   * timeout (`errorStrategy`).
   */
  maxConcurrentJudgeCalls?: number;
  /**
   * Milliseconds one judge call may take, its retries included (408/429/5xx, timeouts and network
   * errors are retried with exponential backoff and jitter, honouring `Retry-After`). Default
   * 10,000, at most 2^31 − 1 (the longest a timer waits); past it the attempt is aborted and
   * `errorStrategy` applies.
   */
  judgeDeadlineMs?: number;
}

/**
 * The names of {@link GuardJudgeOptions} (the model-backed options included): one list for every
 * guard, each adding its own options to it.
 *
 * @example
 * ```ts
 * const keys = optionKeys('moderation', [...GUARD_JUDGE_OPTION_NAMES, 'categories', 'threshold']);
 * ```
 */
export const GUARD_JUDGE_OPTION_NAMES: readonly string[] = Object.freeze([
  ...MODEL_BACKED_OPTION_NAMES,
  ...optionNames<Omit<GuardJudgeOptions, keyof ModelBackedOptions>>({
    contentErrorStrategy: true,
    onFailOpen: true,
    maxJudgeInputChars: true,
    maxJudgeCalls: true,
    maxConcurrentJudgeCalls: true,
    judgeDeadlineMs: true,
  }),
]);

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
  /** Judge attempts made (retries of infrastructure failures included). */
  attempts?: number;
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
const SLOTS_KEY = JUDGE_SLOTS_KEY;

const strategies: ReadonlySet<unknown> = new Set<GuardErrorStrategy>(['strict', 'fail-open', 'warn']);

function strategyOption(processorId: string, option: string, value: unknown): 'strict' | 'fail-open' {
  if (value === undefined) return 'strict';
  if (!strategies.has(value)) throw new InvalidProcessorOptionError(processorId, option, value, "'strict' or 'fail-open' ('warn': deprecated alias of 'fail-open')");
  return value === 'strict' ? 'strict' : 'fail-open';
}

function countOption(processorId: string, option: string, value: unknown, fallback: number, least: number, most = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < least || value > most) {
    throw new InvalidProcessorOptionError(processorId, option, value, `a finite number of at least ${least}${most === Number.MAX_SAFE_INTEGER ? '' : `, at most ${most}`}`);
  }
  return Math.floor(value);
}

/**
 * Which strategy a failed judge call falls under, on one path whose default is `content`: only a
 * recognised infrastructure failure (see `outageOf`: the AI SDK's `APICallError` without a
 * response or with 408/429/5xx, a marked provider stream error with 408/429/5xx, a Node/undici
 * network error, our deadline, a cut answer stream, the AI SDK's `RetryError` ending in one of
 * these) is `infrastructure` — retried, then `errorStrategy`. Everything else is `content` (never
 * retried; `contentErrorStrategy`, default `'strict'`: blocked): an unreadable or refused answer,
 * a request the provider rejected (4xx other than 408/429), an error naming the context length,
 * a thrown value that cannot be read, and any failure not recognised — a thrown string,
 * `undefined`, a plain object, a `TypeError` from a provider's bug, another class.
 *
 * @example
 * ```ts
 * classifyFailure(new StructuredCallError('malformed', 'not JSON')).kind; // 'content'
 * classifyFailure(new StructuredCallError('model', 'failed', { cause: new TypeError('bug') })).kind; // 'content'
 * ```
 */
export function classifyFailure(error: StructuredCallError): JudgeFailure {
  if (error.kind === 'malformed') return { kind: 'content', summary: "the judge's answer could not be read", error };
  if (error.kind === 'refused') return { kind: 'content', summary: 'the judge refused the content', error };
  const reading = readCallError(error.cause);
  // an error the guard cannot read (a revoked Proxy, a throwing getter) tells no outage from
  // anything else: not retried, and under contentErrorStrategy (default 'strict': blocked)
  if (reading.kind === 'unreadable') return { kind: 'content', summary: "the judge's error could not be read", error };
  const status = reading.kind === 'api' || reading.kind === 'stream' ? reading.statusCode : undefined;
  if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) {
    return { kind: 'content', summary: `the judge rejected the request (HTTP ${status})`, error };
  }
  if (/context|too long|too many tokens|maximum.{0,20}tokens|token limit/i.test(error.message)) {
    return { kind: 'content', summary: 'the content exceeded what the judge accepts', error };
  }
  const outage = outageOf(reading);
  if (outage !== undefined) return { kind: 'infrastructure', summary: outage, error };
  return { kind: 'content', summary: 'the judge failed in a way not recognised as an outage', error };
}

/** `value instanceof type`, false where asking throws (a revoked Proxy, a throwing `getPrototypeOf` trap). */
function instanceOf<T>(value: unknown, type: abstract new (...args: never[]) => T): value is T {
  try {
    return value instanceof type;
  } catch {
    return false;
  }
}

/**
 * The judge of a guarding processor: budgeted, chunked, bounded and retried calls, and the error
 * strategies.
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
  private readonly maxConcurrent: number;
  private readonly deadlineMs: number;
  private readonly infrastructureStrategy: 'strict' | 'fail-open';
  private readonly contentStrategy: 'strict' | 'fail-open';
  private readonly onError: ((error: unknown) => void) | undefined;
  private readonly onFailOpen: ((info: FailOpenInfo) => void) | undefined;

  constructor(
    private readonly processorId: string,
    options: GuardJudgeOptions,
    /** The time retries run on (tests pass a fake one). */
    private readonly clock?: JudgeClock,
  ) {
    const { errorStrategy, contentErrorStrategy, ...shared } = options;
    this.infrastructureStrategy = strategyOption(processorId, 'errorStrategy', errorStrategy);
    this.contentStrategy = strategyOption(processorId, 'contentErrorStrategy', contentErrorStrategy);
    this.maxInputChars = Math.max(200, countOption(processorId, 'maxJudgeInputChars', options.maxJudgeInputChars, DEFAULT_JUDGE_INPUT_CHARS, 1));
    this.maxCalls = countOption(processorId, 'maxJudgeCalls', options.maxJudgeCalls, DEFAULT_MAX_JUDGE_CALLS, 1);
    this.maxConcurrent = countOption(processorId, 'maxConcurrentJudgeCalls', options.maxConcurrentJudgeCalls, DEFAULT_MAX_CONCURRENT_JUDGE_CALLS, 1);
    this.deadlineMs = countOption(processorId, 'judgeDeadlineMs', options.judgeDeadlineMs, DEFAULT_JUDGE_DEADLINE_MS, 1, MAX_TIMER_MS);
    this.model = new ModelJudge(processorId, { ...shared, errorStrategy: 'strict' });
    this.onError = options.onError;
    this.onFailOpen = functionOption(processorId, 'onFailOpen', options.onFailOpen);
  }

  /** Calls made in this run so far. */
  callsMade(state: ProcessorState): number {
    return (state[CALLS_KEY] as number | undefined) ?? 0;
  }

  /**
   * Judges `text`: one call per budget piece (at most `maxConcurrentJudgeCalls` at once for this
   * processor in this run), each built by `request`, retried through infrastructure faults within
   * `judgeDeadlineMs`, and reported to `tracingContext.onJudge`. Fails with kind `'budget'`
   * without calling when the run's bound would be passed.
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
    const slots = ((state[SLOTS_KEY] as JudgeSlots | undefined) ??= new JudgeSlots(this.maxConcurrent, this.clock));
    const outcomes = await Promise.all(pieces.map((piece) => this.judgePiece(slots, request(piece), call)));
    const values: T[] = [];
    for (const outcome of outcomes) {
      if (!outcome.ok) return outcome;
      values.push(outcome.value);
    }
    return { ok: true, values };
  }

  /**
   * One piece: waits for a slot (failing closed when none is freed within `judgeDeadlineMs`), then
   * calls (and retries) within the deadline. The slot is freed when the provider's last call
   * settles, which may be after this piece's outcome (a call abandoned at the deadline or by the
   * run's abort, by a provider that ignores its abort signal, still counts against the bound).
   */
  private async judgePiece<T>(
    slots: JudgeSlots,
    request: Omit<StructuredCallRequest<T>, 'model' | 'providerOptions' | 'abortSignal'>,
    call: JudgeCall,
  ): Promise<{ ok: true; value: T } | { ok: false; failure: JudgeFailure }> {
    const release = await slots.acquire({ waitMs: this.deadlineMs, signal: call.abortSignal });
    if (release === undefined) return { ok: false, failure: this.noSlot(call) };
    // the provider's call of the latest attempt, settled or not
    let running: Promise<unknown> = Promise.resolve();
    try {
      const tracing = { processorId: this.processorId, tracingContext: call.tracingContext };
      const outcome = await callWithRetry(
        async (abortSignal) => {
          const pending = this.model.ask({ ...request, tracing, abortSignal });
          running = pending.catch(() => undefined);
          const asked = await pending;
          if (asked.ok) return asked;
          return { ok: false, error: asked.error, retryable: classifyFailure(asked.error).kind === 'infrastructure' };
        },
        { deadlineMs: this.deadlineMs, signal: call.abortSignal, clock: this.clock },
      );
      if (outcome.ok) return outcome;
      // the run's own abort ended the call (known to us, not a failure of the judge), as when it ends the wait for a slot
      if (call.abortSignal?.aborted === true && outcome.error === call.abortSignal.reason) {
        return { ok: false, failure: { kind: 'infrastructure', summary: 'the run was aborted while the judge was asked', error: outcome.error, attempts: outcome.attempts } };
      }
      const error =
        instanceOf(outcome.error, StructuredCallError) ? outcome.error : new StructuredCallError('model', thrownMessage(outcome.error) ?? 'a value that cannot be read', { cause: outcome.error });
      const failure = classifyFailure(error);
      const after = outcome.attempts > 1 || outcome.deadlineExceeded ? ` (${outcome.attempts} attempt${outcome.attempts === 1 ? '' : 's'} within judgeDeadlineMs ${this.deadlineMs})` : '';
      return { ok: false, failure: { ...failure, summary: `${failure.summary}${after}`, attempts: outcome.attempts } };
    } finally {
      void running.then(release);
    }
  }

  /** Why a piece got no slot: the run was aborted while it waited, or no slot was freed within the deadline. */
  private noSlot(call: JudgeCall): JudgeFailure {
    if (call.abortSignal?.aborted === true) return { kind: 'infrastructure', summary: 'the run was aborted before the judge was asked', error: call.abortSignal.reason, attempts: 0 };
    return {
      kind: 'infrastructure',
      summary: `the judge did not answer in time (no judge call of this guard ended within judgeDeadlineMs ${this.deadlineMs}: maxConcurrentJudgeCalls ${this.maxConcurrent} still running)`,
      error: new JudgeDeadlineError(this.deadlineMs),
      attempts: 0,
    };
  }

  /**
   * What a failure means: a block verdict (reported privately with the error) when it fails
   * closed, `undefined` when the content passes (`onError` is called either way, `onFailOpen`
   * when it passes).
   */
  failureVerdict(failure: JudgeFailure, violations: PrivateViolations): Extract<Verdict, { action: 'block' }> | undefined {
    // a failing onError (thrown or rejected) never changes the outcome
    callQuietly(this.onError, failure.error);
    const strategy = failure.kind === 'budget' ? 'strict' : failure.kind === 'content' ? this.contentStrategy : this.infrastructureStrategy;
    if (strategy !== 'strict' && failure.kind !== 'budget') {
      callQuietly(this.onFailOpen, { processorId: this.processorId, kind: failure.kind, summary: failure.summary, error: failure.error, attempts: failure.attempts ?? 1 });
      return undefined;
    }
    const why = failure.kind === 'infrastructure' ? "errorStrategy is 'strict' (the default)" : failure.kind === 'content' ? 'the content can cause this failure' : 'the bound fails closed';
    return violations.block(`${this.processorId}: the check could not be completed (${failure.summary}); blocked because ${why}`, { kind: failure.kind }, {
      message: `${this.processorId}: judge failure (${failure.kind})`,
      detail: { kind: failure.kind, error: thrownMessage(failure.error) ?? 'a value that cannot be read' },
    });
  }
}

export { StructuredCallError };
