/**
 * Redactions made in the output stream, remembered in the processor's run `state` so
 * `processOutputResult` can make the stored reply match what was streamed (without a model call).
 */
import type { MastraDBMessage } from '../../message-list/index.js';
import type { ProcessorState } from '../../contract/index.js';
import { mapStrings } from './deep-strings.js';
import { mapMessageText, replaceAllValues } from './message-text.js';

const REDACTIONS_KEY = 'redactions';

/** Records `replacements` (value → replacement) made in this run. */
export function rememberRedactions(state: ProcessorState, replacements: ReadonlyMap<string, string>): void {
  const remembered = (state[REDACTIONS_KEY] as Array<[string, string]> | undefined) ?? [];
  remembered.push(...replacements);
  state[REDACTIONS_KEY] = remembered;
}

/** This run's remembered redactions (value → replacement). */
export function rememberedRedactions(state: ProcessorState): Map<string, string> {
  return new Map((state[REDACTIONS_KEY] as Array<[string, string]> | undefined) ?? []);
}

/** The assistant messages with this run's remembered redactions applied; `undefined` when there are none. */
export function applyRememberedRedactions(messages: readonly MastraDBMessage[], state: ProcessorState): MastraDBMessage[] | undefined {
  const replacements = new Map((state[REDACTIONS_KEY] as Array<[string, string]> | undefined) ?? []);
  if (replacements.size === 0) return undefined;
  return messages.map((message) => (message.role === 'assistant' ? mapMessageText(message, (text) => replaceAllValues(text, replacements)) : message));
}

/**
 * The assistant messages with this run's remembered redactions applied to every part — text (as
 * above), reasoning, tool calls, results and errors, data parts; `undefined` when nothing changed.
 */
export function applyRedactionsToReply(messages: readonly MastraDBMessage[], state: ProcessorState): MastraDBMessage[] | undefined {
  const texts = applyRememberedRedactions(messages, state);
  const replacements = rememberedRedactions(state);
  if (replacements.size === 0) return texts;
  let changed = texts !== undefined && texts.some((message, index) => message !== messages[index]);
  const result = (texts ?? messages).map((message) => {
    if (message.role !== 'assistant') return message;
    const parts = message.content.parts.map((part) => {
      if (part.type === 'text' || part.type === 'step-start') return part;
      return mapStrings(part, (value) => replaceAllValues(value, replacements)) as typeof part;
    });
    if (parts.every((part, index) => part === message.content.parts[index])) return message;
    changed = true;
    return { ...message, content: { ...message.content, parts } };
  });
  return changed ? result : undefined;
}

/**
 * Applies this run's remembered redactions to the run's structured object (`result.object`, set by
 * a structurer that may have read text before this guard redacted it), in place on `result`.
 *
 * @example
 * ```ts
 * applyRedactionsToObject(result, state); // result.object with every redacted value replaced
 * ```
 */
export function applyRedactionsToObject(result: { object?: unknown }, state: ProcessorState): void {
  if (result.object === undefined) return;
  const replacements = rememberedRedactions(state);
  if (replacements.size === 0) return;
  const object = mapStrings(result.object, (value) => replaceAllValues(value, replacements));
  if (object !== result.object) result.object = object;
}
