/**
 * A judge failure opens the gate under `errorStrategy: 'fail-open'` only when it is a recognised
 * infrastructure failure, and only after its retries. Recognised (positively): the AI SDK's
 * `APICallError` without a status (no response: the AI SDK's own wrapping of a failed `fetch`) or
 * with 408/429/5xx, or whose cause chain holds a network error; a provider stream error the AI SDK
 * marks (`createProviderStreamError`, `StreamProviderError`) with 408/429/5xx; a Node/undici/Bun
 * network error (an `Error` with a code such as `ECONNRESET`, `UND_ERR_SOCKET`); a timeout (our
 * deadline, an `Error` or `DOMException` named `TimeoutError` as the AI SDK tells one); the
 * AI SDK's `RetryError`, read through its `lastError`. Anything else — a thrown string,
 * `undefined`, a plain object (even `{ code: 'ECONNRESET' }`), a `TypeError` from a buggy
 * provider, a custom class, a Proxy that throws — is a failure of kind `content`: never retried,
 * blocked by the default `contentErrorStrategy`. It was `infrastructure` (retried, then let
 * through under `'fail-open'`).
 *
 * Real faults too: a closed port, a server that drops the connection before answering, and an
 * OpenAI-compatible stream cut mid-answer (the AI SDK throws an `APICallError` with status 200
 * whose cause is undici's `UND_ERR_SOCKET`) stay infrastructure: retried, and the next answer
 * decides.
 *
 * Case counts: `RXAGENT_PROPERTY_RUNS / 5` (at least 200) for the decision, `/ 10` (at least 60)
 * for guard runs on fake time.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { lastValueFrom, of } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { APICallError, type LanguageModelV4, type LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { createProviderStreamError, postJsonToApi, createJsonResponseHandler, createJsonErrorResponseHandler } from '@ai-sdk/provider-utils';
import { createOpenAI } from '@ai-sdk/openai';
import { RetryError, StreamProviderError } from 'ai';
import { z } from 'zod';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import { processInput } from '../../src/operators/process-input.js';
import { ModerationProcessor } from '../../src/processors/moderation.js';
import { classifyFailure, StructuredCallError } from '../../src/processors/internal/guard-judge.js';
import { JudgeDeadlineError } from '../../src/processors/internal/judge-retry.js';
import { jsonProblem } from '../../src/model/checked-part.js';
import { contextWith, listWith, textMessage } from '../processors/support/harness.js';
import { errorPosingProxy, revokedProxy, throwingProxy } from '../support/hostile-values.js';
import { checkProperty, PROPERTY_RUNS, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';

const DECISIONS = Math.max(200, Math.floor(PROPERTY_RUNS / 5));
const RUNS = Math.max(60, Math.floor(PROPERTY_RUNS / 10));

afterEach(() => {
  vi.useRealTimers();
});

// ---- what a judge call may throw, described (built inside the predicate: fast-check reads what it generates) ----

/** The codes this test expects to be read as a connection that failed or was cut. */
const NETWORK_CODES = [
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
] as const;
/** Codes that are not an outage (or are a look-alike of one). */
const OTHER_CODES = ['ENOENT', 'EACCES', 'ERR_INVALID_ARG_TYPE', 'UND_ERR_INVALID_ARG', 'UND_ERR_NOT_SUPPORTED', 'ABORT_ERR', 'econnreset', 'ECONNRESET ', ' ETIMEDOUT', 'ECONNRESETX', '503', 'ENOTFOUND'];
const OUTAGE_STATUSES = [408, 429, 500, 502, 503, 504, 529, 599];
const OTHER_STATUSES = [200, 204, 301, 400, 401, 403, 404, 409, 413, 422, 451];
const isOutageStatus = (status: number | undefined): boolean => status === 408 || status === 429 || (status !== undefined && status >= 500 && status <= 599);

