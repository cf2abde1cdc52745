import { concatMap, defer, type OperatorFunction } from 'rxjs';
import type { MastraDBMessage } from '../message-list/types.js';
import type { OutputResult, Processor, ProcessorLike } from '../contract/processor-types.js';
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

/** The text of the assistant response messages (text parts, in order). */
export function responseText(messages: readonly MastraDBMessage[]): string {
  let text = '';
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const part of message.content.parts) if (part.type === 'text') text += part.text;
  }
  return text;
}

/**
 * Runs every processor's `processOutputResult` once; the result's `text` follows their edits.
 * Synchronous while the hooks are; a promise once one returns a promise, or an Observable that
 * does not settle at once (its first value is awaited: the operator form keeps it on its scheduler).
 */
export function runProcessOutputResult(processors: readonly Processor[], context: RunContext, output: OutputResult): MaybePromise<OutputResult> {
  return toMaybePromise(runProcessOutputResultHooks(processors, context, output));
}

/** `runProcessOutputResult`, an Observable hook result kept an Observable (the operator's path: its scheduler's time is kept). */
function runProcessOutputResultHooks(processors: readonly Processor[], context: RunContext, output: OutputResult): MaybeAsync<OutputResult> {
  const bindings = bindingsWith(processors, context, 'processOutputResult');
  if (bindings.length === 0) return output;
  const textBefore = responseText(context.messageList.get.response.db());
  const keptUsage = allChecks(usageWatch(context.steps, { usage: output.usage, path: 'result.usage' }), messagesWatch(context.messageList), stepTextsWatch(context.steps));
  const processed = reduceMaybe(bindings, output, (current, binding) => {
    const list = context.messageList;
    const messages = list.get.response.db();
    const args = {
      ...contextArgs(context, binding, 'processOutputResult'),
      messages,
      messageList: list,
      result: current,
    };
    return thenMaybe(checkedOnFailure(keptUsage, binding.processor.id, 'processOutputResult', () => invokeHook<unknown>(binding, 'processOutputResult', args, context.tracingContext)), (result) => {
      keptUsage?.(binding.processor.id, 'processOutputResult');
      const scope = { processorId: binding.processor.id, hook: 'processOutputResult' as const, messageList: list, before: messages, defaultSource: 'response' as const };
      checkedHookResult(scope.processorId, scope.hook, result, (value) => applyMessageResult(value, scope));
      return current;
    });
  });
  return thenMaybe(processed, (final) => {
    const textAfter = responseText(context.messageList.get.response.db());
    return textAfter === textBefore ? final : { ...final, text: textAfter };
  });
}

/**
 * Runs the processors' `processOutputResult` hooks once, when the run completed. Edits to the
 * response messages (in place, through the `messageList`, or by returning messages) change the
 * result's `text` and what memory stores; an `abort()` blocks the reply (the loop then reports
 * `text: ''` and stores nothing of it).
 *
 * ```
 * source:  --R--|
 * result:  --R'-|
 * abort:   --#
 * ```
 *
 * @example
 * ```ts
 * import { processOutputResult } from 'rxagent/operators';
 * results$.pipe(processOutputResult([auditLogger], ctx)).subscribe((result) => console.log(result.text));
 * ```
 */
export function processOutputResult(list: readonly ProcessorLike[], ctx?: RunContext): OperatorFunction<OutputResult, OutputResult> {
  const processors = asProcessors(list);
  return (source) =>
    defer(() => {
      const context = ctx ?? createRunContext();
      return source.pipe(concatMap((output) => defer(() => toObservable(runProcessOutputResultHooks(processors, context, output)))));
    });
}
