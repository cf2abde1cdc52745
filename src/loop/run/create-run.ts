/**
 * One agent run as a cold Observable — the loop's skeleton, composed from RxJS operators:
 *
 * ```
 * run$ = setUp$.pipe(                                             the environment and the run's state
 *   concatMap(({ env, state }) => concat(                           (no concatMap when the set-up is synchronous)
 *     of(start),
 *     processInput$.pipe(takeUntil(aborted$)),                      the caller's abort cuts these
 *     steps$.pipe(takeUntil(aborted$)),
 *     defer(() => aborted ? EMPTY : commit$),                       but never the commit
 *   )),
 *   endWithTerminal({ onError, closeBrackets: true, then: RunEnd }), one start first, one terminal chunk,
 *                                                                   brackets closed, then the RunEnd
 *   finalize(endRun),                                               the run's signal aborted, the caller's and custom$ released
 *                                                                   (when a set-up the consumer left settles, if it had not)
 * )
 * steps$ = positions.pipe(concatMap((p) => modelStep(p)))   fed by each StepEnd's next position while the loop goes on
 * ```
 */
import {
  BehaviorSubject,
  EMPTY,
  type MonoTypeOperatorFunction,
  type Observable,
  concat,
  concatMap,
  defer,
  filter,
  finalize,
  from,
  fromEvent,
  identity,
  of,
  take,
  takeUntil,
  tap,
} from 'rxjs';
import { DemandGate } from '../../contract/demand-gate.js';
import type { ChunkType } from '../../contract/chunk-types.js';
import type { StepResult } from '../../contract/processor-types.js';
import { makeChunk } from '../../contract/make-chunk.js';
import { isPromiseLike, type MaybePromise } from '../../contract/maybe-async.js';
import type { LanguageModelUsage } from 'ai';
import { addUsage, emptyUsage } from '../../model/usage.js';
import type { AgentCallOptions, AgentConfig, AgentInput } from '../agent-types.js';
import { hasHook } from '../../contract/has-hook.js';
import { endsStep, type AttemptItem, type StepEnd } from '../step/attempt.js';
import { stepAt, type Position, type StepPosition, type ToolsPosition } from '../data/run-position.js';
import { modelStep } from '../step/model-step.js';
import { endWithTerminal } from './end-with-terminal.js';
import { commit, endOnError } from './run-commit.js';
import { RUN_FINISHED, RUN_UNFINISHED } from '../../contract/run-ending.js';
import { createEnvironment, type RunEnvironment, type RunSetUp } from './run-environment.js';
import { runEnd, type DurableRunItem, type RunEnd, type RunItem } from './run-events.js';
import { commitPoint } from '../data/commit-points.js';
import type { RunCommitPoint, RunDurability } from '../data/run-durability.js';
import { inputPhase } from './run-input.js';
import { optionError, readOptionsOnce, validateRunArguments, type OptionsRead } from './validate-options.js';

/** What a consumer gives a run besides its call options: the demand gate it will hold, durability. */
export interface RunWiring extends RunDurability {
  /** The run's demand gate, held by a consumer that reads slower than the model (default: a fresh one nobody holds). */
  readonly demand?: DemandGate;
  /** The consumer folds the run into one result (`generate()`): a step nothing streams may be answered through `doGenerate`. */
  readonly folded?: boolean;
  /**
   * The options as the consumer read them already (`stream()`: its text stream's retry budgets come
   * from this reading): the run uses it instead of reading `options` again, so both see one answer.
   */
  readonly read?: OptionsRead;
}

/** `results: false`: the chunks only, no {@link RunEnd} after the terminal chunk (a consumer that keeps no results: `stream$()`). */
type ChunksOnly = RunWiring & { readonly results: false; readonly commitPoints?: false };

/** `commitPoints: true`: the run's commit points among its values (durable execution). */
type WithCommitPoints = RunWiring & { readonly commitPoints: true };

/** What the run's body emits: its chunks, and a durable run's commit points. */
type BodyItem = ChunkType | RunCommitPoint;

