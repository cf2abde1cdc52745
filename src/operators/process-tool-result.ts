import { concatMap, defer, type OperatorFunction } from 'rxjs';
import type { MessageList } from '../message-list/message-list.js';
import type { ToolInvocationPart } from '../message-list/types.js';
import type { ProcessToolResultArgs, Processor, ProcessorLike } from '../contract/processor-types.js';
import { asProcessors } from '../contract/processor-types.js';
import { bindingsWith, contextArgs } from './internal/hook-args.js';
import { invokeHook } from './internal/invoke-hook.js';
import { checkedOnFailure, usageWatch } from './internal/usage-watch.js';
import { allChecks, messagesWatch, stepTextsWatch } from './internal/messages-watch.js';
import { reduceMaybe, thenMaybe, type MaybeAsync } from '../contract/maybe-async.js';
import { applyMessageResult } from './internal/reconcile-messages.js';
import { checkedHookResult } from '../contract/processor-checks.js';
import { toObservable } from '../contract/to-observable.js';
import { createRunContext, type RunContext } from './run-context.js';

/** A successful tool result on its way into the message list (those fields of `processToolResult`'s arguments). */
export interface ToolResultEvent extends Pick<ProcessToolResultArgs, 'stepNumber' | 'toolName' | 'toolCallId' | 'args' | 'result' | 'providerExecuted'> {}

/** The committed result of `toolCallId` in the list, if a processor (or anyone) committed one. */
export function findCommittedToolResult(messageList: MessageList, toolCallId: string): { found: boolean; result?: unknown } {
  const messages = messageList.get.all.db();
  for (let index = messages.length - 1; index >= 0; index--) {
    const parts = (messages[index] as (typeof messages)[number]).content.parts;
    for (const part of parts) {
      if (part.type !== 'tool-invocation') continue;
      const invocation = (part as ToolInvocationPart).toolInvocation;
      if (invocation.toolCallId === toolCallId) {
        return invocation.state === 'result' ? { found: true, result: invocation.result } : { found: false };
      }
    }
  }
  return { found: false };
}

/**
 * Runs every processor's `processToolResult` for one result, then commits the (processed) result:
 * the operator's work on one value. Synchronous while the hooks are; a promise once one returns a
 * promise; an Observable hook result kept an Observable (its scheduler's time is kept).
 */
function runProcessToolResultHooks(processors: readonly Processor[], context: RunContext, event: ToolResultEvent): MaybeAsync<ToolResultEvent> {
  const bindings = bindingsWith(processors, context, 'processToolResult');
  const keptUsage = bindings.length === 0 ? undefined : allChecks(usageWatch(context.steps), messagesWatch(context.messageList), stepTextsWatch(context.steps));
  const processed = reduceMaybe(bindings, event, (current, binding) => {
    const list = context.messageList;
    const messages = list.get.all.db();
    const args = {
      ...contextArgs(context, binding, 'processToolResult'),
      ...current,
      messages,
      messageList: list,
      systemMessages: list.getAllSystemMessages(),
      steps: [...context.steps], // a copy of the list: a hook cannot drop or add the run's steps
    };
    return thenMaybe(checkedOnFailure(keptUsage, binding.processor.id, 'processToolResult', () => invokeHook<unknown>(binding, 'processToolResult', args, context.tracingContext)), (result) => {
      keptUsage?.(binding.processor.id, 'processToolResult');
      const scope = { processorId: binding.processor.id, hook: 'processToolResult' as const, messageList: list, before: messages, defaultSource: 'response' as const };
      checkedHookResult(scope.processorId, scope.hook, result, (value) => applyMessageResult(value, scope));
      const committed = bindings.length > 0 ? findCommittedToolResult(list, current.toolCallId) : { found: false };
      return committed.found ? { ...current, result: committed.result } : current;
    });
  });
  return thenMaybe(processed, (final) => {
    if (!findCommittedToolResult(context.messageList, final.toolCallId).found) {
      context.messageList.updateToolInvocation({
        type: 'tool-invocation',
        toolInvocation: {
          state: 'result',
          toolCallId: final.toolCallId,
          toolName: final.toolName,
          args: final.args,
          result: final.result,
        },
        ...(final.providerExecuted === undefined ? {} : { providerExecuted: final.providerExecuted }),
      });
    }
    return final;
  });
}

/**
 * Runs the processors' `processToolResult` hooks on each successful tool result, before it is
 * committed to the `MessageList`. A processor replaces the result with
 * `messageList.updateToolInvocation(...)`; the emitted event (and so the stream's `tool-result`
 * chunk and the next prompt) carries the processed value. Later processors see earlier ones' result.
 *
 * ```
 * source:  --r--|
 * result:  --r'-|     (r' = result after processors, committed to the list)
 * abort:   --#
 * ```
 *
 * @example
 * ```ts
 * import { processToolResult } from 'rxagent/operators';
 * toolResults$.pipe(processToolResult([new RedactToolResult()], ctx)).subscribe((event) => console.log(event.result));
 * ```
 */
export function processToolResult(list: readonly ProcessorLike[], ctx?: RunContext): OperatorFunction<ToolResultEvent, ToolResultEvent> {
  const processors = asProcessors(list);
  // with the run's context no per-subscription set-up is needed: the stage itself (one concatMap;
  // its project runs when the value's turn comes, so no inner `defer` either)
  if (ctx !== undefined) return processToolResultStage(processors, ctx);
  return (source) => defer(() => source.pipe(processToolResultStage(processors, createRunContext())));
}

/** The hooks of `processors` on each tool result, in order, with `context`. */
function processToolResultStage(processors: readonly Processor[], context: RunContext): OperatorFunction<ToolResultEvent, ToolResultEvent> {
  return concatMap((event) => toObservable(runProcessToolResultHooks(processors, context, event)));
}
