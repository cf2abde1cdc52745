/**
 * Calling a guard's judge through infrastructure faults: an attempt that failed for a recognised
 * infrastructure reason (network, timeouts, 408/429/5xx: see {@link readCallError}) is tried again after an exponential,
 * jittered backoff — or after the provider's `Retry-After`, when it asks for longer — until the
 * call's deadline; an attempt still running at the deadline is aborted. What happens then is the
 * guard's `errorStrategy` (its caller's business). And the slots: at most `max` judge calls of one
 * guard in one run at once; the others wait their turn, in order.
 *
 * Time comes from a {@link JudgeClock} (real timers by default) so tests run faults on fake time.
 */
import { APICallError } from '@ai-sdk/provider';
import { isProviderStreamError } from '@ai-sdk/provider-utils';

/**
 * The time a judge call runs on: now, a sleep that an abort signal ends early, and the jitter.
 *
 * @example
 * ```ts
 * const clock: JudgeClock = { now: () => Date.now(), sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)), random: Math.random };
 * ```
 */
export interface JudgeClock {
  now(): number;
  /** Resolves after `ms` milliseconds, or as soon as `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** A number in [0, 1). */
  random(): number;
}

/** Real time: `Date.now`, `setTimeout`, `Math.random` (looked up at each call, so fake timers apply). */
export const realClock: JudgeClock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted === true) return resolve();
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal?.addEventListener('abort', done, { once: true });
    }),
  random: () => Math.random(),
};

/** First backoff (before jitter), doubled per retry up to {@link MAX_BACKOFF_MS}. */
export const BASE_BACKOFF_MS = 200;
/** The longest backoff between two attempts (a longer `Retry-After` is honoured). */
export const MAX_BACKOFF_MS = 4_000;

/**
 * The wait before retry `retry` (0 first): exponential from {@link BASE_BACKOFF_MS}, capped, with
 * "equal jitter" (half fixed, half random, so retries of parallel calls spread out).
 *
 * @example
 * ```ts
 * backoffMs(0, () => 0.5); // 150
 * ```
 */
export function backoffMs(retry: number, random: () => number): number {
  const ceiling = Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** Math.min(retry, 20));
  return ceiling / 2 + (ceiling / 2) * random();
}

/**
 * The wait a provider asked for in `error`'s `Retry-After` (seconds or an HTTP date) or
 * `retry-after-ms` header, in milliseconds from `now`; `undefined` without one, or when the error
 * cannot be read (see {@link readCallError}). Never throws.
 *
 * @example
 * ```ts
 * retryAfterMs(new APICallError({ message: 'slow down', url, requestBodyValues: {}, statusCode: 429, responseHeaders: { 'retry-after': '2' } }), Date.now()); // 2000
 * ```
 */
export function retryAfterMs(error: unknown, now: number): number | undefined {
  const reading = readCallError(error);
  if (reading.kind !== 'api') return undefined;
  let seconds: string | undefined;
  let millis: string | undefined;
  for (const [name, value] of reading.headers) {
    const lower = name.toLowerCase();
    if (lower === 'retry-after') seconds = value;
    else if (lower === 'retry-after-ms') millis = value;
  }
  if (millis !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(millis)) return Number(millis);
  if (seconds === undefined) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(seconds)) return Number(seconds) * 1_000;
  const date = Date.parse(seconds);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * The codes of a connection that failed or was cut, as Node, undici and Bun set them on an `Error`
 * (the AI SDK's own list of retryable network codes, and Node's unreachable-network and temporary
 * DNS codes). undici's other `UND_ERR_*` codes (an invalid argument, an unsupported feature, a
 * closed or destroyed client) are not outages; nor is `ENOTFOUND` (a host that does not exist).
 *
 * @example
 * ```ts
 * NETWORK_ERROR_CODES.has('ECONNRESET'); // true
 * ```
 */
export const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
  'ConnectionRefused',
  'ConnectionClosed',
  'FailedToOpenSocket',
]);

/**
 * The cause of a judge call whose answer stream ended without its `finish` (a connection closed
 * cleanly mid-answer): a cut call, retried like a network failure.
 *
 * @example
 * ```ts
 * throw new StructuredCallError('model', 'the answer stream ended without a finish', { cause: new AnswerStreamCutError() });
 * ```
 */
export class AnswerStreamCutError extends Error {
  constructor() {
    super('the answer stream ended without its finish');
    this.name = 'AnswerStreamCutError';
  }
}

