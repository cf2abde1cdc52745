/** Text helpers over stored messages. */
import type { MastraDBMessage, MastraMessagePart } from '../types.js';

/** Joins the text parts of `parts`. */
export function joinTextParts(parts: ReadonlyArray<MastraMessagePart>): string {
  let text = '';
  for (const part of parts) if (part.type === 'text') text += part.text;
  return text;
}

/** Keeps the legacy `content.content` mirror in step with the text parts, when the message has one. */
export function syncLegacyContent(message: MastraDBMessage): void {
  if (typeof message.content.content === 'string') message.content.content = joinTextParts(message.content.parts);
}
