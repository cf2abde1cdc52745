import { asyncScheduler, firstValueFrom, fromEvent, map, race, timer, type SchedulerLike } from 'rxjs';
import { APICallError } from '@ai-sdk/provider';
import { booleanOption, functionOption, methodsOption } from './internal/guard-options.js';
import { checkOptionKeys, optionKeys, optionNames } from './internal/option-keys.js';
import { InvalidProcessorOptionError, MAX_TIMER_MS, type ProcessAPIErrorArgs, type ProcessAPIErrorResult, type Processor } from '../contract/index.js';

/**
 * What a `delayMs` function and a matcher's `onRetry` receive: the `processAPIError` arguments
 * (`error`, `retryCount`, `abortSignal`, …) plus `attempt` (1 for the first retry of the run).
 *
 * @example
 * ```ts
 * const delay: RetryDelay = ({ attempt }: RetryDelayArgs) => 250 * attempt;
 * ```
 */
export type RetryDelayArgs = ProcessAPIErrorArgs & {
  /** 1 for the first retry, 2 for the second, … (counted with the run's `retryCount` of API-error retries, as the reference counts) */
  attempt: number;
};

/**
 * Delay before a retry: milliseconds, or a function (sync or async) of the call's
 * {@link RetryDelayArgs} — the reference's signature.
 *
 * @example
 * ```ts
 * const delay: RetryDelay = ({ attempt }) => 250 * attempt;
 * ```
 */
export type RetryDelay = number | ((args: RetryDelayArgs) => number | Promise<number>);

/**
 * A matcher: a predicate over the error (and each of its causes), or a policy object whose
 * `maxRetries`, `delayMs` and `onRetry` apply to the errors it matches (the first matching entry
 * wins).
 *
 * @example
 * ```ts
 * const entry: StreamErrorRetryMatcherEntry = { match: isBadRequestError, maxRetries: 1, delayMs: 200 };
 * ```
 */
export type StreamErrorRetryMatcherEntry = StreamErrorRetryMatcher | StreamErrorRetryMatcherConfig;

/**
 * A predicate telling a retryable error.
 *
 * @example
 * ```ts
 * const matcher: StreamErrorRetryMatcher = (error) => error instanceof Error && /socket hang up/.test(error.message);
 * ```
 */
export type StreamErrorRetryMatcher = (error: unknown) => boolean;

/**
 * A matcher with its own retry policy.
 *
 * @example
 * ```ts
 * const config: StreamErrorRetryMatcherConfig = { match: isBadRequestError, maxRetries: 1, onRetry: ({ delayMs }) => log(delayMs) };
 * ```
 */
export interface StreamErrorRetryMatcherConfig {
  /** The matched text. */
  match: StreamErrorRetryMatcher;
  /** Retries for errors of this matcher (default: the processor's `maxRetries`). */
  maxRetries?: number;
  /** Delay for errors of this matcher (default: the processor's `delayMs`). */
  delayMs?: RetryDelay;
  /** Called (and awaited) before each retry of an error of this matcher. */
  onRetry?: (args: RetryDelayArgs & { delayMs: number }) => void | Promise<void>;
}

/**
 * Options of {@link StreamErrorRetryProcessor}.
 *
 * @example
 * ```ts
 * const options: StreamErrorRetryOptions = { maxRetries: 3, delayMs: 1000, maxRetryAfterMs: 30_000 };
 * ```
 */
