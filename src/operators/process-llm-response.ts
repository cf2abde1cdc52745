import { concatMap, defer, type OperatorFunction } from 'rxjs';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { CachedLLMStepChunk } from '../contract/chunk-types.js';
import type { Processor, ProcessorLike } from '../contract/processor-types.js';
import { asProcessors } from '../contract/processor-types.js';
import { bindingsWith, contextArgs } from './internal/hook-args.js';
import { invokeHook } from './internal/invoke-hook.js';
import { checkedOnFailure, usageWatch } from './internal/usage-watch.js';
import { allChecks, stepTextsWatch } from './internal/messages-watch.js';
import { reduceMaybe, thenMaybe, toMaybePromise, type MaybeAsync, type MaybePromise } from '../contract/maybe-async.js';
import { toObservable } from '../contract/to-observable.js';
import { createRunContext, type RunContext } from './run-context.js';

/** A finished model response, as `processLLMResponse` sees it. */
export interface LLMResponse {
  /** The step's chunks, compact (`{ type, payload }`). */
  chunks: CachedLLMStepChunk[];
  /** The model (as the loop speaks to it: `LanguageModelV4`). */
  model: LanguageModelV4;
  /** The step's number (0 for the first step of the run). */
  stepNumber: number;
  /** True when the chunks were replayed from a `processLLMRequest` cache hit. */
  fromCache: boolean;
  /** Warnings the provider reported for the call. */
  warnings?: unknown[];
  /** The request as sent (e.g. its body). */
  request?: unknown;
  /** The provider's raw response. */
  rawResponse?: unknown;
}

/**
 * Runs every processor's `processLLMResponse` for one response.
 * Synchronous while the hooks are; a promise once one returns a promise, or an Observable that
 * does not settle at once (its first value is awaited: the operator form keeps it on its scheduler).
 */
export function runProcessLLMResponse(processors: readonly Processor[], context: RunContext, response: LLMResponse): MaybePromise<LLMResponse> {
  return toMaybePromise(runProcessLLMResponseHooks(processors, context, response));
}

/** `runProcessLLMResponse`, an Observable hook result kept an Observable (the operator's path: its scheduler's time is kept). */
function runProcessLLMResponseHooks(processors: readonly Processor[], context: RunContext, response: LLMResponse): MaybeAsync<LLMResponse> {
  const bindings = bindingsWith(processors, context, 'processLLMResponse');
  const keptUsage = bindings.length === 0 ? undefined : allChecks(usageWatch(context.steps), stepTextsWatch(context.steps));
  return reduceMaybe(bindings, response, (current, binding) => {
    const args = {
      ...contextArgs(context, binding, 'processLLMResponse'),
      ...current,
      steps: [...context.steps], // a copy of the list: a hook cannot drop or add the run's steps
    };
    return thenMaybe(checkedOnFailure(keptUsage, binding.processor.id, 'processLLMResponse', () => invokeHook<unknown>(binding, 'processLLMResponse', args, context.tracingContext)), () => {
      keptUsage?.(binding.processor.id, 'processLLMResponse');
      return current;
    });
  });
}

/**
 * Runs the processors' `processLLMResponse` hooks after each model response completed (or was
 * replayed from cache, `fromCache: true`). The `state` is the same object that processor's
 * `processLLMRequest` saw, so a cache key stashed there can be read here. The response passes on
 * unchanged; an `abort()` (with `retry: true` and a budget, in the loop) rejects it.
 *
 * ```
 * source:  --R--|
 * result:  --R--|
 * abort:   --#
 * ```
 *
 * @example
 * ```ts
 * import { processLLMResponse } from 'rxagent/operators';
 * responses$.pipe(processLLMResponse([responseCache], ctx)).subscribe();
 * ```
 */
export function processLLMResponse(list: readonly ProcessorLike[], ctx?: RunContext): OperatorFunction<LLMResponse, LLMResponse> {
  const processors = asProcessors(list);
  return (source) =>
    defer(() => {
      const context = ctx ?? createRunContext();
      return source.pipe(concatMap((response) => defer(() => toObservable(runProcessLLMResponseHooks(processors, context, response)))));
    });
}
