import { concatMap, defer, type OperatorFunction } from 'rxjs';
import type { MessageList } from '../message-list/message-list.js';
import type { Processor, ProcessorLike } from '../contract/processor-types.js';
import { asProcessors } from '../contract/processor-types.js';
import { contextArgs, bindingsWith } from './internal/hook-args.js';
import { invokeHook } from './internal/invoke-hook.js';
import { reduceMaybe, thenMaybe, toMaybePromise, type MaybeAsync, type MaybePromise } from '../contract/maybe-async.js';
import { applyMessageResult } from './internal/reconcile-messages.js';
import { messagesWatch } from './internal/messages-watch.js';
import { checkedOnFailure } from './internal/usage-watch.js';
import { checkedHookResult } from '../contract/processor-checks.js';
import { toObservable } from '../contract/to-observable.js';
import { createRunContext, type RunContext } from './run-context.js';

/**
 * Runs every processor's `processInput` over `messageList`, in order (sync where the hooks are).
 * Synchronous while the hooks are; a promise once one returns a promise, or an Observable that
 * does not settle at once (its first value is awaited: the operator form keeps it on its scheduler).
 */
export function runProcessInput(
  processors: readonly Processor[],
  context: RunContext,
  messageList: MessageList,
): MaybePromise<MessageList> {
  return toMaybePromise(runProcessInputHooks(processors, context, messageList));
}

/** `runProcessInput`, an Observable hook result kept an Observable (the operator's path: its scheduler's time is kept). */
function runProcessInputHooks(
  processors: readonly Processor[],
  context: RunContext,
  messageList: MessageList,
): MaybeAsync<MessageList> {
  context.messageList = messageList;
  const bindings = bindingsWith(processors, context, 'processInput');
  if (bindings.length === 0) return messageList;
  // a hook may edit the list's messages in place: one it leaves unsound is its failure
  const keptMessages = messagesWatch(messageList);
  return reduceMaybe(bindings, messageList, (list, binding) => {
    const messages = list.get.input.db();
    const args = {
      ...contextArgs(context, binding, 'processInput'),
      messages,
      systemMessages: list.getSystemMessages(),
      messageList: list,
    };
    const result = checkedOnFailure(keptMessages, binding.processor.id, 'processInput', () => invokeHook<unknown>(binding, 'processInput', args, context.tracingContext));
    return thenMaybe(result, (settled: unknown): MessageList => {
      keptMessages?.(binding.processor.id, 'processInput');
      const scope = { processorId: binding.processor.id, hook: 'processInput' as const, messageList: list, before: messages, defaultSource: 'input' as const };
      checkedHookResult(scope.processorId, scope.hook, settled, (value) => applyMessageResult(value, scope));
      return list;
    });
  });
}

/**
 * Runs the processors' `processInput` hooks, once per `MessageList` that arrives, in array order.
 * Each sees the list as the previous one left it; a returned array or `{ messages, systemMessages }`
 * is reconciled into the list. An `abort()` becomes an error notification carrying the `TripWire`;
 * any other throw becomes a `ProcessorError` (fail closed).
 *
 * ```
 * source:  --L--|
 * result:  --L'-|        (L' = the same list, after every processInput)
 * abort:   --#           (# = TripWire with processorId)
 * ```
 *
 * @example
 * ```ts
 * import { of } from 'rxjs';
 * import { MessageList } from 'rxagent';
 * import { processInput } from 'rxagent/operators';
 * const list = new MessageList().add('Hello', 'input');
 * of(list).pipe(processInput([new UnicodeNormalizer()])).subscribe((processed) => console.log(processed.get.all.db()));
 * ```
 */
export function processInput(list: readonly ProcessorLike[], ctx?: RunContext): OperatorFunction<MessageList, MessageList> {
  const processors = asProcessors(list);
  // with the run's context no per-subscription set-up is needed: the stage itself (one concatMap;
  // its project runs when the value's turn comes, so no inner `defer` either)
  if (ctx !== undefined) return processInputStage(processors, ctx);
  return (source) => defer(() => source.pipe(processInputStage(processors, createRunContext())));
}

/** The hooks of `processors` on each value, in order, with `context`. */
function processInputStage(processors: readonly Processor[], context: RunContext): OperatorFunction<MessageList, MessageList> {
  return concatMap((messageList) => toObservable(runProcessInputHooks(processors, context, messageList)));
}
