/** Reading and rewriting the text of stored messages without touching their other parts. */
import { getMessageText, type MastraDBMessage, type MastraMessagePart } from '../../message-list/index.js';
import { textAttachment } from './text-attachments.js';

/**
 * `message` in the stored shape (`content: { format: 2, parts }`). Built-ins' hooks get stored
 * messages from a run; called directly — as the reference's own unit tests call them — they may get
 * `content` as a plain string (the v1 message shape) or without `parts`: read as one text part.
 */
export function storedShape(message: MastraDBMessage): MastraDBMessage {
  const content = (message as { content?: unknown }).content;
  if (typeof content === 'string') return { ...message, content: { format: 2, parts: [{ type: 'text', text: content }], content } };
  if (typeof content !== 'object' || content === null) return { ...message, content: { format: 2, parts: [] } };
  if (!Array.isArray((content as { parts?: unknown }).parts)) return { ...message, content: { ...(content as MastraDBMessage['content']), parts: [] } };
  return message;
}

/** The text of a message (text parts joined, or the legacy `content.content`; a string `content` as it is). */
export function messageText(message: MastraDBMessage): string {
  return getMessageText(storedShape(message));
}

/**
 * A copy of `message` whose text parts went through `transform` (the legacy `content.content`
 * mirror follows). Returns the same object when no text changed.
 */
export function mapMessageText(given: MastraDBMessage, transform: (text: string) => string): MastraDBMessage {
  const message = storedShape(given);
  if (message !== given) {
    const mapped = mapMessageText(message, transform);
    return mapped === message ? given : mapped;
  }
  let changed = false;
  // a part whose text is not a string (`text: null` from a hand-built message) is left as it is
  const isText = (part: MastraMessagePart): part is Extract<MastraMessagePart, { type: 'text' }> => part.type === 'text' && typeof part.text === 'string';
  const parts = message.content.parts.map((part): MastraMessagePart => {
    if (!isText(part)) return part;
    const text = transform(part.text);
    if (text === part.text) return part;
    changed = true;
    return { ...part, text };
  });
  const legacy = message.content.content;
  const hasTextParts = message.content.parts.some(isText);
  const joined = (list: readonly MastraMessagePart[]) => list.map((part) => (isText(part) ? part.text : '')).join('');
  if (typeof legacy === 'string' && (!hasTextParts || legacy !== joined(message.content.parts))) {
    // a legacy `content` string of its own (not a mirror of the parts): transformed on its own
    const text = transform(legacy);
    if (text === legacy && !changed) return message;
    return { ...message, content: { ...message.content, parts: changed ? parts : message.content.parts, content: text } };
  }
  if (!changed) return message;
  const content = { ...message.content, parts };
  if (typeof legacy === 'string') content.content = joined(parts);
  return { ...message, content };
}

/**
 * The text a guard judges for a message: its text, then the content of each attached text file
 * (`text-attachments.ts`), each under a line naming it.
 */
export function judgedText(message: MastraDBMessage): string {
  const pieces = [messageText(message)];
  for (const part of message.content.parts) {
    const attachment = textAttachment(part);
    if (attachment !== undefined && part.type === 'file') pieces.push(`[attached file${part.filename === undefined ? '' : ` ${part.filename}`}]\n${attachment.text}`);
  }
  return pieces.filter((piece) => piece !== '').join('\n\n');
}

/** {@link mapMessageText}, and the content of each attached text file through `transform` too. */
export function mapJudgedText(message: MastraDBMessage, transform: (text: string) => string): MastraDBMessage {
  const mapped = mapMessageText(message, transform);
  let changed = false;
  const parts = mapped.content.parts.map((part): MastraMessagePart => {
    const attachment = textAttachment(part);
    if (attachment === undefined) return part;
    const text = transform(attachment.text);
    if (text === attachment.text) return part;
    changed = true;
    return attachment.withText(text);
  });
  return changed ? { ...mapped, content: { ...mapped.content, parts } } : mapped;
}

/** A copy of `message` with `metadata` merged into `content.metadata`. */
export function withMetadata(message: MastraDBMessage, metadata: Record<string, unknown>): MastraDBMessage {
  return { ...message, content: { ...message.content, metadata: { ...message.content.metadata, ...metadata } } };
}

/** Replaces every occurrence of each key of `replacements` (longest first) in `text`. */
export function replaceAllValues(text: string, replacements: ReadonlyMap<string, string>): string {
  let result = text;
  const values = [...replacements.keys()].filter((value) => value.length > 0).sort((a, b) => b.length - a.length);
  for (const value of values) result = result.split(value).join(replacements.get(value) ?? '');
  return result;
}

/**
 * A copy of `message` whose whole text is `text` (a rewrite or a translation of its judged text):
 * the first text part gets it (one is added when there is none), other text parts and the attached
 * text files (judged with the text, see {@link judgedText}) go.
 */
export function replaceMessageText(message: MastraDBMessage, text: string): MastraDBMessage {
  const parts: MastraMessagePart[] = [];
  let placed = false;
  let changed = false;
  for (const part of message.content.parts) {
    if (part.type === 'text') {
      if (!placed && text !== '') parts.push(part.text === text ? part : { ...part, text });
      changed ||= placed || part.text !== text || text === '';
      placed = true;
    } else if (textAttachment(part) !== undefined) changed = true;
    else parts.push(part);
  }
  if (!placed && text !== '') {
    parts.unshift({ type: 'text', text });
    changed = true;
  }
  const legacy = message.content.content;
  if (!changed && (typeof legacy !== 'string' || legacy === text)) return message;
  const content = { ...message.content, parts };
  if (typeof legacy === 'string') content.content = text;
  return { ...message, content };
}
