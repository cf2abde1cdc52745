/**
 * One attempt at a step: the order of its phases, written once — used by the agent loop and by
 * `processorsMiddleware` (which differ only in how they reach the model: `StepEnvironment.model`).
 */
import { EMPTY, Observable, concat, concatMap, defer, from, isObservable, of } from 'rxjs';
import type { ChunkType } from '../../contract/chunk-types.js';
import type { AgentToolSet } from '../../contract/tool-types.js';
import { hasHook } from '../../contract/has-hook.js';
import { newToolCallIds, toolCallIdsIn } from '../../model/model-part-to-chunk.js';
import { enterAttempt, type RunState } from '../data/run-state.js';
import { toolPhase } from './tool-phase.js';
import { afterModel, continuation, endOfOutput, finishStep } from './after-model.js';
import { clientToolCalls, newAttempt, type AttemptState, type PreparedRequest } from '../data/attempt-state.js';
import { commitPoint } from '../data/commit-points.js';
import type { RunCommitPoint } from '../data/run-durability.js';
import { COMMIT, stepAt, type CommitPosition, type StepPosition, type ToolsPosition } from '../data/run-position.js';
import { providerToolResults } from './provider-tool-results.js';
import { stepStartChunk } from './step-chunks.js';
import type { StepEnvironment } from './step-environment.js';
import { stepOutput } from './step-output.js';

/**
 * The last value of a step (after its `step-finish`): where the run goes on, the next step (its
 * number: a tripwire retry took one too) or the run's commit. Not a chunk: a loop feeds it back
 * (the next step) and leaves it out of the stream.
 */
export interface StepEnd {
  /** Marks the value (chunks have no `kind`). */
  readonly kind: 'step-end';
  /**
   * The next step (the step's client tool calls ran, a step is left, no stop condition met), else
   * the run's commit.
   */
  readonly next: StepPosition | CommitPosition;
}

/**
 * A value of an attempt: its chunks, a durable run's commit points (`RunDurability.commitPoints`:
 * none otherwise), then its {@link StepEnd}.
 */
export type AttemptItem = ChunkType | RunCommitPoint | StepEnd;

/**
 * Whether `item` is a step's {@link StepEnd} (chunks have no `kind`).
 *
 * @example
 * ```ts
 * import { filter } from 'rxjs';
 * import type { ChunkType } from 'rxagent';
 * import { isStepEnd, type StepEnd } from 'rxagent/loop';
 *
 * const chunksOnly = filter((item: ChunkType | StepEnd): item is ChunkType => !isStepEnd(item));
 * ```
 */
export function isStepEnd(item: ChunkType | StepEnd): item is StepEnd {
  return endsStep(item);
}

/** {@link isStepEnd} over any value of an attempt (a durable run's commit points among them). */
export function endsStep(item: AttemptItem): item is StepEnd {
  return (item as Partial<StepEnd>).kind === 'step-end';
}

/**
 * Begins an attempt at step `stepNumber`: the response's boundary opened (a rejected attempt is
 * rolled back to it), the system messages reset to the run's initial ones, and the attempt made
 * the run's current one.
 */
function beginAttempt(env: StepEnvironment, state: RunState, stepNumber: number): AttemptState {
  const { messageList } = state;
  const attempt = newAttempt({
    stepNumber,
    messageId: env.generateId(),
    boundary: messageList.openStepBoundary(),
    keepChunks: hasHook(env.inputProcessors, 'processLLMResponse'),
  });
  messageList.replaceAllSystemMessages(state.initialSystemMessages);
  enterAttempt(state, attempt);
  return attempt;
}

/**
 * The closing chunks of the attempt a retry rejected (its open parts, `step-finish` reason
 * `retry`), carried by the position, through the chain; then the `rejected` commit point, before
 * the next attempt begins (a restored run begins it).
 */