export interface StreamErrorRetryOptions {
  /** Retries per run. Default 1. */
  maxRetries?: number;
  /**
   * Default: 500 ms × 2^(attempt − 1) (the reference waits 0). The wait is the longer of this and
   * the provider's `Retry-After`.
   */
  delayMs?: RetryDelay;
  /**
   * Longest `Retry-After` (or `retry-after-ms`) honoured. A provider asking to wait longer gets no
   * retry from this processor (the error stands; the reference caps the wait and retries).
   * Default 30 000.
   */
  maxRetryAfterMs?: number;
  /**
   * Extra matchers (predicates or policy objects): an error (or one of its causes) one of them
   * matches is retryable, with that entry's policy. Checked in order; the first match wins.
   */
  matchers?: StreamErrorRetryMatcherEntry[];
  /** Also retry errors no matcher recognises, except 400/401/403/404/422 responses. Default false. */
  retryUnknownErrors?: boolean;
  /** Scheduler of the delays (a `TestScheduler` makes them virtual). Default `asyncScheduler`. */
  scheduler?: SchedulerLike;
  /** Called before each retry (whichever matcher matched); its throws are ignored. */
  onRetry?: (event: { attempt: number; delayMs: number; error: unknown }) => void;
}

/** The option names {@link StreamErrorRetryProcessor} knows (the reference's are all among them). */
const STREAM_ERROR_RETRY_OPTION_KEYS = optionKeys(
  'stream-error-retry-processor',
  optionNames<StreamErrorRetryOptions>({ maxRetries: true, delayMs: true, maxRetryAfterMs: true, matchers: true, retryUnknownErrors: true, scheduler: true, onRetry: true }),
);

/** The names a `matchers` entry given as an object may hold (the reference's are the same). */
const MATCHER_KEYS = optionKeys('stream-error-retry-processor', optionNames<StreamErrorRetryMatcherConfig>({ match: true, maxRetries: true, delayMs: true, onRetry: true }));

/** The policy of the entry that matched (empty for the built-in recognition). */
type MatchedPolicy = Omit<StreamErrorRetryMatcherConfig, 'match'>;

/** OpenAI Responses stream error codes/types worth retrying. */
const RETRYABLE_STREAM_CODES = new Set([
  'server_error',
  'rate_limit_exceeded',
  'rate_limit_error',
  'internal_error',
  'service_unavailable',
  'overloaded_error',
  'api_error',
  'timeout',
]);
const NEVER_RETRY_CODES = new Set(['insufficient_quota', 'invalid_request_error', 'context_length_exceeded', 'invalid_api_key']);
const NON_RETRYABLE_STATUS = new Set([400, 401, 403, 404, 413, 422]);

/** The error and its causes (`cause`, and the `error`/`data`/`response` fields stream errors wrap), depth-limited. */
function errorChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  const queue: unknown[] = [error];
  while (queue.length > 0 && chain.length < 8) {
    const current = queue.shift();
    if (current === null || current === undefined || chain.includes(current)) continue;
    chain.push(current);
    if (typeof current === 'object') {
      const record = current as { cause?: unknown; error?: unknown; data?: unknown; response?: unknown };
      queue.push(record.cause, record.error, record.data, record.response);
    }
  }
  return chain;
}

/**
 * True when the error (or a cause, or a JSON `responseBody`) is one docs/processors.md lists as never
 * retried: a request error (400/401/403/404/413/422) or `insufficient_quota`,
 * `invalid_request_error`, `context_length_exceeded`, `invalid_api_key` — whatever flag, retry
 * message or matcher says otherwise: such a request fails the same way again.
 */
function isNeverRetried(chain: readonly unknown[]): boolean {
  return chain.some((candidate) => {
    const status = statusOf(candidate);
    if (status !== undefined && NON_RETRYABLE_STATUS.has(status)) return true;
    if (codesOf(candidate).some((code) => NEVER_RETRY_CODES.has(code))) return true;
    return bodyCodesOf(candidate).some((code) => NEVER_RETRY_CODES.has(code));
  });
}

/** The codes of an `APICallError`'s JSON `responseBody` (`{ error: { code, type } }`), when its `data` was not parsed. */
function bodyCodesOf(candidate: unknown): string[] {
  if (typeof candidate !== 'object' || candidate === null) return [];
  const body = (candidate as { responseBody?: unknown }).responseBody;
  if (typeof body !== 'string' || body.length > 65_536) return [];
  try {
    const parsed: unknown = JSON.parse(body);
    return [parsed, (parsed as { error?: unknown } | null)?.error].flatMap(codesOf);
  } catch {
    return [];
  }
}

