/**
 * StreamErrorRetryProcessor against what docs/processors.md promises (issue 34): errors listed as
 * never retried are not retried whatever flag or message they carry, numeric options are validated,
 * the hook answers like the reference's (a promise, `retryCount` counted), `isECONNRESETError`.
 */
import { describe, expect, it } from 'vitest';
import { APICallError } from '@ai-sdk/provider';
import { isECONNRESETError, StreamErrorRetryProcessor, type StreamErrorRetryOptions } from '../../src/processors/stream-error-retry.js';
import { InvalidProcessorOptionError } from '../../src/contract/errors/invalid-processor-option-error.js';

const apiError = (statusCode: number, extra: { responseBody?: string; data?: unknown } = {}) =>
  new APICallError({ message: `HTTP ${statusCode}`, url: 'https://api.test', requestBodyValues: {}, statusCode, isRetryable: true, ...extra });
const quotaBody = JSON.stringify({ error: { message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' } });

/** The hook called as the reference's unit tests call it: only what it reads. */
const answer = (retrier: StreamErrorRetryProcessor, error: unknown, extra: { retryCount?: number } = {}) =>
  retrier.processAPIError({ error, state: {}, retryCount: extra.retryCount ?? 0 } as never);

describe('never retried (docs/processors.md)', () => {
  const neverRetried: Record<string, unknown> = {
    'a 429 whose JSON body says insufficient_quota (no parsed data)': apiError(429, { responseBody: quotaBody }),
    'a stream error coded insufficient_quota that says "you can retry your request"': { type: 'error', error: { code: 'insufficient_quota', message: 'You can retry your request.' } },
    'a stream error typed insufficient_quota with a rate-limit code': { type: 'error', error: { type: 'insufficient_quota', code: 'rate_limit_exceeded' } },
    'a failed response coded invalid_request_error that says "you can retry your request"': { type: 'response.failed', response: { error: { code: 'invalid_request_error', message: 'You can retry your request.' } } },
    'a 400 flagged retryable': apiError(400),
    'a 401 flagged retryable': apiError(401),
    'a 422 flagged retryable, in a cause': new Error('wrapped', { cause: { statusCode: 422, isRetryable: true } }),
    'a 413 (request too large)': apiError(413),
  };
  for (const [name, error] of Object.entries(neverRetried)) {
    it(`${name}: no retry, also with retryUnknownErrors`, async () => {
      expect(await answer(new StreamErrorRetryProcessor({ delayMs: 0 }), error)).toBeUndefined();
      expect(await answer(new StreamErrorRetryProcessor({ delayMs: 0, retryUnknownErrors: true }), error)).toBeUndefined();
    });
  }

  it('a transient error is still retried, and a matcher the user gives still decides for its errors', async () => {
    expect(await answer(new StreamErrorRetryProcessor({ delayMs: 0 }), apiError(503))).toEqual({ retry: true });
    expect(await answer(new StreamErrorRetryProcessor({ delayMs: 0, matchers: [(error) => APICallError.isInstance(error) && error.statusCode === 400] }), apiError(400))).toEqual({ retry: true });
  });
});

describe('numeric options', () => {
  const numeric: Array<[string, (value: number) => StreamErrorRetryOptions]> = [
    ['maxRetries', (value) => ({ maxRetries: value })],
    ['maxRetryAfterMs', (value) => ({ maxRetryAfterMs: value })],
    ['delayMs', (value) => ({ delayMs: value })],
    ['matchers[0].maxRetries', (value) => ({ matchers: [{ match: () => true, maxRetries: value }] })],
    ['matchers[0].delayMs', (value) => ({ matchers: [{ match: () => true, delayMs: value }] })],
  ];
  for (const [option, make] of numeric) {
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -1]) {
      it(`${option}: ${value} is an InvalidProcessorOptionError naming the option`, () => {
        let thrown: unknown;
        try {
          new StreamErrorRetryProcessor(make(value));
        } catch (error) {
          thrown = error;
        }
        expect(InvalidProcessorOptionError.isInstance(thrown)).toBe(true);
        expect((thrown as InvalidProcessorOptionError).option).toBe(option);
        expect((thrown as Error).message).toContain(`option ${option} must be a finite number of at least 0`);
      });
    }
  }

  it('0 and finite values are accepted; a matcher that is not a predicate or { match } is an error', () => {
    expect(() => new StreamErrorRetryProcessor({ maxRetries: 0, maxRetryAfterMs: 0, delayMs: 0 })).not.toThrow();
    expect(() => new StreamErrorRetryProcessor({ matchers: [undefined as never] })).toThrow(/option matchers\[0\] must be a predicate/);
  });
});

describe('as the reference answers', () => {
  it('the hook answers with a promise, also for "no retry"', () => {
    const retrier = new StreamErrorRetryProcessor({ delayMs: 0 });
    expect(answer(retrier, new Error('nothing known'))).toBeInstanceOf(Promise);
  });

  it('retryCount passed in counts against maxRetries (a fresh state does not reset the budget)', async () => {
    const retrier = new StreamErrorRetryProcessor({ delayMs: 0, maxRetries: 1 });
    expect(await answer(retrier, apiError(503), { retryCount: 1 })).toBeUndefined();
    expect(await answer(retrier, apiError(503), { retryCount: 0 })).toEqual({ retry: true });
  });

  it("the reference's name", () => {
    expect(new StreamErrorRetryProcessor().name).toBe('Stream Error Retry Processor');
  });

  it('isECONNRESETError: the code in any case, in a cause, or the message; nothing else', () => {
    expect(isECONNRESETError(Object.assign(new Error('read'), { code: 'ECONNRESET' }))).toBe(true);
    expect(isECONNRESETError({ code: 'econnreset' })).toBe(true);
    expect(isECONNRESETError(new Error('fetch failed', { cause: Object.assign(new Error('x'), { code: 'ECONNRESET' }) }))).toBe(true);
    expect(isECONNRESETError(new Error('socket hang up'))).toBe(true);
    expect(isECONNRESETError(new Error('timeout'))).toBe(false);
    expect(isECONNRESETError({ code: 'ETIMEDOUT' })).toBe(false);
    expect(isECONNRESETError(null)).toBe(false);
  });
});