function closeRejected(env: StepEnvironment, state: RunState, closers: readonly ChunkType[], stepNumber: number): Observable<ChunkType | RunCommitPoint> {
  state.attempt = undefined; // recorded and rolled back; a retry while it closes rejects the attempt about to begin
  return concat(
    closers.length === 0 ? EMPTY : from(closers).pipe(env.chain.through()),
    commitPoint(env, state, 'rejected', { stepNumber, position: () => stepAt(stepNumber) }),
  );
}

/**
 * The `model` commit point: the step accepted, its message in the list, its client tool calls about
 * to run (a restored run goes on with them, without calling the model again).
 */
function modelCommit(env: StepEnvironment, state: RunState, attempt: AttemptState, tools: AgentToolSet | undefined): Observable<RunCommitPoint> {
  if (env.durability?.commitPoints !== true || !clientToolCalls(attempt, env.executesTools)) return EMPTY;
  const { stepNumber } = attempt;
  const toolCalls = attempt.accumulator.toolCalls.filter((call) => !call.providerExecuted).map(({ toolCallId, toolName, args }) => ({ toolCallId, toolName, args }));
  return commitPoint(env, state, 'model', {
    stepNumber,
    toolCalls,
    position: () => ({ kind: 'tools', stepNumber, attempt, tools }),
  });
}

/**
 * The request of the attempt, with the feedback of the attempt a retry rejected: one value (in the
 * subscribing frame when nothing is hooked or async), else an Observable of it.
 */
function request(env: StepEnvironment, state: RunState, attempt: AttemptState): Observable<PreparedRequest> | PreparedRequest {
  attempt.phase = 'pre-model';
  const feedback = state.retryFeedback; // taken: the next attempt's prompt has it, no later one
  state.retryFeedback = undefined;
  return env.model.prepare(attempt, feedback);
}

/** The model's output: the call's events through the step-output kernel, after `step-start` and the custom chunks waiting. */
function modelOutput(env: StepEnvironment, state: RunState, attempt: AttemptState, prepared: PreparedRequest): Observable<ChunkType> {
  attempt.phase = 'model';
  const structured = prepared.stepInput.structuredOutput;
  const toolCallIds = newToolCallIds(() => toolCallIdsIn(state.messageList.get.all.db()));
  return env.model.call(attempt, prepared).pipe(
    providerToolResults(env, attempt, toolCallIds),
    stepOutput({
      runId: env.runId,
      attempt,
      chain: env.chain,
      toolCallIds,
      lead: () => [stepStartChunk(env.runId, attempt.stepNumber, attempt.messageId), ...env.outlet.drain()],
      partialObjects: structured !== undefined && structured.model === undefined,
      // a cached response's chunks are the processor's (checked where it returned them), not the model's
      ...(prepared.request.response === undefined ? { model: prepared.stepInput.model } : {}),
    }),
  );
}

/** One phase of an attempt once its request is made: what it emits, given the step's environment, the run's state, the attempt and its request. */
type Phase = (env: StepEnvironment, state: RunState, attempt: AttemptState, prepared: PreparedRequest) => Observable<AttemptItem>;

/**
 * The phases of an attempt made from its request, in order — written once, for the agent and for
 * `processorsMiddleware`: the model output (every chunk through `processOutputStream`), the end
 * of the output (last step, no tools), the response into the list (`processLLMResponse`,
 * `processOutputStep`), the `model` commit point, then {@link fromTools}. Each is made when its
 * turn comes: it reads what the ones before it folded into the attempt.
 */
const PHASES: readonly Phase[] = [
  (env, state, attempt, prepared) => modelOutput(env, state, attempt, prepared),
  (env, state, attempt, { tools }) => endOfOutput(env, state, attempt, undefined, tools),
  (env, state, attempt, prepared) => afterModel(env, state, attempt, prepared),
  (env, state, attempt, { tools }) => modelCommit(env, state, attempt, tools),
  (env, state, attempt, { tools }) => fromTools(env, state, attempt, tools),
];