/** `takeUntil` the caller's abort (emitted at once when it has already happened); the identity without a signal. */
function untilAborted<T>(signal: AbortSignal | undefined): MonoTypeOperatorFunction<T> {
  if (signal === undefined) return identity;
  return takeUntil(defer(() => (signal.aborted ? of(true) : fromEvent(signal, 'abort').pipe(take(1)))));
}

/**
 * The run's steps: `concatMap` over positions, from `first` on, each step's {@link StepEnd} feeding
 * the next position while the loop goes on (and ending the positions at the commit). The
 * `StepEnd`s themselves stay inside.
 *
 * ```
 * positions: 0----------1--------|
 * steps:     --S-K-R-F-(E)--S-t-F-(E)|       (E = StepEnd: next step 1, then the commit)
 * result:    --S-K-R-F------S-t-F---|
 * ```
 */
function steps({ env, state }: RunSetUp, first: StepPosition | ToolsPosition): Observable<BodyItem> {
  return defer(() => {
    const positions = new BehaviorSubject<StepPosition | ToolsPosition>(first);
    const advance = (end: StepEnd): void => {
      if (end.next.kind === 'step') positions.next(end.next);
      else positions.complete();
    };
    return positions.pipe(
      concatMap((position) => modelStep(env, state, position)),
      tap((item) => {
        if (endsStep(item)) advance(item);
      }),
      filter((item): item is Exclude<AttemptItem, StepEnd> => !endsStep(item)),
    );
  });
}

/**
 * `start`, `processInput` (a restored run has run it), the steps from where the run stands (the
 * caller's abort cuts these), then the commit.
 */
function body(run: RunSetUp, start: Position): Observable<BodyItem> {
  const { env, state } = run;
  const cut = untilAborted<BodyItem>(env.callerSignal);
  return concat(
    of(makeChunk(env.runId, 'start', {})),
    start.kind === 'input' ? concat(inputPhase(env, state), commitPoint(env, state, 'input', { stepNumber: 0, position: () => stepAt(0) })).pipe(cut) : EMPTY,
    start.kind === 'commit' ? EMPTY : steps(run, start.kind === 'input' ? stepAt(0) : start).pipe(cut),
    defer(() => (env.callerSignal?.aborted === true ? EMPTY : commit(env, state))),
  );
}

/**
 * The run's usage, added up over its steps (the `RunEnd`'s). A step's usage that cannot be added up
 * counts as unknown: a hook that corrupted it ended the run with its `ProcessorError` already, and
 * the `RunEnd` after that terminal chunk must not fail in its place.
 */
function totalUsage(steps: readonly StepResult[]): LanguageModelUsage {
  let total = emptyUsage();
  for (const step of steps) {
    try {
      total = addUsage(total, step.usage);
    } catch {
      // unreadable (a Proxy that throws) or not addable (a BigInt, a Symbol): left out
    }
  }
  return total;
}

/** The run id the caller gave, for the chunks of a run that ended before its set-up made one (`'run'` when none, or not a valid one). */
function givenRunId(given: unknown): string {
  return typeof given === 'string' && given.length > 0 ? given : 'run';
}

/**
 * The run is over: its signal aborted (hooks and tools see it), the caller's signal released. The
 * signal's reason says how it ended: the caller's abort its reason, a run that sent its `finish`
 * `RUN_FINISHED`, any other end `RUN_UNFINISHED` (shared errors: a fresh `DOMException` per run
 * captures a stack trace).
 */
export function endRun(env: RunEnvironment | undefined): void {
  if (env === undefined) return;
  env.release();
  const caller = env.callerSignal;
  env.abortController.abort(caller?.aborted === true ? caller.reason : env.finishSent ? RUN_FINISHED : RUN_UNFINISHED);
}

/**
 * Ends a run whose body never started: `setUp` settled after the consumer left (or its restore
 * threw), so nothing else holds its environment. A set-up still pending is ended when it settles
 * (a failed one made nothing to end): an early unsubscribe leaves no listener on the caller's
 * signal and no subscription to the run's custom chunks.
 */
export function endUnstartedRun(setUp: MaybePromise<RunSetUp> | undefined): void {
  if (isPromiseLike(setUp)) setUp.then((made) => endRun(made.env), ignoreFailedSetUp);
  else endRun(setUp?.env);
}

