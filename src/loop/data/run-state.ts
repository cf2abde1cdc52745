/**
 * The run's state: one value, plain data, owned by the run and passed to its phases. The operators'
 * part of it (`RunContextState`: the message list, steps, retry counters and feedback, pending
 * signals, each processor's `state`) is what the run context reads and writes; the loop adds the
 * rest. `snapshot()` / `restore()` (run-snapshot.ts) make it a JSON `RunSnapshot` at a step boundary.
 */
import type { MessageList } from '../../message-list/message-list.js';
import type { CoreSystemMessage } from '../../message-list/types.js';
import type { RunContextState } from '../../operators/run-context.js';
import type { AgentChunk, ChunkType } from '../../contract/chunk-types.js';
import type { AttemptState } from './attempt-state.js';

/** The attempt a retry rejected: the next attempt leads with its closing chunks and takes `nextStepNumber`. */
export interface RejectedAttempt {
  /** `text-end` / `reasoning-end` of its open parts and its `step-finish` (reason `retry`). */
  readonly closers: readonly ChunkType[];
  /** A tripwire retry is a step of its own (the next number); an API-error retry repeats the number. */
  readonly nextStepNumber: number;
}

/** The run's state (see the module comment). */
export interface RunState extends RunContextState {
  readonly runId: string;
  /** What the run does next: `processInput`, a step (`nextStep`), or its commit. */
  next: 'input' | 'step' | 'commit';
  /** The number of the next step. */
  nextStep: number;
  /** Untagged system messages after `processInput`: every step starts from these. */
  initialSystemMessages: CoreSystemMessage[];
  /** The `finish` the output processors returned at the end of the run's output: it goes out last. */
  finish: AgentChunk<'finish'> | undefined;
  /** The attempt under way (the last one, once the steps are over). */
  attempt: AttemptState | undefined;
  /** The attempt a retry just rejected, until the next attempt closed it in the stream. */
  rejected: RejectedAttempt | undefined;
  /** An attempt restored after its model output (a snapshot at a `model` commit): the next step goes on with its tools. */
  resumed: AttemptState | undefined;
}

/** A run's state before its first step. */
export function createRunState(runId: string, messageList: MessageList): RunState {
  return {
    runId,
    messageList,
    retryCount: 0,
    apiErrorRetryCount: 0,
    retryFeedback: undefined,
    steps: [],
    stepNumber: 0,
    pendingSignals: [],
    processorStates: {},
    next: 'input',
    nextStep: 0,
    initialSystemMessages: [],
    finish: undefined,
    attempt: undefined,
    rejected: undefined,
    resumed: undefined,
  };
}
