/** One attempt at a step: what it accumulated, its facts, and how a rejected one is recorded. */
import type { StepBoundary } from '../../message-list/step-boundary.js';
import type { StepInput } from '../../operators/process-input-step.js';
import type { ChunkType, TripwirePayload } from '../../contract/chunk-types.js';
import { TripWire } from '../../contract/errors/trip-wire.js';
import { tripwirePayload } from '../../contract/tripwire-payload.js';
import type { StepResult } from '../../contract/processor-types.js';
import type { ModelResponseMeta } from '../../model/stream-model.js';
import { newStepFacts, type ModelStepFacts } from '../../model/model-part-to-chunk.js';
import { emptyUsage } from '../../model/usage.js';
import { StepAccumulator } from './step-accumulator.js';
import type { StepEnvironment } from './step-environment.js';

/** One attempt at a step. */
export interface Attempt {
  readonly stepNumber: number;
  readonly messageId: string;
  readonly accumulator: StepAccumulator;
  readonly facts: ModelStepFacts;
  boundary: StepBoundary | undefined;
  /** The `step-start` chunk went out. */
  opened: boolean;
  /** The StepResult pushed to `ctx.steps`. */
  recorded: StepResult | undefined;
  stepInput: StepInput | undefined;
  fromCache: boolean;
  meta: ModelResponseMeta;
  /** In the pre-model hooks (`processInputStep`, `processLLMRequest`): a tripwire there cannot retry. */
  preModel: boolean;
  /** A `stopWhen` condition was met after this step's tools ran: no step follows. */
  stopped: boolean;
}

/** A fresh attempt at step `stepNumber`. */
export function newAttempt(
  env: StepEnvironment,
  stepNumber: number,
  messageId: string,
  facts: ModelStepFacts = newStepFacts(emptyUsage()),
): Attempt {
  return {
    stepNumber,
    messageId,
    accumulator: new StepAccumulator({
      keepChunks: env.inputProcessors.some((processor) => typeof processor.processLLMResponse === 'function'),
    }),
    facts,
    boundary: undefined,
    opened: false,
    recorded: undefined,
    stepInput: undefined,
    fromCache: false,
    meta: {},
    preModel: false,
    stopped: false,
  };
}

/** The step result of an attempt (with `tripwire` when a processor rejected it). */
export function stepResultOf(attempt: Attempt, tripwire?: TripwirePayload): StepResult {
  const { accumulator, facts } = attempt;
  return {
    stepNumber: attempt.stepNumber,
    text: accumulator.text,
    ...(accumulator.reasoningText ? { reasoningText: accumulator.reasoningText } : {}),
    toolCalls: accumulator.toolCalls,
    toolResults: accumulator.toolResults,
    finishReason: tripwire ? 'other' : facts.finishReason,
    usage: facts.usage,
    warnings: facts.warnings,
    ...(facts.providerMetadata ? { providerMetadata: facts.providerMetadata } : {}),
    ...(tripwire ? { tripwire } : {}),
    response: { ...facts.response, messageId: attempt.messageId },
  };
}

/**
 * Records a rejected attempt in `steps` with its tripwire and none of its content: a blocked
 * attempt's text, reasoning and tool calls are reported nowhere.
 */
export function recordRejection(env: StepEnvironment, attempt: Attempt, error: unknown): void {
  if (!TripWire.isInstance(error)) return;
  const payload = tripwirePayload(error);
  if (attempt.recorded === undefined) {
    if (!attempt.opened) return;
    attempt.recorded = stepResultOf(attempt, payload);
    env.ctx.steps.push(attempt.recorded);
  }
  blankStep(attempt.recorded, payload);
}

/** Clears what a blocked step said (in place: processors hold `steps`), keeping its usage and facts. */
export function blankStep(step: StepResult, tripwire: TripwirePayload): void {
  step.tripwire = tripwire;
  step.text = '';
  delete step.reasoningText;
  step.toolCalls = [];
  step.toolResults = [];
  delete step.object;
  step.finishReason = 'other';
}

/** The fence (what processors may not invent) and the step's accumulation of what passed. */
export function admitToStep(env: StepEnvironment, attempt: Attempt, chunk: ChunkType): boolean {
  if (env.admit !== undefined && !env.admit(chunk)) return false;
  if (chunk.type === 'step-start') attempt.opened = true;
  else attempt.accumulator.observe(chunk);
  return true;
}

/** The client tool calls the step runs itself (none where the caller runs them: the middleware). */
export function callsToRun(env: StepEnvironment, attempt: Attempt): boolean {
  return env.executesTools && attempt.accumulator.toolCalls.some((call) => !call.providerExecuted);
}

/** Whether the step's client tool calls all run here and another step may follow. */
export function continuesAfter(env: StepEnvironment, attempt: Attempt): boolean {
  if (!env.executesTools) return false;
  // one loop, no filtered copy (a step without calls allocates nothing here)
  const tools = attempt.stepInput?.tools;
  let clientCalls = 0;
  for (const call of attempt.accumulator.toolCalls) {
    if (call.providerExecuted) continue;
    clientCalls++;
    const tool = tools?.[call.toolName];
    if (tool !== undefined && typeof tool?.execute !== 'function') return false;
  }
  return clientCalls > 0 && attempt.stepNumber + 1 < env.maxSteps && !attempt.stopped;
}
