/**
 * How a run ends: the commit (`processOutputResult`, the data chunks it wrote, the `finish` that
 * carries the run's result) and the terminal chunk of a run that failed (a tripwire blanks what
 * was said and lets memory keep what it decides; an abort during the commit is an `abort`).
 */
import { EMPTY, type Observable, catchError, concat, concatMap, defer, finalize, from, ignoreElements, of } from 'rxjs';
import { processOutputResult } from '../../operators/process-output-result.js';
import type { AgentChunk, ChunkType, DataChunkType } from '../../contract/chunk-types.js';
import { TripWire } from '../../contract/errors/trip-wire.js';
import { commitMessageIds } from '../../contract/commit-message-ids.js';
import type { OutputResult, StepResult } from '../../contract/processor-types.js';
import { tripwirePayload } from '../../contract/tripwire-payload.js';
import { addUsage, emptyUsage } from '../../model/usage.js';
import { hasHook } from '../../contract/has-hook.js';
import { recordRejection } from '../data/attempt-state.js';
import { terminalChunk } from '../../contract/terminal-chunk.js';
import { failureChunk } from './end-with-terminal.js';
import type { RunEnvironment } from './run-environment.js';
import type { RunState } from '../data/run-state.js';

/** The run's result as `processOutputResult` sees it: usage of every step, the text and last object of the accepted ones. */
function outputOf(state: RunState): OutputResult {
  let usage = emptyUsage();
  let text = '';
  let object: unknown;
  for (const step of state.steps) {
    usage = addUsage(usage, step.usage);
    if (step.tripwire !== undefined) continue;
    if (step.text != null) text += step.text;
    if (step.object !== undefined) object = step.object;
  }
  const last = state.steps[state.steps.length - 1];
  return { text, usage, finishReason: last?.finishReason ?? 'other', steps: [...state.steps], ...(object === undefined ? {} : { object }) };
}

/**
 * The run's `finish`: the processors saw it at the end of the last step's output (`endOfOutput`);
 * it goes out as they returned it, carrying the run's result.
 */
function finishChunk(env: RunEnvironment, state: RunState, result: OutputResult): ChunkType {
  const seen: AgentChunk<'finish'> =
    state.finish ?? terminalChunk(env.runId, { finish: { stepResult: { reason: result.finishReason }, output: { usage: result.usage, text: result.text } } });
  const payload = seen.payload;
  return {
    ...seen,
    payload: {
      ...payload,
      stepResult: { ...payload.stepResult, reason: result.finishReason },
      output: { ...payload.output, usage: result.usage, text: result.text, ...(result.object === undefined ? {} : { object: result.object }) },
    },
  };
}

/** The run's `finish`, made and recorded as sent when it is subscribed (a consumer gone before it never gets it). */
function finishOut(env: RunEnvironment, state: RunState, result: OutputResult): Observable<ChunkType> {
  return defer(() => {
    env.finishSent = true;
    return of(finishChunk(env, state, result));
  });
}

/**
 * The commit: `processOutputResult` (memory saves here), the data chunks hooks wrote meanwhile
 * (kept in the reply unless transient), then `finish`. A tripwire blocks the reply: nothing of it
 * is kept or saved, and the text is `''`.
 *
 * ```
 * commit:  ---(d f|)      (d = a chunk processOutputResult wrote, f = finish)
 * abort:   ---#           (# = TripWire: the reply is removed from the list)
 * ```
 */
export function commit(env: RunEnvironment, state: RunState): Observable<ChunkType> {
  const output = outputOf(state);
  const written: ChunkType[] = [];
  // A durable run's owners share its snapshot, taken before the commit: every id the run hands out
  // during the commit (a hook's `messageList.add` without an id, the kept data chunks' messages, a
  // signal) comes from the run id and the commit's own counter, so every owner gives the same ids in
  // the same order; the steps' ids are in the snapshot already. A plain run keeps its `generateId`.
  const shared = env.durability?.commitPoints === true;
  const record = (chunk: DataChunkType): void => {
    written.push(chunk);
    if (chunk.transient === true) return;
    state.messageList.add(
      { id: env.generateId(), role: 'assistant', createdAt: env.now(), content: { format: 2, parts: [{ type: chunk.type, data: chunk.data }] } },
      'response',
    );
  };
  if (!hasHook(env.outputProcessors, 'processOutputResult') && !env.chain.hooked) {
    // no hook runs here: the chunks waiting, then `finish`
    if (shared) env.useIds(commitMessageIds(env.runId, env.durability?.incarnation));
    try {
      for (const chunk of env.outlet.drain()) record(chunk);
    } finally {
      if (shared) env.useIds(undefined);
    }
    return concat(from(written), finishOut(env, state, output));
  }
  return defer(() => {
    if (shared) env.useIds(commitMessageIds(env.runId, env.durability?.incarnation));
    const stopListening = env.outlet.listen(record);
    return of(output).pipe(
      hasHook(env.outputProcessors, 'processOutputResult') ? processOutputResult(env.outputProcessors, env.ctx) : (result$) => result$,
      catchError((error: unknown) => {
        stopListening();
        if (TripWire.isInstance(error)) state.messageList.removeByIds(state.messageList.get.response.db().map((message) => message.id));
        throw error;
      }),
      concatMap((result) => {
        stopListening();
        return concat(from(written).pipe(env.chain.through()), finishOut(env, state, result));
      }),
      // the commit is over (ended, failed or left): the run's own generator again
      finalize(() => {
        if (shared) env.useIds(undefined);
      }),
    );
  });
}

/**
 * Whether `error` (or an error it wraps) says the commit stopped because of the abort: an
 * `AbortError`, or the abort's own reason (stores reject with `signal.reason`, which may be any
 * value the caller gave `abort()`).
 */
function causedByAbort(error: unknown, reason: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 4; depth++) {
    if (current === reason) return true;
    if (!(current instanceof Error)) return false;
    if (current.name === 'AbortError') return true;
    current = current.cause;
  }
  return false;
}

/** A tripwired run reports no blocked text: every step's text, reasoning and object cleared in place. */
function blankSteps(steps: StepResult[]): void {
  for (const step of steps) {
    step.text = '';
    delete step.reasoningText;
    delete step.object;
  }
}

/**
 * The chunks that end a run that failed with `error`: a `tripwire` chunk for a `TripWire` (the
 * attempt it rejected recorded, every step blanked, memory's tripwire save first), an `abort` for
 * an error the caller's abort caused, else an `error` chunk.
 */
export function endOnError(env: RunEnvironment | undefined, state: RunState | undefined, error: unknown, runId: string): Observable<ChunkType> {
  if (env === undefined || state === undefined) return of(failureChunk(runId, error));
  const caller = env.callerSignal;
  if (caller?.aborted === true && causedByAbort(error, caller.reason)) return of(terminalChunk(runId, { aborted: caller.reason as unknown }));
  if (!TripWire.isInstance(error)) return of(failureChunk(runId, error));
  // a tripwire of an attempt under way rejects it (one from the commit rejects no step)
  if (state.attempt !== undefined && state.attempt.phase !== 'done') recordRejection(state.steps, state.attempt, tripwirePayload(error));
  blankSteps(state.steps);
  const save = env.memoryOnTripwire;
  // memory decides what a tripwired run keeps; a failing save turns the end into an error
  return concat(save === undefined ? EMPTY : from(save(state.messageList)).pipe(ignoreElements()), defer(() => of(terminalChunk(runId, { error }))));
}
