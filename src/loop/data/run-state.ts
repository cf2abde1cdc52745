/**
 * The run's state: one value, plain data, owned by the run and passed to its phases. The operators'
 * part of it (`RunContextState`: the message list, steps, retry counters and feedback, pending
 * signals, each processor's `state`) is what the run context reads and writes; the loop adds the
 * rest. Where the run is (`Position`, run-position.ts) is not kept here: the step loop carries it.
 * `snapshotRun()` / `restoreRun()` (run-snapshot.ts) make it a JSON `RunSnapshot` at a commit point.
 */
import type { MessageList } from '../../message-list/message-list.js';
import type { CoreSystemMessage } from '../../message-list/types.js';
import type { RunContextState } from '../../operators/run-context.js';
import type { AgentChunk } from '../../contract/chunk-types.js';
import type { ProcessorState, StepResult } from '../../contract/processor-types.js';
import type { ProcessorSignal } from '../../contract/signal-types.js';
import type { AttemptState } from './attempt-state.js';

/** The run's state (see the module comment). */
export interface RunState extends RunContextState {
  readonly runId: string;
  /** The number of the attempt under way (0 before the first): read off {@link RunState.attempt}. */
  readonly stepNumber: number;
  /** Untagged system messages after `processInput`: every step starts from these. */
  initialSystemMessages: CoreSystemMessage[];
  /** The `finish` the output processors returned at the end of the run's output: it goes out last. */
  finish: AgentChunk<'finish'> | undefined;
  /** The attempt under way (the last one, once the steps are over). */
  attempt: AttemptState | undefined;
}

/**
 * The loop's `RunState`: plain fields, and `stepNumber` read off the attempt under way (on the
 * prototype: no getter made per run).
 */
class LoopRunState implements RunState {
  retryCount = 0;
  apiErrorRetryCount = 0;
  retryFeedback: string | undefined = undefined;
  steps: StepResult[] = [];
  pendingSignals: ProcessorSignal[] = [];
  processorStates: Record<string, ProcessorState> = {};
  initialSystemMessages: CoreSystemMessage[] = [];
  finish: AgentChunk<'finish'> | undefined = undefined;
  attempt: AttemptState | undefined = undefined;

  constructor(
    readonly runId: string,
    public messageList: MessageList,
  ) {}

  get stepNumber(): number {
    return this.attempt?.stepNumber ?? 0;
  }
}

/** A run's state before its first step. */
export function createRunState(runId: string, messageList: MessageList): RunState {
  return new LoopRunState(runId, messageList);
}
