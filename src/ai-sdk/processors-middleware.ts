/** rxagent processors as AI SDK language-model middleware (`wrapLanguageModel`). */
import type { LanguageModelV4CallOptions, LanguageModelV4Middleware, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { lastValueFrom, toArray } from 'rxjs';
import type { Processor, ProcessorLike, RequestContext, TracingContext } from '../contract/index.js';
import { asProcessors } from '../contract/index.js';
import { foldGenerateResult } from './internal/fold-generate-result.js';
import { endsCall, prepareCall, type MiddlewareCall, type MiddlewareCallConfig } from './internal/middleware-call.js';
import { openModelStream, processedStream } from './internal/middleware-stream.js';
import { observableToReadable } from './internal/streams.js';

/**
 * Options of {@link processorsMiddleware}.
 *
 * @example
 * ```ts
 * import type { ProcessorsMiddlewareOptions } from 'rxagent/ai-sdk';
 * const options: ProcessorsMiddlewareOptions = { inputProcessors: [promptGuard], outputProcessors: [redactor] };
 * ```
 */
export interface ProcessorsMiddlewareOptions {
  /** `processInput`, `processInputStep`, `processLLMRequest`, `processLLMResponse` (and `processAPIError`). */
  inputProcessors?: ProcessorLike[];
  /** `processOutputStream`, `processOutputStep` (and `processAPIError`). */
  outputProcessors?: ProcessorLike[];
  /** `processAPIError`. */
  errorProcessors?: ProcessorLike[];
  /** Bound for `processAPIError` retries (default 10 when a processor has the hook). Tripwire retries do not apply here. */
  maxProcessorRetries?: number;
  /** A fresh `RequestContext` per model call (default: an empty one). */
  requestContext?: () => RequestContext;
  /** Handed to every hook (e.g. `createRunTelemetry(…).tracingContext` for processor spans). */
  tracingContext?: TracingContext;
  /** Id source for run and message ids. */
  generateId?: () => string;
}

/** `opened`, the call ended when it fails (no stream of parts will end it). */
async function ending<T>(call: MiddlewareCall, opened: Promise<T>): Promise<T> {
  try {
    return await opened;
  } catch (error) {
    call.end();
    throw error;
  }
}

/**
 * Makes rxagent processors guard a plain AI SDK call: returns a `LanguageModelV4Middleware`
 * (`specificationVersion: 'v4'`) for `wrapLanguageModel`, so `streamText` / `generateText`
 * run the same processors an `Agent` would, per model call:
 *
 * - `transformParams`: the prompt becomes a `MessageList` (every message but the system ones is
 *   `input`: the caller posted all of it); `processInput` and `processInputStep` run on it (their
 *   model settings, tool choice, active tools and provider options apply), the list becomes the
 *   prompt again, then `processLLMRequest` may rewrite the prompt or return a cached response
 *   (which replaces the model call).
 * - `wrapStream`: the model's parts become rxagent chunks, pass `processOutputStream` and become
 *   V4 parts again (`raw` parts, unfiltered by nature, are withheld when output processors are set); at the end `processLLMResponse` and `processOutputStep` run. Provider errors
 *   (thrown, or an `error` part before any content) go to `processAPIError`, which may re-call
 *   the model.
 * - `wrapGenerate`: the same streaming pipeline (so output processors see the same chunks),
 *   folded into a generate result.
 * - A `TripWire` (any hook) ends the stream with an `error` part carrying it and a finish with
 *   reason `other` (`streamText` reports it through `onError` / `fullStream`); `generateText`
 *   rejects with it. `abort(…, { retry: true })` is a plain abort here. Other hook errors fail
 *   closed (`ProcessorError`).
 *
 * Not here (they need the rxagent loop): `processToolResult`, `processOutputResult`, tripwire
 * retries, memory, `writer.custom()` data chunks (dropped: the V4 stream has no place for them).
 *
 * @example
 * ```ts
 * import { streamText, wrapLanguageModel } from 'ai';
 * import { processorsMiddleware } from 'rxagent/ai-sdk';
 * const model = wrapLanguageModel({ model: openai('gpt-5-mini'), middleware: processorsMiddleware({ outputProcessors: [redactor] }) });
 * const result = streamText({ model, prompt: 'How do I reach support?' });
 * ```
 */
export function processorsMiddleware(options: ProcessorsMiddlewareOptions = {}): LanguageModelV4Middleware {
  const config: MiddlewareCallConfig = {
    inputProcessors: asProcessors(options.inputProcessors ?? []),
    outputProcessors: asProcessors(options.outputProcessors ?? []),
    errorProcessors: asProcessors(options.errorProcessors ?? []),
    maxProcessorRetries: options.maxProcessorRetries,
    requestContext: options.requestContext,
    tracingContext: options.tracingContext,
    generateId: options.generateId ?? (() => crypto.randomUUID()),
  };
  const calls = new WeakMap<LanguageModelV4CallOptions, MiddlewareCall>();
  const callFor = async (params: LanguageModelV4CallOptions, model: Parameters<typeof prepareCall>[2]): Promise<MiddlewareCall> =>
    calls.get(params) ?? prepareCall(config, params, model);

  return {
    specificationVersion: 'v4',
    async transformParams({ params, model }) {
      const call = await prepareCall(config, params, model);
      calls.set(call.params, call);
      return call.params;
    },
    async wrapStream({ doStream, params, model }) {
      const call = await callFor(params, model);
      const live = call.tripwire === undefined && call.cached === undefined;
      const opened = live ? await ending(call, openModelStream(config, call, model, params === call.params ? doStream : () => model.doStream(call.params))) : undefined;
      const stream = observableToReadable<LanguageModelV4StreamPart, LanguageModelV4StreamPart>(processedStream(config, call, model, opened).pipe(endsCall(call)), {
        encode: (part) => [part],
        onError: (error) => [{ type: 'error', error }],
      });
      return {
        stream,
        ...(opened?.request === undefined ? {} : { request: opened.request }),
        ...(opened?.response === undefined ? {} : { response: opened.response }),
      };
    },
    async wrapGenerate({ doStream, params, model }) {
      const call = await callFor(params, model);
      if (call.tripwire !== undefined) {
        call.end();
        throw call.tripwire;
      }
      const live = call.cached === undefined;
      const opened = live ? await ending(call, openModelStream(config, call, model, params === call.params ? doStream : () => model.doStream(call.params))) : undefined;
      const parts = await lastValueFrom(processedStream(config, call, model, opened).pipe(endsCall(call), toArray()));
      return foldGenerateResult(parts, {
        ...(opened?.request === undefined ? {} : { request: opened.request }),
        ...(opened?.response === undefined ? {} : { response: opened.response }),
      });
    },
  };
}
