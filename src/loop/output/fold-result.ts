/** Folds a finished run (its values: chunks, then `RunEnd`) into `generate()`'s result. */
import { RxAgentError } from '../../message-list/errors/rxagent-error.js';
import type { ChunkType, RxFinishReason } from '../../contract/chunk-types.js';
import { AgentRunError } from '../run/agent-run-error.js';
import { RunAbortedError } from '../run/run-aborted-error.js';
import type { GenerateResult } from '../agent-types.js';
import { isChunk, isRunEnd, type RunEnd, type RunItem } from '../run/run-events.js';
import { emptyUsage } from '../../model/usage.js';
import { defer, map, reduce, type OperatorFunction } from 'rxjs';
import { isOptionError } from '../run/validate-options.js';

/**
 * The result of a run that ended with `finish` or `tripwire`. For `error` it throws the run's error
 * when it is rxagent's own (`ProcessorError`, `InvalidMessageError`, …, or a `TypeError` about an
 * option), else an `AgentRunError`
 * with the provider's error as `cause`; for `abort`, a `RunAbortedError`. A tripwired run's text is `''` (nothing of a blocked reply is
 * reported), its finish reason `'other'`.
 */
export function foldResult(chunks: readonly ChunkType[], end: RunEnd | undefined): GenerateResult {
  const terminal = chunks[chunks.length - 1];
  if (terminal === undefined) throw new Error('The run produced no chunks.');
  if (terminal.type === 'error') {
    const error = terminal.payload.error;
    throw RxAgentError.isInstance(error) || isOptionError(error) ? error : new AgentRunError(error);
  }
  if (terminal.type === 'abort') throw new RunAbortedError({ reason: terminal.payload.reason });
  const steps = end?.steps ?? [];
  const accepted = steps.filter((step) => step.tripwire === undefined);
  const tripwire = terminal.type === 'tripwire' ? terminal.payload : undefined;
  const finish = terminal.type === 'finish' ? terminal.payload : undefined;
  const finishReason: RxFinishReason = finish?.stepResult.reason ?? 'other';
  return {
    runId: end?.runId ?? (terminal as { runId?: string }).runId ?? '',
    text: finish?.output.text ?? '',
    finishReason,
    usage: end?.usage ?? emptyUsage(),
    steps,
    toolCalls: accepted.flatMap((step) => step.toolCalls),
    toolResults: accepted.flatMap((step) => step.toolResults),
    ...(tripwire ? { tripwire } : {}),
    ...(finish?.output.object === undefined ? {} : { object: finish.output.object }),
    chunks: acceptedChunks(chunks, tripwire !== undefined),
  };
}

/** A run's values collected for {@link foldResult}. */
interface Collected {
  readonly chunks: ChunkType[];
  end: RunEnd | undefined;
}

/**
 * `generate()` as a fold of the run's values: the chunks and the `RunEnd` are reduced, then the
 * result is read off them ({@link foldResult}; it throws for a run that ended in `error`/`abort`).
 *
 * ```
 * run:     -o-S-a-b-F-E|      (o = RunOpened, F = finish, E = RunEnd)
 * result:  -----------r|      (r = { text, steps, … })
 * ```
 */
export function foldRun(): OperatorFunction<RunItem, GenerateResult> {
  // the accumulator is made per subscription (`defer`): a re-subscribed fold starts empty
  return (items$) =>
    defer(() => items$.pipe(
      reduce<RunItem, Collected>(
        (collected, item) => {
          if (isChunk(item)) collected.chunks.push(item);
          else if (isRunEnd(item)) collected.end = item;
          return collected;
        },
        { chunks: [], end: undefined },
      ),
      map(({ chunks, end }) => foldResult(chunks, end)),
    ));
}

/** What a blocked reply said: dropped from `generate()`'s chunks. */
function isSaid(chunk: ChunkType): boolean {
  return chunk.type === 'text-delta' || chunk.type === 'reasoning-delta' || chunk.type === 'object' || chunk.type === 'object-result';
}

/** A `step-finish` chunk whose step text is cleared. */
function withoutText(chunk: Extract<ChunkType, { type: 'step-finish' }>): ChunkType {
  return chunk.payload.output.text === '' ? chunk : { ...chunk, payload: { ...chunk.payload, output: { ...chunk.payload.output, text: '' } } };
}

/**
 * The run's chunks without what was blocked: the text, reasoning and objects of attempts rejected
 * for a retry, and of the whole run when it was tripwired. Lifecycle chunks stay.
 */
export function acceptedChunks(chunks: readonly ChunkType[], tripwired: boolean): ChunkType[] {
  if (tripwired) return chunks.flatMap((chunk) => (isSaid(chunk) ? [] : [chunk.type === 'step-finish' ? withoutText(chunk) : chunk]));
  const accepted: ChunkType[] = [];
  let attempt: ChunkType[] = [];
  let inAttempt = false;
  for (const chunk of chunks) {
    if (chunk.type === 'step-start') inAttempt = true;
    if (!inAttempt) {
      accepted.push(chunk);
      continue;
    }
    attempt.push(chunk);
    if (chunk.type === 'step-finish') {
      const rejected = chunk.payload.stepResult.reason === 'retry';
      for (const item of attempt) if (!rejected || !isSaid(item)) accepted.push(item);
      attempt = [];
      inAttempt = false;
    }
  }
  accepted.push(...attempt);
  return accepted;
}
