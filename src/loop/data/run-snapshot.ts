/**
 * The run's state as JSON at a step boundary (`RunSnapshot`), and back: what another process
 * needs to go on with a run — the message list (its unsaved ids included), the steps, the retry
 * counters and feedback, the signals waiting, the system messages every step starts from, each
 * processor's `state` and `streamParts`, the run's request-context writes, and where it stands.
 * `Date`s and `Error`s go through the one JSON codec (`toJsonValue`); the known date fields are
 * dates again after `restoreRun`.
 */
import { MessageList } from '../../message-list/message-list.js';
import type { CoreSystemMessage } from '../../message-list/types.js';
import { adoptProcessorStates } from '../../operators/run-context.js';
import { restoreStreamParts, streamPartsOf, type StreamPartsSnapshot } from '../../operators/stream-parts.js';
import type { AgentChunk, ChunkType, DataChunkType } from '../../contract/chunk-types.js';
import { findNonJson, toJsonValue, type JsonValue } from '../../contract/json-codec.js';
import type { Processor, ProcessorState, StepResult } from '../../contract/processor-types.js';
import { RequestContext } from '../../contract/request-context.js';
import type { ProcessorSignal } from '../../contract/signal-types.js';
import { DurableStateError } from './durable-state-error.js';
import { RunSnapshotError } from './run-snapshot-error.js';
import { RUN_SNAPSHOT_FORMAT, type RunSnapshot } from './run-snapshot-types.js';
import { COMMIT, positionJson, stepAt, type Position } from './run-position.js';
import type { RunSources } from './run-sources.js';
import { restoreAttempt } from './attempt-snapshot.js';
import type { RunState } from './run-state.js';

export { RUN_SNAPSHOT_FORMAT, type RunPosition, type RunSnapshot } from './run-snapshot-types.js';

/** The run's processors by id (the first of an id: processors sharing an id share their state). */
function processorsById(env: RunSources): Map<string, Processor> {
  const byId = new Map<string, Processor>();
  for (const processor of [...env.inputProcessors, ...env.outputProcessors, ...env.apiErrorProcessors]) if (!byId.has(processor.id)) byId.set(processor.id, processor);
  return byId;
}

/**
 * Every processor's `state` as JSON, as its `durableState` says: plain JSON by default (else a
 * `DurableStateError` naming processor and path), left out for `'reset'`, its own `snapshot`.
 */
function processorStatesOf(env: RunSources, state: RunState): Record<string, JsonValue> {
  const processors = processorsById(env);
  const states: Record<string, JsonValue> = {};
  for (const [processorId, processorState] of Object.entries(state.processorStates)) {
    const durable = processors.get(processorId)?.durableState ?? 'json';
    if (durable === 'reset') continue;
    if (durable === false) throw new DurableStateError({ processorId, path: '$', type: 'durableState: false' });
    if (typeof durable === 'object' && 'notDurable' in durable) throw new DurableStateError({ processorId, path: '$', type: `not durable: ${durable.notDurable}` });
    const value: unknown = durable === 'json' ? processorState : durable.snapshot(processorState);
    const nonJson = findNonJson(value);
    if (nonJson !== undefined) throw new DurableStateError({ processorId, path: nonJson.path, type: nonJson.type });
    states[processorId] = toJsonValue(value);
  }
  return states;
}

/**
 * The run's state as a {@link RunSnapshot}, at `position`: JSON all through (a processor state that
 * is not JSON is a `DurableStateError`; a value the codec cannot write, a `JsonEncodingError`
 * naming its path).
 */
export function snapshotRun(env: RunSources, state: RunState, position: Position): RunSnapshot {
  const writes = RequestContext.ownEntriesOf(env.ctx.requestContext);
  const streamParts = streamPartsOf(env.outputProcessors, env.ctx);
  return {
    format: RUN_SNAPSHOT_FORMAT,
    runId: state.runId,
    next: positionJson(position, state.steps),
    messageList: state.messageList.serialize(),
    steps: state.steps.map((step, index) => toJsonValue(step, `steps[${index}]`)),
    retryCount: state.retryCount,
    apiErrorRetryCount: state.apiErrorRetryCount,
    retryFeedback: state.retryFeedback ?? null,
    pendingSignals: state.pendingSignals.map((signal) => toJsonValue(signal, 'a pending signal')),
    initialSystemMessages: toJsonValue(state.initialSystemMessages) as unknown as CoreSystemMessage[],
    finish: state.finish === undefined ? null : toJsonValue(state.finish, 'finish'),
    processorStates: processorStatesOf(env, state),
    streamParts: streamParts === undefined ? null : toJsonValue(streamParts, 'streamParts'),
    customChunks: env.outlet.pending().map((chunk) => toJsonValue(chunk, `chunk ${chunk.type}`)),
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

/** The processor states of a snapshot, as each processor's `durableState` restores them. */
function restoredStates(env: RunSources, states: Record<string, JsonValue>): Record<string, ProcessorState> {
  const processors = processorsById(env);
  const restored: Record<string, ProcessorState> = {};
  for (const [processorId, json] of Object.entries(states)) {
    const durable = processors.get(processorId)?.durableState ?? 'json';
    if (durable === 'reset' || durable === false || (typeof durable === 'object' && 'notDurable' in durable)) continue;
    restored[processorId] = durable === 'json' ? (json as ProcessorState) : durable.restore(json);
  }
  return restored;
}

/**
 * Puts `snapshot` into a run just set up (its environment resolved, its state fresh) and returns
 * where the run goes on: never `processInput` again; at a `tools` position the model is not called
 * again either.
 */
export function restoreRun(env: RunSources, state: RunState, snapshot: RunSnapshot): Position {
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
  const next = snapshot.next;
  adoptProcessorStates(env.ctx, restoredStates(env, snapshot.processorStates));
  if (snapshot.streamParts !== null) {
    try {
      restoreStreamParts(env.outputProcessors, env.ctx, snapshot.streamParts as unknown as StreamPartsSnapshot, reviveChunk);
    } catch (error) {
      throw new RunSnapshotError({ message: `The snapshot's output processors differ from this run's: ${(error as Error).message}`, cause: error });
    }
  }
  for (const chunk of snapshot.customChunks ?? []) env.outlet.push(chunk as unknown as DataChunkType);
  const context = env.ctx.requestContext;
  for (const [key, value] of snapshot.requestContext.values) context.set(key, value);
  for (const key of snapshot.requestContext.deleted) context.delete(key);
  return restoredPosition(env, state, next);
}

/** Where a restored run goes on: a `tools` position's attempt made again from its snapshot. */
function restoredPosition(env: RunSources, state: RunState, next: RunSnapshot['next']): Position {
  if (next.kind === 'commit') return COMMIT;
  if (next.kind === 'step') return stepAt(next.stepNumber);
  try {
    return { kind: 'tools', stepNumber: next.stepNumber, attempt: restoreAttempt(env, state.steps, next.attempt) };
  } catch (error) {
    throw new RunSnapshotError({ message: `The snapshot's attempt cannot be restored: ${(error as Error).message}`, cause: error });
  }
}
