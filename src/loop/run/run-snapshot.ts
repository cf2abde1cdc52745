/**
 * The run's state as JSON at a step boundary (`RunSnapshot`), and back: what another process
 * needs to go on with a run — the message list (its unsaved ids included), the steps, the retry
 * counters and feedback, the signals waiting, the system messages every step starts from, each
 * processor's `state` and `streamParts`, the run's request-context writes, and where it stands.
 * `Date`s and `Error`s go through the one JSON codec (`toJsonValue`); the known date fields are
 * dates again after `restoreRun`.
 */
import { MessageList } from '../../message-list/message-list.js';
import type { SerializedMessageList } from '../../message-list/serialized-message-list.js';
import type { CoreSystemMessage } from '../../message-list/types.js';
import { adoptProcessorStates } from '../../operators/run-context.js';
import { restoreStreamParts, streamPartsOf, type StreamPartsSnapshot } from '../../operators/stream-parts.js';
import type { AgentChunk, ChunkType } from '../../contract/chunk-types.js';
import { findNonJson, toJsonValue, type JsonValue } from '../../contract/json-codec.js';
import type { StepResult } from '../../contract/processor-types.js';
import { RequestContext } from '../../contract/request-context.js';
import type { ProcessorSignal } from '../../contract/signal-types.js';
import { DurableStateError } from './durable-state-error.js';
import { RunSnapshotError } from './run-snapshot-error.js';
import type { RunSetUp } from './run-environment.js';
import type { RunState } from './run-state.js';

/** The newest snapshot format this build reads and writes. */
export const RUN_SNAPSHOT_FORMAT = 1;

/** Where a snapshotted run stands: its next step, or its commit (the steps are over). */
export type RunPosition = { readonly kind: 'step'; readonly stepNumber: number } | { readonly kind: 'commit' };

/**
 * A run's state at a step boundary, as JSON (see the module comment).
 *
 * @example
 * ```ts
 * import type { RunSnapshot } from 'rxagent';
 * const saved: string = JSON.stringify(snapshot satisfies RunSnapshot);
 * ```
 */
export interface RunSnapshot {
  readonly format: number;
  readonly runId: string;
  readonly next: RunPosition;
  readonly messageList: SerializedMessageList;
  readonly steps: JsonValue[];
  readonly retryCount: number;
  readonly apiErrorRetryCount: number;
  readonly retryFeedback: string | null;
  readonly pendingSignals: JsonValue[];
  readonly initialSystemMessages: CoreSystemMessage[];
  /** The `finish` the output processors returned at the end of the output (a run at its commit). */
  readonly finish: JsonValue | null;
  /** Each processor's `state`, by processor id. */
  readonly processorStates: Record<string, JsonValue>;
  /** What each output processor has seen of the stream (`streamParts`), when a chain ran. */
  readonly streamParts: JsonValue | null;
  /** The run's own request-context writes (over the caller's context) and deletes. */
  readonly requestContext: { readonly values: Array<[string, JsonValue]>; readonly deleted: string[] };
}


/** Every processor's `state` as JSON; a state that is not is a `DurableStateError` naming processor and path. */
function processorStatesOf(state: RunState): Record<string, JsonValue> {
  const states: Record<string, JsonValue> = {};
  for (const [processorId, processorState] of Object.entries(state.processorStates)) {
    const nonJson = findNonJson(processorState);
    if (nonJson !== undefined) throw new DurableStateError({ processorId, path: nonJson.path, type: nonJson.type });
    states[processorId] = toJsonValue(processorState);
  }
  return states;
}

/** Where the run stands, for its snapshot. */
function positionOf(state: RunState): RunPosition {
  return state.next === 'commit' ? { kind: 'commit' } : { kind: 'step', stepNumber: state.nextStep };
}

/**
 * The run's state as a {@link RunSnapshot}, at a step boundary: JSON all through (a
 * processor state that is not JSON is a `DurableStateError`; a value the codec cannot write, a
 * `JsonEncodingError` naming its path).
 */
