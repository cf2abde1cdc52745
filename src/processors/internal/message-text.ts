/** Reading and rewriting the text of stored messages without touching their other parts. */
import { getMessageText, type MastraDBMessage, type MastraMessagePart } from '../../message-list/index.js';

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
  const parts = message.content.parts.map((part): MastraMessagePart => {
    if (part.type !== 'text') return part;
    const text = transform(part.text);
    if (text === part.text) return part;
    changed = true;
    return { ...part, text };
  });
  const legacy = message.content.content;
  const hasTextParts = message.content.parts.some((part) => part.type === 'text');
  if (!hasTextParts && typeof legacy === 'string') {
    const text = transform(legacy);
    if (text === legacy) return message;
    return { ...message, content: { ...message.content, content: text } };
  }
  if (!changed) return message;
  const content = { ...message.content, parts };
  if (typeof legacy === 'string') {
    content.content = parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
  }
  return { ...message, content };
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

/** A copy of `message` whose whole text is `text`: the first text part gets it, other text parts go. */
export function replaceMessageText(message: MastraDBMessage, text: string): MastraDBMessage {
  let first = true;
  const replaced = mapMessageText(message, () => {
    const next = first ? text : '';
    first = false;
    return next;
  });
  if (replaced === message) return message;
  const parts = replaced.content.parts.filter((part) => part.type !== 'text' || part.text !== '');
  return { ...replaced, content: { ...replaced.content, parts } };
}
