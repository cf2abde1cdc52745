/**
 * The phases of a run, for a loop a user composes (`rxagent/loop`): the same functions
 * `agent.stream$()`'s loop is made of (`run/create-run.ts`), over an {@link AgentRun}. Each is cold:
 * it does its work when subscribed.
 */
import { type Observable, defer, tap } from 'rxjs';
import type { ChunkType } from '../../contract/chunk-types.js';
import { inputPhase } from '../run/run-input.js';
import { commit, endOnError } from '../run/run-commit.js';
import type { StepEnd } from '../step/attempt.js';
import { withoutCommitPoints } from '../data/commit-points.js';
import { modelStep } from '../step/model-step.js';
import { stepAt } from '../data/run-position.js';
import { inputDone, inputRan, runSetUpOf, type AgentRun } from './agent-run.js';

/**
 * The input phase: `processInput` of the input processors once (memory loads the thread's history
 * here), then the system messages every step starts from are fixed. Emits nothing; an abort or a
 * hook's error is an error notification. Run it before the first {@link runStep}.
 *
 * ```
 * runInput(run):  |        (hooks that return synchronously: completes in the subscribe frame)
 * ```
 *
 * @example
 * ```ts
 * import { concat } from 'rxjs';
 * import { runInput, runStep } from 'rxagent/loop';
 *
 * const first$ = concat(runInput(run), runStep(run, 0));
 * ```
 */
export function runInput(run: AgentRun): Observable<never> {
  return defer(() => {
    const { env, state } = runSetUpOf(run);
    return inputPhase(env, state).pipe(tap({ complete: () => inputDone(run) }));
  });
}

/**
 * One step of the run: an attempt at it (`processInputStep` and `prepareStep`, the prompt,
 * `processLLMRequest`, the model call with every chunk through `processOutputStream`,
 * `processLLMResponse`, `processOutputStep`, the tools with `processToolResult`, `stopWhen`,
 * `step-finish`), re-run by the retry operators when `processAPIError` recovers a provider error or
 * a processor aborts with `retry: true` (the rejected attempt rolled back and closed with a
 * `step-finish` of reason `retry`). Its chunks, then one {@link StepEnd} whose `next` says where
 * the run goes on: the next step (its number) or the run's commit. A tripwire or an unrecovered
 * error is an error notification.
 *
 * Errors with a `TypeError` when {@link runInput} has not run (the input processors would be
 * skipped: memory's history, input guardrails), and with a `RangeError` for a step number that is
 * not a whole number ≥ 0.
 *
 * ```
 * attempt 1:  --S--t--#                      (# = TripWire { retry: true } from processOutputStep)
 * runStep:    --S--t--R--S--t--F--(E|)       (R = step-finish 'retry', F = step-finish, E = StepEnd)
 * ```
 *
 * @example
 * ```ts
 * import { EMPTY, expand } from 'rxjs';
 * import { isStepEnd, runStep } from 'rxagent/loop';
 *
 * // every step, each started by the previous one's StepEnd
 * const steps$ = runStep(run, 0).pipe(expand((item) => (isStepEnd(item) && item.next.kind === 'step' ? runStep(run, item.next.stepNumber) : EMPTY)));
 * ```
 */
export function runStep(run: AgentRun, stepNumber: number): Observable<ChunkType | StepEnd> {
  return defer(() => {
    if (!Number.isInteger(stepNumber) || stepNumber < 0) throw new RangeError(`runStep(): the step number must be a whole number ≥ 0, got ${String(stepNumber)}`);
    const { env, state } = runSetUpOf(run);
    if (!inputRan(run)) throw new TypeError('runStep(): run runInput(run) first (processInput, memory history, the system messages every step starts from)');
    // a run set up by withAgentRun has no durability: no commit point among the values
    return withoutCommitPoints(modelStep(env, state, stepAt(stepNumber)));
  });
}

/**
 * The run's commit, after its last step: `processOutputResult` of the output processors (memory
 * saves here), the data chunks hooks wrote meanwhile, then `finish` carrying the run's text, usage
 * and finish reason. A tripwire here removes the reply from the list (nothing of it is saved) and
 * is an error notification.
 *
 * ```
 * runCommit(run):  ---(df|)      (d = a chunk processOutputResult wrote, f = finish)
 * ```
 *
 * @example
 * ```ts
 * import { concat } from 'rxjs';
 * import { runCommit } from 'rxagent/loop';
 *
 * const run$ = concat(input$, steps$, runCommit(run));
 * ```
 */
export function runCommit(run: AgentRun): Observable<ChunkType> {
  return defer(() => {
    const { env, state } = runSetUpOf(run);
    return commit(env, state);
  });
}

/**
 * The chunks that end a run that failed with `error`, as `agent.stream$()` ends one: a `tripwire`
 * chunk for a `TripWire` (the attempt it rejected recorded in `steps`, every step's text blanked,
 * memory's tripwire save first), an `abort` chunk for an error the caller's abort caused, else an
 * `error` chunk. Made for `endWithTerminal`'s `onError`.
 *
 * ```
 * source:  --a--#           (# = TripWire)
 * result:  --a--(W|)        (endWithTerminal({ onError: (error) => runFailed(run, error) }); W = tripwire chunk)
 * ```
 *
 * @example
 * ```ts
 * import { endWithTerminal, runFailed } from 'rxagent/loop';
 *
 * const ended$ = body$.pipe(endWithTerminal({ runId: run.runId, onError: (error) => runFailed(run, error) }));
 * ```
 */
export function runFailed(run: AgentRun, error: unknown): Observable<ChunkType> {
  return defer(() => {
    const { env, state } = runSetUpOf(run);
    return endOnError(env, state, error, env.runId);
  });
}
