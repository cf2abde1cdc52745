/**
 * The run's `processOutputStream` chain, fenced: a processor may rewrite or drop content chunks,
 * but what it invents cannot end, restart or steer the run.
 *
 * - `start`, `tripwire`, `error` and `abort` never enter the chain (the run makes them), so any
 *   that come out of it were invented and are dropped; so is a `finish` out of a step's chain.
 * - `finish` enters the chain once, at the end of the last step's output (`step.ts`): the first
 *   `finish` the chain returns for it is kept and goes out last, after `processOutputResult` — one
 *   terminal chunk, last.
 * - A `tool-call` passes only if the model (or the cache replay) emitted a call with that
 *   `toolCallId` and `toolName` in this step, and only once: a processor may rewrite a call's
 *   input (the tool runs with the rewritten input) but cannot add a tool execution.
 *
 * With no `processOutputStream` hook the chain is the identity and nothing is checked.
 */
import { filter, type MonoTypeOperatorFunction, type Observable, type OperatorFunction } from 'rxjs';
import { openOutputStream, processOutputStream, type OutputSink, type OutputStreamPass } from '../../operators/process-output-stream.js';
import type { RunContext } from '../../operators/run-context.js';
import type { ChunkType } from '../../contract/chunk-types.js';
import type { Processor } from '../../contract/processor-types.js';

/** A run's output chain and the tool calls the model requested in the current step. */
export interface OutputChain {
  /** For chunks of a step (and the retry markers): no run-level chunk passes. */
  readonly chain: OperatorFunction<ChunkType, ChunkType>;
  /** The chain without the fence, for a caller that applies `admit` itself (the model phase). */
  readonly rawChain: OperatorFunction<ChunkType, ChunkType>;
  /** The fence: whether a chunk out of the chain may pass (undefined: everything passes). */
  readonly admit: ((chunk: ChunkType) => boolean) | undefined;
  /**
   * Records the tool calls the model emits (before the chain); undefined when nothing can rewrite
   * chunks. Keyed by `toolCallId`, valued by `toolName`.
   */
  readonly requestedToolCalls: Map<string, string> | undefined;
  /**
   * The unfenced chain as a pass fed by function calls (see `openOutputStream`), for the step's
   * fused output; `undefined` from it when no processor has `processOutputStream`.
   */
  readonly open: (sink: OutputSink) => OutputStreamPass | undefined;
}

const identity: MonoTypeOperatorFunction<ChunkType> = (source) => source;

/** The fenced chain of `processors` for one run. */
export function createOutputChain(processors: readonly Processor[], ctx: RunContext): OutputChain {
  if (!processors.some((processor) => typeof processor.processOutputStream === 'function')) {
    // processOutputStream with no hook passes every chunk through: the identity, which `pipe` skips
    return noOutputChain;
  }
  const raw = processOutputStream(processors, ctx);
  const requested = new Map<string, string>();
  // method shorthand, not `const f = () => …`: under `keepNames` a named per-run closure costs a
  // property dictionary; these are handed out detached, so they close over the run's values
  const chain = {
    admit(chunk: ChunkType): boolean {
      switch (chunk.type) {
        case 'start':
        case 'finish':
        case 'tripwire':
        case 'error':
        case 'abort':
          return false;
        case 'tool-call': {
          if (requested.get(chunk.payload.toolCallId) !== chunk.payload.toolName) return false;
          requested.delete(chunk.payload.toolCallId);
          return true;
        }
        default:
          return true;
      }
    },
    chain(source: Observable<ChunkType>): Observable<ChunkType> {
      return source.pipe(raw, filter(chain.admit));
    },
    open(sink: OutputSink): OutputStreamPass | undefined {
      return openOutputStream(processors, ctx, sink);
    },
    rawChain: raw,
    requestedToolCalls: requested,
  };
  return chain;
}

/** The chain of a run with no `processOutputStream` hook: nothing to fence. */
const noOutputChain: OutputChain = { chain: identity, rawChain: identity, admit: undefined, requestedToolCalls: undefined, open: () => undefined };

/** Records a model tool call as requested (a no-op operator when nothing can rewrite chunks). */
export function recordToolCalls(requested: Map<string, string> | undefined): MonoTypeOperatorFunction<ChunkType> {
  if (requested === undefined) return identity;
  return filter((chunk) => {
    if (chunk.type === 'tool-call') requested.set(chunk.payload.toolCallId, chunk.payload.toolName);
    return true;
  });
}
