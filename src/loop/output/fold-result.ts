/** Folds a finished run (its chunks and environment) into `generate()`'s result. */
import { RxAgentError } from '../../message-list/errors/rxagent-error.js';
import type { ChunkType, RxFinishReason } from '../../processor/chunk-types.js';
import { AgentRunError } from '../agent-run-error.js';
import { RunAbortedError } from '../run-aborted-error.js';
import type { GenerateResult } from '../agent-types.js';
import type { RunEnvironment } from '../run-environment.js';
import { emptyUsage } from '../usage.js';
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
    chunks: [...chunks],
  };
}
