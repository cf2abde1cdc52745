/**
 * `ResponseCache`: answers a repeated model request from a cache instead of calling the model.
 * `processLLMRequest` derives a key from the prompt, the model and the settings and returns
 * `{ response }` on a hit (the loop replays the chunks through the output processors, then runs
 * `processLLMResponse` with `fromCache: true`); on a miss, `processLLMResponse` stores the step.
 */
import { createHash } from 'node:crypto';
import type { LanguageModelV4, LanguageModelV4Prompt } from '@ai-sdk/provider';
import type {
  CachedLLMStepResponse,
  CallSettings,
  ProcessLLMRequestArgs,
  ProcessLLMResponseArgs,
  Processor,
} from '../contract/index.js';

/** Where `ResponseCache` keeps responses. Async or sync. */
export interface ResponseCacheStore {
  /** The cached value of `key`, if fresh. */
  get(key: string): CachedLLMStepResponse | undefined | Promise<CachedLLMStepResponse | undefined>;
  /** Stores `value` under `key` for `ttlSeconds`. */
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
    this.#maxEntries = options.maxEntries ?? 1000;
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

  /** Stores `value` under `key` for `ttlSeconds`. */
  set(key: string, value: CachedLLMStepResponse, ttlMs: number): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, expiresAt: this.#now() + ttlMs });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }

  /** Number of live entries (expired ones may still count until read). */
  /** How many entries are kept. */
  /** How many entries are kept. */
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
}

/** Options of `ResponseCache`. */
export interface ResponseCacheOptions {
  /** Where cached responses are kept. */
  store?: ResponseCacheStore;
  /** Time to live of an entry, ms (default 300,000). */
  ttlMs?: number;
  /** Custom key (default: sha256 of provider, model id, settings and prompt). */
  key?: (input: ResponseCacheKeyInput) => string;
}

/** The default cache key: sha256 over provider, model id, settings and prompt. */
export function responseCacheKey({ prompt, model, modelSettings }: ResponseCacheKeyInput): string {
  const { headers: _headers, maxRetries: _maxRetries, ...settings } = modelSettings;
  return createHash('sha256')
    .update(JSON.stringify([model.provider, model.modelId, settings, prompt]))
    .digest('hex');
}

const PENDING_KEY = 'rxagent.responseCache.pendingKey';

/**
 * Caches model responses per prompt (register it as an **input** processor: `processLLMRequest`
 * and `processLLMResponse` run for input processors).
 *
 * @example
 * ```ts
 * import { Agent } from 'rxagent';
 * import { ResponseCache } from 'rxagent/processors';
 * const agent = new Agent({ id: 'faq', model, inputProcessors: [new ResponseCache({ ttlMs: 60_000 })] });
 * ```
 */
export class ResponseCache implements Processor<'response-cache'> {
  /** The processor's id. */
  readonly id = 'response-cache' as const;
  /** A human-readable name. */
  readonly name = 'Response cache';
  /** Where cached responses are kept. */
  readonly store: ResponseCacheStore;
  readonly #ttlMs: number;
  readonly #key: (input: ResponseCacheKeyInput) => string;

  constructor(options: ResponseCacheOptions = {}) {
    this.store = options.store ?? new InMemoryResponseCacheStore();
    this.#ttlMs = options.ttlMs ?? 300_000;
    this.#key = options.key ?? responseCacheKey;
  }

  /** The `processLLMRequest` hook (see `Processor.processLLMRequest` for when it runs and what it may return). */
  processLLMRequest({ prompt, model, modelSettings, state }: ProcessLLMRequestArgs): {
    /** Response metadata (id, model, timestamp). */
    response: CachedLLMStepResponse;
  } | undefined | Promise<{
  /** Response metadata (id, model, timestamp). */
  response: CachedLLMStepResponse;
  } | undefined> {
    const key = this.#key({ prompt, model, modelSettings });
    state[PENDING_KEY] = key;
    const hit = this.store.get(key);
    const answer = (value: CachedLLMStepResponse | undefined) => (value === undefined ? undefined : { response: value });
    return hit instanceof Promise ? hit.then(answer) : answer(hit);
  }

  /** The `processLLMResponse` hook (see `Processor.processLLMResponse` for when it runs and what it may return). */
  processLLMResponse({ chunks, warnings, fromCache, state }: ProcessLLMResponseArgs): void | Promise<void> {
    const key = state[PENDING_KEY];
    state[PENDING_KEY] = undefined;
    if (fromCache || typeof key !== 'string') return;
    return this.store.set(key, { chunks, ...(warnings === undefined ? {} : { warnings }) }, this.#ttlMs);
  }
}
