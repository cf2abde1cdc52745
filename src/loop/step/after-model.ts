/** After a step's model output: the response into the list, the post-model hooks, `step-finish`. */
import { EMPTY, Observable, concat, defer, from, ignoreElements, of } from 'rxjs';
import { processLLMResponse } from '../../operators/process-llm-response.js';
import { processOutputStep } from '../../operators/process-output-step.js';
import type { StepInput } from '../../operators/process-input-step.js';
import type { ChunkType } from '../../contract/chunk-types.js';
import { makeChunk } from '../../contract/make-chunk.js';
import { toObservable } from '../../contract/to-observable.js';
import { stepFinishChunk } from './step-chunks.js';
import { validateStructuredOutput } from './structured-output.js';
import { continuesAfter, stepResultOf, type Attempt } from './attempt.js';
import type { StepEnvironment } from './step-environment.js';
import { hasHook } from '../internal/when-hooked.js';

/**
 * Stores the step's response (built from what passed the output processors), records its
 * `StepResult`, validates structured output, then `processLLMResponse` and `processOutputStep`.
 *
 * ```
 * after:  ---(r)(s)|     (r = processLLMResponse, s = processOutputStep; nothing is emitted)
 * abort:  ---#           (# = TripWire from either hook: the attempt is rejected)
 * ```
 */
export function afterModel(env: StepEnvironment, attempt: Attempt): Observable<never> {
  return defer(() => {
    const { ctx } = env;
    const message = attempt.accumulator.buildMessage(attempt.messageId, env.now(), env.threadId, env.resourceId);
    if (message !== undefined) ctx.messageList.add(message, 'response');
    attempt.accumulator.onLatePart = (part) =>
      ctx.messageList.add(
        { id: env.generateId(), role: 'assistant', createdAt: env.now(), content: { format: 2, parts: [part] } },
        'response',
      );
    const stepResult = stepResultOf(attempt);
    attempt.recorded = stepResult;
    ctx.steps.push(stepResult);
    const stepInput = attempt.stepInput as StepInput;
    const structured = stepInput.structuredOutput;
    // a stage no processor hooks passes its value through unchanged: not subscribed at all
    const llmResponse = hasHook(env.inputProcessors, 'processLLMResponse');
    const outputStep = hasHook(env.outputProcessors, 'processOutputStep');
    const validate = structured !== undefined && structured.model === undefined;
    if (!validate && !llmResponse && !outputStep) return EMPTY;
    return concat(
      validate ? defer(() => toObservable(validateStructuredOutput(stepInput, attempt.accumulator, stepResult))) : EMPTY,
      !llmResponse ? EMPTY : defer(() =>
        of({
          // built only when a processLLMResponse hook reads it
          get chunks() {
            return [...attempt.accumulator.compact];
          },
          model: stepInput.model,
          stepNumber: attempt.stepNumber,
          fromCache: attempt.fromCache,
          warnings: attempt.facts.warnings,
          request: attempt.meta.request,
          rawResponse: attempt.meta.response,
        }).pipe(processLLMResponse(env.inputProcessors, ctx)),
      ),
      !outputStep ? EMPTY : defer(() =>
        of({
          stepNumber: attempt.stepNumber,
          finishReason: attempt.facts.finishReason,
          ...(attempt.facts.providerMetadata ? { providerMetadata: attempt.facts.providerMetadata } : {}),
          toolCalls: attempt.accumulator.toolCalls,
          text: attempt.accumulator.text,
          usage: attempt.facts.usage,
        }).pipe(processOutputStep(env.outputProcessors, ctx)),
      ),
    ).pipe(ignoreElements());
  });
}

/** The step's `object-result` (structured output) and `step-finish`, through the output chain. */
export function finishStep(env: StepEnvironment, attempt: Attempt): Observable<ChunkType> {
  return defer(() => {
    const accumulator = attempt.accumulator;
    const chunk = stepFinishChunk(env.runId, {
      stepNumber: attempt.stepNumber,
      messageId: attempt.messageId,
      reason: attempt.facts.finishReason,
      rawReason: attempt.facts.rawFinishReason,
      isContinued: continuesAfter(env, attempt),
      text: accumulator.text,
      toolCalls: accumulator.toolCalls,
      usage: attempt.facts.usage,
      warnings: attempt.facts.warnings,
      response: attempt.facts.response,
    });
    const objectResult: ChunkType[] =
      attempt.recorded?.object === undefined ? [] : [makeChunk(env.runId, 'object-result', { object: attempt.recorded.object })];
    return from<ChunkType[]>([...objectResult, chunk]).pipe(env.chain);
  });
}
