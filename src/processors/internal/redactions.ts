/**
 * Redactions made in the output stream, remembered in the processor's run `state` so
 * `processOutputResult` can make the stored reply match what was streamed (without a model call).
 */
import type { MastraDBMessage } from '../../message-list/index.js';
import type { ProcessorState } from '../../contract/index.js';
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
