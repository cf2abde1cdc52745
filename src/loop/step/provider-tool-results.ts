/**
 * `processToolResult` on the results of provider-executed tools (web search, web fetch, hosted
 * MCP), before they reach the step: the chunk, the step's message and memory carry the processed
 * result.
 */
import { catchError, concatMap, defer, finalize, identity, map, of, throwError, type MonoTypeOperatorFunction, type Observable } from 'rxjs';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { hasHook } from '../../contract/has-hook.js';
import type { ModelEvent } from '../../model/model-events.js';
import { runToolCallId, type ToolCallIds } from '../../model/model-part-to-chunk.js';
import { processToolResult } from '../../operators/process-tool-result.js';
import type { AttemptState } from '../data/attempt-state.js';
import type { StepEnvironment } from './step-environment.js';

type ToolResultPart = Extract<LanguageModelV4StreamPart, { type: 'tool-result' }>;

/**
 * Each provider-executed `tool-result` of the call through `processToolResult` (in order: later
 * events wait for its hooks); every other event as it is. The identity when no output processor
 * has the hook (the call's live read then stays behind the Observable).
 *
 * ```
 * call:     --a--r--b--|        (r = a provider tool-result)
 * result:   --a-----r'-b--|     (r' = its result after processToolResult; the hook took 3 frames)
 * call:     --r--#              (the call fails while r's hook runs)
 * result:   -----r'#            (the error after r')
 * ```
 */
export function providerToolResults(env: StepEnvironment, attempt: AttemptState, toolCallIds: ToolCallIds): MonoTypeOperatorFunction<ModelEvent> {
  if (!hasHook(env.outputProcessors, 'processToolResult')) return identity;
  // the call's error waits for the hooks of the results before it (a hook that throws fails closed first)
  return (events$) =>
    events$.pipe(
      catchError((error: unknown) => of(new CallError(error))),
      concatMap((event) =>
        event instanceof CallError ? throwError(() => event.error) : event.type === 'tool-result' ? processed(env, attempt, toolCallIds, event) : of(event),
      ),
    );
}

/** The call's error, carried in order behind the events before it. */
class CallError {
  constructor(readonly error: unknown) {}
}

/** One provider result after the hooks, as the part it came as. */
function processed(env: StepEnvironment, attempt: AttemptState, toolCallIds: ToolCallIds, part: ToolResultPart): Observable<ModelEvent> {
  return defer(() => {
    const toolCallId = runToolCallId(toolCallIds, part.toolCallId);
    // the step's message is built when the stream ends: while the hooks run, the call stands in
    // the list on its own (so `messageList.updateToolInvocation` can replace the result), then leaves
    const standIn = env.generateId();
    const args: unknown = undefined; // a provider result carries no input (the V4 part has none)
    env.ctx.messageList.add(
      {
        id: standIn,
        role: 'assistant',
        createdAt: env.now(),
        content: {
          format: 2,
          parts: [{ type: 'tool-invocation', toolInvocation: { state: 'call', toolCallId, toolName: part.toolName, args }, providerExecuted: true }],
        },
      },
      'response',
    );
    return of({ stepNumber: attempt.stepNumber, toolName: part.toolName, toolCallId, args, result: part.result, providerExecuted: true }).pipe(
      processToolResult(env.outputProcessors, env.ctx),
      map((event): ModelEvent => (event.result === part.result ? part : ({ ...part, result: event.result } as ToolResultPart))),
      finalize(() => env.ctx.messageList.removeByIds([standIn])),
    );
  });
}
