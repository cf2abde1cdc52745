/**
 * The run's stored messages as a stage of hooks found them and left them. Hooks get the list's
 * own message objects (`messages`, `messageList.get.*.db()`) and may edit them in place — that is
 * how an edit takes effect. One that leaves a message no stored message can be (`content: 42`, a
 * part that is `null`, a revoked Proxy, a text that is a number) would fail the run later, far
 * from it, with an untyped `TypeError` from a converter — or be sent to the model and stored as
 * it is. Checked after each hook call instead, so the processor is named (as `usageWatch` does for
 * token usage; the same check shape, so a stage combines them with `allChecks`). The steps' texts
 * are watched the same way (`stepTextsWatch`).
 */
import { ProcessorError, type ProcessorHookName } from '../../contract/errors/processor-error.js';
import { thrownMessage } from '../../errors/thrown-message.js';
import type { MessageList } from '../../message-list/message-list.js';
import { storedMessagesProblem } from '../../message-list/schemas/db-message-schema.js';
import type { UsageCheck } from './usage-watch.js';

const RULE = 'edit messages in place only into stored messages (MastraDBMessage, format 2), or return the messages to keep';

/**
 * A watch over what hooks may edit in place: `undefined` when `problemOf()` finds a problem (or
 * throws) before the stage — not a processor's doing — else the check that names the processor and
 * the hook whose call left one. `unreadable` and `rule` finish its messages.
 */
function watch(problemOf: () => string | undefined, unreadable: string, rule: string): UsageCheck | undefined {
  try {
    if (problemOf() !== undefined) return undefined;
  } catch {
    return undefined;
  }
  return (processorId: string, hook: ProcessorHookName) => {
    let problem: string | undefined;
    try {
      problem = problemOf();
    } catch (reading) {
      throw new ProcessorError(processorId, hook, `left ${unreadable} (${thrownMessage(reading) ?? 'a Proxy or a getter that throws'}); ${rule}.`);
    }
    if (problem !== undefined) throw new ProcessorError(processorId, hook, `left ${problem}; ${rule}.`);
  };
}

/**
 * The check to make after each hook call of a stage (made before the stage's first call): throws
 * a `ProcessorError` naming the processor and the hook when the call left one of `list`'s
 * messages unsound. `undefined` — nothing to check — when the list was not sound before the stage
 * (no processor's doing). One walk over the list per call; a stage without hooks makes none.
 *
 * @example
 * ```ts
 * const kept = messagesWatch(context.messageList);
 * // after each hook call:
 * kept?.(binding.processor.id, 'processInputStep');
 * ```
 */
export function messagesWatch(list: MessageList): UsageCheck | undefined {
  return watch(() => storedMessagesProblem(list.get.all.db()), 'a message that cannot be read', RULE);
}

/**
 * The check to make after each hook call of a stage: throws a `ProcessorError` naming the
 * processor and the hook when the call left a step of `steps` (the run's step objects; hooks get a
 * copy of the list) with a `text` that is not a string — the run's text is the steps' texts
 * joined (a number would be added to it as digits). `undefined` when that was so before the stage.
 *
 * @example
 * ```ts
 * const kept = stepTextsWatch(context.steps);
 * kept?.(binding.processor.id, 'processOutputStep');
 * ```
 */
export function stepTextsWatch(steps: readonly unknown[]): UsageCheck | undefined {
  return watch(() => stepTextProblem(steps), 'a step whose text cannot be read', "a step's text is a string");
}

function stepTextProblem(steps: readonly unknown[]): string | undefined {
  for (let index = 0; index < steps.length; index++) {
    const step = steps[index];
    if (typeof step !== 'object' || step === null) continue; // the usage check names it
    const text: unknown = (step as { text?: unknown }).text;
    if (text !== undefined && typeof text !== 'string') return `steps[${index}].text = ${text === null ? 'null' : typeof text}`;
  }
  return undefined;
}

/** The checks, in order, as one (each may be `undefined`: nothing to check; all `undefined`: `undefined`). */
export function allChecks(...checks: ReadonlyArray<UsageCheck | undefined>): UsageCheck | undefined {
  const present = checks.filter((check): check is UsageCheck => check !== undefined);
  if (present.length === 0) return undefined;
  if (present.length === 1) return present[0];
  return (processorId, hook) => {
    for (const check of present) check(processorId, hook);
  };
}
