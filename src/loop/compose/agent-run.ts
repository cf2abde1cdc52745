/**
 * One run of an agent, set up for a loop a user composes (`rxagent/loop`): `withAgentRun` resolves
 * the agent's configuration and the call's options as `agent.stream$()` does (model, tools,
 * processors, memory, the message list with the input) and hands the body an {@link AgentRun};
 * the run's phases (`run-phases.ts`) are Observables over it.
 */
import { type Observable, type ObservableInput, concatMap, defer, finalize, from } from 'rxjs';
import type { ChunkType } from '../../contract/chunk-types.js';
import { DemandGate } from '../../contract/demand-gate.js';
import { isPromiseLike, type MaybePromise } from '../../contract/maybe-async.js';
import type { StepResult } from '../../contract/processor-types.js';
import type { MessageList } from '../../message-list/message-list.js';
import { agentConfig, type Agent } from '../agent.js';
import type { AgentCallOptions, AgentInput } from '../agent-types.js';
import { endRun, endUnstartedRun } from '../run/create-run.js';
import { createEnvironment, type RunSetUp } from '../run/run-environment.js';
import { validateRunArguments } from '../run/validate-options.js';

/**
 * A run set up by {@link withAgentRun}: what a loop reads of it. The phases (`runInput`,
 * `runStep`, `runCommit`, `runFailed`) take it; its environment and state stay inside.
 */
export interface AgentRun {
  /** The run's id (`options.runId`, else a generated one): the `runId` of its chunks. */
  readonly runId: string;
  /** The run's messages: the instructions, the input (and memory's history after `runInput`), then each step's response. */
  readonly messageList: MessageList;
  /** Every step so far, rejected attempts included: what `generate()` reports as `steps`. */
  readonly steps: readonly StepResult[];
  /**
   * The call's `abortSignal` (`options.abortSignal`, else the agent's default), if any. Its abort
   * already aborts the hooks, the model call and the tools; give it to `endWithTerminal` and
   * `takeUntil` to end the stream with an `abort` chunk.
   */
  readonly abortSignal: AbortSignal | undefined;
}

/** What {@link withAgentRun} sets up: one call of `agent`, as `agent.stream$(input, options)` would make it. */
export interface AgentRunOptions {
  /** The agent whose model, tools, processors and memory the run uses. */
  readonly agent: Agent;
  /** The call's input: a string, a message, or an array of messages. */
  readonly input: AgentInput;
  /** The call's options (`agent.stream$`'s second argument). */
  readonly options?: AgentCallOptions;
}

/** Reads a run's environment and state (set once, by the class's static block: `#setUp` stays private). */
let setUpOf: (run: RunHandle) => RunSetUp;
/** Reads and sets whether the run's input phase completed (the class's static block: `#inputRan` stays private). */
let inputRanOf: (run: RunHandle) => boolean;
let markInputRan: (run: RunHandle) => void;
/** Marks the run over (its `withAgentRun` result ended), and reads it (the class's static block). */
let markOver: (run: RunHandle) => void;
let overOf: (run: RunHandle) => boolean;

/**
 * The {@link AgentRun} a loop holds: a view of the run's environment and state, and whether its
 * input phase ran (a loop of its own says where the run is by what it subscribes: the handle only
 * guards a step against a skipped `runInput`).
 */
class RunHandle implements AgentRun {
  readonly #setUp: RunSetUp;
  #inputRan = false;
  #over = false;

  static {
    setUpOf = (run) => run.#setUp;
    markOver = (run) => {
      run.#over = true;
    };
    overOf = (run) => run.#over;
    inputRanOf = (run) => run.#inputRan;
    markInputRan = (run) => {
      run.#inputRan = true;
    };
  }

  constructor(setUp: RunSetUp) {
    this.#setUp = setUp;
  }

  get runId(): string {
    return this.#setUp.env.runId;
  }

  get messageList(): MessageList {
    return this.#setUp.state.messageList;
  }

