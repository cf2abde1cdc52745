/**
 * The phases of an attempt after its model output: the end of the run's output (`finish` through
 * the chain), the response into the list with the post-model hooks, whether the loop goes on, and
 * `step-finish`. Each takes the step's environment, the run's state and the attempt.
 */
import { EMPTY, Observable, concat, defer, filter, from, ignoreElements, map, of, tap } from 'rxjs';
import type { DataPart } from '../../message-list/types.js';
import { processLLMResponse } from '../../operators/process-llm-response.js';
import { processOutputStep } from '../../operators/process-output-step.js';
import type { AgentChunk, ChunkType } from '../../contract/chunk-types.js';
import type { AgentToolSet } from '../../contract/tool-types.js';
import { makeChunk } from '../../contract/make-chunk.js';
import { terminalChunk } from '../../contract/terminal-chunk.js';
import { isPromiseLike } from '../../contract/maybe-async.js';
import { toObservable } from '../../contract/to-observable.js';
import { addUsage } from '../../model/usage.js';
import { hasHook } from '../../contract/has-hook.js';
import type { RunState } from '../data/run-state.js';
import { stopConditionMet } from './stop-condition.js';
import { clientToolCalls, fromCache, mayContinue, stepResultOf, type AttemptState, type PreparedRequest } from '../data/attempt-state.js';
import { admit } from './output-chain.js';
import { stepFinishChunk } from './step-chunks.js';
import type { StepEnvironment } from './step-environment.js';
import { validateStructuredOutput } from './structured-output.js';

/**
 * Records a chunk of the attempt that passed the chain after its message was built (the tool
 * phase, the end of the output): a late data part is stored as a message of its own.
 */
export function recordAfterMessage(env: StepEnvironment, attempt: AttemptState, chunk: ChunkType): void {
  const late: DataPart | undefined = attempt.accumulator.observe(chunk);
  if (late !== undefined) {
    env.ctx.messageList.add({ id: env.generateId(), role: 'assistant', createdAt: env.now(), content: { format: 2, parts: [late] } }, 'response');
  }
}

/**
 * The end of the run's output, as the output processors see it: in the last step, once the model
 * output (and the tools it ran) passed them, the `finish` chunk goes through the chain — before
 * the step's message is built when no tool runs — so a processor that holds text back until
 * `finish` releases it into the stored reply, `processLLMResponse`, `processOutputStep` and
 * `steps`. What the chain returns for it is emitted now; the `finish` it returns is kept
 * (`state.finish`) and goes out last, after `processOutputResult`, carrying the run's result. A
 * step that continues sends nothing. `continues` is `undefined` before the tools (the step's
 * message is not built yet), else whether another step follows.
 *
 * ```
 * output:  --S--t--e--|                 (S = step-start, t = text-delta, e = text-end)
 * guard:   --S--------(te)|             (holds t and e until finish)
 * end:                    (f→ t' e)|    (finish releases them; f is kept for the run's end)
 * ```
 */
export function endOfOutput(
  env: StepEnvironment,
  state: RunState,
  attempt: AttemptState,
  continues: boolean | undefined,
  tools: AgentToolSet | undefined,
): Observable<ChunkType> {
  const calls = clientToolCalls(attempt, env.executesTools);
  const messageBuilt = continues !== undefined; // after the tools
  const last = messageBuilt ? calls && !continues : !calls && !mayContinue(attempt, tools, env.executesTools, env.maxSteps);
  if (!last) return EMPTY;
  const accepted = state.steps.filter((step) => step.tripwire === undefined);
  const provisional = terminalChunk(env.runId, {
    finish: {
      stepResult: { reason: attempt.facts.finishReason },
      output: {
        usage: accepted.reduce((total, step) => addUsage(total, step.usage), attempt.facts.usage),
        text: accepted.map((step) => step.text).join('') + attempt.accumulator.text,
      },
    },
  });
  state.finish = undefined;
  return of<ChunkType>(provisional).pipe(
    env.chain.raw,
    tap({
      next: (chunk) => {
        if (chunk.type === 'finish') state.finish ??= chunk;
      },
      complete: () => (state.finish ??= provisional as AgentChunk<'finish'>),
    }),
    filter((chunk) => chunk.type !== 'finish' && (!env.chain.hooked || admit(chunk, attempt.requestedToolCalls))),
    tap((chunk) => (messageBuilt ? recordAfterMessage(env, attempt, chunk) : attempt.accumulator.observe(chunk))),
  );
}

