/**
 * Whether a hook that returned normally changed what it got: `pass` when what it returned equals
 * what it was given (the same chunk, an equal copy, the message list with the messages it was
 * shown, `{ prompt }` with the prompt it got…), `rewrite` otherwise. Values are compared as
 * payload copies (JSON-safe, key order ignored), so an equal copy is a pass, never a rewrite.
 */
import type { Payload } from '../inspector-events.js';
import { toPayload } from './payload.js';

/** The MessageList view (`get.<view>.db()`) each hook's `messages` argument is taken from. */
const MESSAGE_VIEW: Readonly<Record<string, 'input' | 'response' | 'all'>> = {
  processInput: 'input',
  processOutputResult: 'response',
};

/** Deep equality of two payloads (object key order ignored). */
export function samePayload(a: Payload, b: Payload): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, index) => samePayload(item, b[index] as Payload));
  }
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && samePayload(a[key] as Payload, b[key] as Payload));
}

/** The messages a MessageList (duck-typed) holds now, in the view the hook was shown. */
function listMessages(value: unknown, hook: string): unknown[] | undefined {
  const get = (value as { get?: Record<string, { db?: unknown } | undefined> } | null)?.get;
  const view = get?.[MESSAGE_VIEW[hook] ?? 'all'];
  if (typeof view?.db !== 'function') return undefined;
  try {
    const messages: unknown = (view.db as () => unknown).call(view);
    return Array.isArray(messages) ? messages : undefined;
  } catch {
    return undefined;
  }
}

const same = (a: unknown, b: unknown): boolean => a === b || samePayload(toPayload(a), toPayload(b));

/**
 * What a hook did, from what it got (`input`: the chunk for `processOutputStream`, the argument
 * object otherwise) and what it returned. Outcomes other than a normal return (drop, abort,
 * retry, error) are decided by the tracing report, not here.
 *
 * @example
 * ```ts
 * hookOutcome('processInput', { messages, messageList }, messageList); // 'pass' when the list holds `messages` unchanged
 * ```
 */
export function hookOutcome(hook: string, input: unknown, output: unknown): 'pass' | 'rewrite' {
  if (hook === 'processOutputStream') return same(output, input) ? 'pass' : 'rewrite';
  // nothing returned: no change; processAPIError's answer is a retry decision (its own outcome)
  if (output === undefined || output === null || hook === 'processAPIError') return 'pass';
  const args = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  if (typeof output !== 'object') return 'rewrite';
  const listed = listMessages(output, hook);
  if (listed !== undefined) return 'messages' in args && same(listed, args.messages) ? 'pass' : 'rewrite';
  if (Array.isArray(output)) return 'messages' in args && same(output, args.messages) ? 'pass' : 'rewrite';
  // a partial result ({ messages, systemMessages }, { prompt }, …): each field as it was given
  const fields = Object.entries(output).filter(([, value]) => value !== undefined);
  return fields.every(([key, value]) => key in args && same(value, args[key])) ? 'pass' : 'rewrite';
}
