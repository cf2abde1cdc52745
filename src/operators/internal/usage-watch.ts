/**
 * The run's token usage as a stage of hooks found it and left it. Hooks get the run's `steps` (and
 * `processOutputStep` / `processOutputResult` a usage of their own) as the run's objects: one that
 * edits a count into something that cannot be added up (a BigInt or a Symbol throws in `addUsage`,
 * a Proxy throws where it is read, NaN spreads into every total) would fail the run later, far from
 * it, with an untyped error. Checked after each hook call instead, so the processor is named.
 */
import { catchError, isObservable, throwError } from 'rxjs';
import { ProcessorError, type ProcessorHookName } from '../../contract/errors/processor-error.js';
import { isPromiseLike, type MaybeAsync } from '../../contract/maybe-async.js';
import { USAGE_COUNT_RULE, stepsUsageProblem, usageProblem } from '../../model/usage.js';

/** A usage a stage's hooks get beside `steps`, and how its path reads in a message (`usage`, `result.usage`). */
export interface ExtraUsage {
  readonly usage: unknown;
  readonly path: string;
}

/** Where `steps` (or `extra`) hold no usage the run can add up; throws when a value cannot be read. */
function problemIn(steps: readonly unknown[], extra: ExtraUsage | undefined): string | undefined {
  return stepsUsageProblem(steps) ?? (extra === undefined ? undefined : usageProblem(extra.usage, extra.path));
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
 * stage (steps given to an operator without usage): that is no processor's doing.
 * Costs one walk over the steps per call; a stage without hooks makes none.
 *
 * @example
 * ```ts
 * const keptUsage = usageWatch(context.steps);
 * // after each hook call:
 * keptUsage?.(binding.processor.id, 'processLLMResponse');
 * ```
 */
/** The check `usageWatch` makes: throws the `ProcessorError` naming `processorId` and `hook` when the usage is no longer sound. */
export type UsageCheck = (processorId: string, hook: ProcessorHookName) => void;

export function usageWatch(steps: readonly unknown[], extra?: ExtraUsage): UsageCheck | undefined {
  if (!sound(steps, extra)) return undefined;
  return (processorId, hook) => {
    let problem: string | undefined;
    try {
      problem = problemIn(steps, extra);
    } catch {
      throw new ProcessorError(processorId, hook, `left a token usage that cannot be read (a Proxy or a getter that throws); ${USAGE_COUNT_RULE}.`);
    }
    if (problem !== undefined) throw new ProcessorError(processorId, hook, `left ${problem}; ${USAGE_COUNT_RULE}.`);
  };
}

/**
 * A hook call (`call`: `invokeHook`'s value, promise or Observable) with `check` made when it fails
 * too: a call that left the usage unaddable and then aborted or threw fails with the usage's
 * `ProcessorError` instead — its tripwire would be taken as it is, and one asking for a retry would
 * run the step again on the corrupted usage. A call that succeeds is checked by the stage, after it.
 * The call itself when there is nothing to check.
 *
 * @example
 * ```ts
 * thenMaybe(checkedOnFailure(keptUsage, processor.id, 'processOutputStep', () => invokeHook(binding, 'processOutputStep', args)), next);
 * ```
 */
export function checkedOnFailure<T>(check: UsageCheck | undefined, processorId: string, hook: ProcessorHookName, call: () => MaybeAsync<T>): MaybeAsync<T> {
  if (check === undefined) return call();
  let outcome: MaybeAsync<T>;
  try {
    outcome = call();
  } catch (thrown) {
    check(processorId, hook);
    throw thrown;
  }
  if (isObservable(outcome)) {
    return outcome.pipe(
      catchError((thrown: unknown) => {
        check(processorId, hook);
        return throwError(() => thrown);
      }),
    );
  }
  if (isPromiseLike<T>(outcome)) {
    return Promise.resolve(outcome).then(undefined, (thrown: unknown) => {
      check(processorId, hook);
      throw thrown;
    });
  }
  return outcome;
}