/** Words that cannot spell a context-length message (that one is a content failure on purpose). */
const word = fc.stringMatching(/^[a-z]{0,8}( [a-z]{1,8}){0,2}$/).filter((text) => !/context|too long|too many tokens|maximum|token limit/i.test(text));
const errorName = fc.oneof(word, fc.constantFrom('Error', 'TypeError', 'AbortError', 'TimeoutError', 'APICallError', 'AI_APICallError', 'AI_RetryError', 'FetchError', 'SocketError', 'NetworkError', 'JudgeDeadlineError'));
const errorMessage = fc.oneof(word, fc.constantFrom('fetch failed', 'network error', 'terminated', 'ECONNRESET', 'socket hang up', 'Service Unavailable', 'Overloaded', 'read ETIMEDOUT'));

type Leaf =
  | { t: 'primitive'; value: string | number | boolean | bigint | null | undefined }
  | { t: 'symbol'; description: string }
  | { t: 'plain'; code?: string; statusCode?: number; message?: string; name?: string; isRetryable?: boolean }
  | { t: 'error'; cls: 'Error' | 'TypeError' | 'RangeError' | 'custom'; name: string; message: string; code?: string; statusCode?: number; isRetryable?: boolean }
  | { t: 'api'; status: number | undefined; message: string }
  | { t: 'stream'; status: number | undefined; marker: 'provider-utils' | 'ai' }
  | { t: 'hostile'; which: 'throwing' | 'revoked' | 'posing' | 'throwing-cause' | 'throwing-code' }
  | { t: 'deadline' };

type Wrapper = { w: 'cause'; cls: 'Error' | 'TypeError' | 'custom'; name: string; message: string } | { w: 'retry'; reason: 'maxRetriesExceeded' | 'errorNotRetryable' | 'abort'; before: number };

const leaf: fc.Arbitrary<Leaf> = fc.oneof(
  fc.record({ t: fc.constant('primitive' as const), value: fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.double(), fc.boolean(), fc.bigInt(), fc.constant(null), fc.constant(undefined), fc.constantFrom('ECONNRESET', 'fetch failed', '503')) }),
  fc.record({ t: fc.constant('symbol' as const), description: word }),
  fc.record(
    {
      t: fc.constant('plain' as const),
      code: fc.constantFrom(...NETWORK_CODES, ...OTHER_CODES),
      statusCode: fc.constantFrom(...OUTAGE_STATUSES, ...OTHER_STATUSES),
      message: errorMessage,
      name: errorName,
      isRetryable: fc.boolean(),
    },
    { requiredKeys: ['t'] },
  ),
  fc.record(
    {
      t: fc.constant('error' as const),
      cls: fc.constantFrom('Error' as const, 'TypeError' as const, 'RangeError' as const, 'custom' as const),
      name: errorName,
      message: errorMessage,
      code: fc.constantFrom(...NETWORK_CODES, ...OTHER_CODES),
      statusCode: fc.constantFrom(...OUTAGE_STATUSES, ...OTHER_STATUSES),
      isRetryable: fc.boolean(),
    },
    { requiredKeys: ['t', 'cls', 'name', 'message'] },
  ),
  fc.record({ t: fc.constant('api' as const), status: fc.constantFrom(undefined, ...OUTAGE_STATUSES, ...OTHER_STATUSES), message: errorMessage }),
  fc.record({ t: fc.constant('stream' as const), status: fc.constantFrom(undefined, ...OUTAGE_STATUSES, ...OTHER_STATUSES), marker: fc.constantFrom('provider-utils' as const, 'ai' as const) }),
  fc.record({ t: fc.constant('hostile' as const), which: fc.constantFrom('throwing' as const, 'revoked' as const, 'posing' as const, 'throwing-cause' as const, 'throwing-code' as const) }),
  fc.constant({ t: 'deadline' as const }),
);