function codesOf(candidate: unknown): string[] {
  if (typeof candidate !== 'object' || candidate === null) return [];
  const record = candidate as { code?: unknown; type?: unknown };
  return [record.code, record.type].filter((value): value is string => typeof value === 'string').map((value) => value.toLowerCase());
}

function statusOf(candidate: unknown): number | undefined {
  if (typeof candidate !== 'object' || candidate === null) return undefined;
  const status = (candidate as { statusCode?: unknown; status?: unknown }).statusCode ?? (candidate as { status?: unknown }).status;
  return typeof status === 'number' ? status : undefined;
}

/**
 * True for errors worth retrying as they are: provider errors flagged `isRetryable`
 * (`APICallError`, AI SDK provider stream errors) and OpenAI Responses stream errors with a
 * retryable code (`server_error`, `rate_limit_exceeded`, …); never for `insufficient_quota` or
 * request errors.
 *
 * @example
 * ```ts
 * import { isRetryableProviderError } from 'rxagent/processors';
 * if (isRetryableProviderError(error)) console.log('transient');
 * ```
 */
export function isRetryableProviderError(error: unknown): boolean {
  const chain = errorChain(error);
  if (chain.some((candidate) => codesOf(candidate).some((code) => NEVER_RETRY_CODES.has(code)))) return false;
  return chain.some((candidate) => {
    if (APICallError.isInstance(candidate)) return candidate.isRetryable;
    if (typeof candidate === 'object' && candidate !== null && (candidate as { isRetryable?: unknown }).isRetryable === true) return true;
    return codesOf(candidate).some((code) => RETRYABLE_STREAM_CODES.has(code));
  });
}

/**
 * The `Retry-After` of the error (its `retry-after-ms` or `retry-after` header) in ms, if any.
 *
 * @example
 * ```ts
 * const wait = retryAfterMs(error) ?? 1000;
 * ```
 */
