/**
 * One step of the loop: an attempt (`attempt.ts`) re-run by the retry operators — `retryOnAPIError`
 * when a provider error is recovered by `processAPIError`, `retryOnTripwire` when a processor aborts
 * with `retry: true` — with the rejected attempt rolled back and closed in the stream.
 */
import { defer, identity, type MonoTypeOperatorFunction, type Observable } from 'rxjs';
import { apiErrorBudget, retryOnAPIError } from '../../operators/retry-on-api-error.js';
import { retryOnTripwire } from '../../operators/retry-on-tripwire.js';
import type { ChunkType } from '../../contract/chunk-types.js';
import { TripWire } from '../../contract/errors/trip-wire.js';
import { makeChunk } from '../../contract/make-chunk.js';
import { tripwirePayload } from '../../contract/tripwire-payload.js';
import { ModelCallError } from '../../model/errors/model-call-error.js';
import { providerError } from '../../model/provider-error.js';
import type { RunState } from '../data/run-state.js';
import type { StepPosition, ToolsPosition } from '../data/run-position.js';
import { recordRejection, type AttemptState } from '../data/attempt-state.js';
import { runAttempt, type AttemptItem } from './attempt.js';
import { stepFinishChunk } from './step-chunks.js';
import type { StepEnvironment } from './step-environment.js';

/** The chunks that close a rejected attempt in the stream: its open text/reasoning, a `step-finish` with reason `retry`. */
function closersOf(env: StepEnvironment, attempt: AttemptState, tripwire: TripWire | undefined): ChunkType[] {
  if (!attempt.opened) return [];
  const closers: ChunkType[] = [];
  for (const id of attempt.accumulator.openTextIds) closers.push(makeChunk(env.runId, 'text-end', { id }));
  for (const id of attempt.accumulator.openReasoningIds) closers.push(makeChunk(env.runId, 'reasoning-end', { id }));
  closers.push(
    stepFinishChunk(env.runId, {
      stepNumber: attempt.stepNumber,
      messageId: attempt.messageId,
      reason: 'retry',
      isContinued: true,
      text: '',
      toolCalls: [],
      usage: attempt.facts.usage,
      ...(tripwire === undefined ? {} : { tripwire: tripwirePayload(tripwire) }),
    }),
  );
  return closers;
}

/**
 * A retry operator resubscribes the step: the attempt it rejected is recorded (a tripwired one
 * stays in `steps`, blanked), rolled back from the list, and its closing chunks handed on in the
 * position the next attempt starts from. A tripwire retry is a step of its own (the next number,
 * counted by `maxSteps`); an API-error retry repeats the attempt's number (the failed attempt is
 * not a step). A retry raised while an earlier rejected attempt's closing chunks pass (no attempt
 * under way) rejects the attempt that was about to begin: nothing to record, roll back or close.
 */
function rejectAttempt(env: StepEnvironment, state: RunState, position: StepPosition | ToolsPosition, tripwire: TripWire | undefined): StepPosition {
  state.finish = undefined; // a rejected attempt's end of output is not the run's
  const attempt = state.attempt;
  if (attempt === undefined) {
    return { kind: 'step', stepNumber: tripwire === undefined ? position.stepNumber : position.stepNumber + 1, rejected: [] };
  }
  if (tripwire !== undefined) recordRejection(state.steps, attempt, tripwirePayload(tripwire));
  state.messageList.rollbackToStepBoundary(attempt.boundary);
  return {
    kind: 'step',
    stepNumber: tripwire === undefined ? attempt.stepNumber : attempt.stepNumber + 1,
    rejected: closersOf(env, attempt, tripwire),
  };
}

/**
 * A retry request from a hook before the model is a plain abort; a retry needs a step left. While
 * a rejected attempt's closing chunks pass, the attempt about to begin is the one retried.
 */
function mayRetry(env: StepEnvironment, state: RunState, position: StepPosition | ToolsPosition): boolean {
  const attempt = state.attempt;
  if (attempt === undefined) return position.kind === 'step' && position.rejected !== undefined && position.stepNumber + 1 < env.maxSteps;
  return attempt.phase !== 'pre-model' && attempt.stepNumber + 1 < env.maxSteps;
}

/**
 * The step at `start`: its chunks, then its {@link StepEnd}, with tripwire and API-error retries.
 * Per subscription, the position the next attempt starts from: a retry replaces it with the one
 * its rejection gave (`rejectAttempt`), which carries the rejected attempt's closing chunks. A
 * retry operator with no budget in this run would only pass every chunk and error through, so it
 * is left out (`identity`), as an unhooked stage is.
 *
 * ```
 * attempt 1:  --S--t--t--#                        (# = TripWire { retry: true } from processOutputStep)
 * result:     --S--t--t--R--S--t--F--(E|)          (R = step-finish 'retry', F = step-finish, E = StepEnd)
 * ```
 */
export function modelStep(env: StepEnvironment, state: RunState, start: StepPosition | ToolsPosition): Observable<AttemptItem> {
  const apiErrors = apiErrorBudget(env.apiErrorProcessors, env.ctx, env.defaultApiErrorBudget) > 0;
  const tripwires = (env.ctx.maxProcessorRetries ?? 0) > 0;
  if (!apiErrors && !tripwires) return runAttempt(env, state, start);
  return defer(() => {
    let position = start;
    const reject = (tripwire: TripWire | undefined): void => {
      position = rejectAttempt(env, state, position, tripwire);
    };
    return defer(() => runAttempt(env, state, position)).pipe(
      apiErrors ? apiErrorRetries(env, reject) : identity,
      tripwires ? tripwireRetries(env, () => mayRetry(env, state, position), reject) : identity,
    );
  });
}

function apiErrorRetries(env: StepEnvironment, reject: (tripwire: undefined) => void): MonoTypeOperatorFunction<AttemptItem> {
  return retryOnAPIError(env.apiErrorProcessors, env.ctx, {
    isAPIError: ModelCallError.isInstance,
    toAPIError: providerError,
    defaultBudget: env.defaultApiErrorBudget,
    onRetry: () => reject(undefined),
  });
}

function tripwireRetries(env: StepEnvironment, shouldRetry: () => boolean, reject: (tripwire: TripWire) => void): MonoTypeOperatorFunction<AttemptItem> {
  return retryOnTripwire(env.ctx, { shouldRetry, onRetry: reject });
}
