/**
 * `ResponseCache`: answers a repeated model request from a cache instead of calling the model.
 * `processInputStep` digests what the step offers the model besides the prompt (tools and their
 * schemas, tool choice, provider options, the structured-output schema); `processLLMRequest`
 * derives a key from it, the prompt, the model, the settings, the run's memory resource and
 * thread and the request-context values the app names, and returns `{ response }` on a hit (the
 * loop replays the chunks through the output processors, then runs `processLLMResponse` with
 * `fromCache: true`); on a miss, `processLLMResponse` stores the step when the model finished it
 * (`stop` or `tool-calls`) and no processor rejected it. The store is an optimisation: when it
 * throws, hangs or answers something it cannot serve, the request is a miss (`onError` is told).
 */
import { catchError, from, map, of, timeout, type Observable } from 'rxjs';
import type { LanguageModelV4, LanguageModelV4Prompt } from '@ai-sdk/provider';
import {
  InvalidProcessorOptionError,
  ProcessorError,
  type CachedLLMStepResponse,
  type CallSettings,
  type ProcessInputStepArgs,
  type ProcessLLMRequestArgs,
  type ProcessLLMRequestResult,
  type ProcessLLMResponseArgs,
  type Processor,
  type ProcessorHookName,
} from '../contract/index.js';
import { canonicalDigest } from './internal/cache-key.js';
import { stepDigest } from './internal/cache-step.js';
import { entryOf, readEntry } from './internal/cached-entry.js';

const PROCESSOR_ID = 'response-cache';

/** Where `ResponseCache` keeps responses. Async or sync. */
export interface ResponseCacheStore {
  /** The cached value of `key`, if fresh. */
  get(key: string): CachedLLMStepResponse | undefined | Promise<CachedLLMStepResponse | undefined>;
  /** Stores `value` under `key` for `ttlMs` milliseconds. */
  set(key: string, value: CachedLLMStepResponse, ttlMs: number): void | Promise<void>;
}

/**
 * An in-memory LRU store with per-entry TTL (the default store).
 *
 * @example
 * ```ts
 * import { InMemoryResponseCacheStore, ResponseCache } from 'rxagent/processors';
 * const cache = new ResponseCache({ store: new InMemoryResponseCacheStore({ maxEntries: 500 }) });
 * ```
 */
export class InMemoryResponseCacheStore implements ResponseCacheStore {
  readonly #entries = new Map<string, { value: CachedLLMStepResponse; expiresAt: number }>();
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(options: {
    /** At most this many entries (least recently used go first). */
    maxEntries?: number;
    /** The clock (`() => ms`). */
    now?: () => number;
  } = {
  }) {
    const maxEntries = options.maxEntries ?? 1000;
    if (!Number.isInteger(maxEntries) || maxEntries < 1) {
      throw new InvalidProcessorOptionError(PROCESSOR_ID, 'maxEntries', maxEntries, 'a whole number of at least 1');
    }
    this.#maxEntries = maxEntries;
    this.#now = options.now ?? Date.now;
  }

  /** The cached value of `key`, if fresh. */
  get(key: string): CachedLLMStepResponse | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.#now()) {
      this.#entries.delete(key);
      return undefined;
    }
    this.#entries.delete(key); // refresh recency
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** Stores `value` under `key` for `ttlMs` milliseconds. */
  set(key: string, value: CachedLLMStepResponse, ttlMs: number): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, expiresAt: this.#now() + ttlMs });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }

  /** How many entries are kept (expired ones count until read). */
  get size(): number {
    return this.#entries.size;
  }
}

/** What a cache key is made of. */
export interface ResponseCacheKeyInput {
  /** The prompt sent to the model. */
  prompt: LanguageModelV4Prompt;
  /** The model (as the loop speaks to it: `LanguageModelV4`). */
  model: LanguageModelV4;
  /** Call settings (temperature, maxOutputTokens, …). */
  modelSettings: CallSettings;
  /**
   * A digest of what the step offers the model besides the prompt: the tools (name, description,
   * input schema, provider options) after `activeTools`, the tool choice, the provider options and
   * the structured-output schema — as `ResponseCache`'s `processInputStep` saw them. Unset when
   * that hook did not run for the step.
   */
  step?: string;
  /** The run's memory resource (`requestContext.resourceId`), if any. */
  resourceId?: string;
  /** The run's memory thread (`requestContext.threadId`), if any. */
  threadId?: string;
  /** The values of the request-context keys the app named (`requestContextKeys`) that the run has. */
  requestContext?: Record<string, unknown>;
}

