import { describe, expect, it, vi } from 'vitest';
import { VirtualTimeScheduler, defer, lastValueFrom, of, throwError } from 'rxjs';
import { APICallError } from '@ai-sdk/provider';
import { retryOnAPIError } from '../../src/operators/retry-on-api-error.js';
import { createRunContext } from '../../src/operators/run-context.js';
import { isRetryableProviderError, retryAfterMs, StreamErrorRetryProcessor } from '../../src/processors/stream-error-retry.js';
import { runProcessor } from '../../src/testing/run-processor.js';

function apiError(statusCode: number, headers: Record<string, string> = {}, isRetryable = statusCode === 429 || statusCode >= 500): APICallError {
  return new APICallError({ message: `HTTP ${statusCode}`, url: 'https://api.test', requestBodyValues: {}, statusCode, responseHeaders: headers, isRetryable });
}

const openAIStreamError = (code: string) => ({ type: 'error', error: { type: code, code, message: 'stream failed', param: null } });

describe('StreamErrorRetryProcessor', () => {
  it('has the reference id', () => {
    expect(new StreamErrorRetryProcessor().id).toBe('stream-error-retry-processor');
  });

  it('recognises retryable provider errors and OpenAI Responses stream errors', () => {
    expect(isRetryableProviderError(apiError(503))).toBe(true);
    expect(isRetryableProviderError(apiError(400))).toBe(false);
    expect(isRetryableProviderError(openAIStreamError('server_error'))).toBe(true);
    expect(isRetryableProviderError(openAIStreamError('rate_limit_exceeded'))).toBe(true);
    expect(isRetryableProviderError(openAIStreamError('insufficient_quota'))).toBe(false);
    expect(isRetryableProviderError(new Error('wrapped', { cause: apiError(502) }))).toBe(true);
    expect(isRetryableProviderError({ message: 'x', isRetryable: true, code: 'overloaded' })).toBe(true);
    expect(isRetryableProviderError(new Error('boom'))).toBe(false);
  });

  it('reads Retry-After in seconds, as a date, and retry-after-ms', () => {
    expect(retryAfterMs(apiError(429, { 'Retry-After': '3' }))).toBe(3000);
    expect(retryAfterMs(apiError(429, { 'retry-after-ms': '250' }))).toBe(250);
    expect(retryAfterMs(apiError(429, { 'retry-after': new Date(10_000).toUTCString() }), 4_000)).toBe(6000);
    expect(retryAfterMs(apiError(429))).toBeUndefined();
  });

  it('retries through retryOnAPIError: the model call is made again and succeeds', async () => {
    let attempts = 0;
    const call$ = defer(() => (attempts++ === 0 ? throwError(() => apiError(503)) : of('answer')));
    const result = await lastValueFrom(call$.pipe(retryOnAPIError([new StreamErrorRetryProcessor({ delayMs: 0 })], createRunContext())));
    expect(result).toBe('answer');
    expect(attempts).toBe(2);
  });

  it('retries at most maxRetries times per run (default 1)', async () => {
    let attempts = 0;
    const call$ = defer(() => {
      attempts++;
      return throwError(() => apiError(500));
    });
    const error = await lastValueFrom(call$.pipe(retryOnAPIError([new StreamErrorRetryProcessor({ delayMs: 0 })], createRunContext()))).catch(
      (caught: unknown) => caught,
    );
    expect(APICallError.isInstance(error)).toBe(true);
    expect(attempts).toBe(2);
  });

  it('does not retry non-retryable errors', async () => {
    const { result } = await runProcessor(new StreamErrorRetryProcessor({ delayMs: 0 }), 'processAPIError', { error: apiError(401) });
    expect(result).toBeUndefined();
  });

  it('waits delayMs on the scheduler (a number or a function of the attempt)', async () => {
    const scheduler = new VirtualTimeScheduler();
    const delayMs = vi.fn(({ attempt }: { attempt: number }) => 700 * attempt);
    const retrier = new StreamErrorRetryProcessor({ delayMs, scheduler, maxRetries: 2 });
    const state = {};
    const first = runProcessor(retrier, 'processAPIError', { error: apiError(500), state });
    scheduler.flush();
    expect(scheduler.now()).toBe(700);
    expect((await first).result).toEqual({ retry: true });
    const second = runProcessor(retrier, 'processAPIError', { error: apiError(500), state });
    scheduler.flush();
    expect(scheduler.now()).toBe(700 + 1400);
    expect((await second).result).toEqual({ retry: true });
    expect(delayMs).toHaveBeenCalledTimes(2);
    expect((await runProcessor(retrier, 'processAPIError', { error: apiError(500), state })).result).toBeUndefined();
  });

  it('honours Retry-After up to maxRetryAfterMs, and gives up beyond it', async () => {
    const scheduler = new VirtualTimeScheduler();
    const retrier = new StreamErrorRetryProcessor({ delayMs: 10, scheduler, maxRetryAfterMs: 5_000 });
    const pending = runProcessor(retrier, 'processAPIError', { error: apiError(429, { 'retry-after': '4' }) });
    scheduler.flush();
    expect(scheduler.now()).toBe(4000);
    expect((await pending).result).toEqual({ retry: true });
    const tooLong = await runProcessor(retrier, 'processAPIError', { error: apiError(429, { 'retry-after': '30' }) });
    expect(tooLong.result).toBeUndefined();
  });

  it('stops waiting and does not retry when the run is cancelled', async () => {
    const controller = new AbortController();
    const retrier = new StreamErrorRetryProcessor({ delayMs: 60_000 });
    const pending = runProcessor(retrier, 'processAPIError', { error: apiError(503), abortSignal: controller.signal });
    controller.abort();
    expect((await pending).result).toBeUndefined();
  });

  it('custom matchers and retryUnknownErrors (never 4xx request errors)', async () => {
    const flaky = new Error('socket hang up');
    const withMatcher = new StreamErrorRetryProcessor({ delayMs: 0, matchers: [(error) => error instanceof Error && /hang up/.test(error.message)] });
    expect((await runProcessor(withMatcher, 'processAPIError', { error: flaky })).result).toEqual({ retry: true });
    const unknown = new StreamErrorRetryProcessor({ delayMs: 0, retryUnknownErrors: true });
    expect(unknown.isRetryable(new Error('???'))).toBe(true);
    expect(unknown.isRetryable(apiError(403))).toBe(false);
  });
});
