import type { MastraDBMessage } from './types.js';
import { joinTextParts } from './internal/message-text.js';

/**
 * The text of a stored message: its text parts joined, or the legacy `content.content` string
 * when there are none.
 *
 * @example
 * ```ts
 * import { getMessageText } from 'rxagent/message-list';
 * const text = getMessageText(messageList.get.input.db()[0]!);
 * ```
 */
export function getMessageText(message: MastraDBMessage): string {
  const text = joinTextParts(message.content.parts);
  if (text === '' && typeof message.content.content === 'string') return message.content.content;
  return text;
}