/** Options of `ResponseCache`. */
export interface ResponseCacheOptions {
  /** Where cached responses are kept. */
  store?: ResponseCacheStore;
  /** Time to live of an entry, ms (default 300,000). */
  ttlMs?: number;
  /**
   * Custom key (default {@link responseCacheKey}). It must cover everything that changes the
   * answer; a key it cannot make (it throws, or returns no string) means the request is not cached.
   */
  key?: (input: ResponseCacheKeyInput) => string;
  /**
   * Request-context keys whose values change the answer and are part of the key (a tenant, a
   * locale, a plan). The memory resource and thread always are. Default: none.
   */
  requestContextKeys?: readonly string[];
  /** A store call that has not settled after this many ms is a miss (a read) or dropped (a write). Default 1,000. */
  storeTimeoutMs?: number;
  /**
   * Told each time the cache is skipped for a request: the store threw, timed out or answered an
   * entry that cannot be served, or the request could not be keyed. A `ProcessorError` naming the
   * hook; the run goes on without the cache. Its throws are swallowed.
   */
  onError?: (error: ProcessorError) => void;
}

const KEY_VERSION = 'rxagent.response-cache/2';

/**
 * The default cache key: the sha256 of the provider, the model id, the settings (but `headers` and
 * `maxRetries`), the prompt, the step's digest, the memory resource and thread and the named
 * request-context values, each written so that two inputs share a key only when they are equal
 * (object key order aside; see `internal/cache-key.ts`). Throws a `TypeError` for a value that
 * cannot be keyed (a cycle, a function, a class instance).
 *
 * @example
 * ```ts
 * import { responseCacheKey } from 'rxagent/processors';
 * const key = responseCacheKey({ prompt, model, modelSettings: { temperature: 0 }, resourceId: 'user-1' });
 * ```
 */
export function responseCacheKey({ prompt, model, modelSettings, step, resourceId, threadId, requestContext }: ResponseCacheKeyInput): string {
  const { headers: _headers, maxRetries: _maxRetries, ...settings } = modelSettings;
  return canonicalDigest([KEY_VERSION, model.provider, model.modelId, settings, prompt, step, resourceId, threadId, requestContext]);
}

const PENDING_KEY = 'rxagent.responseCache.pendingKey';
const STEP_KEY = 'rxagent.responseCache.step';
/** The step's digest when the step cannot be keyed: nothing is read or written for it. */
const UNKEYABLE = '';
/** The finish reasons of a whole answer: anything else (cut off, filtered, an error) is not stored. */
const WHOLE_ANSWER = new Set(['stop', 'tool-calls']);

type CacheHit = {
  /** The cached response that replaces the model call. */
  response: CachedLLMStepResponse;
};

const isThenable = <T>(value: unknown): value is PromiseLike<T> => typeof (value as { then?: unknown } | null)?.then === 'function';

function positive(value: number | undefined, fallback: number, option: string): number {
  const given = value ?? fallback;
  if (typeof given !== 'number' || Number.isNaN(given) || given <= 0) {
    throw new InvalidProcessorOptionError(PROCESSOR_ID, option, given, 'a number of milliseconds above 0');
  }
  return given;
}

/**
 * Caches model responses per request (register it as an **input** processor: `processInputStep`,
 * `processLLMRequest` and `processLLMResponse` run for input processors). Put it **after** every
 * input processor that changes the step or rewrites the prompt: its key covers the step and the
 * prompt as the processors before it left them (`prepareStep`, which runs after every processor,
 * must not change the tools, tool choice or provider options when the cache is used).
 *
 * @example
 * ```ts
 * import { Agent } from 'rxagent';
 * import { ResponseCache } from 'rxagent/processors';
 * const agent = new Agent({ id: 'faq', model, inputProcessors: [new ResponseCache({ ttlMs: 60_000, requestContextKeys: ['tenant'] })] });
 * ```
 */
export class ResponseCache implements Processor<'response-cache'> {
  /** The processor's id. */
  readonly id = PROCESSOR_ID;
  /** A human-readable name. */
  readonly name = 'Response cache';
  /** Where cached responses are kept. */
  readonly store: ResponseCacheStore;
  readonly #ttlMs: number;
  readonly #storeTimeoutMs: number;
  readonly #key: (input: ResponseCacheKeyInput) => string;
  readonly #requestContextKeys: readonly string[];
  readonly #onError: ((error: ProcessorError) => void) | undefined;

  constructor(options: ResponseCacheOptions = {}) {
    this.store = options.store ?? new InMemoryResponseCacheStore();
    this.#ttlMs = positive(options.ttlMs, 300_000, 'ttlMs');
    this.#storeTimeoutMs = positive(options.storeTimeoutMs, 1_000, 'storeTimeoutMs');
    this.#key = options.key ?? responseCacheKey;
    const names = options.requestContextKeys ?? [];
    if (!Array.isArray(names) || names.some((name) => typeof name !== 'string')) {
      throw new InvalidProcessorOptionError(PROCESSOR_ID, 'requestContextKeys', names, 'an array of request-context key names');
    }
    this.#requestContextKeys = [...names];
    this.#onError = options.onError;
  }

