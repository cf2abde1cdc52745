import { concatMap, defer, type OperatorFunction } from 'rxjs';
import type { LanguageModelV4, LanguageModelV4Prompt } from '@ai-sdk/provider';
import { ProcessorError } from '../contract/errors/processor-error.js';
import type { CachedLLMStepResponse, CallSettings, ProcessLLMRequestArgs, Processor, ProcessorLike } from '../contract/processor-types.js';
import { asProcessors } from '../contract/processor-types.js';
import { bindingsWith, contextArgs } from './internal/hook-args.js';
import { invokeHook } from './internal/invoke-hook.js';
import type { ProcessorBinding } from './internal/processor-binding.js';
import { checkedOnFailure, usageWatch } from './internal/usage-watch.js';
import { allChecks, messagesWatch, stepTextsWatch } from './internal/messages-watch.js';
import { reduceMaybe, thenMaybe, type MaybeAsync } from '../contract/maybe-async.js';
import { assertCachedResponse, assertKnownKeys, assertPrompt, badField } from './internal/result-shapes.js';
import { signalToPromptMessage } from './internal/signals.js';
import { toObservable } from '../contract/to-observable.js';
import { checkedHookResult } from '../contract/processor-checks.js';
import { ownModelSettings } from './internal/own-settings.js';
import { createRunContext, type RunContext } from './run-context.js';

/** One outgoing model request: the prompt (rewritable for this call only) and a cached response, if any. */
export interface LLMRequest {
  /** The prompt sent to the model. */
  prompt: LanguageModelV4Prompt;
  /** The model (as the loop speaks to it: `LanguageModelV4`). */
  model: LanguageModelV4;
  /** The step's number (0 for the first step of the run). */
  stepNumber: number;
  /** The step's model settings (part of a cache key, for example). */
  modelSettings?: CallSettings;
  /**
   * What the call is sent with besides the prompt and its abort signal (see
   * `ProcessLLMRequestArgs.callOptions`; made by `sentCallOptions`). Each hook gets it.
   */
  callOptions?: ProcessLLMRequestArgs['callOptions'];
  /** Set by the processor that returned `{ response }`: replaces the model call. */
  response?: CachedLLMStepResponse;
}

// what `callOptions` is made with: its one home is the contract (the loop and processorsMiddleware both import it there)
export { sentCallOptions } from '../contract/sent-call-options.js';

/**
 * `request` with the signals hooks sent (`sendSignal`) since the last request, after the history:
 * they reach this request, and only this one. What `processLLMRequest` does before its hooks run
 * (a loop whose processors have no `processLLMRequest` hook calls it alone, without the operator).
 */
export function withPendingSignals(context: RunContext, request: LLMRequest): LLMRequest {
  const signals = context.pendingSignals;
  if (signals.length === 0) return request;
  context.pendingSignals = [];
  return { ...request, prompt: [...request.prompt, ...signals.map(signalToPromptMessage)] };
}

/**
 * Runs every processor's `processLLMRequest` on one request (the operator's work on one value),
 * threading the prompt; a `response` ends it (refused when a later processor hooks
 * `processLLMRequest`: see {@link applyRequestResult}). Synchronous while the hooks are; a promise
 * once one returns a promise; an Observable hook result kept an Observable (its scheduler's time is kept).
 */
function runProcessLLMRequestHooks(processors: readonly Processor[], context: RunContext, given: LLMRequest): MaybeAsync<LLMRequest> {
  const request = withPendingSignals(context, given);
  const bindings = bindingsWith(processors, context, 'processLLMRequest');
  if (bindings.length === 0) return request;
  refuseAnswererBeforeHooks(bindings);
  const keptUsage = allChecks(usageWatch(context.steps), messagesWatch(context.messageList), stepTextsWatch(context.steps));
  return reduceMaybe(bindings, { ...request }, (current, binding, index) => {
    const args: Omit<ProcessLLMRequestArgs, 'callOptions'> & Pick<LLMRequest, 'callOptions'> = {
      ...contextArgs(context, binding, 'processLLMRequest'),
      prompt: current.prompt,
      model: current.model,
      stepNumber: current.stepNumber,
      steps: [...context.steps], // a copy of the list: a hook cannot drop or add the run's steps
      messageList: context.messageList,
      // a copy: the step's settings may be the agent's configuration, shared by all its runs
      modelSettings: current.modelSettings === undefined ? {} : ownModelSettings(current.modelSettings),
    };
    if (current.callOptions !== undefined) args.callOptions = current.callOptions;
    return thenMaybe(checkedOnFailure(keptUsage, binding.processor.id, 'processLLMRequest', () => invokeHook<unknown>(binding, 'processLLMRequest', args, context.tracingContext)), (result) => {
      keptUsage?.(binding.processor.id, 'processLLMRequest');
      const later = bindings[index + 1];
      return checkedHookResult(binding.processor.id, 'processLLMRequest', result, (value) =>
        applyRequestResult(value, binding.processor.id, current, later === undefined ? undefined : { id: later.processor.id, index: later.index }),
      );
    });
  });
}

