/** Token usage in the AI SDK's `LanguageModelUsage` shape: made from V4 usage, added up across steps. */
import type { LanguageModelUsage } from 'ai';
import type { LanguageModelV4Usage } from '@ai-sdk/provider';

/** Usage with every count unknown. */
export function emptyUsage(): LanguageModelUsage {
  return {
    inputTokens: undefined,
    inputTokenDetails: { noCacheTokens: undefined, cacheReadTokens: undefined, cacheWriteTokens: undefined },
    outputTokens: undefined,
    outputTokenDetails: { textTokens: undefined, reasoningTokens: undefined },
    totalTokens: undefined,
  };
}

const sum = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined ? b : b === undefined ? a : a + b;

/** The AI SDK usage of a V4 `finish` part. */
export function fromV4Usage(usage: LanguageModelV4Usage | undefined): LanguageModelUsage {
  if (usage === undefined) return emptyUsage();
  const input = usage.inputTokens?.total;
  const output = usage.outputTokens?.total;
  return {
    inputTokens: input,
    inputTokenDetails: {
      noCacheTokens: usage.inputTokens?.noCache,
      cacheReadTokens: usage.inputTokens?.cacheRead,
      cacheWriteTokens: usage.inputTokens?.cacheWrite,
    },
    outputTokens: output,
    outputTokenDetails: { textTokens: usage.outputTokens?.text, reasoningTokens: usage.outputTokens?.reasoning },
    totalTokens: sum(input, output),
  };
}

/** `a + b`, field by field (unknown + n = n). */
export function addUsage(a: LanguageModelUsage, b: LanguageModelUsage): LanguageModelUsage {
  return {
    inputTokens: sum(a.inputTokens, b.inputTokens),
    inputTokenDetails: {
      noCacheTokens: sum(a.inputTokenDetails?.noCacheTokens, b.inputTokenDetails?.noCacheTokens),
      cacheReadTokens: sum(a.inputTokenDetails?.cacheReadTokens, b.inputTokenDetails?.cacheReadTokens),
      cacheWriteTokens: sum(a.inputTokenDetails?.cacheWriteTokens, b.inputTokenDetails?.cacheWriteTokens),
    },
    outputTokens: sum(a.outputTokens, b.outputTokens),
    outputTokenDetails: {
      textTokens: sum(a.outputTokenDetails?.textTokens, b.outputTokenDetails?.textTokens),
      reasoningTokens: sum(a.outputTokenDetails?.reasoningTokens, b.outputTokenDetails?.reasoningTokens),
    },
    totalTokens: sum(a.totalTokens, b.totalTokens),
  };
}