export function retryAfterMs(error: unknown, now: number = Date.now()): number | undefined {
  for (const candidate of errorChain(error)) {
    const headers = (candidate as { responseHeaders?: unknown }).responseHeaders;
    if (typeof headers !== 'object' || headers === null) continue;
    const lowered = new Map(Object.entries(headers as Record<string, unknown>).map(([key, value]) => [key.toLowerCase(), value]));
    const milliseconds = Number(lowered.get('retry-after-ms'));
    if (Number.isFinite(milliseconds) && milliseconds >= 0) return milliseconds;
    const retryAfter = lowered.get('retry-after');
    if (typeof retryAfter !== 'string' || retryAfter.trim() === '') continue;
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
    const date = Date.parse(retryAfter);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  return undefined;
}

/**
 * Retries the model call after transient provider errors — a 429/5xx `APICallError`, an OpenAI
 * Responses stream error such as `server_error` or `rate_limit_exceeded` — honouring `Retry-After`
 * (up to `maxRetryAfterMs`) and otherwise waiting `delayMs`. No model call of its own.
 *
 * The wait runs on an RxJS scheduler (`timer(ms, scheduler)`, awaited), so it is virtual under a
 * `TestScheduler`, and it ends early with "no retry" when the run is cancelled. At most
 * `maxRetries` retries per run (counted in the processor's run `state`).
 *
 * Hook: `processAPIError` (put it in `errorProcessors`).
 *
 * @example
 * ```ts
 * import { StreamErrorRetryProcessor } from 'rxagent/processors';
 * const agent = new Agent({ id: 'a', instructions: '…', model, errorProcessors: [new StreamErrorRetryProcessor({ maxRetries: 2 })] });
 * ```
 */
export class StreamErrorRetryProcessor implements Processor<'stream-error-retry-processor'> {
  /** The processor's id. */
  readonly id = 'stream-error-retry-processor';
  /** A human-readable name. */
  readonly name = 'Stream Error Retry Processor';
  /** What the processor does. */
  readonly description = 'Retries the model call after transient provider errors.';
  private readonly maxRetries: number;
  private readonly delayMs: RetryDelay;
  private readonly maxRetryAfterMs: number;
  private readonly matchers: readonly StreamErrorRetryMatcherConfig[];
  private readonly retryUnknownErrors: boolean;
  private readonly scheduler: SchedulerLike;
  private readonly onRetry: StreamErrorRetryOptions['onRetry'];

  constructor(options: StreamErrorRetryOptions = {}) {
    checkOptionKeys(STREAM_ERROR_RETRY_OPTION_KEYS, options);
    this.maxRetries = countOption('maxRetries', options.maxRetries, 1);
    this.delayMs = delayOption('delayMs', options.delayMs) ?? (({ attempt }: RetryDelayArgs) => 500 * 2 ** (attempt - 1));
    this.maxRetryAfterMs = countOption('maxRetryAfterMs', options.maxRetryAfterMs, 30_000, MAX_TIMER_MS);
    const matchers: unknown = options.matchers === undefined ? [] : options.matchers;
    if (!Array.isArray(matchers)) throw new InvalidProcessorOptionError(PROCESSOR_ID, 'matchers', matchers, 'an array of predicates or { match } objects');
    this.matchers = matchers.map((entry: StreamErrorRetryMatcherEntry | undefined, index) => matcherOption(`matchers[${index}]`, entry));
    this.retryUnknownErrors = booleanOption(PROCESSOR_ID, 'retryUnknownErrors', options.retryUnknownErrors, false);
    this.scheduler = methodsOption(PROCESSOR_ID, 'scheduler', options.scheduler, ['now', 'schedule']) ?? asyncScheduler;
    this.onRetry = functionOption(PROCESSOR_ID, 'onRetry', options.onRetry);
  }

  /** Whether this processor would retry `error` (ignoring the retry budget). */
  isRetryable(error: unknown): boolean {
    return this.policyFor(error) !== undefined;
  }

  /** The policy for `error`: the first matcher entry matching it or a cause, else the built-in recognition. */
  private policyFor(error: unknown): MatchedPolicy | undefined {
    const chain = errorChain(error);
    // a matcher is the user's explicit word (e.g. `isBadRequestError` for a provider's transient 400s)
    for (const candidate of chain) {
      const entry = this.matchers.find((matcher) => safeMatch(matcher.match, candidate));
      if (entry !== undefined) return entry;
    }
    if (isNeverRetried(chain)) return undefined;
    if (isRetryableProviderError(error) || isRetryableOpenAIResponsesStreamError(error)) return {};
    return this.retryUnknown(chain) ? {} : undefined;
  }

  private retryUnknown(chain: unknown[]): boolean {
    return this.retryUnknownErrors && !isNeverRetried(chain);
  }

  /** The `processAPIError` hook (see `Processor.processAPIError` for when it runs and what it may return). */
  processAPIError(args: ProcessAPIErrorArgs): Promise<ProcessAPIErrorResult | undefined> {
    const { error, abortSignal } = args;
    // called directly (the reference's unit tests) there may be no `state`; `retryCount` (retries
    // so far in the run) counts too, as in the reference
    const state = args.state ?? {};
    const used = Math.max((state.retries as number | undefined) ?? 0, typeof args.retryCount === 'number' ? args.retryCount : 0);
    if (abortSignal?.aborted === true) return noRetry;
    const policy = this.policyFor(error);
    if (policy === undefined || used >= Math.max(0, policy.maxRetries ?? this.maxRetries)) return noRetry;
    const attempt = used + 1;
    const requested = retryAfterMs(error, this.scheduler.now());
    if (requested !== undefined && requested > this.maxRetryAfterMs) return noRetry;
    const delayArgs: RetryDelayArgs = { ...args, state, attempt };
    const configured = policy.delayMs ?? this.delayMs;
    const chosen = typeof configured === 'number' ? configured : configured(delayArgs);
    // A number (or a function returning one) schedules the wait synchronously, so a virtual-time
    // scheduler sees it at once; only a promised delay or onRetry defers it.
    return isPromiseLike(chosen)
      ? Promise.resolve(chosen).then((ms) => this.retryAfter(delayArgs, policy, ms, requested))
      : this.retryAfter(delayArgs, policy, chosen, requested);
  }

  /** Records the attempt, tells the callbacks, waits the delay (unless cancelled): `{ retry: true }`. */
  private retryAfter(args: RetryDelayArgs, policy: MatchedPolicy, chosen: number, requested: number | undefined): Promise<ProcessAPIErrorResult | undefined> {
    const { error, state, abortSignal, attempt } = args;
    const delay = Math.max(0, Number.isFinite(chosen) ? chosen : 0, requested ?? 0);
    state.retries = attempt;
    try {
      this.onRetry?.({ attempt, delayMs: delay, error });
    } catch {
      // a failing callback does not cancel the retry
    }
    const wait = (): Promise<ProcessAPIErrorResult | undefined> => {
      if (abortSignal?.aborted === true) return Promise.resolve(undefined);
      // called directly (a unit test, as the reference's own tests do) there may be no abortSignal
      const elapsed = timer(delay, this.scheduler).pipe(map(() => true));
      const waited = abortSignal === undefined ? elapsed : race(elapsed, fromEvent(abortSignal, 'abort').pipe(map(() => false)));
      return firstValueFrom(waited).then((completed) => (completed && abortSignal?.aborted !== true ? { retry: true } : undefined));
    };
    const notified = policy.onRetry?.({ ...args, delayMs: delay });
    return isPromiseLike(notified) ? Promise.resolve(notified).then(wait) : wait();
  }
}

/** "No retry", as a promise: the hook always answers with one, as the reference's does. */
const noRetry: Promise<undefined> = Promise.resolve(undefined);

const PROCESSOR_ID = 'stream-error-retry-processor';

/** The longest wait a timer can make (`setTimeout` fires at once past it). */

/**
 * A count or a time in ms: a finite number, 0 or more, at most `most` (NaN, infinities, negatives
 * and a wait longer than a timer can make are a typed error).
 */
function countOption(option: string, value: unknown, fallback: number, most = Number.MAX_VALUE): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > most) {
    throw new InvalidProcessorOptionError(PROCESSOR_ID, option, value, `a finite number of at least 0${most === Number.MAX_VALUE ? '' : `, at most ${most}`}`);
  }
  return value;
}

