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

const USAGE_COUNTS = ['inputTokens', 'outputTokens', 'totalTokens'] as const;
const USAGE_DETAILS = {
  inputTokenDetails: ['noCacheTokens', 'cacheReadTokens', 'cacheWriteTokens'],
  outputTokenDetails: ['textTokens', 'reasoningTokens'],
} as const;

/** A count rxagent can add up: `undefined` (unknown) or a finite number ≥ 0. */
function isCount(value: unknown): boolean {
  return value === undefined || (typeof value === 'number' && Number.isFinite(value) && value >= 0);
}

/** What a usage value is, for a message (`number NaN`, `bigint`, `object`); never the value's own text. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return `number ${String(value)}`;
  return typeof value;
}

/**
 * Where `usage` is not token usage the run can add up (`addUsage`), as `<path>.<field> = <kind>`
 * (`usage.inputTokens = number NaN`); `undefined` when it is. Token usage is an object whose counts
 * — `inputTokens`, `outputTokens`, `totalTokens`, and those of `inputTokenDetails` and
 * `outputTokenDetails` (objects, when given) — are each `undefined` or a finite number ≥ 0. A value
 * that cannot be read (a Proxy that throws, a getter that throws) throws.
 *
 * @example
 * ```ts
 * usageProblem({ ...emptyUsage(), inputTokens: Number.NaN }, 'steps[0].usage'); // 'steps[0].usage.inputTokens = number NaN'
 * usageProblem(emptyUsage()); // undefined
 * ```
 */
export function usageProblem(usage: unknown, path = 'usage'): string | undefined {
  if (typeof usage !== 'object' || usage === null || Array.isArray(usage)) return `${path} = ${kindOf(usage)}`;
  const record = usage as Record<string, unknown>;
  for (const field of USAGE_COUNTS) {
    const value = record[field];
    if (!isCount(value)) return `${path}.${field} = ${kindOf(value)}`;
  }
  for (const details of ['inputTokenDetails', 'outputTokenDetails'] as const) {
    const group = record[details];
    if (group === undefined) continue;
    if (typeof group !== 'object' || group === null || Array.isArray(group)) return `${path}.${details} = ${kindOf(group)}`;
    for (const field of USAGE_DETAILS[details]) {
      const value = (group as Record<string, unknown>)[field];
      if (!isCount(value)) return `${path}.${details}.${field} = ${kindOf(value)}`;
    }
  }
  return undefined;
}
