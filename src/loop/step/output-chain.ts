/**
 * The run's `processOutputStream` chain, fenced: a processor may rewrite or drop content chunks,
 * but what it invents cannot end, restart or steer the run.
 *
 * - `start`, `tripwire`, `error` and `abort` never enter the chain (the run makes them), so any
 *   that come out of it were invented and are dropped; so is a `finish` out of a step's chunks.
 * - `finish` enters the chain once, at the end of the last step's output (`endOfOutput`): the
 *   first `finish` the chain returns for it is kept (`RunState.finish`) and goes out last, after
 *   `processOutputResult` — one terminal chunk, last.
 * - A `tool-call` passes only if the model (or the cache replay) emitted a call with that
 *   `toolCallId` and `toolName` in this attempt, and only once: a processor may rewrite a call's
 *   input (the tool runs with the rewritten input) but cannot add a tool execution.
 *
 * With no `processOutputStream` hook the chain is the identity and nothing is checked.
 */
import { filter, identity, type MonoTypeOperatorFunction } from 'rxjs';
import { openOutputStream, processOutputStream, type OutputSink, type OutputStreamPass } from '../../operators/process-output-stream.js';
import type { RunContext } from '../../operators/run-context.js';
import type { ChunkType } from '../../contract/chunk-types.js';
import { hasHook } from '../../contract/has-hook.js';
import type { Processor } from '../../contract/processor-types.js';
import { isRunLevel } from '../data/attempt-state.js';

/** The tool calls the model requested in the current attempt (`toolCallId` → `toolName`). */
export type RequestedToolCalls = Map<string, string>;

/** A run's output chain. */
export interface OutputChain {
  /** Whether some output processor has `processOutputStream` (else the chain is the identity). */
  readonly hooked: boolean;
  /**
   * The chain for chunks of a step (the tool phase, `step-finish`, retry markers, data chunks):
   * `processOutputStream`, then the fence against `requested` (none: no tool call passes).
   */
  through(requested?: RequestedToolCalls): MonoTypeOperatorFunction<ChunkType>;
  /** The unfenced chain as a pass fed by function calls (the step-output kernel); `undefined` when not hooked. */
  open(sink: OutputSink): OutputStreamPass | undefined;
  /** The chain without its fence, for a caller that applies {@link admit} itself (`endOfOutput`). */
  readonly raw: MonoTypeOperatorFunction<ChunkType>;
}

const NONE_REQUESTED: RequestedToolCalls = new Map();

/**
 * The fence: whether a chunk out of the chain may pass, given the tool calls the model requested
 * in this attempt. A `tool-call` that passes is taken off `requested` (once per call).
 */
export function admit(chunk: ChunkType, requested: RequestedToolCalls): boolean {
  if (isRunLevel(chunk)) return false;
  if (chunk.type !== 'tool-call') return true;
  if (requested.get(chunk.payload.toolCallId) !== chunk.payload.toolName) return false;
  requested.delete(chunk.payload.toolCallId);
  return true;
}

/** The fenced chain of `processors` for one run. */
export function createOutputChain(processors: readonly Processor[], ctx: RunContext): OutputChain {
  if (!hasHook(processors, 'processOutputStream')) return noOutputChain;
  const raw = processOutputStream(processors, ctx);
  return {
    hooked: true,
    raw,
    through: (requested = NONE_REQUESTED) => (source) => source.pipe(raw, filter((chunk) => admit(chunk, requested))),
    open: (sink) => openOutputStream(processors, ctx, sink),
  };
}

/** The chain of a run with no `processOutputStream` hook: nothing to run, nothing to fence. */
const noOutputChain: OutputChain = { hooked: false, raw: identity, through: () => identity, open: () => undefined };