/** `delayMs`: milliseconds a timer can wait (as above, at most 2^31 − 1) or a function. */
function delayOption(option: string, value: RetryDelay | undefined): RetryDelay | undefined {
  if (value === undefined || typeof value === 'function') return value;
  return countOption(option, value, 0, MAX_TIMER_MS);
}

/** A matcher entry: a predicate or `{ match, maxRetries?, delayMs?, onRetry? }`, its numbers checked. */
function matcherOption(option: string, entry: StreamErrorRetryMatcherEntry | undefined): StreamErrorRetryMatcherConfig {
  if (typeof entry === 'function') return { match: entry };
  // its keys first: a getter (one that throws too) is refused before anything is read
  if (typeof entry === 'object' && entry !== null) checkOptionKeys(MATCHER_KEYS, entry, option);
  if (typeof entry !== 'object' || entry === null || typeof entry.match !== 'function') {
    throw new InvalidProcessorOptionError(PROCESSOR_ID, option, entry, 'a predicate or an object with a match function');
  }
  const maxRetries = entry.maxRetries === undefined ? undefined : countOption(`${option}.maxRetries`, entry.maxRetries, 0);
  const delayMs = delayOption(`${option}.delayMs`, entry.delayMs);
  functionOption(PROCESSOR_ID, `${option}.onRetry`, entry.onRetry);
  return { ...entry, ...(maxRetries === undefined ? {} : { maxRetries }), ...(delayMs === undefined ? {} : { delayMs }) };
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

const OPENAI_RETRYABLE_CODE_PARTS = ['rate_limit', 'server_error', 'internal_error', 'timeout', 'temporarily_unavailable', 'service_unavailable', 'overloaded'];

/** The error object of an OpenAI Responses stream event (`{type: 'error', error}` or `response.failed`). */
function openAIStreamErrorPayload(error: unknown): Record<string, unknown> | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const event = error as { type?: unknown; error?: unknown; response?: { error?: unknown } };
  const payload = event.type === 'error' ? event.error : event.type === 'response.failed' ? event.response?.error : undefined;
  return typeof payload === 'object' && payload !== null ? (payload as Record<string, unknown>) : undefined;
}