/**
 * An attempt: its request (`processInputStep`, the prompt, `processLLMRequest`) is the value its
 * {@link PHASES} are made from.
 *
 * ```
 * request:  (r|)
 * attempt:  --S--t--e--K--R--F--(E|)      (S step-start, t/e text, K tool-call, R tool-result, F step-finish, E StepEnd)
 * ```
 */
function attemptFrom(env: StepEnvironment, state: RunState, attempt: AttemptState): Observable<AttemptItem> {
  const withRequest = (prepared: PreparedRequest): Observable<AttemptItem> =>
    from(PHASES).pipe(concatMap((phase) => phase(env, state, attempt, prepared)));
  const prepared = request(env, state, attempt);
  return isObservable(prepared) ? prepared.pipe(concatMap(withRequest)) : withRequest(prepared);
}

/**
 * An attempt from its tools on (where an attempt restored at a `model` commit starts): the tools
 * (`processToolResult`), whether the loop goes on (`stopWhen`) — the value the end of the step is
 * made from: the end of the output (last step, after its tools), `object-result` and
 * `step-finish`, the `step` commit point, and the {@link StepEnd} carrying the next position.
 */
function fromTools(env: StepEnvironment, state: RunState, attempt: AttemptState, tools: AgentToolSet | undefined): Observable<AttemptItem> {
  const endOfStep = (continues: boolean): Observable<AttemptItem> => {
    const next = continues ? stepAt(attempt.stepNumber + 1) : COMMIT;
    return concat(
      endOfOutput(env, state, attempt, continues, tools),
      defer(() => finishStep(env, attempt, continues)),
      defer(() => stepCommit(env, state, attempt, next)),
      defer(() => of(stepEnd(attempt, next))),
    );
  };
  return concat(
    toolPhase(env, attempt, tools),
    defer(() => {
      const continues = continuation(env, state, attempt, tools);
      return isObservable(continues) ? continues.pipe(concatMap(endOfStep)) : endOfStep(continues);
    }),
  );
}

/**
 * One attempt at the step of `position` — led by the closing chunks of the attempt a retry
 * rejected, when the position carries them; from its tools on at a `tools` position (restored
 * after its model output): {@link attemptFrom}, {@link fromTools}.
 *
 * ```
 * attempt:  --S--t--e--K--R--F--(E|)      (S step-start, t/e text, K tool-call, R tool-result, F step-finish, E StepEnd)
 * ```
 *
 * @example
 * ```ts
 * // internal: the agent's step (model-step.ts) and processorsMiddleware
 * runAttempt(env, state, stepAt(0)).subscribe((item) => isStepEnd(item) || send(item));
 * ```
 */
export function runAttempt(env: StepEnvironment, state: RunState, position: StepPosition | ToolsPosition): Observable<AttemptItem> {
  return defer(() => {
    if (position.kind === 'tools') {
      // restored after its model output (a `model` commit): its tools, not the model again
      enterAttempt(state, position.attempt);
      return fromTools(env, state, position.attempt, position.tools);
    }
    const begin = (): Observable<AttemptItem> => attemptFrom(env, state, beginAttempt(env, state, position.stepNumber));
    // the attempt a retry rejected is closed first
    return position.rejected === undefined ? begin() : concat(closeRejected(env, state, position.rejected, position.stepNumber), defer(begin));
  });
}

/** The `step` commit point: the step's `step-finish` out, the run goes on at `next` (the next step or its commit). */
function stepCommit(env: StepEnvironment, state: RunState, attempt: AttemptState, next: StepPosition | CommitPosition): Observable<RunCommitPoint> {
  if (env.durability?.commitPoints !== true) return EMPTY;
  return commitPoint(env, state, 'step', { stepNumber: attempt.stepNumber, last: next.kind === 'commit', position: () => next });
}

/** The {@link StepEnd} of a finished attempt: where the run goes on. */
function stepEnd(attempt: AttemptState, next: StepPosition | CommitPosition): StepEnd {
  attempt.phase = 'done';
  return { kind: 'step-end', next };
}
