/**
 * `ResponseCache`: answers a repeated model request from a cache instead of calling the model.
 * `processLLMRequest` derives a key from the request as it will be sent — the prompt, the model and
 * the call options the loop built after every `processInputStep` and `prepareStep` (the tools as the
 * provider gets them, tool choice, provider options, response format, settings: `callOptions`) —,
 * the run's memory resource and thread and the request-context values the app names (a request
 * handed over without `callOptions` is keyed on what `processInputStep` saw of the step instead),
 * and returns `{ response }` on a hit (the
 * loop replays the chunks through the output processors, then runs `processLLMResponse` with
 * `fromCache: true`). On a miss, `processLLMResponse` writes the step when the model finished it
 * (`stop` or `tool-calls`) — not yet servable: the processors after it (`processOutputStep`, a later
 * `processLLMResponse`, the tools, `processOutputResult`) may still reject it — and writes it again
 * as accepted once the run went on past it (the next attempt began with the step not rejected) or
 * the run ended with its `finish` (its `abortSignal` fired with that reason) with the step neither
 * rejected nor blanked; a run that ended any other way (an error, a tripwire, the caller's abort, a
 * consumer that left) leaves its last step unaccepted. An answer served from the store is shared by
 * every identical request: a run that rejects it (a tripwire, a blanked step) withdraws it, and one
 * whose reader leaves, whose caller aborts or that fails otherwise leaves it servable (its next
 * replay passes the output processors again). A rejected step's entry is overwritten by an empty one. The store is an optimisation: when it throws, hangs
 * or answers something it cannot serve, the request is a miss (`onError` is told).
 */
import { catchError, concatMap, defer, isObservable, map, of, timeout, type Observable } from 'rxjs';
import type { LanguageModelV4, LanguageModelV4Prompt } from '@ai-sdk/provider';
import {
  InvalidProcessorOptionError,
  ProcessorError,
  endedWithFinish,
  type CachedLLMStepResponse,
  type CallSettings,
  type ProcessInputStepArgs,
  type ProcessLLMRequestArgs,
  type ProcessLLMRequestResult,
  type ProcessLLMResponseArgs,
  type Processor,
  type ProcessorHookName,
  type ProcessorState,
  type StepResult,
  MAX_TIMER_MS,
} from '../contract/index.js';
import { canonicalDigest } from './internal/cache-key.js';
import { functionOption, methodsOption, wholeNumberOption } from './internal/guard-options.js';
import { checkOptionKeys, optionKeys, optionNames } from './internal/option-keys.js';
import { stepDigest } from './internal/cache-step.js';
import { acceptedEntry, entryOf, readEntry, withdrawnEntry, type ResponseCacheEntry } from './internal/cached-entry.js';

const PROCESSOR_ID = 'response-cache';

/** The option names {@link InMemoryResponseCacheStore} knows. */
const STORE_OPTION_KEYS = optionKeys(PROCESSOR_ID, ['maxEntries', 'now']);

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
    checkOptionKeys(STORE_OPTION_KEYS, options);
    this.#maxEntries = wholeNumberOption(PROCESSOR_ID, 'maxEntries', options.maxEntries, 1000, 1);
    this.#now = functionOption(PROCESSOR_ID, 'now', options.now) ?? Date.now;
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
  /** Call settings (temperature, maxOutputTokens, …); the default key reads them only without `callOptions`. */
  modelSettings: CallSettings;
  /**
   * What the call is sent with besides the prompt (`ProcessLLMRequestArgs.callOptions`): the tools
   * as the provider gets them (after `activeTools`), the tool choice, the provider options, the
   * response format and the settings, after every processor and `prepareStep`. Unset when the
   * request came without them (the operator used on its own): `step` stands in for them then.
   */
  callOptions?: ProcessLLMRequestArgs['callOptions'];
  /**
   * Only for a request without `callOptions`: a digest of what the step offers the model besides
   * the prompt — the tools after `activeTools`, each as the provider gets it (name, description,
   * input schema, provider options, and a caller's strictness and input examples; a provider
   * tool's id and arguments), the tool choice, the provider options and the structured-output
   * schema — as `ResponseCache`'s `processInputStep` saw them (the processors after it and
   * `prepareStep` not seen). Unset when that hook did not run for the step.
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
  /**
   * A store call that has not settled after this many ms is a miss (a read) or dropped (a write).
   * Default 1,000; at most 2,147,483,647 (the longest a timer waits).
   */
  storeTimeoutMs?: number;
  /**
   * Told each time the cache is skipped for a request: the store threw, timed out or answered an
   * entry that cannot be served, or the request could not be keyed. A `ProcessorError` naming the
   * hook; the run goes on without the cache. Its throws are swallowed.
   */
  onError?: (error: ProcessorError) => void;
  /** @deprecated The reference's option: accepted without effect (warned once); give `store` (a `ResponseCacheStore`), else responses are kept in memory. */
  cache?: unknown;
  /** @deprecated The reference's option (seconds): accepted without effect (warned once); use `ttlMs`. */
  ttl?: number;
  /** @deprecated The reference's option: accepted without effect (warned once); the key covers the memory resource and thread, name other request-context values in `requestContextKeys`. */
  scope?: string | null;
  /** @deprecated The reference's option: accepted without effect (warned once); every request is looked up. */
  bust?: boolean;
  /** @deprecated The reference's option: accepted without effect (warned once); the key covers the model, the prompt and what is sent with it. */
  agentId?: string;
}

