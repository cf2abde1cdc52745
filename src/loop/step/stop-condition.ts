/**
 * `stopWhen`: when the agent loop stops going on after a tool step, in the AI SDK's shape — a
 * function of the run's steps returning a boolean (or a promise of one). Conditions are checked
 * after each step whose tool calls ran here (the moment the loop would start another step); the
 * loop stops when any of them is met. Without `stopWhen` the rule is `maxSteps` (default 5).
 */
import type { StepResult } from '../../contract/processor-types.js';
import { isPromiseLike } from '../../contract/maybe-async.js';
import { StopConditionError } from './stop-condition-error.js';
import { USAGE_COUNT_RULE, stepsUsageProblem, stepsUsageSound } from '../../model/usage.js';

/**
 * What a {@link StopCondition} is given: the run's steps so far, the step just finished (with its
 * tool results) last — rejected attempts included, with their `tripwire`, as in `result.steps`.
 * A copy of the list: adding or removing entries changes nothing in the run.
 *
 * @example
 * ```ts
 * import type { StopConditionOptions } from 'rxagent';
 * const lastStepText = ({ steps }: StopConditionOptions) => steps.at(-1)?.text ?? '';
 * ```
 */
export interface StopConditionOptions {
  /** The steps so far, including this one. */
  readonly steps: readonly StepResult[];
}

/**
 * A rule that ends the agent loop: `true` (or a promise of `true`) stops it after the step just
 * finished (its tools have run); the run then ends as at its step limit (finish reason `tool-calls`). A condition that throws, rejects,
 * returns something other than a boolean, or leaves a step's usage unaddable (a count that is not a
 * whole number from 0 to 2^53 − 1 or `undefined`) ends the run with a `StopConditionError`.
 *
 * @example
 * ```ts
 * import { Agent, type StopCondition } from 'rxagent';
 * const spentTooMuch: StopCondition = ({ steps }) => steps.reduce((sum, step) => sum + (step.usage.totalTokens ?? 0), 0) > 10_000;
 * const agent = new Agent({ id: 'a', model, tools, stopWhen: spentTooMuch });
 * ```
 */
export type StopCondition = (options: StopConditionOptions) => boolean | PromiseLike<boolean>;

/**
 * Stops the loop once the run has `count` steps, as the AI SDK's `stepCountIs` does (rejected
 * attempts count, as they do toward `maxSteps`).
 *
 * @example
 * ```ts
 * import { Agent, stepCountIs } from 'rxagent';
 * const agent = new Agent({ id: 'researcher', model, tools, stopWhen: stepCountIs(20) });
 * ```
 */
export function stepCountIs(count: number): StopCondition {
  if (!Number.isInteger(count) || count < 1) throw new TypeError(`stepCountIs(count): count must be a whole number ≥ 1 (got ${String(count)}).`);
  return ({ steps }) => steps.length >= count;
}

/**
 * Stops the loop after a step that called one of `toolNames` (e.g. a `finalAnswer` tool): that
 * step's tools still run, and no further step follows.
 *
 * @example
 * ```ts
 * import { Agent, hasToolCall } from 'rxagent';
 * const agent = new Agent({ id: 'planner', model, tools, maxSteps: 20, stopWhen: hasToolCall('finalAnswer') });
 * ```
 */
export function hasToolCall(...toolNames: string[]): StopCondition {
  if (toolNames.length === 0 || toolNames.some((name) => typeof name !== 'string' || name.length === 0)) {
    throw new TypeError('hasToolCall(...toolNames): give one or more tool names (non-empty strings).');
  }
  return ({ steps }) => steps.at(-1)?.toolCalls.some((call) => toolNames.includes(call.toolName)) === true;
}

/**
 * Whether any of `conditions` is met for `steps`, in order (the first met one decides; the rest are
 * not called): a boolean when every condition called answered synchronously, else a promise. A
 * throw, a rejection or a non-boolean answer is a {@link StopConditionError}; so is a condition that
 * leaves a step's usage unaddable (the list is a copy, its steps are the run's): a count that is
 * not a whole number from 0 to 2^53 − 1 or `undefined`, a usage that cannot be read.
 */
export function stopConditionMet(conditions: readonly StopCondition[], steps: readonly StepResult[]): boolean | Promise<boolean> {
  const options: StopConditionOptions = { steps: steps.slice() };
  // a usage already unsound before the conditions ran is not theirs to answer for
  const checkUsage = stepsUsageSound(steps) ? (index: number) => keptUsage(steps, index) : () => undefined;
  const from = (start: number): boolean | Promise<boolean> => {
    for (let index = start; index < conditions.length; index++) {
      let answer: unknown;
      try {
        answer = (conditions[index] as StopCondition)(options);
      } catch (cause) {
        throw new StopConditionError({ index, cause });
      }
      if (isPromiseLike<unknown>(answer)) {
        return Promise.resolve(answer).then(
          (settled) => {
            checkUsage(index);
            return checked(settled, index) || from(index + 1);
          },
          (cause: unknown) => {
            throw new StopConditionError({ index, cause });
          },
        );
      }
      checkUsage(index);
      if (checked(answer, index)) return true;
    }
    return false;
  };
  return from(0);
}

/** Throws the `StopConditionError` of `stopWhen[index]` when the usage of `steps` is no longer sound after it ran. */
function keptUsage(steps: readonly StepResult[], index: number): void {
  let problem: string | undefined;
  try {
    problem = stepsUsageProblem(steps);
  } catch {
    throw new StopConditionError({ index, message: `stopWhen[${index}] left a token usage that cannot be read (a Proxy or a getter that throws); ${USAGE_COUNT_RULE}.` });
  }
  if (problem !== undefined) throw new StopConditionError({ index, message: `stopWhen[${index}] left ${problem}; ${USAGE_COUNT_RULE}.` });
}

function checked(answer: unknown, index: number): boolean {
  if (typeof answer === 'boolean') return answer;
  const shown = answer === null ? 'null' : typeof answer === 'string' ? JSON.stringify(answer) : typeof answer;
  throw new StopConditionError({ index, message: `stopWhen[${index}] returned ${shown}; expected a boolean (or a promise of one).` });
}

const NO_CONDITIONS: readonly StopCondition[] = Object.freeze([]);

/** `stopWhen` as a list: none, the one condition, or a copy of the array (a later edit of the caller's array changes nothing). */
export function stopConditionsOf(stopWhen: StopCondition | readonly StopCondition[] | undefined): readonly StopCondition[] {
  if (stopWhen === undefined) return NO_CONDITIONS;
  return typeof stopWhen === 'function' ? [stopWhen] : stopWhen.slice();
}
