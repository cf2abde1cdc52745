/**
 * One step of the loop as an Observable, composed from the hook operators: `processInputStep`
 * (+ `prepareStep`) → request → `processLLMRequest` → model call (or cached replay) →
 * `processOutputStream` per chunk → (`finish` at the end of the run's output) →
 * `processLLMResponse` → `processOutputStep` → tools (+ `processToolResult`) → `step-finish`, then
 * one {@link StepEnd} value. A rejected attempt (tripwire with retry, or an API error a processor
 * recovers) is rolled back and the step re-runs, by the rules of `retryOnTripwire` /
 * `retryOnAPIError`. The run's body (`BodyPlan` in `create-run.ts`) goes on with the next step
 * as the step's `StepEnd` says.
 *
 * The per-chunk path is kept short: an attempt's phases and the steps are each one subscriber
 * (`Sequence`, not `concat`/`concatMap`/`catchError` and a `filter` + `concat` nested per step),
 * and the model output of a step is one fused subscriber (`model-output.ts`). The retries stay the
 * two operators: their rules are written once, there.
 */
import { EMPTY, Observable, concat, concatMap, defer, from, isObservable, of, type Subscriber } from 'rxjs';
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { processInputStep, type StepInput } from '../../operators/process-input-step.js';
import type { LLMRequest } from '../../operators/process-llm-request.js';
import { apiErrorBudget, retryOnAPIError } from '../../operators/retry-on-api-error.js';
import { retryOnTripwire } from '../../operators/retry-on-tripwire.js';
import { hasHook } from '../internal/when-hooked.js';
import { Sequence, type SequencePlan } from '../internal/sequence.js';
import { demandOf } from '../../operators/demand.js';
import type { ChunkType } from '../../contract/chunk-types.js';
import { TripWire } from '../../contract/errors/trip-wire.js';
import type { StepResult } from '../../contract/processor-types.js';
import { makeChunk } from '../../contract/make-chunk.js';
import type { ModelResponseMeta } from '../../model/stream-model.js';
import type { ModelCall } from '../../model/model-chunks.js';
import { ModelCallError } from '../../model/errors/model-call-error.js';
import { providerError } from '../../model/provider-error.js';
import { newStepFacts, toolCallIdsIn } from '../../model/model-part-to-chunk.js';
import { emptyUsage } from '../../model/usage.js';
import type { RunEnvironment } from '../run/run-environment.js';
import { stopConditionMet } from '../run/stop-condition.js';
import { stepFinishChunk } from './step-chunks.js';
import { toolPhase } from '../tools/tool-phase.js';
import { afterModel, finishStep } from './after-model.js';
import { continuesAfter, newAttempt, recordRejection, type Attempt } from './attempt.js';
import { tripwirePayload } from '../../contract/tripwire-payload.js';
import { cachedContent, endOfOutput, stepOutput } from './model-output.js';
import { prepareRequest, prepareRequestNow, type PreparedRequest } from './request.js';

/** Marks a step's end value (a symbol: no chunk carries it). */
const STEP_END: unique symbol = Symbol('rxagent.stepEnd');

/** The last value of a step: its accepted result and whether the loop goes on. */
export interface StepEnd {
  readonly [STEP_END]: true;
  readonly result: StepResult;
  /** The step's client tool calls ran and another step may follow. */
  readonly continues: boolean;
  /** The number the next step takes. */
  readonly nextStepNumber: number;
}

/** Whether `item` is a step's {@link StepEnd}. */
export function isStepEnd(item: ChunkType | StepEnd): item is StepEnd {
  return (item as Partial<StepEnd>)[STEP_END] === true;
}

/** The model's content in an attempt: the cached response, or the live call pulled on demand. */
function modelContent(env: RunEnvironment, attempt: Attempt, request: LLMRequest, callOptions: LanguageModelV4CallOptions): Observable<ChunkType> | ModelCall {
  if (request.response !== undefined) return cachedContent(env, attempt, request.response);
  const stepInput = attempt.stepInput as StepInput;
  // the call is made when the step output subscribes it (read, converted and processed in one hop); pulled on demand
  return {
    model: stepInput.model,
    // the request's prompt (a processLLMRequest hook may have replaced it); the options as built when it did not
    callOptions: request.prompt === callOptions.prompt ? callOptions : { ...callOptions, prompt: request.prompt },
    // a method, not an arrow: a keepNames build (tsx) names an arrow with a property write per attempt
    onResponse(meta: ModelResponseMeta) {
      attempt.meta = meta;
    },
    runId: env.runId,
    facts: attempt.facts,
    demand: demandOf(env.ctx),
  };
}

/** The step input the run's defaults give, before `processInputStep`. */
function initialStepInput(env: RunEnvironment, stepNumber: number): StepInput {
  // assigned in the order the spreads gave (no throwaway `{}` per absent default)
  const input: StepInput = { stepNumber, model: env.model };
  if (env.tools !== undefined) input.tools = env.tools;
  if (env.toolChoice !== undefined) input.toolChoice = env.toolChoice;
  if (env.activeTools !== undefined) input.activeTools = env.activeTools;
  if (env.providerOptions !== undefined) input.providerOptions = env.providerOptions;
  if (env.modelSettings !== undefined) input.modelSettings = env.modelSettings;
  if (env.structuredOutput !== undefined) input.structuredOutput = env.structuredOutput;
  return input;
}

