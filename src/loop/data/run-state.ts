/**
 * The run's state: one value, plain data, owned by the run and passed to its phases. The operators'
 * part of it (`RunContextState`: the message list, steps, retry counters and feedback, pending
 * signals, each processor's `state`) is what the run context reads and writes; the loop adds the
 * rest — among it what the environment's objects are views over: the output chain's `streamParts`
 * logs, the custom chunks waiting for the outlet, the request context's overlay over the caller's
 * context. Where the run is (`Position`, run-position.ts) is not kept here: the step loop carries
 * it. `snapshotRun()` makes it a JSON `RunSnapshot` at a commit point, `restoreRun()` a state again
 * (run-snapshot.ts).
 */
import type { MessageList } from '../../message-list/message-list.js';
import type { CoreSystemMessage } from '../../message-list/types.js';
import type { RunContextState } from '../../operators/run-context.js';
import type { StreamPartsState } from '../../operators/stream-parts.js';
import type { AgentChunk, DataChunkType } from '../../contract/chunk-types.js';
import type { ProcessorState, StepResult } from '../../contract/processor-types.js';
import { emptyOverlay, type RequestContextOverlay } from '../../contract/request-context.js';
import type { ProcessorSignal } from '../../contract/signal-types.js';
import type { AttemptState } from './attempt-state.js';

/** The run's state (see the module comment). */
export interface RunState extends RunContextState {
  readonly runId: string;
  /**
   * The number of the attempt under way (0 before the first), set with {@link RunState.attempt}
   * (`enterAttempt`): it stays that of a rejected attempt while its closing chunks pass.
   */
  stepNumber: number;
  /** Untagged system messages after `processInput`: every step starts from these. */
  initialSystemMessages: CoreSystemMessage[];
  /** The `finish` the output processors returned at the end of the run's output: it goes out last. */
  finish: AgentChunk<'finish'> | undefined;
  /** The attempt under way (the last one, once the steps are over). */
  attempt: AttemptState | undefined;
  /** The run's own request-context writes and deletes over the caller's context: the run's `requestContext` reads and writes it. */
  readonly requestContext: RequestContextOverlay;
  /** `writer.custom()` chunks written outside `processOutputStream`, waiting for the next phase: the outlet's buffer. */
  customChunks: DataChunkType[];
  /** What the output processors have seen (`streamParts`): the output chain's logs, which the chain appends to (none before it is made). */
  streamParts: StreamPartsState[];
}

/** The loop's `RunState`: plain fields. */
class LoopRunState implements RunState {
  stepNumber = 0;
  retryCount = 0;
  apiErrorRetryCount = 0;
  retryFeedback: string | undefined = undefined;
  steps: StepResult[] = [];
  pendingSignals: ProcessorSignal[] = [];
  processorStates: Record<string, ProcessorState> = {};
  initialSystemMessages: CoreSystemMessage[] = [];
  finish: AgentChunk<'finish'> | undefined = undefined;
  attempt: AttemptState | undefined = undefined;
  customChunks: DataChunkType[] = [];
  streamParts: StreamPartsState[] = [];

  constructor(
    readonly runId: string,
    public messageList: MessageList,
    readonly requestContext: RequestContextOverlay,
  ) {}
}

/**
 * A run's state before its first step. `requestContext`: the overlay its request context writes to
 * (default: an empty one).
 */
export function createRunState(runId: string, messageList: MessageList, requestContext: RequestContextOverlay = emptyOverlay()): RunState {
  return new LoopRunState(runId, messageList, requestContext);
}

/** Makes `attempt` the one under way, and its number the run's `stepNumber`. */
export function enterAttempt(state: RunState, attempt: AttemptState): void {
  state.attempt = attempt;
  state.stepNumber = attempt.stepNumber;
}
