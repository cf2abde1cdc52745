import { concatMap, defer, type OperatorFunction } from 'rxjs';
import type { ProcessOutputStepArgs, Processor, ProcessorLike } from '../contract/processor-types.js';
import { asProcessors } from '../contract/processor-types.js';
import { bindingsWith, contextArgs } from './internal/hook-args.js';
import { invokeHook } from './internal/invoke-hook.js';
import { checkedOnFailure, usageWatch } from './internal/usage-watch.js';
import { allChecks, messagesWatch, stepTextsWatch } from './internal/messages-watch.js';
import { reduceMaybe, thenMaybe, toMaybePromise, type MaybeAsync, type MaybePromise } from '../contract/maybe-async.js';
import { applyMessageResult } from './internal/reconcile-messages.js';
import { checkedHookResult } from '../contract/processor-checks.js';
import { toObservable } from '../contract/to-observable.js';
import { createRunContext, type RunContext } from './run-context.js';

/** What a finished model step produced, before its tools run (those fields of `processOutputStep`'s arguments). */
export interface StepOutput extends Pick<ProcessOutputStepArgs, 'stepNumber' | 'finishReason' | 'providerMetadata' | 'toolCalls' | 'text' | 'usage'> {}

/**
 * Runs every processor's `processOutputStep` for one step.
 * Synchronous while the hooks are; a promise once one returns a promise, or an Observable that
 * does not settle at once (its first value is awaited: the operator form keeps it on its scheduler).
 */
export function runProcessOutputStep(processors: readonly Processor[], context: RunContext, output: StepOutput): MaybePromise<StepOutput> {
  return toMaybePromise(runProcessOutputStepHooks(processors, context, output));
}

/** `runProcessOutputStep`, an Observable hook result kept an Observable (the operator's path: its scheduler's time is kept). */
function runProcessOutputStepHooks(processors: readonly Processor[], context: RunContext, output: StepOutput): MaybeAsync<StepOutput> {
  const bindings = bindingsWith(processors, context, 'processOutputStep');
  const keptUsage = bindings.length === 0 ? undefined : allChecks(usageWatch(context.steps, { usage: output.usage, path: 'usage' }), messagesWatch(context.messageList), stepTextsWatch(context.steps));
  return reduceMaybe(bindings, output, (current, binding) => {
    const list = context.messageList;
    const messages = list.get.all.db();
    const args = {
      ...contextArgs(context, binding, 'processOutputStep'),
      ...current,
      messages,
      messageList: list,
      systemMessages: list.getSystemMessages(),
      steps: [...context.steps], // a copy of the list: a hook cannot drop or add the run's steps
    };
    return thenMaybe(checkedOnFailure(keptUsage, binding.processor.id, 'processOutputStep', () => invokeHook<unknown>(binding, 'processOutputStep', args, context.tracingContext)), (result) => {
      keptUsage?.(binding.processor.id, 'processOutputStep');
      const scope = { processorId: binding.processor.id, hook: 'processOutputStep' as const, messageList: list, before: messages, defaultSource: 'response' as const };
      checkedHookResult(scope.processorId, scope.hook, result, (value) => applyMessageResult(value, scope));
      return current;
    });
  });
}

/**
 * Runs the processors' `processOutputStep` hooks after each model step, before its tools run — the
 * place for guardrails that ask for a retry (`abort(reason, { retry: true })`, honoured by
 * `retryOnTripwire` when a budget is set).
 *
 * ```
 * source:  --o--|
 * result:  --o--|
 * abort:   --#       (# = TripWire, retry: true → retryOnTripwire resubscribes the step)
 * ```
 *
 * @example
 * ```ts
 * import { processOutputStep } from 'rxagent/operators';
 * stepOutputs$.pipe(processOutputStep([new QualityGuardrail()], ctx)).subscribe();
 * ```
 */
export function processOutputStep(list: readonly ProcessorLike[], ctx?: RunContext): OperatorFunction<StepOutput, StepOutput> {
  const processors = asProcessors(list);
  // with the run's context no per-subscription set-up is needed: the stage itself (one concatMap;
  // its project runs when the value's turn comes, so no inner `defer` either)
  if (ctx !== undefined) return processOutputStepStage(processors, ctx);
  return (source) => defer(() => source.pipe(processOutputStepStage(processors, createRunContext())));
}

/** The hooks of `processors` on each value, in order, with `context`. */
function processOutputStepStage(processors: readonly Processor[], context: RunContext): OperatorFunction<StepOutput, StepOutput> {
  return concatMap((output) => toObservable(runProcessOutputStepHooks(processors, context, output)));
}
