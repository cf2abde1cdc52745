import { defer, from, isObservable, lastValueFrom, toArray, type Observable } from 'rxjs';
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { OBSERVABLE_STREAM, type ObservableStreamFunction } from '../model/index.js';
import { foldParts, toReadableStream } from './internal/mock-internals.js';
import { finishPart } from './model-parts.js';

/**
 * One call of a mock model, given to `stream`/`parts`/`error` functions.
 *
 * @example
 * ```ts
 * mockModel({ parts: ({ callIndex }) => (callIndex === 0 ? firstParts : secondParts) });
 * ```
 */
export interface MockModelCall<TOptions = LanguageModelV4CallOptions> {
  /** The call options as the model received them (with the per-call `abortSignal`). */
  options: TOptions;
  /** 0 for the first call of this model, 1 for the second, … */
  callIndex: number;
}

/**
 * Options of {@link mockModel}: give `stream` (an Observable, e.g. a marble `cold(...)`, or a
 * function of the call) or `parts` (an array or a function of the call); neither gives a
 * plain `finish` part. `error` makes `doStream` throw.
 *
 * @example
 * ```ts
 * const options: MockModelOptions = { modelId: 'mock-1', parts: textParts('Hi') };
 * ```
 */
export interface MockModelOptions<TOptions = LanguageModelV4CallOptions> {
  /** Default `'mock'`. */
  provider?: string;
  /** Default `'mock-model'`. */
  modelId?: string;
  /** URL patterns the model accepts as file inputs, by media type. */
  supportedUrls?: Record<string, RegExp[]>;
  /** The stream of each call: an Observable (resubscribed per call) or a function of the call. */
  stream?:
    | Observable<LanguageModelV4StreamPart>
    | ((call: MockModelCall<TOptions>) => Observable<LanguageModelV4StreamPart> | readonly LanguageModelV4StreamPart[]);
  /** The parts of each call (used when `stream` is not given). */
  parts?: readonly LanguageModelV4StreamPart[] | ((call: MockModelCall<TOptions>) => readonly LanguageModelV4StreamPart[]);
  /**
   * Thrown by `doStream` (and the first thing the fast path emits). A function is called per
   * call: it returns the error to throw, or `undefined` for a normal call (e.g. fail once).
   */
  error?: unknown;
  /** Returned by `doStream` as the request/response metadata. */
  request?: {
    /** The request body. */
    body?: unknown;
  };
  /** Response metadata (id, model, timestamp). */
  response?: {
    /** HTTP headers. */
    headers?: Record<string, string>;
  };
}

/**
 * A `LanguageModelV4` test double that records its calls.
 *
 * @example
 * ```ts
 * const model = mockModel({ parts: textParts('Hi') });
 * await agent.generate('Hello');
 * expect(model.calls).toHaveLength(1);
 * ```
 */
export interface MockModel extends LanguageModelV4 {
  /** The call options of every call, in order. */
  readonly calls: LanguageModelV4CallOptions[];
  /** The abort signal of every call, in order (`undefined` when none was given). */
  readonly abortSignals: Array<AbortSignal | undefined>;
  /** The virtual-time fast path used by `streamModel`. */
  readonly [OBSERVABLE_STREAM]: ObservableStreamFunction;
}

/**
 * Creates a mock `LanguageModelV4` (provider `'mock'`) whose stream is given as parts or as an
 * Observable. `doStream` works (the parts become a `ReadableStream` that honours the abort
 * signal), and the `OBSERVABLE_STREAM` fast path is set so a marble `cold(...)` stream runs on
 * virtual time. `doGenerate` folds the same stream into a result.
 *
 * @example
 * ```ts
 * import { mockModel, textParts, finishPart } from 'rxagent/testing';
 * const model = mockModel({ parts: [...textParts('Hello world'), finishPart('stop')] });
 * const marbleModel = mockModel({ stream: cold('a-b-(c|)', { a, b, c }) });
 * ```
 */
export function mockModel(options: MockModelOptions = {}): MockModel {
  const calls: LanguageModelV4CallOptions[] = [];
  const abortSignals: Array<AbortSignal | undefined> = [];
  const streamOf = createMockStream(options, (callOptions) => {
    calls.push(callOptions);
    abortSignals.push(callOptions.abortSignal);
    return calls.length - 1;
  });
  return {
    specificationVersion: 'v4',
    provider: options.provider ?? 'mock',
    modelId: options.modelId ?? 'mock-model',
    supportedUrls: options.supportedUrls ?? {},
    calls,
    abortSignals,
    [OBSERVABLE_STREAM]: (callOptions) => defer(() => streamOf(callOptions)),
    async doStream(callOptions) {
      const parts$ = streamOf(callOptions);
      return { stream: toReadableStream(parts$, callOptions.abortSignal), request: options.request, response: options.response };
    },
    async doGenerate(callOptions) {
      const parts = await lastValueFrom(streamOf(callOptions).pipe(toArray()));
      return { ...foldParts(parts), request: options.request, response: options.response };
    },
  };
}

/**
 * The shared core of the mock models: records a call, throws the configured error, and returns
 * the call's parts as an Observable. Internal to `src/testing`.
 *
 * @example
 * ```ts
 * const streamOf = createMockStream({ parts: textParts('Hi') }, (options) => calls.push(options) - 1);
 * ```
 */
export function createMockStream<TOptions>(
  options: MockModelOptions<TOptions>,
  record: (callOptions: TOptions) => number,
): (callOptions: TOptions) => Observable<LanguageModelV4StreamPart> {
  return (callOptions) => {
    const call: MockModelCall<TOptions> = { options: callOptions, callIndex: record(callOptions) };
    const error: unknown =
      typeof options.error === 'function' ? (options.error as (call: MockModelCall<TOptions>) => unknown)(call) : options.error;
    if (error !== undefined) throw error;
    if (options.stream !== undefined) {
      const stream = isObservable(options.stream) ? options.stream : options.stream(call);
      return isObservable(stream) ? stream : from(stream);
    }
    if (options.parts !== undefined) return from(typeof options.parts === 'function' ? options.parts(call) : options.parts);
    return from([finishPart('stop')]);
  };
}