/**
 * What the failure decision reads of a failed call's error, copied out once, walking its `cause`
 * chain (and a `RetryError`'s `lastError`) up to {@link MAX_CHAIN} links:
 *
 * - `api`: an `APICallError` — its HTTP status (none: no response came) and string headers. One
 *   with a status under 400 whose cause chain holds a network error (a body cut mid-stream: the AI
 *   SDK wraps it with status 200) reads as that `network` error;
 * - `stream`: a provider stream error the AI SDK marks (`createProviderStreamError`,
 *   `StreamProviderError`), with its status;
 * - `network`: an `Error` with one of the {@link NETWORK_ERROR_CODES};
 * - `timeout`: our `JudgeDeadlineError`, or an `Error` or `DOMException` named `TimeoutError` (the
 *   AI SDK's own test for a timeout, `AbortSignal.timeout()`);
 * - `cut`: our {@link AnswerStreamCutError};
 * - `none`: nothing of the above — an unknown failure;
 * - `unreadable`: reading the chain threw (a revoked Proxy, a `cause`, `code`, `statusCode` or
 *   `responseHeaders` getter that throws, headers whose keys cannot be listed).
 *
 * Never throws: a hostile thrown value ends as a judge failure, never as an error of the guard.
 */
export type CallErrorReading =
  | { kind: 'api'; statusCode: number | undefined; headers: ReadonlyArray<readonly [string, string]> }
  | { kind: 'stream'; statusCode: number | undefined }
  | { kind: 'network'; code: string }
  | { kind: 'timeout' }
  | { kind: 'cut' }
  | { kind: 'none' }
  | { kind: 'unreadable' };

/** How many links of a cause chain are read (a longer chain's rest is unknown). */
export const MAX_CHAIN = 8;

const RETRY_ERROR_MARKER = Symbol.for('vercel.ai.error.AI_RetryError');
const STREAM_PROVIDER_ERROR_MARKER = Symbol.for('vercel.ai.error.AI_StreamProviderError');

function marked(value: unknown, marker: symbol): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[marker] === true;
}

/**
 * Reads `error` for the failure and retry decisions (see {@link CallErrorReading}).
 *
 * @example
 * ```ts
 * const reading = readCallError(error);
 * if (reading.kind === 'api' && reading.statusCode === 429) retryLater();
 * ```
 */
export function readCallError(error: unknown): CallErrorReading {
  try {
    let api: Extract<CallErrorReading, { kind: 'api' }> | undefined;
    const seen = new Set<unknown>();
    for (let current = error, depth = 0; current !== undefined && current !== null && depth < MAX_CHAIN && !seen.has(current); depth++) {
      seen.add(current);
      if (current instanceof JudgeDeadlineError) return { kind: 'timeout' };
      if (current instanceof AnswerStreamCutError) return { kind: 'cut' };
      if (APICallError.isInstance(current)) {
        const statusCode: unknown = current.statusCode;
        const given: unknown = current.responseHeaders;
        const headers: Array<readonly [string, string]> = [];
        if (typeof given === 'object' && given !== null) {
          for (const [name, value] of Object.entries(given)) if (typeof value === 'string') headers.push([name, value]);
        }
        const reading = { kind: 'api' as const, statusCode: typeof statusCode === 'number' ? statusCode : undefined, headers };
        // an error status decides; without one (or with a success status) the cause may name the network failure
        if (reading.statusCode !== undefined && reading.statusCode >= 400) return reading;
        api ??= reading;
        current = current.cause;
        continue;
      }
      if (isProviderStreamError(current) || marked(current, STREAM_PROVIDER_ERROR_MARKER)) {
        const statusCode: unknown = (current as { statusCode?: unknown }).statusCode;
        return { kind: 'stream', statusCode: typeof statusCode === 'number' ? statusCode : undefined };
      }
      if (marked(current, RETRY_ERROR_MARKER)) {
        // the AI SDK's RetryError keeps its attempts' errors, not a cause: the last one says why it ended
        const { lastError, errors } = current as { lastError?: unknown; errors?: unknown };
        current = lastError !== undefined ? lastError : Array.isArray(errors) ? errors.at(-1) : undefined;
        continue;
      }
      // a timeout as the AI SDK's `isAbortError` tells it (`AbortSignal.timeout()` in a provider's fetch)
      if ((current instanceof Error || (typeof DOMException === 'function' && current instanceof DOMException)) && current.name === 'TimeoutError') return { kind: 'timeout' };
      if (current instanceof Error) {
        const code: unknown = (current as { code?: unknown }).code;
        if (typeof code === 'string' && NETWORK_ERROR_CODES.has(code)) return { kind: 'network', code };
      }
      current = (current as { cause?: unknown }).cause;
    }
    return api ?? { kind: 'none' };
  } catch {
    return { kind: 'unreadable' };
  }
}