const wrapper: fc.Arbitrary<Wrapper> = fc.oneof(
  fc.record({ w: fc.constant('cause' as const), cls: fc.constantFrom('Error' as const, 'TypeError' as const, 'custom' as const), name: errorName, message: errorMessage }),
  fc.record({ w: fc.constant('retry' as const), reason: fc.constantFrom('maxRetriesExceeded' as const, 'errorNotRetryable' as const, 'abort' as const), before: fc.integer({ min: 0, max: 2 }) }),
);

/** A thrown value: a leaf inside up to three wrappers (the last one outermost). */
const thrownValue = fc.record({ leaf, wrappers: fc.array(wrapper, { maxLength: 3 }) });
type Thrown = { leaf: Leaf; wrappers: Wrapper[] };

class ProviderBug extends Error {}

function errorOf(cls: 'Error' | 'TypeError' | 'RangeError' | 'custom', message: string, options?: { cause: unknown }): Error {
  if (cls === 'TypeError') return new TypeError(message, options);
  if (cls === 'RangeError') return new RangeError(message, options);
  if (cls === 'custom') return new ProviderBug(message, options);
  return new Error(message, options);
}

function buildLeaf(description: Leaf): unknown {
  switch (description.t) {
    case 'primitive':
      return description.value;
    case 'symbol':
      return Symbol(description.description);
    case 'plain': {
      const { t: _t, ...fields } = description;
      return { ...fields };
    }
    case 'error': {
      const error = errorOf(description.cls, description.message) as Error & Record<string, unknown>;
      error.name = description.name;
      if (description.code !== undefined) error.code = description.code;
      if (description.statusCode !== undefined) error.statusCode = description.statusCode;
      if (description.isRetryable !== undefined) error.isRetryable = description.isRetryable;
      return error;
    }
    case 'api':
      return new APICallError({ message: description.message, url: 'https://judge.test', requestBodyValues: {}, statusCode: description.status });
    case 'stream':
      return description.marker === 'provider-utils'
        ? createProviderStreamError({ message: 'stream error', statusCode: description.status, data: {} })
        : new StreamProviderError({ message: 'stream error', statusCode: description.status, data: {} });
    case 'hostile':
      if (description.which === 'throwing') return throwingProxy();
      if (description.which === 'revoked') return revokedProxy();
      if (description.which === 'posing') return errorPosingProxy();
      // a getter that throws: on `cause` (below a plain Error), or on `code` (where a network code would be)
      return Object.defineProperty(new Error('x'), description.which === 'throwing-cause' ? 'cause' : 'code', {
        get() {
          throw new Error('hostile getter');
        },
      });
    default:
      return new JudgeDeadlineError(1_000);
  }
}

/** Builds the thrown value (fresh each call: a value may be thrown by several attempts). */
function build(thrown: Thrown): unknown {
  let value = buildLeaf(thrown.leaf);
  for (const wrap of thrown.wrappers) {
    if (wrap.w === 'cause') {
      const outer = errorOf(wrap.cls, wrap.message, { cause: value });
      outer.name = wrap.name;
      value = outer;
    } else {
      const earlier = Array.from({ length: wrap.before }, (_, index) => new Error(`attempt ${index + 1}`));
      value = new RetryError({ message: 'Failed after retries', reason: wrap.reason, errors: [...earlier, value] });
    }
  }
  return value;
}

/** This test's own reading: is the thrown value a recognised infrastructure failure? */
function recognised(thrown: Thrown): boolean {
  // read from the outside in: an Error named TimeoutError is a timeout (the AI SDK's own test), wherever it wraps
  if (thrown.wrappers.some((wrap) => wrap.w === 'cause' && wrap.name === 'TimeoutError')) return true;
  const { leaf: description } = thrown;
  switch (description.t) {
    case 'error':
      return description.name === 'TimeoutError' || (description.code !== undefined && (NETWORK_CODES as readonly string[]).includes(description.code));
    case 'api':
      return description.status === undefined || isOutageStatus(description.status);
    case 'stream':
      return isOutageStatus(description.status);
    case 'deadline':
      return true;
    case 'hostile':
      // a value the decision cannot read tells no outage from anything else
      return false;
    default:
      return false;
  }
}