/**
 * After the step's tools ran, the `stopWhen` conditions (when the loop would go on): a condition
 * met marks the attempt `stopped`, so the step ends as a last step does (`finish` at the end of its
 * output, `step-finish` not continued, no next step). Synchronous conditions cost no subscription.
 */
function checkStopConditions(env: RunEnvironment, attempt: Attempt): Observable<never> | readonly never[] {
  if (env.stopWhen.length === 0 || !continuesAfter(env, attempt)) return [];
  const met = stopConditionMet(env.stopWhen, env.ctx.steps);
  if (typeof met === 'boolean') {
    attempt.stopped = met;
    return [];
  }
  return from(met).pipe(
    concatMap((answer) => {
      attempt.stopped = answer;
      return EMPTY;
    }),
  );
}

/**
 * An attempt's first part: the pre-model set-up and `processInputStep`, then the request — as a
 * value when nothing is hooked or async (nothing subscribed for it), else an Observable of it.
 */
function prepareAttempt(env: RunEnvironment, attempt: Attempt, feedback: string | undefined): Observable<PreparedRequest> | PreparedRequest[] {
  const { ctx } = env;
  ctx.stepNumber = attempt.stepNumber;
  attempt.preModel = true;
  attempt.boundary = ctx.messageList.openStepBoundary();
  ctx.messageList.replaceAllSystemMessages(env.initialSystemMessages);
  const initial = initialStepInput(env, attempt.stepNumber);
  if (!hasHook(env.stepProcessors, 'processInputStep')) {
    // no processInputStep hook: the request straight away (no defer, of, concatMap per attempt)
    attempt.stepInput = initial;
    const request = prepareRequestNow(env, initial, feedback);
    return isObservable(request) ? request : [request];
  }
  return of(initial).pipe(
    processInputStep(env.stepProcessors, ctx),
    concatMap((stepInput) => {
      attempt.stepInput = stepInput;
      return prepareRequest(env, stepInput, feedback);
    }),
  );
}

/**
 * One attempt: the pre-model hooks and the request, then the model output, the end of output, the
 * post-model hooks, the tools, `step-finish` and the {@link StepEnd} — one after another. An error
 * is recorded (`step.rejected`) before it goes on to the retry operators.
 */
function runAttempt(step: StepRun, attempt: Attempt, feedback: string | undefined): Observable<ChunkType | StepEnd> {
  return new Observable<ChunkType | StepEnd>((subscriber) => {
    new Sequence<ChunkType | StepEnd | PreparedRequest>(subscriber, new AttemptPlan(subscriber, step, attempt, feedback)).advance();
  });
}

/**
 * The parts of one attempt's {@link Sequence}: first the request (`prepareAttempt`), then the
 * phases after it, made one at a time when their turn comes — model output, end of output,
 * post-model hooks, tools, stop conditions, end of output (last step), `step-finish`,
 * {@link StepEnd}. One object per attempt (no array of phase closures, no observer literal).
 */
class AttemptPlan implements SequencePlan<ChunkType | StepEnd | PreparedRequest> {
  /** The next phase after the request; -1 before the request was asked for. */
  private phase = -1;
  /** The request, once the first part gave it. */
  private prepared: PreparedRequest | undefined;

  constructor(
    private readonly subscriber: Subscriber<ChunkType | StepEnd>,
    private readonly step: StepRun,
    private readonly attempt: Attempt,
    private readonly feedback: string | undefined,
  ) {}

  following(): Observable<ChunkType | StepEnd | PreparedRequest> | ReadonlyArray<ChunkType | StepEnd | PreparedRequest> | undefined {
    const { step, attempt } = this;
    const env = step.env;
    if (this.phase < 0) {
      this.phase = 0;
      return prepareAttempt(env, attempt, this.feedback);
    }
    const prepared = this.prepared;
    if (prepared === undefined) return undefined;
    switch (this.phase++) {
      case 0:
        return stepOutput(env, attempt, modelContent(env, attempt, prepared.request, prepared.callOptions));
      case 1:
        return endOfOutput(env, attempt, false);
      case 2:
        return afterModel(env, attempt);
      case 3:
        return toolPhase(env, attempt.stepNumber, attempt.accumulator, attempt.stepInput?.tools);
      case 4:
        return checkStopConditions(env, attempt);
      case 5:
        return endOfOutput(env, attempt, true);
      case 6:
        return finishStep(env, attempt);
      case 7: {
        const end: StepEnd = {
          [STEP_END]: true,
          result: attempt.recorded as StepResult,
          continues: continuesAfter(env, attempt),
          nextStepNumber: attempt.stepNumber + 1,
        };
        return [end];
      }
      default:
        return undefined;
    }
  }

