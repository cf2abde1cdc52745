/**
 * Checks of how processors are used, so a mistake gets the same care as an option: a misspelt hook
 * (`processOutputStreem`) is a `TypeError` naming the hook it resembles; a processor given where a
 * list is expected is a `TypeError` saying to wrap it; a processor in a list where none of its hooks
 * run (an output-only processor in `inputProcessors`) is a one-time warning ({@link warnOnce}); a
 * chunk shaped like an AI SDK stream part gets a message saying what an rxagent chunk looks like.
 */
import { editDistance } from './closest-key.js';
import { isReadableError, thrownMessage } from '../errors/thrown-message.js';
import { ProcessorError, type ProcessorHookName } from './errors/processor-error.js';
import { TripWire } from './errors/trip-wire.js';
import { isHooked } from './has-hook.js';
import type { Processor } from './processor-types.js';
import { warnOnce } from './warn-once.js';

/** The nine hooks, in the order the loop runs them. */
export const PROCESSOR_HOOKS = [
  'processInput',
  'processInputStep',
  'processLLMRequest',
  'processLLMResponse',
  'processAPIError',
  'processOutputStream',
  'processOutputStep',
  'processToolResult',
  'processOutputResult',
] as const;

/** Which hooks each of an Agent's lists runs (DESIGN.md §5: processAPIError runs for all three). */
export const HOOKS_BY_LIST = {
  inputProcessors: ['processInput', 'processInputStep', 'processLLMRequest', 'processLLMResponse', 'processAPIError'],
  outputProcessors: ['processOutputStream', 'processOutputStep', 'processToolResult', 'processOutputResult', 'processAPIError'],
  errorProcessors: ['processAPIError'],
} as const;

/** The processor's method and property names (own and inherited, not `Object.prototype`'s). */
function memberNames(processor: object): string[] {
  const names = new Set<string>();
  for (let target: object | null = processor; target !== null && target !== Object.prototype; target = Object.getPrototypeOf(target) as object | null) {
    for (const name of Object.getOwnPropertyNames(target)) names.add(name);
  }
  return [...names];
}

const HOOK_NAMES: ReadonlySet<string> = new Set(PROCESSOR_HOOKS);

/**
 * A method of `processor` that looks like a misspelt hook — named `process…`, not a hook itself,
 * at most two edits (or a different case) from one of `hooks` the processor does not have — and
 * that hook. Edit distances are computed only for such unknown `process…` methods, so a processor
 * whose methods are all hooks costs one walk over its member names.
 */
function misspelling(processor: object, hooks: readonly string[]): { found: string; hook: string } | undefined {
  const record = processor as Record<string, unknown>;
  for (const name of memberNames(processor)) {
    if (HOOK_NAMES.has(name) || !/^process/i.test(name) || typeof record[name] !== 'function') continue;
    const hook = hooks.find((candidate) => typeof record[candidate] !== 'function' && editDistance(name, candidate) <= 2);
    if (hook !== undefined) return { found: name, hook };
  }
  return undefined;
}

function label(processor: unknown): string {
  const id = (processor as { id?: unknown } | null)?.id;
  return typeof id === 'string' ? `processor "${id}"` : 'the processor';
}

/**
 * Throws a `TypeError` when `processor` has a method that looks like a misspelt hook (one it does
 * not also have under the right name): rxagent would never call it.
 *
 * @example
 * ```ts
 * checkHookNames({ id: 'x', processOutputStreem: ({ part }) => part }, 'config.outputProcessors[0]');
 * // TypeError: config.outputProcessors[0] (processor "x") has a method processOutputStreem, which is not a hook …
 * ```
 */
export function checkHookNames(processor: object, where: string, hooks: readonly string[] = PROCESSOR_HOOKS, makeError: (message: string) => Error = (message) => new TypeError(message)): void {
  const misspelt = misspelling(processor, hooks);
  if (misspelt === undefined) return;
  throw makeError(
    `${where} (${label(processor)}) has a method ${misspelt.found}, which is not a hook, so rxagent would never call it: ` +
      `did you mean ${misspelt.hook}? The hooks are ${PROCESSOR_HOOKS.join(', ')}.`,
  );
}

/**
 * Throws a `TypeError` when `processors` (given to `where`, an operator or an option) is not an
 * array, saying to wrap a single processor in one.
 *
 * @example
 * ```ts
 * checkProcessorArray(noSecrets, 'processOutputStream(processors)'); // TypeError: … pass [processor] …
 * ```
 */
export function checkProcessorArray(processors: unknown, where: string): void {
  if (Array.isArray(processors)) return;
  const isProcessor = typeof processors === 'object' && processors !== null && typeof (processors as { id?: unknown }).id === 'string';
  throw new TypeError(
    isProcessor
      ? `${where} expects an array of processors, got ${label(processors)} itself: pass [processor] (a one-element array).`
      : `${where} expects an array of processors, got ${processors === null ? 'null' : typeof processors}.`,
  );
}

/**
 * The checks of an Agent's processor list (`config.inputProcessors`, a call's `outputProcessors`,
 * …; `path` names it): misspelt hooks are a `TypeError`; a processor none of whose hooks this list
 * runs is warned about once (it is in the list for nothing; the warning says which list would run it).
 *
 * @example
 * ```ts
 * checkProcessorList([new PIIDetector({ model })], 'config.inputProcessors');
 * ```
 *
 * `makeError` makes the error thrown for a misspelt hook (default: a `TypeError`).
 */
