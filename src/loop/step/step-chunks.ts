/** The lifecycle chunks of a step. */
import type { LanguageModelUsage } from 'ai';
import type { AgentChunk, RxFinishReason, ToolCallInfo, TripwirePayload } from '../../contract/chunk-types.js';
import { makeChunk } from '../../contract/make-chunk.js';

/** `step-start`. */
export function stepStartChunk(runId: string, stepNumber: number, messageId: string): AgentChunk<'step-start'> {
  return makeChunk(runId, 'step-start', { stepNumber, messageId });
}

/** `step-finish` of a finished, rejected (`retry`/`tripwire`) or failed step. */
export function stepFinishChunk(
  runId: string,
  options: {
    stepNumber: number;
    messageId: string;
    reason: RxFinishReason;
    rawReason?: string | undefined;
    isContinued: boolean;
    text: string;
    toolCalls: ToolCallInfo[];
    usage: LanguageModelUsage;
    warnings?: unknown[];
    tripwire?: TripwirePayload;
    response?: { id?: string; modelId?: string; timestamp?: Date };
  },
): AgentChunk<'step-finish'> {
  return makeChunk(runId, 'step-finish', {
    stepNumber: options.stepNumber,
    messageId: options.messageId,
    stepResult: {
      reason: options.reason,
      ...(options.rawReason === undefined ? {} : { rawReason: options.rawReason }),
      isContinued: options.isContinued,
      ...(options.warnings === undefined ? {} : { warnings: options.warnings }),
      ...(options.tripwire === undefined ? {} : { tripwire: options.tripwire }),
    },
    output: { text: options.text, toolCalls: options.toolCalls, usage: options.usage },
    ...(options.response === undefined ? {} : { response: options.response }),
  });
}