/**
 * Whether `reading` is a recognised infrastructure failure — one the content cannot cause and a
 * retry can cure — and what it was (client-safe): no response or a 408/429/5xx from the AI SDK, a
 * marked provider stream error with 408/429/5xx, a network error, a timeout, a cut answer stream.
 * Anything else is `undefined`: not recognised, so not retried and never let through by
 * `errorStrategy`.
 *
 * @example
 * ```ts
 * outageOf(readCallError(error)) ?? 'not an outage';
 * ```
 */
export function outageOf(reading: CallErrorReading): string | undefined {
  switch (reading.kind) {
    case 'timeout':
      return 'the judge did not answer in time';
    case 'network':
    case 'cut':
      return 'the judge could not be reached';
    case 'api':
      return reading.statusCode === undefined || isOutageStatus(reading.statusCode) ? 'the judge could not be reached' : undefined;
    case 'stream':
      return reading.statusCode !== undefined && isOutageStatus(reading.statusCode) ? 'the judge could not be reached' : undefined;
    default:
      return undefined;
  }
}

/** 408, 429 and 5xx: statuses of a provider that is busy, limiting or down. */
function isOutageStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status <= 599);
}

/**
 * One attempt's outcome as the retry loop needs it: the value, or an error and whether trying again
 * can help (an infrastructure failure).
 */
export type AttemptOutcome<T> = { ok: true; value: T } | { ok: false; error: unknown; retryable: boolean };

/**
 * What {@link callWithRetry} ended with: the last attempt's outcome, how many attempts were made,
 * and whether the deadline ended it (then `error` is the last attempt's error or a timeout).
 */
export type RetriedOutcome<T> =
  | { ok: true; value: T; attempts: number }
  | { ok: false; error: unknown; retryable: boolean; attempts: number; deadlineExceeded: boolean };

/**
 * The error an attempt gets when the deadline passed while it was still running (it is aborted).
 *
 * @example
 * ```ts
 * if (outcome.error instanceof JudgeDeadlineError) console.warn('judge hung');
 * ```
 */
export class JudgeDeadlineError extends Error {
  constructor(deadlineMs: number) {
    super(`the judge did not answer within judgeDeadlineMs (${deadlineMs} ms)`);
    this.name = 'JudgeDeadlineError';
  }
}

/**
 * Runs `attempt` until it succeeds, fails for good (`retryable: false`), the run is aborted
 * (`signal`: an attempt still running ends at once, settled or not; none is started once it is
 * aborted), or `deadlineMs` passed since the first attempt started. Each attempt gets a signal
 * that aborts at the deadline or with `signal`.
 *
 * @example
 * ```ts
 * const outcome = await callWithRetry((signal) => ask(signal), { deadlineMs: 10_000 });
 * ```
 */