/**
 * True for an OpenAI Responses stream error event (`{type: 'error', error: {...}}` or
 * `{type: 'response.failed', response: {error}}`) whose code (or type) names a transient failure
 * (`rate_limit…`, `server_error`, `internal_error`, `timeout`, `…unavailable`, `overloaded…`) or whose
 * message says "you can retry your request". The reference's helper of the same name.
 *
 * @example
 * ```ts
 * import { isRetryableOpenAIResponsesStreamError } from 'rxagent/processors';
 * isRetryableOpenAIResponsesStreamError({ type: 'error', error: { code: 'server_error' } }); // true
 * ```
 */
export function isRetryableOpenAIResponsesStreamError(error: unknown): boolean {
  const payload = openAIStreamErrorPayload(error);
  if (payload === undefined) return false;
  const code = typeof payload.code === 'string' ? payload.code : typeof payload.type === 'string' ? payload.type : undefined;
  if (code !== undefined && OPENAI_RETRYABLE_CODE_PARTS.some((part) => code.toLowerCase().includes(part))) return true;
  return typeof payload.message === 'string' && /you can retry your request/i.test(payload.message);
}

/**
 * True for an HTTP 400 error (`statusCode: 400`): some providers answer 400 while degraded. Not
 * retried by default; add it as a matcher, preferably with `maxRetries: 1`. The reference's helper.
 *
 * @example
 * ```ts
 * import { isBadRequestError, StreamErrorRetryProcessor } from 'rxagent/processors';
 * new StreamErrorRetryProcessor({ matchers: [{ match: isBadRequestError, maxRetries: 1 }] });
 * ```
 */
export function isBadRequestError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { statusCode?: unknown }).statusCode === 400;
}

function safeMatch(matcher: (error: unknown) => boolean, candidate: unknown): boolean {
  try {
    return matcher(candidate);
  } catch {
    return false;
  }
}

/**
 * True for a connection reset: an error (or one of its causes) whose `code` is `ECONNRESET` (any
 * case) or whose message says `ECONNRESET` or `socket hang up`. Not retried by default; pass it as a
 * matcher to retry resets (the request may have reached the provider).
 *
 * @example
 * ```ts
 * import { StreamErrorRetryProcessor, isECONNRESETError } from 'rxagent/processors';
 * const retry = new StreamErrorRetryProcessor({ matchers: [isECONNRESETError] });
 * ```
 */
export function isECONNRESETError(error: unknown): boolean {
  return errorChain(error).some((candidate) => {
    if (typeof candidate !== 'object' || candidate === null) return false;
    const { code, message } = candidate as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && code.toUpperCase() === 'ECONNRESET') return true;
    return typeof message === 'string' && /ECONNRESET|socket hang up/i.test(message);
  });
}