  get steps(): readonly StepResult[] {
    return this.#setUp.state.steps;
  }

  get abortSignal(): AbortSignal | undefined {
    return this.#setUp.env.callerSignal;
  }
}

/**
 * The environment and state behind `run` (for the phases). A value that `withAgentRun` did not
 * make is refused: a phase never runs on a look-alike.
 */
export function runSetUpOf(run: AgentRun): RunSetUp {
  const handle = handleOf(run);
  if (overOf(handle)) throw new TypeError(`run ${handle.runId} is over (its withAgentRun() result ended): a phase runs inside the body's result only`);
  return setUpOf(handle);
}

/** Whether `run`'s input phase completed (`runInput`). */
export function inputRan(run: AgentRun): boolean {
  return inputRanOf(handleOf(run));
}

/** `run`'s input phase completed: its steps may run. */
export function inputDone(run: AgentRun): void {
  markInputRan(handleOf(run));
}

/** `run` as the handle `withAgentRun` made; a look-alike is refused. */
function handleOf(run: AgentRun): RunHandle {
  if (!(run instanceof RunHandle)) throw new TypeError('not a run made by withAgentRun(): pass the run its body received');
  return run;
}

/**
 * Sets up one run of an agent on subscribe and emits what `body(run)` emits: a loop of your own,
 * composed from the run's phases and the loop's operators. Cold: each subscription is one run.
 * When the result ends (complete, error, or unsubscribe) the run is over: its signal aborts (hooks,
 * model call and tools see it), the caller's signal is released, and a phase subscribed on it
 * afterwards errors with a `TypeError`.
 *
 * The set-up is synchronous unless a dynamic argument (`model`, `tools`, processors as functions)
 * or memory returns a promise, so a run on a marble model stays on virtual time. Invalid call
 * options (or an empty input) error the result before anything runs.
 *
 * ```
 * body(run):  --a--b--|
 * result:     --a--b--|      (the run set up in the subscribe frame, over after the completion)
 * ```
 *
 * @example
 * ```ts
 * import { EMPTY, concat, expand, filter } from 'rxjs';
 * import type { ChunkType } from 'rxagent';
 * import { closeBrackets, endWithTerminal, isStepEnd, runCommit, runFailed, runInput, runStep, withAgentRun } from 'rxagent/loop';
 *
 * const run$ = withAgentRun({ agent, input: 'Hello' }, (run) =>
 *   concat(
 *     runInput(run),
 *     runStep(run, 0).pipe(
 *       expand((item) => (isStepEnd(item) && item.next.kind === 'step' ? runStep(run, item.next.stepNumber) : EMPTY)),
 *       filter((item): item is ChunkType => !isStepEnd(item)),
 *     ),
 *     runCommit(run),
 *   ).pipe(endWithTerminal({ runId: run.runId, onError: (error) => runFailed(run, error) }), closeBrackets()),
 * );
 * ```
 */
export function withAgentRun<T = ChunkType>(setUp: AgentRunOptions, body: (run: AgentRun) => ObservableInput<T>): Observable<T> {
  return defer(() => {
    let started: RunSetUp | undefined;
    let handle: RunHandle | undefined;
    let environment: MaybePromise<RunSetUp> | undefined;
    const bodyOf = (run: RunSetUp): Observable<T> => {
      started = run;
      handle = new RunHandle(run);
      return from(body(handle));
    };
    const run$ = defer(() => {
      const config = agentConfig(setUp.agent);
      const options = setUp.options ?? {};
      validateRunArguments(config, setUp.input, options);
      const made = createEnvironment(config, setUp.input, options, new DemandGate());
      environment = made;
      return isPromiseLike(made) ? from(made).pipe(concatMap(bodyOf)) : bodyOf(made);
    });
    // the run is over: its environment ended now, or when a set-up the consumer left settles
    return run$.pipe(
      finalize(() => {
        if (handle !== undefined) markOver(handle);
        if (started === undefined) endUnstartedRun(environment);
        else endRun(started.env);
      }),
    );
  });
}