// ---- 1. the decision ----

describe('the judge failure decision recognises infrastructure positively (property)', () => {
  it('classifyFailure: infrastructure exactly for the recognised failures, content for everything else; never throws', async () => {
    await checkProperty(
      'judge-failure-recognition-decision',
      thrownValue,
      async (thrown) => {
        const error = new StructuredCallError('model', 'model call failed', { cause: build(thrown) });
        const failure = classifyFailure(error);
        const expected = recognised(thrown) ? 'infrastructure' : 'content';
        if (failure.kind !== expected) throw new Error(`${JSON.stringify(thrown, (_, value: unknown) => (typeof value === 'bigint' ? `${value}n` : value))}: ${failure.kind} (${failure.summary}), expected ${expected}`);
      },
      DECISIONS,
    );
  });

  const examples: Record<string, { thrown: () => unknown; kind: 'infrastructure' | 'content' }> = {
    'a thrown string': { thrown: () => 'ECONNRESET', kind: 'content' },
    undefined: { thrown: () => undefined, kind: 'content' },
    null: { thrown: () => null, kind: 'content' },
    'a plain object with a network code and a 503': { thrown: () => ({ code: 'ECONNRESET', statusCode: 503, message: 'fetch failed' }), kind: 'content' },
    'a TypeError from a buggy provider': { thrown: () => new TypeError("Cannot read properties of undefined (reading 'choices')"), kind: 'content' },
    'a custom class': { thrown: () => new ProviderBug('unexpected'), kind: 'content' },
    'an Error saying "judge unavailable"': { thrown: () => new Error('judge unavailable'), kind: 'content' },
    'a RetryError whose last error is a bug': { thrown: () => new RetryError({ message: 'x', reason: 'errorNotRetryable', errors: [new TypeError('bug')] }), kind: 'content' },
    'a RetryError whose last error is a 503': {
      thrown: () => new RetryError({ message: 'x', reason: 'maxRetriesExceeded', errors: [new APICallError({ message: 'HTTP 503', url: 'u', requestBodyValues: {}, statusCode: 503 })] }),
      kind: 'infrastructure',
    },
    "undici's fetch failed with ECONNREFUSED": { thrown: () => new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:443'), { code: 'ECONNREFUSED' }) }), kind: 'infrastructure' },
    'an APICallError 200 cut mid-body (UND_ERR_SOCKET)': {
      thrown: () =>
        new APICallError({
          message: 'Failed to process successful response',
          url: 'u',
          requestBodyValues: {},
          statusCode: 200,
          cause: new TypeError('terminated', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) }),
        }),
      kind: 'infrastructure',
    },
    'an APICallError 200 whose body was not JSON': { thrown: () => new APICallError({ message: 'Failed to process successful response', url: 'u', requestBodyValues: {}, statusCode: 200, cause: new SyntaxError('Unexpected token') }), kind: 'content' },
    "Anthropic's overloaded stream error (marked, 529)": { thrown: () => createProviderStreamError({ message: 'Overloaded', type: 'overloaded_error', statusCode: 529, isRetryable: true, data: {} }), kind: 'infrastructure' },
    'an unmarked stream error object saying overloaded': { thrown: () => ({ type: 'overloaded_error', message: 'Overloaded' }), kind: 'content' },
  };
  for (const [what, { thrown, kind }] of Object.entries(examples)) {
    it(`${what}: ${kind}`, () => {
      expect(classifyFailure(new StructuredCallError('model', 'model call failed', { cause: thrown() })).kind).toBe(kind);
    });
  }
});

// ---- 2. through a guard, under 'fail-open', on fake time ----

