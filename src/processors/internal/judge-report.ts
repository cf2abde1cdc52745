/**
 * Reports a model-backed processor's model call to `tracingContext.onJudge` (see the contract's
 * `JudgeCallEvent`). Costs nothing when the run's tracing context has no `onJudge`.
 */
import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { JudgeCallEvent, TracingContext } from '../../contract/index.js';
import { callQuietly } from './private-violation.js';

/** Who a judging call is made for: the processor's id and the hook's `tracingContext`. */
export interface JudgeTracing {
  processorId: string;
  tracingContext: TracingContext | undefined;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: Error };

const unreported = <O>(outcome: O): O => outcome;

/**
 * Starts timing one judging call; the function returned reports its outcome (and returns it).
 * Without `onJudge` it is the identity and nothing is timed.
 */
export function judgeReporter(
  request: { tracing?: JudgeTracing | undefined; system: string; prompt: string },
  model: LanguageModelV4,
): <O extends Outcome>(outcome: O) => O {
  const tracingContext = request.tracing?.tracingContext;
  const onJudge = tracingContext?.onJudge;
  if (onJudge === undefined || request.tracing === undefined) return unreported;
  const { processorId } = request.tracing;
  const startTime = performance.now();
  return (outcome) => {
    const event: JudgeCallEvent = {
      processorId,
      provider: model.provider,
      modelId: model.modelId,
      outcome: outcome.ok ? 'ok' : 'error',
      startTime,
      endTime: performance.now(),
    };
    if (tracingContext?.includePayloads === true) {
      event.input = { system: request.system, prompt: request.prompt };
      event.output = outcome.ok ? outcome.value : outcome.error;
    }
    // tracing never changes a processor's outcome (a throw or a rejection is dropped)
    callQuietly(onJudge, event);
    return outcome;
  };
}