export async function callWithRetry<T>(
  attempt: (signal: AbortSignal) => Promise<AttemptOutcome<T>>,
  options: { deadlineMs: number; signal?: AbortSignal | undefined; clock?: JudgeClock | undefined },
): Promise<RetriedOutcome<T>> {
  const clock = options.clock ?? realClock;
  const deadline = clock.now() + options.deadlineMs;
  // a run aborted before its judge was asked: the judge is not asked
  if (isAborted(options.signal)) return { ok: false, error: options.signal?.reason, retryable: false, attempts: 0, deadlineExceeded: false };
  for (let attempts = 1; ; attempts++) {
    const controller = new AbortController();
    // the run's abort ends the attempt at once, even one that ignores its signal (or never settles)
    let cancel: (outcome: AttemptOutcome<T>) => void = () => undefined;
    const cancelled = new Promise<AttemptOutcome<T>>((resolve) => (cancel = resolve));
    const stop = (): void => {
      controller.abort(options.signal?.reason);
      cancel({ ok: false, error: options.signal?.reason, retryable: false });
    };
    options.signal?.addEventListener('abort', stop, { once: true });
    const timer = new AbortController();
    let timedOut = false;
    // the deadline, raced against the attempt: a hung call is aborted and counted as a timeout
    const expiry = clock.sleep(Math.max(0, deadline - clock.now()), timer.signal).then(() => {
      if (timer.signal.aborted) return undefined;
      timedOut = true;
      controller.abort(new JudgeDeadlineError(options.deadlineMs));
      return { ok: false as const, error: new JudgeDeadlineError(options.deadlineMs), retryable: true };
    });
    let outcome: AttemptOutcome<T>;
    try {
      const raced = await Promise.race([attempt(controller.signal).catch((error: unknown) => ({ ok: false as const, error, retryable: false })), cancelled, expiry]);
      outcome = raced ?? { ok: false, error: new JudgeDeadlineError(options.deadlineMs), retryable: true };
    } finally {
      timer.abort();
      options.signal?.removeEventListener('abort', stop);
    }
    if (outcome.ok) return { ...outcome, attempts };
    if (timedOut) return { ok: false, error: new JudgeDeadlineError(options.deadlineMs), retryable: true, attempts, deadlineExceeded: true };
    if (!outcome.retryable || isAborted(options.signal)) return { ...outcome, attempts, deadlineExceeded: false };
    const now = clock.now();
    const wait = Math.max(backoffMs(attempts - 1, clock.random), retryAfterMs(outcome.error, now) ?? 0);
    // no time left for another attempt after the wait: the deadline ends it now
    if (now + wait >= deadline) return { ...outcome, attempts, deadlineExceeded: true };
    await clock.sleep(wait, options.signal);
    if (isAborted(options.signal)) return { ...outcome, attempts, deadlineExceeded: false };
  }
}

function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/**
 * At most `max` holders at once; the others wait in arrival order. Lives in a processor's per-run
 * state (never module-level), so the bound is per guard and run. A holder releases its slot when
 * the provider's call it made has settled — not when its caller stopped waiting for it — so a call
 * abandoned at its deadline by a provider that ignores its abort signal still counts. A waiter
 * given `waitMs` gives up (resolves `undefined`) when no slot was freed for that long — slots held
 * by calls that never settle — or when its `signal` aborts.
 *
 * @example
 * ```ts
 * const slots = new JudgeSlots(2);
 * const release = await slots.acquire({ waitMs: 10_000 });
 * if (release !== undefined) void call().finally(release);
 * ```
 */
export class JudgeSlots {
  private active = 0;
  private readonly waiting: Array<() => boolean> = [];
  /** When a slot was last freed (on `clock`): a waiter's patience counts from the later of this and its arrival. */
  private lastFreed = Number.NEGATIVE_INFINITY;

  constructor(
    readonly max: number,
    private readonly clock: JudgeClock = realClock,
  ) {}

  /** Calls running now. */
  get inUse(): number {
    return this.active;
  }

  /**
   * Resolves with a release function once a slot is free; with `undefined` when `waitMs` passed
   * without any slot being freed, or `signal` aborted, first.
   */
  acquire(wait: { waitMs?: number; signal?: AbortSignal | undefined } = {}): Promise<(() => void) | undefined> {
    return new Promise((resolve) => {
      let done = false;
      const patience = new AbortController();
      const finish = (release: (() => void) | undefined): void => {
        done = true;
        patience.abort();
        wait.signal?.removeEventListener('abort', giveUp);
        resolve(release);
      };
      const grant = (): boolean => {
        if (done) return false;
        this.active++;
        let released = false;
        finish(() => {
          if (released) return;
          released = true;
          this.active--;
          this.lastFreed = this.clock.now();
          while (this.waiting.length > 0) if ((this.waiting.shift() as () => boolean)()) break;
        });
        return true;
      };
      function giveUp(): void {
        if (done) return;
        finish(undefined);
      }
      if (wait.signal?.aborted === true) return giveUp();
      if (this.active < this.max) {
        grant();
        return;
      }
      this.waiting.push(grant);
      wait.signal?.addEventListener('abort', giveUp, { once: true });
      const waitMs = wait.waitMs;
      if (waitMs === undefined) return;
      const arrived = this.clock.now();
      const watch = async (): Promise<void> => {
        while (!done) {
          const left = Math.max(arrived, this.lastFreed) + waitMs - this.clock.now();
          if (left <= 0) {
            const at = this.waiting.indexOf(grant);
            if (at !== -1) this.waiting.splice(at, 1);
            return giveUp();
          }
          await this.clock.sleep(left, patience.signal);
        }
      };
      void watch();
    });
  }
}