/** A judge whose every call throws `make()` — any value, `undefined` too. */
function throwingJudge(make: () => unknown): LanguageModelV4 & { calls: number } {
  const model = {
    specificationVersion: 'v4' as const,
    provider: 'test',
    modelId: 'throwing-judge',
    supportedUrls: {},
    calls: 0,
    async doGenerate(): Promise<never> {
      throw new Error('doGenerate is not used by judges');
    },
    async doStream(): Promise<never> {
      model.calls++;
      throw make();
    },
  };
  return model;
}

async function judgeOnFakeTime(model: LanguageModelV4, options: Record<string, unknown>): Promise<{ through: boolean; result: unknown }> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  try {
    const list = listWith([textMessage('u1', 'user', 'I will hurt you badly.')]);
    const processor = new ModerationProcessor({ model, judgeDeadlineMs: 1_000, ...options });
    let settled = false;
    const pending = lastValueFrom(of(list).pipe(processInput([processor], contextWith(list))))
      .catch((error: unknown) => error)
      .finally(() => {
        settled = true;
      });
    for (let step = 0; step < 100 && !settled; step++) await vi.advanceTimersByTimeAsync(50);
    if (!settled) throw new Error('the guard did not settle within 5 s of fake time');
    const result = await pending;
    return { through: !TripWire.isInstance(result), result };
  } finally {
    vi.useRealTimers();
  }
}

