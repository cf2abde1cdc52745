/**
 * The run's token usage as a stage of hooks found it and left it. Hooks get the run's `steps` (and
 * `processOutputStep` / `processOutputResult` a usage of their own) as the run's objects: one that
 * edits a count into something that cannot be added up (a BigInt or a Symbol throws in `addUsage`,
 * a Proxy throws where it is read, NaN spreads into every total) would fail the run later, far from
 * it, with an untyped error. Checked after each hook call instead, so the processor is named.
 */
import { ProcessorError, type ProcessorHookName } from '../../contract/errors/processor-error.js';
import { usageProblem } from '../../model/usage.js';

/** A usage a stage's hooks get beside `steps`, and how its path reads in a message (`usage`, `result.usage`). */
export interface ExtraUsage {
  readonly usage: unknown;
  readonly path: string;
}

/** Where `steps` (or `extra`) hold no usage the run can add up; throws when a value cannot be read. */
function problemIn(steps: readonly unknown[], extra: ExtraUsage | undefined): string | undefined {
  for (let index = 0; index < steps.length; index++) {
    const step: unknown = steps[index];
    if (typeof step !== 'object' || step === null) return `steps[${index}] = ${step === null ? 'null' : typeof step}`;
    const problem = usageProblem((step as { usage?: unknown }).usage, `steps[${index}].usage`);
    if (problem !== undefined) return problem;
  }
  return extra === undefined ? undefined : usageProblem(extra.usage, extra.path);
}

/** Whether the usage can be read and added up now. */
function sound(steps: readonly unknown[], extra: ExtraUsage | undefined): boolean {
  try {
    return problemIn(steps, extra) === undefined;
  } catch {
    return false;
  }
}

/**
 * The check to make after each hook call of a stage (made before the stage's first call):
 * throws a `ProcessorError` naming the processor and the hook when the call left `steps`' usage
 * (or `extra`) unsound. `undefined` — nothing to check — when the usage was not sound before the
 * stage (a provider's NaN, steps given to an operator without usage): that is no processor's doing.
 * Costs one walk over the steps per call; a stage without hooks makes none.
 *
 * @example
 * ```ts
 * const keptUsage = usageWatch(context.steps);
 * // after each hook call:
 * keptUsage?.(binding.processor.id, 'processLLMResponse');
 * ```
 */
export function usageWatch(steps: readonly unknown[], extra?: ExtraUsage): ((processorId: string, hook: ProcessorHookName) => void) | undefined {
  if (!sound(steps, extra)) return undefined;
  return (processorId, hook) => {
    let problem: string | undefined;
    try {
      problem = problemIn(steps, extra);
    } catch {
      throw new ProcessorError(processorId, hook, 'left a token usage that cannot be read (a Proxy or a getter that throws); token counts are finite numbers ≥ 0, or undefined.');
    }
    if (problem !== undefined) throw new ProcessorError(processorId, hook, `left ${problem}; token counts are finite numbers ≥ 0, or undefined.`);
  };
}