/**
 * Stores the step's response (built from what passed the output processors), records its
 * `StepResult`, validates structured output, then `processLLMResponse` and `processOutputStep`.
 *
 * ```
 * after:  ---(r)(s)|     (r = processLLMResponse, s = processOutputStep; nothing is emitted)
 * abort:  ---#           (# = TripWire from either hook: the attempt is rejected)
 * ```
 */
export function afterModel(env: StepEnvironment, state: RunState, attempt: AttemptState, prepared: PreparedRequest): Observable<never> {
  const { ctx } = env;
  attempt.phase = 'post-model';
  const message = attempt.accumulator.buildMessage(attempt.messageId, env.now(), env.threadId, env.resourceId);
  if (message !== undefined) ctx.messageList.add(message, 'response');
  const stepResult = stepResultOf(attempt);
  attempt.recorded = stepResult;
  state.steps.push(stepResult);
  const { stepInput } = prepared;
  const structured = stepInput.structuredOutput;
  // a stage no processor hooks passes its value through unchanged: not subscribed at all
  const llmResponse = hasHook(env.inputProcessors, 'processLLMResponse');
  const outputStep = hasHook(env.outputProcessors, 'processOutputStep');
  const validate = structured !== undefined && structured.model === undefined;
  if (!validate && !llmResponse && !outputStep) return EMPTY;
  const { facts, accumulator } = attempt;
  return concat(
    validate ? defer(() => toObservable(validateStructuredOutput(stepInput, accumulator, stepResult))) : EMPTY,
    !llmResponse
      ? EMPTY
      : defer(() =>
          of({
            // built only when a processLLMResponse hook reads it
            get chunks() {
              return [...accumulator.compact];
            },
            model: stepInput.model,
            stepNumber: attempt.stepNumber,
            fromCache: fromCache(prepared),
            warnings: facts.warnings,
            request: facts.request,
            rawResponse: facts.rawResponse,
          }).pipe(processLLMResponse(env.inputProcessors, ctx)),
        ),
    !outputStep
      ? EMPTY
      : defer(() =>
          of({
            stepNumber: attempt.stepNumber,
            finishReason: facts.finishReason,
            ...(facts.providerMetadata ? { providerMetadata: facts.providerMetadata } : {}),
            toolCalls: accumulator.toolCalls,
            text: accumulator.text,
            usage: facts.usage,
          }).pipe(processOutputStep(env.outputProcessors, ctx)),
        ),
  ).pipe(ignoreElements());
}

/**
 * Whether another step follows the attempt, decided once its tools ran: its client calls all ran
 * here (each one among the attempt's `tools`), a step is left, and no `stopWhen` condition is met
 * (asked with the run's steps). A value when the conditions answer synchronously (nothing
 * subscribed for it), else an Observable of it.
 */
export function continuation(env: StepEnvironment, state: RunState, attempt: AttemptState, tools: AgentToolSet | undefined): boolean | Observable<boolean> {
  const may = mayContinue(attempt, tools, env.executesTools, env.maxSteps);
  if (!may || env.stopWhen.length === 0) return may;
  const met = stopConditionMet(env.stopWhen, state.steps);
  if (!isPromiseLike(met)) return !met;
  return from(met).pipe(map((stop) => !stop));
}

/** The step's `object-result` (structured output) and `step-finish` (`isContinued`: another step follows), through the output chain. */
export function finishStep(env: StepEnvironment, attempt: AttemptState, continues: boolean): Observable<ChunkType> {
  const { accumulator, facts } = attempt;
  const chunk = stepFinishChunk(env.runId, {
    stepNumber: attempt.stepNumber,
    messageId: attempt.messageId,
    reason: facts.finishReason,
    rawReason: facts.rawFinishReason,
    isContinued: continues,
    text: accumulator.text,
    toolCalls: accumulator.toolCalls,
    usage: facts.usage,
    warnings: facts.warnings,
    response: facts.response,
  });
  const object = attempt.recorded?.object;
  const chunks: ChunkType[] = object === undefined ? [chunk] : [makeChunk(env.runId, 'object-result', { object }), chunk];
  return from(chunks).pipe(env.chain.through(attempt.requestedToolCalls));
}