/** A set-up that failed made no environment (its error went to the run's subscriber, if any). */
function ignoreFailedSetUp(): void {}

/**
 * A run of `config` on `input` with `options`: cold, one subscription = one run. Emits the chunks
 * (one `start` … one terminal chunk), then `RunEnd` (see `run-events.ts`): results are values of
 * the stream, not side channels. A consumer that paces the run gives it the demand gate it holds
 * (`wiring.demand`); durable execution asks for its commit points as values among the others
 * (`commitPoints: true`: then the type says so) and gives it a snapshot to go on from.
 */
export function createRun(config: AgentConfig, input: AgentInput, options: AgentCallOptions | undefined, wiring: WithCommitPoints): Observable<DurableRunItem>;
export function createRun(config: AgentConfig, input: AgentInput, options?: AgentCallOptions, wiring?: RunWiring & { readonly commitPoints?: false }): Observable<RunItem>;
export function createRun(config: AgentConfig, input: AgentInput, options: AgentCallOptions | undefined, wiring: ChunksOnly): Observable<ChunkType>;
export function createRun(config: AgentConfig, input: AgentInput, options: AgentCallOptions | undefined, wiring: RunWiring): Observable<DurableRunItem>;
export function createRun(config: AgentConfig, input: AgentInput, options: AgentCallOptions = {}, wiring: RunWiring | ChunksOnly = {}): Observable<DurableRunItem> {
  return defer(() => {
    const demand = wiring.demand ?? new DemandGate();
    // the options read once, before they are checked (inside the run, below): what is checked is what the run uses
    const read = wiring.read ?? readOptionsOnce(options);
    // options that are not an object (or whose reading threw) are the check's error, inside the run
    const given: Partial<AgentCallOptions> = 'options' in read && typeof read.options === 'object' && read.options !== null ? read.options : {};
    const callerSignal = given.abortSignal ?? config.defaultOptions?.abortSignal;
    let run: RunSetUp | undefined;
    let setUp: MaybePromise<RunSetUp> | undefined;
    const bodyOf = (setUpRun: RunSetUp): Observable<BodyItem> => {
      run = setUpRun;
      return body(setUpRun, setUpRun.position);
    };
    // the set-up, then the body: at once when the set-up is synchronous (a run on a marble model
    // stays on virtual time), after its promise otherwise (the caller's abort cuts the wait)
    // bad arguments throw here, inside the run: endWithTerminal makes the `start` and the `error` chunk
    const chunks$ = defer(() => {
      if (!('options' in read)) throw read.thrown;
      validateRunArguments(config, input, read.options);
      if (wiring.demand !== undefined && !DemandGate.isInstance(wiring.demand)) {
        throw optionError('stream$: options.demand must be a DemandGate (new DemandGate() from rxagent).');
      }
      const made = createEnvironment(config, input, read.options as AgentCallOptions, demand, wiring);
      setUp = made;
      return isPromiseLike(made) ? from(made).pipe(untilAborted(callerSignal), concatMap(bodyOf)) : bodyOf(made);
    });
    const terminal = {
      runId: () => run?.env.runId ?? givenRunId(given.runId ?? config.defaultOptions?.runId),
      abortSignal: callerSignal,
      onError: (error: unknown, runId: string) => endOnError(run?.env, run?.state, error, runId),
      closeBrackets: true,
    };
    // the results, as the stream's last value
    const results = (): RunEnd => {
      const steps = run?.state.steps ?? [];
      return runEnd(run?.env.runId ?? 'run', steps, totalUsage(steps));
    };
    // a durable run's commit points pass endWithTerminal unchanged: no `type`, so neither a start
    // nor a terminal, nothing opened or closed (its spec)
    return (chunks$ as Observable<ChunkType>).pipe(
      (wiring as Partial<ChunksOnly>).results === false ? endWithTerminal(terminal) : endWithTerminal({ ...terminal, then: results }),
      // the run is over: its environment ended now, or when a set-up the consumer left settles
      finalize(() => (run === undefined ? endUnstartedRun(setUp) : endRun(run.env))),
    );
  });
}

