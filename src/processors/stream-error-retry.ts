import { asyncScheduler, firstValueFrom, fromEvent, map, race, timer, type SchedulerLike } from 'rxjs';
import { APICallError } from '@ai-sdk/provider';
import type { ProcessAPIErrorArgs, ProcessAPIErrorResult, Processor } from '../processor/processor-types.js';

/**
 * Delay before a retry: milliseconds, or a function of the attempt (1, 2, …) and the error.
 *
 * @example
 * ```ts
 * const delay: RetryDelay = (attempt) => 250 * attempt;
 * ```
 */
export type RetryDelay = number | ((attempt: number, error: unknown) => number);

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
  /** Default: 500 ms × 2^(attempt − 1). A `Retry-After` header takes precedence. */
  delayMs?: RetryDelay;
  /**
   * Longest `Retry-After` (or `retry-after-ms`) honoured. A provider asking to wait longer gets no
   * retry from this processor (the error stands). Default 60 000.
   */
  maxRetryAfterMs?: number;
  /** Extra matchers: an error (or one of its causes) for which one returns true is retryable. */
  matchers?: Array<(error: unknown) => boolean>;
  /** Also retry errors no matcher recognises, except 400/401/403/404/422 responses. Default false. */
  retryUnknownErrors?: boolean;
  /** Scheduler of the delays (a `TestScheduler` makes them virtual). Default `asyncScheduler`. */
  scheduler?: SchedulerLike;
  /** Called before each retry. */
  onRetry?: (event: { attempt: number; delayMs: number; error: unknown }) => void;
}

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
const NON_RETRYABLE_STATUS = new Set([400, 401, 403, 404, 422]);

/** The error and its causes (`cause`, and the `error`/`data` fields stream errors wrap), depth-limited. */
function errorChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  const queue: unknown[] = [error];
  while (queue.length > 0 && chain.length < 8) {
    const current = queue.shift();
    if (current === null || current === undefined || chain.includes(current)) continue;
    chain.push(current);
    if (typeof current === 'object') {
      const record = current as { cause?: unknown; error?: unknown; data?: unknown };
      queue.push(record.cause, record.error, record.data);
    }
  }
  return chain;
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
  readonly id = 'stream-error-retry-processor';
  readonly name = 'Stream Error Retry';
  readonly description = 'Retries the model call after transient provider errors.';
  private readonly maxRetries: number;
  private readonly delayMs: RetryDelay;
  private readonly maxRetryAfterMs: number;
  private readonly matchers: ReadonlyArray<(error: unknown) => boolean>;
  private readonly retryUnknownErrors: boolean;
  private readonly scheduler: SchedulerLike;
  private readonly onRetry: StreamErrorRetryOptions['onRetry'];

  constructor(options: StreamErrorRetryOptions = {}) {
    this.maxRetries = Math.max(0, options.maxRetries ?? 1);
    this.delayMs = options.delayMs ?? ((attempt: number) => 500 * 2 ** (attempt - 1));
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
    this.matchers = options.matchers ?? [];
    this.retryUnknownErrors = options.retryUnknownErrors ?? false;
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.onRetry = options.onRetry;
  }

  /** Whether this processor would retry `error` (ignoring the retry budget). */
  isRetryable(error: unknown): boolean {
    if (isRetryableProviderError(error)) return true;
    const chain = errorChain(error);
    if (chain.some((candidate) => this.matchers.some((matcher) => safeMatch(matcher, candidate)))) return true;
    if (!this.retryUnknownErrors) return false;
    if (chain.some((candidate) => codesOf(candidate).some((code) => NEVER_RETRY_CODES.has(code)))) return false;
    return !chain.some((candidate) => {
      const status = statusOf(candidate);
      return status !== undefined && NON_RETRYABLE_STATUS.has(status);
    });
  }

  processAPIError({ error, state, abortSignal }: ProcessAPIErrorArgs): ProcessAPIErrorResult | undefined | Promise<ProcessAPIErrorResult | undefined> {
    const used = (state.retries as number | undefined) ?? 0;
    if (used >= this.maxRetries || abortSignal.aborted || !this.isRetryable(error)) return undefined;
    const attempt = used + 1;
    const requested = retryAfterMs(error, this.scheduler.now());
    if (requested !== undefined && requested > this.maxRetryAfterMs) return undefined;
    const delay = Math.max(0, requested ?? (typeof this.delayMs === 'number' ? this.delayMs : this.delayMs(attempt, error)));
    state.retries = attempt;
    try {
      this.onRetry?.({ attempt, delayMs: delay, error });
    } catch {
      // a failing callback does not cancel the retry
    }
    const waited = race(
      timer(delay, this.scheduler).pipe(map(() => true)),
      fromEvent(abortSignal, 'abort').pipe(map(() => false)),
    );
    return firstValueFrom(waited).then((completed) => (completed && !abortSignal.aborted ? { retry: true } : undefined));
  }
}

function safeMatch(matcher: (error: unknown) => boolean, candidate: unknown): boolean {
  try {
    return matcher(candidate);
  } catch {
    return false;
  }
}