describe("under errorStrategy 'fail-open' content passes only for recognised infrastructure failures, after their retries (property)", () => {
  it(
    'any generated thrown value, thrown by every attempt',
    async () => {
      await checkProperty(
        'judge-failure-recognition-fail-open',
        thrownValue,
        async (thrown) => {
          const model = throwingJudge(() => build(thrown));
          const onFailOpen = vi.fn();
          const { through, result } = await judgeOnFakeTime(model, { errorStrategy: 'fail-open', onFailOpen });
          const where = JSON.stringify(thrown, (_, value: unknown) => (typeof value === 'bigint' ? `${value}n` : value));
          // the model seam hands on a provider's failure unchanged unless it cannot be written as JSON (a
          // Proxy that throws, a BigInt, NaN anywhere in it): then an InvalidModelResponseError, without it
          if (recognised(thrown) && jsonProblem(build(thrown)) === undefined) {
            if (!through) throw new Error(`${where}: a recognised outage was blocked under fail-open: ${String(result)}`);
            if (model.calls < 2) throw new Error(`${where}: let through after ${model.calls} attempt(s), not retried`);
            const info = onFailOpen.mock.calls[0]?.[0] as { kind: string; attempts: number } | undefined;
            if (onFailOpen.mock.calls.length !== 1 || info?.kind !== 'infrastructure' || info.attempts !== model.calls) {
              throw new Error(`${where}: onFailOpen told ${JSON.stringify(onFailOpen.mock.calls.map((call) => [(call[0] as { kind: string }).kind, (call[0] as { attempts: number }).attempts]))} after ${model.calls} calls`);
            }
          } else {
            if (through) throw new Error(`${where}: an unrecognised failure opened the gate (${model.calls} calls)`);
            if (model.calls !== 1) throw new Error(`${where}: an unrecognised failure was retried (${model.calls} calls)`);
            if (onFailOpen.mock.calls.length > 0) throw new Error(`${where}: onFailOpen told, though blocked`);
            expect((result as TripWire).metadata).toMatchObject({ processorId: 'moderation', kind: 'content' });
          }
        },
        RUNS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it('the default strategies block every generated failure', async () => {
    await checkProperty(
      'judge-failure-recognition-default',
      thrownValue,
      async (thrown) => {
        const { through } = await judgeOnFakeTime(throwingJudge(() => build(thrown)), {});
        if (through) throw new Error(`${JSON.stringify(thrown, (_, value: unknown) => (typeof value === 'bigint' ? `${value}n` : value))}: through under the defaults`);
      },
      Math.max(30, Math.floor(RUNS / 2)),
    );
  }, PROPERTY_TIMEOUT_MS);
});

// ---- 3. real faults, through the AI SDK ----

interface TestServer {
  url: string;
  requests: number;
  close(): Promise<void>;
}

async function serve(handler: (request: http.IncomingMessage, response: http.ServerResponse, index: number) => void): Promise<TestServer> {
  const state = { requests: 0 };
  const server = http.createServer((request, response) => {
    const index = state.requests++;
    request.resume();
    request.on('end', () => handler(request, response, index));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return state.requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What the AI SDK's `postJsonToApi` throws for `url`. */
async function thrownByPost(url: string): Promise<unknown> {
  try {
    await postJsonToApi({
      url,
      body: {},
      failedResponseHandler: createJsonErrorResponseHandler({ errorSchema: z.any(), errorToMessage: () => 'failed' }),
      successfulResponseHandler: createJsonResponseHandler(z.any()),
    });
  } catch (error) {
    return error;
  }
  throw new Error('the call did not fail');
}

const modelCall = (cause: unknown) => classifyFailure(new StructuredCallError('model', 'model call failed', { cause }));

function chatChunk(content: string | null, finish: string | null): string {
  return `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'judge', choices: [{ index: 0, delta: content === null ? {} : { role: 'assistant', content }, finish_reason: finish }] })}\n\n`;
}

describe('real network faults stay infrastructure (the AI SDK as it throws them)', () => {
  it('a closed port (ECONNREFUSED): retried, then errorStrategy', async () => {
    const server = await serve((_, response) => response.end('{}'));
    const { url } = server;
    await server.close();
    const thrown = await thrownByPost(url);
    expect(APICallError.isInstance(thrown)).toBe(true);
    expect(modelCall(thrown)).toMatchObject({ kind: 'infrastructure' });
  }, 30_000);

  it('a server that drops the connection before answering: infrastructure', async () => {
    const server = await serve((request) => request.socket.destroy());
    try {
      expect(modelCall(await thrownByPost(`${server.url}/v1`))).toMatchObject({ kind: 'infrastructure' });
    } finally {
      await server.close();
    }
  }, 30_000);

  it('HTTP 503 and 400 from a real server: infrastructure and content', async () => {
    const server = await serve((_, response, index) => {
      response.writeHead(index === 0 ? 503 : 400, { 'content-type': 'application/json' });
      response.end('{"error": {"message": "no"}}');
    });
    try {
      expect(modelCall(await thrownByPost(server.url))).toMatchObject({ kind: 'infrastructure' });
      expect(modelCall(await thrownByPost(server.url))).toMatchObject({ kind: 'content' });
    } finally {
      await server.close();
    }
  }, 30_000);

  it('an OpenAI-compatible judge whose stream is cut mid-answer: retried, and the next answer decides (blocked, never through)', async () => {
    const flagged = '{"category_scores": [{"category": "violence", "score": 0.97}], "reason": null}';
    const server = await serve((_, response, index) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(chatChunk('{"category_scores": [', null));
      if (index === 0) {
        // the connection dies mid-answer
        setTimeout(() => response.socket?.destroy(), 10);
        return;
      }
      response.write(chatChunk(flagged.slice('{"category_scores": ['.length), null));
      response.write(chatChunk(null, 'stop'));
      response.end('data: [DONE]\n\n');
    });
    try {
      const judge = createOpenAI({ baseURL: `${server.url}/v1`, apiKey: 'test-key' }).chat('judge');
      const onFailOpen = vi.fn();
      const list = listWith([textMessage('u1', 'user', 'I will hurt you badly.')]);
      const processor = new ModerationProcessor({ model: judge, errorStrategy: 'fail-open', onFailOpen, judgeDeadlineMs: 20_000 });
      const result = await lastValueFrom(of(list).pipe(processInput([processor], contextWith(list)))).catch((error: unknown) => error);
      expect(server.requests).toBe(2);
      expect(TripWire.isInstance(result)).toBe(true);
      expect((result as TripWire).metadata).toMatchObject({ processorId: 'moderation', categories: ['violence'] });
      expect(onFailOpen).not.toHaveBeenCalled();
    } finally {
      await server.close();
    }
  }, 30_000);

  it('an OpenAI-compatible judge cut on every call: retried until the deadline, then let through under fail-open and reported', async () => {
    const server = await serve((_, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(chatChunk('{"category_scores": [', null));
      setTimeout(() => response.socket?.destroy(), 5);
    });
    try {
      const judge = createOpenAI({ baseURL: `${server.url}/v1`, apiKey: 'test-key' }).chat('judge');
      const onFailOpen = vi.fn();
      const list = listWith([textMessage('u1', 'user', 'hello there')]);
      const processor = new ModerationProcessor({ model: judge, errorStrategy: 'fail-open', onFailOpen, judgeDeadlineMs: 1_500 });
      const result = await lastValueFrom(of(list).pipe(processInput([processor], contextWith(list)))).catch((error: unknown) => error);
      expect(TripWire.isInstance(result)).toBe(false);
      expect(server.requests).toBeGreaterThanOrEqual(2);
      expect(onFailOpen).toHaveBeenCalledTimes(1);
      expect(onFailOpen.mock.calls[0]?.[0]).toMatchObject({ kind: 'infrastructure', attempts: server.requests });
    } finally {
      await server.close();
    }
  }, 30_000);
});

// ---- the stream-level shapes a judge call ends with ----

describe('an answer stream that ends without its finish is a cut call; an error part is read like a thrown error', () => {
  const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
  const streaming = (parts: (call: number) => LanguageModelV4StreamPart[]): LanguageModelV4 & { calls: number } => {
    const model = {
      specificationVersion: 'v4' as const,
      provider: 'test',
      modelId: 'streaming-judge',
      supportedUrls: {},
      calls: 0,
      async doGenerate(): Promise<never> {
        throw new Error('unused');
      },
      async doStream() {
        const list = parts(model.calls++);
        return {
          stream: new ReadableStream<LanguageModelV4StreamPart>({
            start(controller) {
              for (const part of list) controller.enqueue(part);
              controller.close();
            },
          }),
        };
      },
    };
    return model;
  };

  it('a stream cut before its finish, then a flagging answer: retried, blocked on the answer', async () => {
    const flagged = '{"category_scores": [{"category": "violence", "score": 0.97}], "reason": null}';
    const model = streaming((call) => [
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: call === 0 ? '{"category_scores": []' : flagged },
      ...(call === 0 ? [] : [{ type: 'text-end' as const, id: 't' }, { type: 'finish' as const, finishReason: { unified: 'stop' as const, raw: 'stop' }, usage }]),
    ]);
    const { through, result } = await judgeOnFakeTime(model, { errorStrategy: 'fail-open' });
    expect(through).toBe(false);
    expect(model.calls).toBe(2);
    expect((result as TripWire).metadata).toMatchObject({ categories: ['violence'] });
  });

  it("an error part holding an unmarked object (not an outage we can recognise): content, blocked under errorStrategy 'fail-open', not retried", async () => {
    const model = streaming(() => [{ type: 'error', error: { message: 'something odd' } }]);
    const { through } = await judgeOnFakeTime(model, { errorStrategy: 'fail-open' });
    expect(through).toBe(false);
    expect(model.calls).toBe(1);
  });

  it('an error part holding a marked provider stream error with 503: retried, then fail-open', async () => {
    const model = streaming(() => [{ type: 'error', error: createProviderStreamError({ message: 'Service Unavailable', statusCode: 503, data: {} }) }]);
    const onFailOpen = vi.fn();
    const { through } = await judgeOnFakeTime(model, { errorStrategy: 'fail-open', onFailOpen });
    expect(through).toBe(true);
    expect(model.calls).toBeGreaterThan(1);
    expect(onFailOpen).toHaveBeenCalledTimes(1);
  });
});