  next(value: ChunkType | StepEnd | PreparedRequest): void {
    if (this.prepared !== undefined) {
      this.subscriber.next(value as ChunkType | StepEnd);
      return;
    }
    // the first part's one value, the request: past the pre-model hooks, from here a tripwire may
    // ask for a retry
    this.prepared = value as PreparedRequest;
    this.attempt.preModel = false;
  }

  error(error: unknown): void {
    this.step.rejected(this.attempt, error);
    this.subscriber.error(error);
  }

  complete(): void {
    this.subscriber.complete();
  }
}

/** The chunks that close a rejected attempt: its open text/reasoning, a `step-finish` with reason `retry`. */
function closeRejected(env: RunEnvironment, previous: Attempt, error: unknown): ChunkType[] {
  if (!previous.opened) return [];
  const tripwire = TripWire.isInstance(error) ? tripwirePayload(error) : undefined;
  const lead: ChunkType[] = [];
  for (const id of previous.accumulator.openTextIds) lead.push(makeChunk(env.runId, 'text-end', { id }));
  for (const id of previous.accumulator.openReasoningIds) lead.push(makeChunk(env.runId, 'reasoning-end', { id }));
  lead.push(
    stepFinishChunk(env.runId, {
      stepNumber: previous.stepNumber,
      messageId: previous.messageId,
      reason: 'retry',
      isContinued: true,
      text: '',
      toolCalls: [],
      usage: previous.facts.usage,
      ...(tripwire ? { tripwire } : {}),
    }),
  );
  return lead;
}

/**
 * Step `stepNumber` of the run: its chunks, then its {@link StepEnd}, with tripwire and API-error
 * retries. As an operator it is `concatMap((n) => modelStep(env, n))`; the loop subscribes it
 * directly (one subscriber hop per chunk less).
 *
 * ```
 * attempt 1:  --S--t--t--#                        (# = TripWire { retry: true } from processOutputStep)
 * result:     --S--t--t--R--S--t--F--(E|)          (R = step-finish 'retry', F = step-finish, E = StepEnd)
 * ```
 */
export function modelStep(env: RunEnvironment, stepNumber: number): Observable<ChunkType | StepEnd> {
  const step = new StepRun(env, stepNumber);
  let step$ = defer(() => step.nextAttempt());
  // a retry operator with no budget in this run would only pass every chunk and error through
  // (a subscriber and a hop per chunk each): it is left out, as `whenHooked` leaves out a hook
  // nobody implements (the run's budgets are fixed when it is set up)
  if (apiErrorBudget(env.apiErrorProcessors, env.ctx, env.defaultApiErrorBudget) > 0) {
    step$ = step$.pipe(
      retryOnAPIError<ChunkType | StepEnd>(env.apiErrorProcessors, env.ctx, {
        isAPIError: ModelCallError.isInstance,
        toAPIError: providerError,
        defaultBudget: env.defaultApiErrorBudget,
      }),
    );
  }
  // the step itself holds `shouldRetry` (a method: no closure per step)
  if ((env.ctx.maxProcessorRetries ?? 0) > 0) step$ = step$.pipe(retryOnTripwire<ChunkType | StepEnd>(env.ctx, step));
  return step$;
}

/** A step's state across its attempts: the one before (rolled back when rejected) and its error. */
class StepRun {
  private previous: Attempt | undefined;
  private previousError: unknown;

  constructor(
    readonly env: RunEnvironment,
    private readonly stepNumber: number,
  ) {}

  /** The next attempt (the first, or a retry after the rejected one): the rejected one's closing chunks, then the attempt. */
  nextAttempt(): Observable<ChunkType | StepEnd> {
    const { env, previous, previousError } = this;
    let lead: ChunkType[] = [];
    let feedback: string | undefined;
    // a tripwire retry is a step of its own (the next number, counted by maxSteps); an API-error
    // retry repeats the attempt's number (the failed attempt is not a step)
    const number = previous === undefined ? this.stepNumber : TripWire.isInstance(previousError) ? previous.stepNumber + 1 : previous.stepNumber;
    if (previous !== undefined) {
      if (previous.boundary !== undefined) env.ctx.messageList.rollbackToStepBoundary(previous.boundary);
      lead = closeRejected(env, previous, previousError);
      if (TripWire.isInstance(previousError)) feedback = previousError.reason;
      env.finish = undefined; // a rejected attempt's end of output is not the run's
    }
    const attempt = newAttempt(env, number, env.generateId(), newStepFacts(emptyUsage(), () => toolCallIdsIn(env.ctx.messageList.get.all.db())));
    this.previous = attempt;
    const body$ = runAttempt(this, attempt, feedback);
    return lead.length === 0 ? body$ : concat(from(lead).pipe(env.chain), body$);
  }

  /** Records `attempt`'s rejection (`error`) before it goes on to the retry operators. */
  rejected(attempt: Attempt, error: unknown): void {
    this.previousError = error;
    recordRejection(this.env, attempt, error);
  }

  /** A retry request from a hook before the model is a plain abort; a retry needs a step left. */
  shouldRetry(): boolean {
    const previous = this.previous;
    return previous !== undefined && !previous.preModel && previous.stepNumber + 1 < this.env.maxSteps;
  }
}
