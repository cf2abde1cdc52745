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

/** `a + b` (unknown + n = n); a sum past 2^53 − 1 is no longer exact: unknown, as such a count is (see `countOf`). */
function sum(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  const total = a + b;
  return total <= Number.MAX_SAFE_INTEGER ? total : undefined;
}

/**
 * A token count as the run keeps it: a whole number from 0 to `Number.MAX_SAFE_INTEGER`; anything
 * else — `NaN`, a negative, an infinite or fractional number, one past 2^53 − 1 (no longer exact,
 * and two of them can add up to `Infinity`), a string, a `BigInt`, `null`, an object — is unknown
 * (`undefined`).
 */
function countOf(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/**
 * `group[field]` of a usage group, when the group is an object (`undefined` for anything else, and
 * for a count that throws where it is read: a getter, a Proxy).
 */
function countIn(group: unknown, field: string): number | undefined {
  if (typeof group !== 'object' || group === null) return undefined;
  try {
    return countOf((group as Record<string, unknown>)[field]);
  } catch {
    return undefined;
  }
}

/** `usage[field]`, or `undefined` when reading it throws (a getter, a Proxy). */
function groupOf(usage: object, field: string): unknown {
  try {
    return (usage as Record<string, unknown>)[field];
  } catch {
    return undefined;
  }
}

/**
 * The AI SDK usage of a V4 `finish` part (a streamed one, or `doGenerate`'s `usage`): where a
 * provider's usage becomes the step's. A provider's accounting glitch must not end a run, nor
 * poison its totals (`NaN` spreads into every sum and is written as `null` by JSON, which the
 * durable journal refuses): a count that is not a whole number from 0 to 2^53 − 1 is unknown
 * (`undefined`), the others stand; a group or a count that cannot be read (a Proxy or a getter
 * that throws) is unknown, the others stand. `totalTokens` is the sum of the input and output
 * totals kept (unknown past 2^53 − 1).
 *
 * @example
 * ```ts
 * fromV4Usage({ inputTokens: { total: Number.NaN, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 4, text: undefined, reasoning: undefined } });
 * // { inputTokens: undefined, outputTokens: 4, totalTokens: 4, … }
 * ```
 */
export function fromV4Usage(usage: LanguageModelV4Usage | undefined): LanguageModelUsage {
  if (typeof usage !== 'object' || usage === null) return emptyUsage();
  // each group and each count read on its own: one that throws is unknown, the others stand
  const inputTokens = groupOf(usage, 'inputTokens');
  const outputTokens = groupOf(usage, 'outputTokens');
  const input = countIn(inputTokens, 'total');
  const output = countIn(outputTokens, 'total');
  return {
    inputTokens: input,
    inputTokenDetails: {
      noCacheTokens: countIn(inputTokens, 'noCache'),
      cacheReadTokens: countIn(inputTokens, 'cacheRead'),
      cacheWriteTokens: countIn(inputTokens, 'cacheWrite'),
    },
    outputTokens: output,
    outputTokenDetails: { textTokens: countIn(outputTokens, 'text'), reasoningTokens: countIn(outputTokens, 'reasoning') },
    totalTokens: sum(input, output),
  };
}

/**
 * A usage read back from storage as one the run can add up: each count that is not a whole number
 * from 0 to 2^53 − 1 is unknown. A snapshot of an earlier build may hold `null` where a provider's
 * NaN was written as JSON (before counts were checked where they enter, `fromV4Usage`).
 *
 * @example
 * ```ts
 * storedUsage({ inputTokens: null, outputTokens: 4, totalTokens: null }).inputTokens; // undefined
 * ```
 */
export function storedUsage(usage: unknown): LanguageModelUsage {
  const record = typeof usage === 'object' && usage !== null ? (usage as Record<string, unknown>) : {};
  const input = record.inputTokenDetails;
  const output = record.outputTokenDetails;
  return {
    inputTokens: countOf(record.inputTokens),
    inputTokenDetails: {
      noCacheTokens: countIn(input, 'noCacheTokens'),
      cacheReadTokens: countIn(input, 'cacheReadTokens'),
      cacheWriteTokens: countIn(input, 'cacheWriteTokens'),
    },
    outputTokens: countOf(record.outputTokens),
    outputTokenDetails: { textTokens: countIn(output, 'textTokens'), reasoningTokens: countIn(output, 'reasoningTokens') },
    totalTokens: countOf(record.totalTokens),
  };
}

/** `a + b`, field by field (unknown + n = n; a sum past 2^53 − 1 is unknown). */
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

/** A count rxagent can add up: `undefined` (unknown) or a whole number from 0 to 2^53 − 1 (see `countOf`). */
function isCount(value: unknown): boolean {
  return value === undefined || countOf(value) !== undefined;
}

/** The rule a usage breaks, for messages: what a token count may be. */
export const USAGE_COUNT_RULE = 'token counts are whole numbers from 0 to 2^53 − 1, or undefined';

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
 * `outputTokenDetails` (objects, when given) — are each `undefined` or a whole number from 0 to
 * 2^53 − 1 (the counts a provider's usage keeps, see `fromV4Usage`). A value that cannot be read
 * (a Proxy that throws, a getter that throws) throws.
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

/**
 * Where the usage of `steps` (the run's `StepResult`s, as hooks and `stopWhen` get them) is not
 * token usage the run can add up, as `usageProblem` words it (`steps[0].usage.inputTokens = number
 * NaN`); `undefined` when every step's is. A value that cannot be read throws.
 *
 * @example
 * ```ts
 * stepsUsageProblem([{ usage: emptyUsage() }, { usage: { ...emptyUsage(), totalTokens: -1 } }]); // 'steps[1].usage.totalTokens = number -1'
 * ```
 */
export function stepsUsageProblem(steps: readonly unknown[]): string | undefined {
  for (let index = 0; index < steps.length; index++) {
    const step: unknown = steps[index];
    if (typeof step !== 'object' || step === null) return `steps[${index}] = ${kindOf(step)}`;
    const problem = usageProblem((step as { usage?: unknown }).usage, `steps[${index}].usage`);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** Whether the usage of `steps` can be read and added up now (`stepsUsageProblem` finds nothing and does not throw). */
export function stepsUsageSound(steps: readonly unknown[]): boolean {
  try {
    return stepsUsageProblem(steps) === undefined;
  } catch {
    return false;
  }
}
