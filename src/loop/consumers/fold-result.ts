/** Folds a finished run (its values: chunks, then `RunEnd`) into `generate()`'s result. */
import { RxAgentError } from '../../errors/rxagent-error.js';
import type { ChunkType, RxFinishReason } from '../../contract/chunk-types.js';
import { AgentRunError } from '../run/agent-run-error.js';
import { RunAbortedError } from '../run/run-aborted-error.js';
import type { GenerateResult } from '../agent-types.js';
import { isChunk, isRunEnd, type RunEnd, type RunItem } from '../run/run-events.js';
import { emptyUsage } from '../../model/usage.js';
import { lastValueFrom, toArray, type Observable } from 'rxjs';
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

/**
 * `generate()` as a fold of the run's values: the chunks and the `RunEnd` collected, then the
 * result read off them ({@link foldResult}; the promise rejects for a run that ended in
 * `error`/`abort`). Each call subscribes `run$` once.
 *
 * ```
 * run:     -S-a-b-F-E|        (F = finish, E = RunEnd)
 * result:  ---------r         (r = { text, steps, … }, the promise's value)
 * ```
 */
export async function foldRun(run$: Observable<RunItem>): Promise<GenerateResult> {
  const items = await lastValueFrom(run$.pipe(toArray()));
  return foldResult(items.filter(isChunk), items.find(isRunEnd));
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