/** `processor.answersRequests`, read once; a value that cannot be read counts as marked (fail closed). */
function answersRequests(processor: Processor): boolean {
  try {
    return processor.answersRequests === true;
  } catch {
    return true;
  }
}

/**
 * A processor marked `answersRequests` (a cache) with a later one that hooks `processLLMRequest`:
 * refused before any hook runs, so the answerer neither looks up nor stores an answer for a request
 * the later hook may still change (another user's prompt).
 */
function refuseAnswererBeforeHooks(bindings: readonly ProcessorBinding[]): void {
  for (let position = 0; position < bindings.length - 1; position++) {
    const { processor } = bindings[position] as ProcessorBinding;
    if (!answersRequests(processor)) continue;
    const later = bindings[position + 1] as ProcessorBinding;
    throw new ProcessorError(
      processor.id,
      'processLLMRequest',
      `it answers requests (answersRequests), but processor "${later.processor.id}" (index ${later.index}) after it also hooks processLLMRequest and may change the request an answer would be looked up and stored for. Place "${processor.id}" after every processor that hooks processLLMRequest.`,
    );
  }
}

/**
 * Applies one `processLLMRequest` result to `current` (each field read once: what was checked is
 * what is used). A `response` while `later` (the next processor that hooks `processLLMRequest`) is
 * still to run is refused: that processor may change the request — rewrite the prompt per user —
 * after the answer was looked up for it, so the answer may be another request's (fail closed).
 */
function applyRequestResult(result: unknown, processorId: string, current: LLMRequest, later: { id: string; index: number } | undefined): LLMRequest {
  if (result === undefined || result === null) return current;
  if (typeof result !== 'object') {
    throw new ProcessorError(processorId, 'processLLMRequest', `returned ${typeof result}; expected { prompt?, response? } or nothing.`);
  }
  const scope = { processorId, hook: 'processLLMRequest' as const };
  if (Array.isArray(result)) throw badField(scope, 'the result', '{ prompt?, response? } or nothing', result);
  assertKnownKeys(result as Record<string, unknown>, ['prompt', 'response'], scope, '{ prompt?, response? } or nothing');
  const { prompt, response } = result as { prompt?: unknown; response?: unknown };
  if (prompt !== undefined) {
    assertPrompt(prompt, scope);
    current.prompt = prompt as LanguageModelV4Prompt;
  }
  if (response !== undefined) {
    assertCachedResponse(response, scope);
    if (later !== undefined) {
      throw new ProcessorError(
        processorId,
        'processLLMRequest',
        `it answered the request ({ response }), but processor "${later.id}" (index ${later.index}) after it also hooks processLLMRequest and may change the request the answer was found for, so the answer may be another request's (another user's). Place "${processorId}" after every processor that hooks processLLMRequest.`,
      );
    }
    if (current.response === undefined) current.response = response as CachedLLMStepResponse;
  }
  return current;
}

/**
 * Runs the processors' `processLLMRequest` hooks on each outgoing request, in order. A result with
 * a `prompt` property replaces the prompt (even an empty one) for this call only — it is never
 * written back to the `MessageList` or storage. A processor returning `{ response }` marks a cache
 * replay; it must be the last that hooks `processLLMRequest`: one after it could change the request
 * the answer was found for, so the request errors with a `ProcessorError` naming both (fail closed).
 * Each hook gets the request's `callOptions` (what is sent besides the prompt) when it has them.
 *
 * ```
 * source:  --r--|
 * result:  --r'-|     (r' = { prompt: rewritten, response?: cached })
 * abort:   --#
 * later:   --#        (a response, and a processor after it hooks processLLMRequest: ProcessorError)
 * ```
 *
 * @example
 * ```ts
 * import { processLLMRequest } from 'rxagent/operators';
 * requests$.pipe(processLLMRequest([new ToolCallFilter()], ctx)).subscribe((request) => send(request.prompt));
 * ```
 */
export function processLLMRequest(list: readonly ProcessorLike[], ctx?: RunContext): OperatorFunction<LLMRequest, LLMRequest> {
  const processors = asProcessors(list);
  return (source) =>
    defer(() => {
      const context = ctx ?? createRunContext();
      return source.pipe(concatMap((request) => defer(() => toObservable(runProcessLLMRequestHooks(processors, context, request)))));
    });
}