/** The option names {@link ResponseCache} knows (the reference's among them). */
const RESPONSE_CACHE_OPTION_KEYS = optionKeys(
  PROCESSOR_ID,
  optionNames<ResponseCacheOptions>({
    store: true,
    ttlMs: true,
    key: true,
    requestContextKeys: true,
    storeTimeoutMs: true,
    onError: true,
    cache: true,
    ttl: true,
    scope: true,
    bust: true,
    agentId: true,
  }),
  {
    cache: 'give store (a ResponseCacheStore); without it responses are kept in memory',
    ttl: 'use ttlMs (milliseconds; default 300000)',
    scope: 'the key covers the memory resource and thread; name other request-context values in requestContextKeys',
    bust: 'every request is looked up',
    agentId: 'the key covers the model, the prompt and what is sent with it',
  },
);

// 5: entries carry their digest (an entry of an earlier build, without one, is not looked up)
const KEY_VERSION = 'rxagent.response-cache/5';

/** `callOptions` as keyed: everything sent but the headers (and a prompt or abort signal passed along by mistake). */
function keyedCallOptions(callOptions: NonNullable<ResponseCacheKeyInput['callOptions']>): Record<string, unknown> {
  const { headers: _headers, prompt: _prompt, abortSignal: _abortSignal, ...sent } = callOptions as Record<string, unknown>;
  return sent;
}

/**
 * The default cache key: the sha256 of the provider, the model id, the call options as sent (but
 * `headers`) — or, for a request without `callOptions`, the settings (but `headers` and
 * `maxRetries`) —, the prompt, the step's digest, the memory resource and thread and the named
 * request-context values, each written so that two inputs share a key only when they are equal
 * (object key order aside; see `internal/cache-key.ts`). Throws a `TypeError` for a value that
 * cannot be keyed (a cycle, a function, a class instance).
 *
 * @example
 * ```ts
 * import { responseCacheKey } from 'rxagent/processors';
 * const key = responseCacheKey({ prompt, model, modelSettings: {}, callOptions: { temperature: 0 }, resourceId: 'user-1' });
 * ```
 */
export function responseCacheKey({ prompt, model, modelSettings, callOptions, step, resourceId, threadId, requestContext }: ResponseCacheKeyInput): string {
  // tagged: what was sent and what the settings alone say never share a spelling
  let request: { sent: unknown } | { settings: unknown };
  if (callOptions === undefined) {
    const { headers: _headers, maxRetries: _maxRetries, ...settings } = modelSettings;
    request = { settings };
  } else {
    request = { sent: keyedCallOptions(callOptions) };
  }
  return canonicalDigest([KEY_VERSION, model.provider, model.modelId, request, prompt, step, resourceId, threadId, requestContext]);
}

/** What `processInputStep` saw of the step: keyed only for a request without `callOptions`. */
type StepPieces = Pick<ProcessInputStepArgs, 'tools' | 'activeTools' | 'toolChoice' | 'providerOptions' | 'structuredOutput'>;
/** The finish reasons of a whole answer: anything else (cut off, filtered, an error) is not stored. */
const WHOLE_ANSWER = new Set(['stop', 'tool-calls']);

type CacheHit = {
  /** The cached response that replaces the model call. */
  response: CachedLLMStepResponse;
};

/** An answer written (or served) while its step waits to be accepted (see `ResponseCache.#settle`). */
interface Waiting {
  readonly key: string;
  /** The entry to write again as accepted; `undefined` for one served from the store (withdrawn if rejected). */
  readonly entry: ResponseCacheEntry | undefined;
  /** The step's result in the run's `steps` (the loop records a rejection on it, in place). */
  readonly step: StepResult;
  /** The step's text when it was written: a run rejected at its end blanks every step's text. */
  readonly text: string;
}