export function checkProcessorList(list: readonly unknown[], path: string, makeError?: (message: string) => Error): void {
  const listName = /(inputProcessors|outputProcessors|errorProcessors)$/.exec(path)?.[1] as keyof typeof HOOKS_BY_LIST | undefined;
  list.forEach((processor, index) => {
    if (typeof processor !== 'object' || processor === null) return;
    checkHookNames(processor, `${path}[${index}]`, PROCESSOR_HOOKS, makeError);
    if (listName === undefined) return;
    const own = PROCESSOR_HOOKS.filter((hook) => isHooked(processor, hook));
    if (own.length === 0 || HOOKS_BY_LIST[listName].some((hook) => own.includes(hook as (typeof own)[number]))) return;
    const lists = (Object.keys(HOOKS_BY_LIST) as Array<keyof typeof HOOKS_BY_LIST>).filter((name) => HOOKS_BY_LIST[name].some((hook) => own.includes(hook as (typeof own)[number])));
    warnOnce(
      processor,
      `not-in-${listName}`,
      `[rxagent] ${label(processor)} is in ${listName}, which runs none of its hooks (${own.join(', ')}): it does nothing there. ` +
        `Put it in ${lists.join(' or ')} (${listName} runs ${HOOKS_BY_LIST[listName].join(', ')}).`,
    );
  });
}

/** Fields of an rxagent chunk beside its `payload`. */
const CHUNK_FIELDS = new Set(['type', 'runId', 'from', 'payload', 'metadata']);

/**
 * When `chunk` (a hook's result) looks like an AI SDK stream part — its fields at the top level
 * (`{ type: 'text-delta', delta }`, `textDelta`, `text`, `input`…) and no `payload` object — a
 * message saying so and how to return an rxagent chunk; else `undefined`.
 *
 * @example
 * ```ts
 * aiSdkShapedChunk({ type: 'text-delta', id: '1', delta: 'hi' }); // "returned an AI SDK stream part …"
 * ```
 */
export function aiSdkShapedChunk(chunk: object): string | undefined {
  const record = chunk as Record<string, unknown>;
  if (typeof record['type'] !== 'string' || record['type'].startsWith('data-')) return undefined;
  if (typeof record['payload'] === 'object' && record['payload'] !== null) return undefined;
  const extra = Object.keys(record).filter((key) => !CHUNK_FIELDS.has(key));
  if (extra.length === 0) return undefined;
  const type = record['type'];
  const fix =
    type === 'text-delta' || type === 'reasoning-delta'
      ? `to change the text return { ...part, payload: { ...part.payload, text } } (chunk.textDelta('…') from rxagent/testing builds a new one)`
      : `return { ...part, payload: { ...part.payload, … } }`;
  return (
    `returned an AI SDK stream part ({ type: '${type}', ${extra.map((key) => key).join(', ')} }) instead of an rxagent chunk: ` +
    `rxagent chunks keep their fields in payload ({ type, runId, from, payload }); ${fix}.`
  );
}

/**
 * The `ProcessorError` for a value a hook returned, threw or passed to `abort()` that rxagent cannot
 * read (a Proxy that throws on every get, a revoked Proxy, a getter or `toString` that throws): `reading` is what
 * reading it threw. The hostile value itself is not kept (whatever reads the error would trip on it).
 *
 * @example
 * ```ts
 * unreadableHookValue('guard', 'processInput', 'returned', new TypeError("Cannot perform 'get' on a proxy that has been revoked"));
 * // ProcessorError: Processor "guard" failed in processInput: returned a value that could not be read or used (…)
 * ```
 */
export function unreadableHookValue(processorId: string, hook: ProcessorHookName, what: 'returned' | 'threw' | 'called abort() with', reading: unknown): ProcessorError {
  // an `Error` that can be read is kept as the cause; a hostile one is not
  return new ProcessorError(
    processorId,
    hook,
    `${what} a value that could not be read or used (${thrownMessage(reading) ?? 'a value that cannot be read either'}).`,
    isReadableError(reading) ? { cause: reading } : undefined,
  );
}

/**
 * `check(value)` — rxagent reading and applying what a hook returned — with anything it throws that
 * is not already a `ProcessorError` or a `TripWire` turned into a `ProcessorError` naming the
 * processor and the hook ({@link unreadableHookValue}): a hostile result ends the run as the
 * processor's fault, never as a bare `TypeError` from inside the loop.
 *
 * @example
 * ```ts
 * checkedHookResult('guard', 'processInput', result, (value) => applyMessageResult(value, scope));
 * ```
 */
export function checkedHookResult<T, R>(processorId: string, hook: ProcessorHookName, value: T, check: (value: T) => R): R {
  try {
    return check(value);
  } catch (error) {
    throw hookResultError(processorId, hook, error);
  }
}

/**
 * What checking a hook's result threw, as the run's verdict: a `ProcessorError` or `TripWire` as
 * it is, anything else (a value that could not be read) an {@link unreadableHookValue} error.
 *
 * @example
 * ```ts
 * try { check(result); } catch (error) { throw hookResultError('guard', 'processOutputStream', error); }
 * ```
 */
export function hookResultError(processorId: string, hook: ProcessorHookName, error: unknown): unknown {
  return isTypedHookError(error) ? error : unreadableHookValue(processorId, hook, 'returned', error);
}

/** Whether `error` is already the run's verdict on a hook (a `ProcessorError` or a `TripWire`); false for a value that cannot be read. */
function isTypedHookError(error: unknown): boolean {
  try {
    return ProcessorError.isInstance(error) || TripWire.isInstance(error);
  } catch {
    return false;
  }
}
