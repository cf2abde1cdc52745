/** StreamErrorRetryProcessor with the reference's options: matcher policies, delayMs(args), onRetry, helpers. */
import { describe, expect, it, vi } from 'vitest';
import { VirtualTimeScheduler } from 'rxjs';
import { APICallError } from '@ai-sdk/provider';
import {
  isBadRequestError,
  isRetryableOpenAIResponsesStreamError,
  StreamErrorRetryProcessor,
  type RetryDelayArgs,
} from '../../src/processors/stream-error-retry.js';
import { runProcessor } from '../../src/testing/run-processor.js';

const badRequest = () => new APICallError({ message: 'HTTP 400', url: 'https://api.test', requestBodyValues: {}, statusCode: 400, isRetryable: false });
const rateLimited = (headers: Record<string, string> = {}) =>
  new APICallError({ message: 'HTTP 429', url: 'https://api.test', requestBodyValues: {}, statusCode: 429, responseHeaders: headers, isRetryable: true });

describe('helpers', () => {
  it('isRetryableOpenAIResponsesStreamError: error and response.failed events, by code or by the retry message', () => {
    expect(isRetryableOpenAIResponsesStreamError({ type: 'error', error: { code: 'server_error' } })).toBe(true);
    expect(isRetryableOpenAIResponsesStreamError({ type: 'error', error: { type: 'rate_limit_exceeded' } })).toBe(true);
    expect(isRetryableOpenAIResponsesStreamError({ type: 'response.failed', response: { error: { code: 'Service_Unavailable' } } })).toBe(true);
    expect(isRetryableOpenAIResponsesStreamError({ type: 'error', error: { code: 'weird', message: 'Oops. You can retry your request.' } })).toBe(true);
    expect(isRetryableOpenAIResponsesStreamError({ type: 'error', error: { code: 'insufficient_quota', message: 'quota' } })).toBe(false);
    expect(isRetryableOpenAIResponsesStreamError({ code: 'server_error' })).toBe(false);
    expect(isRetryableOpenAIResponsesStreamError(null)).toBe(false);
  });

  it('isBadRequestError: statusCode 400 only', () => {
    expect(isBadRequestError(badRequest())).toBe(true);
    expect(isBadRequestError(rateLimited())).toBe(false);
    expect(isBadRequestError({ statusCode: 400 })).toBe(true);
    expect(isBadRequestError('400')).toBe(false);
  });
});

describe('matcher policies', () => {
  it('a { match, maxRetries, delayMs, onRetry } entry retries its errors with its own budget and delay; onRetry gets the args and the delay', async () => {
    const scheduler = new VirtualTimeScheduler();
    const onRetry = vi.fn<(args: RetryDelayArgs & { delayMs: number }) => void>();
    const retrier = new StreamErrorRetryProcessor({ scheduler, maxRetries: 5, matchers: [{ match: isBadRequestError, maxRetries: 1, delayMs: 250, onRetry }] });
    const state = {};
    const first = runProcessor(retrier, 'processAPIError', { error: badRequest(), state, retryCount: 0 });
    scheduler.flush();
    expect(scheduler.now()).toBe(250);
    expect((await first).result).toEqual({ retry: true });
    expect(onRetry).toHaveBeenCalledTimes(1);
    expect(onRetry.mock.calls[0]?.[0]).toMatchObject({ delayMs: 250, attempt: 1, retryCount: 0 });
    expect(isBadRequestError(onRetry.mock.calls[0]?.[0].error)).toBe(true);
    // The entry's budget (1) applies, not the processor's (5).
    expect((await runProcessor(retrier, 'processAPIError', { error: badRequest(), state })).result).toBeUndefined();
  });

  it('a plain predicate uses the processor policy; the first matching entry wins', async () => {
    const first = vi.fn(() => true);
    const second = vi.fn(() => true);
    const retrier = new StreamErrorRetryProcessor({ delayMs: 0, matchers: [{ match: first, maxRetries: 0 }, second] });
    expect((await runProcessor(retrier, 'processAPIError', { error: new Error('socket hang up') })).result).toBeUndefined();
    expect(second).not.toHaveBeenCalled();
  });

  it("the entry's onRetry is awaited before the wait starts", async () => {
    const order: string[] = [];
    const retrier = new StreamErrorRetryProcessor({
      delayMs: 0,
      matchers: [{ match: () => true, onRetry: () => new Promise<void>((resolve) => setTimeout(() => (order.push('onRetry done'), resolve()), 5)) }],
    });
    const result = await runProcessor(retrier, 'processAPIError', { error: new Error('x') });
    order.push('retried');
    expect(result.result).toEqual({ retry: true });
    expect(order).toEqual(['onRetry done', 'retried']);
  });
});

describe('delayMs', () => {
  it('a function of the processAPIError args (async allowed)', async () => {
    const delayMs = vi.fn(async ({ attempt, retryCount }: RetryDelayArgs) => 100 * attempt + retryCount);
    const retrier = new StreamErrorRetryProcessor({ maxRetries: 5, delayMs, onRetry: (event) => events.push(event.delayMs) });
    const events: number[] = [];
    // the run's retryCount (3 API-error retries so far) counts, as in the reference: this is attempt 4
    const result = await runProcessor(retrier, 'processAPIError', { error: rateLimited(), retryCount: 3 });
    expect(result.result).toEqual({ retry: true });
    expect(events).toEqual([403]);
    expect(delayMs.mock.calls[0]?.[0]).toMatchObject({ attempt: 4, retryCount: 3 });
  });

  it("the wait is the longer of delayMs and the provider's Retry-After", async () => {
    const scheduler = new VirtualTimeScheduler();
    const longer = new StreamErrorRetryProcessor({ scheduler, delayMs: 5_000 });
    const pending = runProcessor(longer, 'processAPIError', { error: rateLimited({ 'retry-after': '2' }) });
    scheduler.flush();
    expect(scheduler.now()).toBe(5_000);
    expect((await pending).result).toEqual({ retry: true });
  });

  it('maxRetryAfterMs defaults to 30 s (a longer Retry-After gets no retry)', async () => {
    const retrier = new StreamErrorRetryProcessor({ delayMs: 0 });
    expect((await runProcessor(retrier, 'processAPIError', { error: rateLimited({ 'retry-after': '31' }) })).result).toBeUndefined();
  });
});