export function snapshotRun({ env, state }: RunSetUp): RunSnapshot {
  const writes = RequestContext.ownEntriesOf(env.ctx.requestContext);
  const streamParts = streamPartsOf(env.outputProcessors, env.ctx);
  return {
    format: RUN_SNAPSHOT_FORMAT,
    runId: state.runId,
    next: positionOf(state),
    messageList: state.messageList.serialize(),
    steps: state.steps.map((step, index) => toJsonValue(step, `steps[${index}]`)),
    retryCount: state.retryCount,
    apiErrorRetryCount: state.apiErrorRetryCount,
    retryFeedback: state.retryFeedback ?? null,
    pendingSignals: state.pendingSignals.map((signal) => toJsonValue(signal, 'a pending signal')),
    initialSystemMessages: toJsonValue(state.initialSystemMessages) as unknown as CoreSystemMessage[],
    finish: state.finish === undefined ? null : toJsonValue(state.finish, 'finish'),
    processorStates: processorStatesOf(state),
    streamParts: streamParts === undefined ? null : toJsonValue(streamParts, 'streamParts'),
    requestContext: {
      values: writes.values.map(([key, value]): [string, JsonValue] => [key, toJsonValue(value, `requestContext "${key}"`)]),
      deleted: writes.deleted,
    },
  };
}

/** An ISO date string back as a `Date` (anything else as it is). */
function date(value: unknown): unknown {
  return typeof value === 'string' ? new Date(value) : value;
}

/** A step result read back: its response timestamp a `Date` again. */
function reviveStep(json: JsonValue): StepResult {
  const step = json as unknown as StepResult;
  const timestamp = step.response?.timestamp as unknown;
  if (timestamp !== undefined) (step.response as { timestamp?: unknown }).timestamp = date(timestamp);
  return step;
}

/** A chunk read back: the date fields of `response-metadata` and `step-finish` `Date`s again. */
export function reviveChunk(json: JsonValue): ChunkType {
  const chunk = json as unknown as ChunkType;
  if (chunk.type === 'response-metadata' && chunk.payload.timestamp !== undefined) chunk.payload.timestamp = date(chunk.payload.timestamp) as Date;
  if (chunk.type === 'step-finish') {
    const response = (chunk.payload as { response?: { timestamp?: unknown } }).response;
    if (response?.timestamp !== undefined) response.timestamp = date(response.timestamp);
  }
  return chunk;
}

/**
 * Puts `snapshot` into a run just set up (its environment resolved, its state fresh): the run then
 * goes on where the snapshot stands — `processInput` does not run again.
 */
export function restoreRun({ env, state }: RunSetUp, snapshot: RunSnapshot): void {
  if (typeof snapshot.format !== 'number' || snapshot.format > RUN_SNAPSHOT_FORMAT) {
    throw new RunSnapshotError({ message: `This run snapshot has format ${String(snapshot.format)}; this build reads formats up to ${RUN_SNAPSHOT_FORMAT}.` });
  }
  state.messageList = MessageList.deserialize(snapshot.messageList, { generateId: env.generateId, now: env.now });
  state.steps = snapshot.steps.map(reviveStep);
  state.retryCount = snapshot.retryCount;
  state.apiErrorRetryCount = snapshot.apiErrorRetryCount;
  state.retryFeedback = snapshot.retryFeedback ?? undefined;
  state.pendingSignals = snapshot.pendingSignals.map((json) => {
    const signal = json as unknown as ProcessorSignal;
    return { ...signal, createdAt: date(signal.createdAt) as Date };
  });
  state.initialSystemMessages = snapshot.initialSystemMessages;
  state.finish = snapshot.finish === null ? undefined : (reviveChunk(snapshot.finish) as AgentChunk<'finish'>);
  state.next = snapshot.next.kind === 'commit' ? 'commit' : 'step';
  state.nextStep = snapshot.next.kind === 'step' ? snapshot.next.stepNumber : state.steps.length;
  adoptProcessorStates(env.ctx, snapshot.processorStates as Record<string, Record<string, unknown>>);
  if (snapshot.streamParts !== null) {
    try {
      restoreStreamParts(env.outputProcessors, env.ctx, snapshot.streamParts as unknown as StreamPartsSnapshot, reviveChunk);
    } catch (error) {
      throw new RunSnapshotError({ message: `The snapshot's output processors differ from this run's: ${(error as Error).message}`, cause: error });
    }
  }
  const context = env.ctx.requestContext;
  for (const [key, value] of snapshot.requestContext.values) context.set(key, value);
  for (const key of snapshot.requestContext.deleted) context.delete(key);
}
