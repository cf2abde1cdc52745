/** Folds a finished run (its chunks and environment) into `generate()`'s result. */
import { RxAgentError } from '../../message-list/errors/rxagent-error.js';
import type { ChunkType, RxFinishReason } from '../../processor/chunk-types.js';
import { AgentRunError } from '../agent-run-error.js';
import { RunAbortedError } from '../run-aborted-error.js';
import type { GenerateResult } from '../agent-types.js';
import type { RunEnvironment } from '../run-environment.js';
import { emptyUsage } from '../../model/usage.js';
import { isOptionError } from '../validate-options.js';

/**
 * The result of a run that ended with `finish` or `tripwire`. For `error` it throws the run's error
 * when it is rxagent's own (`ProcessorError`, `InvalidMessageError`, …, or a `TypeError` about an
 * option), else an `AgentRunError`
 * with the provider's error as `cause`; for `abort`, a `RunAbortedError`. A tripwired run's text is `''` (nothing of a blocked reply is
 * reported), its finish reason `'other'`.
 */
export function foldResult(chunks: readonly ChunkType[], env: RunEnvironment | undefined): GenerateResult {
  const terminal = chunks[chunks.length - 1];
  if (terminal === undefined) throw new Error('The run produced no chunks.');
  if (terminal.type === 'error') {
    const error = terminal.payload.error;
    throw RxAgentError.isInstance(error) || isOptionError(error) ? error : new AgentRunError(error);
  }
  if (terminal.type === 'abort') throw new RunAbortedError({ reason: terminal.payload.reason });
  const steps = env?.ctx.steps ?? [];
  const accepted = steps.filter((step) => step.tripwire === undefined);
  const tripwire = terminal.type === 'tripwire' ? terminal.payload : undefined;
  const finishReason: RxFinishReason = tripwire ? 'other' : (env?.outcome.result?.finishReason ?? 'other');
  return {
    runId: env?.runId ?? (terminal as { runId?: string }).runId ?? '',
    text: tripwire ? '' : (env?.outcome.result?.text ?? ''),
    finishReason,
    usage: env?.totalUsage ?? emptyUsage(),
    steps,
    toolCalls: accepted.flatMap((step) => step.toolCalls),
    toolResults: accepted.flatMap((step) => step.toolResults),
    ...(tripwire ? { tripwire } : {}),
    ...(env?.outcome.result?.object === undefined ? {} : { object: env.outcome.result.object }),
    chunks: acceptedChunks(chunks, tripwire !== undefined),
  };
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
