/**
 * One attempt at a step, as data: what the model reported, what passed the output processors, and
 * how far it got. Part of the run's state (`RunState.attempt`) while it runs; the
 * step-output kernel folds the model's facts and output into it, and a step's `StepEnd` carries it.
 * The request (with the step input it was made from) and whether the loop goes on are not kept
 * here: `attempt.ts` hands them on as values.
 */
import type { StepBoundary } from '../../message-list/step-boundary.js';
import type { StepInput } from '../../operators/process-input-step.js';
import type { ChunkType, TripwirePayload } from '../../contract/chunk-types.js';
import type { StepResult } from '../../contract/processor-types.js';
import { newStepFacts, type StepFacts } from '../../model/model-part-to-chunk.js';
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import type { LLMRequest } from '../../operators/process-llm-request.js';
import type { AgentToolSet } from '../../contract/tool-types.js';
import { StepAccumulator } from './step-accumulator.js';

/**
 * An attempt's request (after `processLLMRequest`), the call options its model call gets, and the
 * step input it was made from (after `processInputStep`: the model, tools and settings of the
 * attempt) — the value the attempt's later phases are made from.
 */
export interface PreparedRequest {
  request: LLMRequest;
  callOptions: LanguageModelV4CallOptions;
  stepInput: StepInput;
  /**
   * The tools the attempt may run: the step input's, limited to its `activeTools` (those offered
   * to the model; see `loop/tools/active-tools.ts`). Fixed with the request: every phase after the
   * model (the end of the output, the `model` commit, the tool phase) reads this one set.
   */
  tools: AgentToolSet | undefined;
}

/**
 * Where an attempt is: closing the attempt a retry rejected, before the model (a tripwire there
 * cannot retry), at the model, after it, done (its `StepEnd` out).
 */
export type AttemptPhase = 'opening' | 'pre-model' | 'model' | 'post-model' | 'done';

/** One attempt at a step. */
export interface AttemptState {
  readonly stepNumber: number;
  /** The id of the step's assistant message (and of its `step-start` / `step-finish`). */
  readonly messageId: string;
  /** The response as it was before this attempt: a rejected attempt is rolled back to it. */
  readonly boundary: StepBoundary;
  phase: AttemptPhase;
  /** What the model call reported besides content. */
  facts: StepFacts;
  /** What passed the output processors: the step's text, tool calls, message parts. */
  readonly accumulator: StepAccumulator;
  /** The `step-start` chunk went out (a rejected attempt then needs its `step-finish`). */
  opened: boolean;
  /** Tool calls the model emitted in this step (`toolCallId` → `toolName`): what the fence lets through. */
  readonly requestedToolCalls: Map<string, string>;
  /** The attempt's `StepResult`, once recorded in the run's steps. */
  recorded: StepResult | undefined;
}

/** A fresh attempt at step `stepNumber`. */
export function newAttempt(options: {
  stepNumber: number;
  messageId: string;
  boundary: StepBoundary;
  keepChunks: boolean;
}): AttemptState {
  return {
    stepNumber: options.stepNumber,
    messageId: options.messageId,
    boundary: options.boundary,
    phase: 'opening',
    facts: newStepFacts(),
    accumulator: new StepAccumulator({ keepChunks: options.keepChunks }),
    opened: false,
    requestedToolCalls: new Map(),
    recorded: undefined,
  };
}

/** Whether an attempt's model output is a cached response replayed (`processLLMRequest` returned `response`). */
export function fromCache(prepared: PreparedRequest): boolean {
  return prepared.request.response !== undefined;
}

/** The step result of an attempt (with `tripwire` when a processor rejected it). */
export function stepResultOf(attempt: AttemptState, tripwire?: TripwirePayload): StepResult {
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

/**
 * Records a rejected attempt in `steps` with its tripwire and none of its content: a blocked
 * attempt's text, reasoning and tool calls are reported nowhere. An attempt that never opened
 * (rejected before the model) is not a step.
 */
export function recordRejection(steps: StepResult[], attempt: AttemptState, tripwire: TripwirePayload): void {
  if (attempt.recorded === undefined) {
    if (!attempt.opened) return;
    attempt.recorded = stepResultOf(attempt, tripwire);
    steps.push(attempt.recorded);
  }
  blankStep(attempt.recorded, tripwire);
}

/** The client tool calls of the attempt that run here (none where the caller runs them: the middleware). */
export function clientToolCalls(attempt: AttemptState, executesTools: boolean): boolean {
  return executesTools && attempt.accumulator.toolCalls.some((call) => !call.providerExecuted);
}

/**
 * Whether the step's client tool calls can all run here and another step may follow (before the
 * stop conditions were asked): some client call, each with an `execute` among the attempt's
 * `tools`, and a step left.
 */
export function mayContinue(attempt: AttemptState, tools: AgentToolSet | undefined, executesTools: boolean, maxSteps: number): boolean {
  if (!executesTools) return false;
  let clientCalls = 0;
  for (const call of attempt.accumulator.toolCalls) {
    if (call.providerExecuted) continue;
    clientCalls++;
    // own names only: `toString` or `__proto__` is no tool of the set
    const tool = tools !== undefined && Object.hasOwn(tools, call.toolName) ? tools[call.toolName] : undefined;
    if (tool !== undefined && typeof tool?.execute !== 'function') return false;
  }
  return clientCalls > 0 && attempt.stepNumber + 1 < maxSteps;
}

/** Whether a chunk is a run-level one a processor may not invent (the run makes them itself). */
export function isRunLevel(chunk: ChunkType): boolean {
  switch (chunk.type) {
    case 'start':
    case 'finish':
    case 'tripwire':
    case 'error':
    case 'abort':
      return true;
    default:
      return false;
  }
}