  /** The `processInputStep` hook: digests the step's tools, tool choice, provider options and response schema for the key (changes nothing). */
  processInputStep(args: ProcessInputStepArgs): undefined | Promise<undefined> {
    const { state } = args;
    const unkeyable = (error: unknown) => {
      state[STEP_KEY] = UNKEYABLE;
      this.#report('processInputStep', 'the step cannot be part of a cache key, so it is not cached', error);
      return undefined;
    };
    try {
      const digest = stepDigest(args);
      if (!isThenable<string>(digest)) {
        state[STEP_KEY] = digest;
        return undefined;
      }
      return Promise.resolve(digest).then((value) => {
        state[STEP_KEY] = value;
        return undefined;
      }, unkeyable);
    } catch (error) {
      return unkeyable(error);
    }
  }

  /** The `processLLMRequest` hook (see `Processor.processLLMRequest` for when it runs and what it may return). */
  processLLMRequest({ prompt, model, modelSettings, state, requestContext }: ProcessLLMRequestArgs): ProcessLLMRequestResult | Observable<ProcessLLMRequestResult> {
    state[PENDING_KEY] = undefined;
    const step = state[STEP_KEY];
    if (step === UNKEYABLE) return undefined;
    const input: ResponseCacheKeyInput = { prompt, model, modelSettings };
    if (typeof step === 'string') input.step = step;
    if (requestContext.resourceId !== undefined) input.resourceId = requestContext.resourceId;
    if (requestContext.threadId !== undefined) input.threadId = requestContext.threadId;
    if (this.#requestContextKeys.length > 0) {
      const named: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      for (const name of this.#requestContextKeys) if (requestContext.has(name)) named[name] = requestContext.get(name);
      input.requestContext = named;
    }
    let key: unknown;
    try {
      key = this.#key(input);
    } catch (error) {
      this.#report('processLLMRequest', 'the request cannot be keyed, so it is not cached', error);
      return undefined;
    }
    if (typeof key !== 'string' || key === '') {
      this.#report('processLLMRequest', `the key function returned ${typeof key === 'string' ? 'an empty string' : typeof key}, so the request is not cached`);
      return undefined;
    }
    state[PENDING_KEY] = key;
    let hit: unknown;
    try {
      hit = this.store.get(key);
    } catch (error) {
      this.#report('processLLMRequest', 'the store\'s get threw; answering from the model', error);
      return undefined;
    }
    if (!isThenable(hit)) return this.#served(hit, key);
    return from(hit).pipe(
      timeout(this.#storeTimeoutMs),
      map((value) => this.#served(value, key)),
      catchError((error: unknown) => {
        this.#report('processLLMRequest', `the store's get failed or did not answer within ${this.#storeTimeoutMs} ms; answering from the model`, error);
        return of(undefined);
      }),
    );
  }

  /** The `processLLMResponse` hook (see `Processor.processLLMResponse` for when it runs and what it may return). */
  processLLMResponse({ chunks, warnings, fromCache, state, steps }: ProcessLLMResponseArgs): undefined | Observable<undefined> {
    const key = state[PENDING_KEY];
    state[PENDING_KEY] = undefined;
    if (fromCache || typeof key !== 'string') return undefined;
    const step = steps.at(-1);
    // a cut-off, filtered or failed answer, or one a processor rejected, is not the model's answer to keep
    if (step === undefined || step.tripwire !== undefined || !WHOLE_ANSWER.has(step.finishReason)) return undefined;
    const entry = entryOf(key, chunks, warnings);
    if (entry === undefined) {
      this.#report('processLLMResponse', 'the response cannot be copied into the store');
      return undefined;
    }
    let written: unknown;
    try {
      written = this.store.set(key, entry, this.#ttlMs);
    } catch (error) {
      this.#report('processLLMResponse', 'the store\'s set threw; the response is not cached', error);
      return undefined;
    }
    if (!isThenable(written)) return undefined;
    return from(written).pipe(
      timeout(this.#storeTimeoutMs),
      map(() => undefined),
      catchError((error: unknown) => {
        this.#report('processLLMResponse', `the store's set failed or did not answer within ${this.#storeTimeoutMs} ms; the response is not cached`, error);
        return of(undefined);
      }),
    );
  }

  /** `{ response }` for an entry that can be served under `key`; a miss (reported) for anything else. */
  #served(value: unknown, key: string): CacheHit | undefined {
    if (value === undefined || value === null) return undefined;
    const read = readEntry(value, key);
    if ('response' in read) return read;
    this.#report('processLLMRequest', `the store answered an entry that cannot be served (${read.refused}); answering from the model`);
    return undefined;
  }

  #report(hook: ProcessorHookName, message: string, cause?: unknown): void {
    if (this.#onError === undefined) return;
    try {
      this.#onError(new ProcessorError(this.id, hook, message, cause === undefined ? undefined : { cause }));
    } catch {
      // a failing onError never changes the outcome
    }
  }
}