/**
 * What a cache holds for one run, by the run's `state` of it (not in that state: two caches in one
 * run share it, their id being the same; nothing of it is needed after a durable takeover).
 */
interface RunRecord {
  /** What `processInputStep` saw of the step under way; unset until it ran. */
  step?: StepPieces;
  /** The key of the request in flight. */
  key?: string;
  /** Whether this cache answered the request in flight (`{ response }`): a rejected replay withdraws its entry. */
  served?: boolean;
  /** The answer whose step waits to be accepted. */
  waiting?: Waiting;
  /** Whether the run's end (`abortSignal`) settles its waiting answer. */
  listening?: boolean;
}

/** Whether `value` is a promise-like (a `then` getter that throws is the caller's to catch). */
const isThenable = <T>(value: unknown): value is PromiseLike<T> => typeof (value as { then?: unknown } | null)?.then === 'function';

function positive(value: number | undefined, fallback: number, option: string, max = Number.POSITIVE_INFINITY): number {
  const given = value === undefined ? fallback : value;
  if (typeof given !== 'number' || Number.isNaN(given) || given <= 0 || given > max) {
    throw new InvalidProcessorOptionError(PROCESSOR_ID, option, given, max === Number.POSITIVE_INFINITY ? 'a number of milliseconds above 0' : `a number of milliseconds above 0, at most ${max}`);
  }
  return given;
}

/** Whether the waiting answer's step was neither rejected (its `tripwire`) nor blanked (a rejected run). */
function stillAccepted(waiting: Waiting): boolean {
  try {
    return waiting.step.tripwire === undefined && waiting.step.text === waiting.text;
  } catch {
    return false; // a step a hook made unreadable: not known to be accepted
  }
}

