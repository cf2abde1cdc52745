/**
 * What `runProcessor` checks before calling a hook, so a test written wrong fails with a message
 * that says what to pass instead of a `TypeError` from inside the processor.
 */
import { PROCESSOR_HOOKS, checkHookNames, isHooked, type ProcessorHookName } from '../../contract/index.js';

/** The arguments each hook cannot do without (the rest has defaults), and what to pass. */
const REQUIRED: Partial<Record<(typeof PROCESSOR_HOOKS)[number], Record<string, string>>> = {
  processOutputStream: { part: "the chunk to process, e.g. chunk.textDelta('hi') from rxagent/testing" },
  processLLMRequest: { prompt: "the prompt about to be sent, e.g. [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]" },
  processAPIError: { error: 'the provider error, e.g. new APICallError({ … }) from @ai-sdk/provider' },
  processToolResult: { toolName: "the tool's name", toolCallId: "the call's id", result: "the tool's result" },
};

/**
 * Throws a `TypeError` naming the mistake: a processor that is not an object with an `id`, a hook
 * name that is not one of the nine (with the closest one), a processor without that hook (and a
 * misspelt method for it), an argument the hook needs left out.
 *
 * @example
 * ```ts
 * checkRunProcessorCall(processor, 'processOutputStream', { part: chunk.textDelta('hi') });
 * ```
 */
export function checkRunProcessorCall(processor: unknown, hook: unknown, args: unknown): void {
  if (typeof processor !== 'object' || processor === null || typeof (processor as { id?: unknown }).id !== 'string') {
    throw new TypeError(
      `runProcessor(processor, hook, args): the first argument must be a processor (an object with an id), got ${processor === null ? 'null' : typeof processor}` +
        (typeof processor === 'string' ? ' (the hook name comes second: runProcessor(processor, hook, args))' : '') +
        '.',
    );
  }
  const id = (processor as { id: string }).id;
  if (typeof hook !== 'string' || !(PROCESSOR_HOOKS as readonly string[]).includes(hook)) {
    const near = typeof hook === 'string' ? PROCESSOR_HOOKS.find((name) => name.toLowerCase() === hook.toLowerCase() || sameLetters(name, hook)) : undefined;
    throw new TypeError(
      `runProcessor(processor "${id}", hook, …): ${JSON.stringify(hook)} is not a hook${near ? ` (did you mean ${near}?)` : ''}. The hooks are ${PROCESSOR_HOOKS.join(', ')}.`,
    );
  }
  if (!isHooked(processor, hook as ProcessorHookName)) {
    checkHookNames(processor, `runProcessor(processor "${id}", '${hook}')`, [hook]);
    throw new TypeError(`runProcessor: processor "${id}" has no ${hook} hook.`);
  }
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
    throw new TypeError(`runProcessor(processor "${id}", '${hook}', args): args must be an object of the hook's arguments, got ${Array.isArray(args) ? 'an array' : args === null ? 'null' : typeof args}.`);
  }
  const required = REQUIRED[hook as (typeof PROCESSOR_HOOKS)[number]] ?? {};
  const missing = Object.keys(required).filter((name) => (args as Record<string, unknown> | undefined)?.[name] === undefined);
  if (missing.length > 0) {
    throw new TypeError(
      `runProcessor(processor "${id}", '${hook}', args): ${hook} needs ${missing.map((name) => `args.${name} (${required[name]})`).join(', ')}.`,
    );
  }
}

/** Same letters in the same order but one adjacent swap, or one letter more or less (a cheap typo test for hook names). */
function sameLetters(known: string, given: string): boolean {
  const a = known.toLowerCase();
  const b = given.toLowerCase();
  if (Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return a.slice(i + 1) === b.slice(i + 1) || a.slice(i + 1) === b.slice(i) || a.slice(i) === b.slice(i + 1) || (a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2));
}