/**
 * Caches model responses per request (register it as an **input** processor: `processInputStep`,
 * `processLLMRequest` and `processLLMResponse` run for input processors). Its key covers the
 * request as it will be sent: the prompt as the processors before it left it and the call options
 * as every processor and `prepareStep` left them. Put it **after every processor that hooks
 * `processLLMRequest`**: one after it could still rewrite the prompt (per user, say) after the
 * answer was looked up, so a hit with such a processor after it ends the run with a
 * `ProcessorError` naming both. An answer is served only once its step was accepted: one a
 * processor rejects after the model finished it is never served, to this run's retry or to any
 * other run.
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
  /** It answers requests: placed before a processor that hooks `processLLMRequest`, every request is refused before it looks anything up or stores anything. */
  readonly answersRequests = true;
  /** Where cached responses are kept. */
  readonly store: ResponseCacheStore;
  readonly #ttlMs: number;
  readonly #storeTimeoutMs: number;
  readonly #key: (input: ResponseCacheKeyInput) => string;
  readonly #requestContextKeys: readonly string[];
  readonly #onError: ((error: ProcessorError) => void) | undefined;
  /** Per run (its `state` of this processor): the request in flight and the answer waiting. */
  readonly #runs = new WeakMap<ProcessorState, RunRecord>();

  constructor(options: ResponseCacheOptions = {}) {
    checkOptionKeys(RESPONSE_CACHE_OPTION_KEYS, options);
    this.store = methodsOption(PROCESSOR_ID, 'store', options.store, ['get', 'set']) ?? new InMemoryResponseCacheStore();
    this.#ttlMs = positive(options.ttlMs, 300_000, 'ttlMs');
    this.#storeTimeoutMs = positive(options.storeTimeoutMs, 1_000, 'storeTimeoutMs', MAX_TIMER_MS);
    this.#key = functionOption(PROCESSOR_ID, 'key', options.key) ?? responseCacheKey;
    const names: unknown = options.requestContextKeys === undefined ? [] : options.requestContextKeys;
    if (!Array.isArray(names) || names.some((name) => typeof name !== 'string')) {
      throw new InvalidProcessorOptionError(PROCESSOR_ID, 'requestContextKeys', names, 'an array of request-context key names');
    }
    this.#requestContextKeys = [...names];
    this.#onError = functionOption(PROCESSOR_ID, 'onError', options.onError);
  }

  /**
   * The `processInputStep` hook: a new attempt settles the one before it (accepted or rejected);
   * keeps what the step offers the model, keyed only when a request comes without `callOptions`
   * (changes nothing).
   */
  processInputStep(args: ProcessInputStepArgs): undefined {
    const run = this.#run(args.state);
    // a new attempt: the one before it was accepted (the run went on) or rejected (a retry)
    this.#settle(run, 'processInputStep', true);
    const { tools, activeTools, toolChoice, providerOptions, structuredOutput } = args;
    run.step = { tools, activeTools, toolChoice, providerOptions, structuredOutput };
    return undefined;
  }

  /**
   * The `processLLMRequest` hook (see `Processor.processLLMRequest` for when it runs and what it may
   * return): keys the request as sent (`callOptions`), looks it up, answers a hit.
   */
  processLLMRequest({ prompt, model, modelSettings, callOptions, state, requestContext }: ProcessLLMRequestArgs): ProcessLLMRequestResult | Observable<ProcessLLMRequestResult> {
    const run = this.#run(state);
    this.#settle(run, 'processLLMRequest', true);
    run.key = undefined;
    run.served = undefined;
    const input: ResponseCacheKeyInput = { prompt, model, modelSettings };
    if (requestContext.resourceId !== undefined) input.resourceId = requestContext.resourceId;
    if (requestContext.threadId !== undefined) input.threadId = requestContext.threadId;
    if (this.#requestContextKeys.length > 0) {
      const named: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      for (const name of this.#requestContextKeys) if (requestContext.has(name)) named[name] = requestContext.get(name);
      input.requestContext = named;
    }
    if (callOptions !== undefined) {
      input.callOptions = callOptions;
      return this.#lookUp(input, run);
    }
    // handed over without what is sent besides the prompt: what processInputStep saw of the step
    const step = run.step;
    if (step === undefined) return this.#lookUp(input, run);
    let digest: string | Promise<string>;
    try {
      digest = stepDigest(step);
    } catch (error) {
      return this.#unkeyableStep(error);
    }
    if (!isThenable<string>(digest)) return this.#lookUp({ ...input, step: digest }, run);
    // settled at once (a rejection is never left unhandled), read when subscribed
    const settled = Promise.resolve(digest).then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    return defer(() => settled).pipe(
      concatMap((outcome) => {
        if ('error' in outcome) return of(this.#unkeyableStep(outcome.error));
        const found = this.#lookUp({ ...input, step: outcome.value }, run);
        return isObservable(found) ? found : of(found);
      }),
    );
  }

  /** A step that cannot be part of a key: not cached (reported). */
  #unkeyableStep(error: unknown): undefined {
    this.#report('processLLMRequest', 'the step cannot be part of a cache key, so it is not cached', error);
    return undefined;
  }

  /** Keys `input` and reads the store: `{ response }` on a hit, nothing on a miss (a failure reported). */
  #lookUp(input: ResponseCacheKeyInput, run: RunRecord): ProcessLLMRequestResult | Observable<ProcessLLMRequestResult> {
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
    run.key = key;
    let hit: unknown;
    let later: boolean;
    try {
      hit = this.store.get(key);
      later = isThenable(hit);
    } catch (error) {
      this.#report('processLLMRequest', 'the store\'s get threw, or answered a value that cannot be read; answering from the model', error);
      return undefined;
    }
    if (!later) return this.#served(hit, key, run);
    // read when subscribed: a `then` that throws now is a failed get, not a failed hook
    return defer(() => hit as PromiseLike<unknown>).pipe(
      timeout(this.#storeTimeoutMs),
      map((value) => this.#served(value, key, run)),
      catchError((error: unknown) => {
        this.#report('processLLMRequest', `the store's get failed or did not answer within ${this.#storeTimeoutMs} ms; answering from the model`, error);
        return of(undefined);
      }),
    );
  }

  /**
   * The `processLLMResponse` hook (see `Processor.processLLMResponse` for when it runs and what it
   * may return): writes a step the model finished, not yet servable; it is written again as
   * accepted once the run went on past it or ended with its `finish` (`#settle`).
   */
  processLLMResponse({ chunks, warnings, fromCache, state, steps, abortSignal }: ProcessLLMResponseArgs): undefined | Observable<undefined> {
    const run = this.#run(state);
    const { key, served } = run;
    run.key = undefined;
    run.served = undefined;
    if (typeof key !== 'string') return undefined;
    const step = steps.at(-1);
    if (fromCache) {
      // this cache's answer, replayed: a processor after it may still reject it (a stricter guard)
      if (served === true && step !== undefined) this.#wait(run, { key, entry: undefined, step, text: step.text }, abortSignal);
      return undefined;
    }
    // a cut-off, filtered or failed answer, or one a processor rejected, is not the model's answer to keep
    if (step === undefined || step.tripwire !== undefined || !WHOLE_ANSWER.has(step.finishReason)) return undefined;
    // a run cut (or over) already: its step can no longer be accepted
    if (abortSignal?.aborted === true) return undefined;
    const entry = entryOf(key, chunks, warnings);
    if (entry === undefined) {
      this.#report('processLLMResponse', 'the response cannot be copied into the store');
      return undefined;
    }
    const waiting: Waiting = { key, entry, step, text: step.text };
    return this.#write(key, entry, 'processLLMResponse', 'the response is not cached', () => this.#wait(run, waiting, abortSignal));
  }

  /** This cache's record of the run `state` belongs to (a throwaway one for a hook called without a `state`). */
  #run(state: ProcessorState | undefined): RunRecord {
    if (typeof state !== 'object' || state === null) return {};
    let run = this.#runs.get(state);
    if (run === undefined) {
      run = {};
      this.#runs.set(state, run);
    }
    return run;
  }

  /**
   * Keeps `waiting` until its step is known accepted or rejected: the next attempt of the run, or
   * the run's end — settled at once when the run is over already (it ended while the entry was
   * written).
   */
  #wait(run: RunRecord, waiting: Waiting, signal: AbortSignal | undefined): void {
    run.waiting = waiting;
    if (signal === undefined) return;
    if (signal.aborted) {
      this.#settle(run, 'processLLMResponse', endedWithFinish(signal));
      return;
    }
    if (run.listening === true) return;
    run.listening = true;
    signal.addEventListener('abort', () => this.#settle(run, 'processLLMResponse', endedWithFinish(signal)), { once: true });
  }

  /**
   * Settles the run's waiting answer, if any. `wentWell`: whether the run went on past its step (a
   * new attempt) or ended with its `finish`. A step rejected or blanked: its entry is overwritten
   * by an empty one. Else, after a good end, an answer written is written again as accepted (one
   * served from the store is left as it is); after any other end (an error, the caller's abort, a
   * consumer that left: nothing known of the step) an answer written stays unservable — nobody
   * held it to its end — and one served from the store stays servable: it is shared, and one
   * reader's end is no verdict on it. Not awaited: the run does not wait for the store (a failure
   * is reported to `onError`).
   */
  #settle(run: RunRecord, hook: ProcessorHookName, wentWell: boolean): void {
    const waiting = run.waiting;
    if (waiting === undefined) return;
    run.waiting = undefined;
    const { key, entry } = waiting;
    const notRejected = stillAccepted(waiting);
    if (notRejected && wentWell) {
      if (entry !== undefined) this.#write(key, acceptedEntry(entry), hook, 'the accepted response is not cached')?.subscribe();
      return;
    }
    // not rejected, but the run's end says nothing of it: an answer written was never marked accepted,
    // and an answer served — accepted by the run that wrote it, shared by every identical request —
    // stays servable (one reader leaving or failing must not take it from the others; its next
    // replay passes the output processors again). Both are left as they are.
    if (notRejected) return;
    this.#write(key, withdrawnEntry(key), hook, 'the rejected response is not withdrawn from the store')?.subscribe();
  }

  /** `store.set(key, value)` within `storeTimeoutMs`; `then` after it succeeded. A failure is reported: `failure` says what it means. */
  #write(key: string, value: ResponseCacheEntry, hook: ProcessorHookName, failure: string, then?: () => void): undefined | Observable<undefined> {
    let written: unknown;
    let later: boolean;
    try {
      written = this.store.set(key, value, this.#ttlMs);
      later = isThenable(written);
    } catch (error) {
      this.#report(hook, `the store's set threw, or answered a value that cannot be read; ${failure}`, error);
      return undefined;
    }
    if (!later) {
      then?.();
      return undefined;
    }
    return defer(() => written as PromiseLike<unknown>).pipe(
      timeout(this.#storeTimeoutMs),
      map(() => {
        then?.();
        return undefined;
      }),
      catchError((error: unknown) => {
        this.#report(hook, `the store's set failed or did not answer within ${this.#storeTimeoutMs} ms; ${failure}`, error);
        return of(undefined);
      }),
    );
  }

  /** `{ response }` for an entry that can be served under `key`; a miss (reported) for anything else. */
  #served(value: unknown, key: string, run: RunRecord): CacheHit | undefined {
    if (value === undefined || value === null) return undefined;
    const read = readEntry(value, key);
    if ('response' in read) {
      run.served = true;
      return read;
    }
    // an answer whose step was not accepted (yet, or ever): a miss, nothing wrong with the store
    if ('unaccepted' in read) return undefined;
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
