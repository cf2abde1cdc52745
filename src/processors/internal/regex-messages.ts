/**
 * The message half of `RegexFilterProcessor`: the input messages, the stored reply and the tool
 * outputs of each prompt, part by part.
 */
import type { LanguageModelV4Prompt } from '@ai-sdk/provider';
import type { FilePart, MastraDBMessage, MastraMessagePart } from '../../message-list/index.js';
import type { AbortFunction } from '../../contract/index.js';
import type { RegexFilterChannel } from '../regex-filter-types.js';
import type { HeldRegion } from './held-stream.js';
import type { RegexMatcher, Where } from './regex-matcher.js';
import type { ScanRegion } from './text-scan.js';
import { textAttachment } from './text-attachments.js';

/** A matcher and the output channels it checks. */
export interface MessageFilter {
  readonly matcher: RegexMatcher;
  readonly channels: ReadonlySet<RegexFilterChannel>;
}

/**
 * Every part of the messages: the text parts of all messages as one text (a match split across
 * parts or steps is found), reasoning, tool calls, results and errors, data parts.
 */
export function filterMessages(filter: MessageFilter, messages: MastraDBMessage[], where: Where, abort: AbortFunction): MastraDBMessage[] {
  const location = where === 'input' ? 'content' : 'the stored reply';
  const texts = filterJoinedTexts(filter, messages, where, abort, location);
  let changed = false;
  const result = messages.map((message, messageIndex) => {
    let partsChanged = false;
    const parts = message.content.parts.map((part, partIndex): MastraMessagePart => {
      const next = filterPart(filter, part, texts.get(`${messageIndex}:${partIndex}`), where, abort);
      if (next !== part) partsChanged = true;
      return next;
    });
    const legacy = message.content.content;
    const legacyText = typeof legacy === 'string' ? texts.get(`${messageIndex}:legacy`) : undefined;
    if (!partsChanged && legacyText === undefined) return message;
    changed = true;
    const content = { ...message.content, parts };
    if (legacyText !== undefined) content.content = legacyText;
    else if (typeof legacy === 'string' && parts.some((part) => part.type === 'text')) {
      content.content = parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
    }
    return { ...message, content };
  });
  return changed ? result : messages;
}

/**
 * The new text of each text part (key `message:part`) whose text changed. Each part is matched on
 * its own, and the parts in order as one joined text for matches split across parts (or steps, or
 * messages): a match crossing from one part into the next is kept only if it overlaps no match of
 * either part alone, as in the stream (`regex-segments.ts`) — `ada@example.com` ending one part and
 * `Done!` starting the next stay an address and a word.
 */
function filterJoinedTexts(filter: MessageFilter, messages: readonly MastraDBMessage[], where: Where, abort: AbortFunction, location: string): Map<string, string> {
  const pieces: Array<{ key: string; start: number; text: string }> = [];
  let joined = '';
  messages.forEach((message, messageIndex) => {
    const parts = message.content.parts;
    let hasText = false;
    parts.forEach((part, partIndex) => {
      if (part.type !== 'text') return;
      hasText = true;
      pieces.push({ key: `${messageIndex}:${partIndex}`, start: joined.length, text: part.text });
      joined += part.text;
    });
    if (!hasText && typeof message.content.content === 'string') {
      pieces.push({ key: `${messageIndex}:legacy`, start: joined.length, text: message.content.content });
      joined += message.content.content;
    }
  });
  const changedTexts = new Map<string, string>();
  const regions = partRegions(filter.matcher, joined, pieces);
  if (regions.length === 0) return changedTexts;
  const replacements = filter.matcher.enforce(joined, regions, where, abort, location);
  const heldRegions: HeldRegion[] = [];
  for (const region of regions) {
    const replacement = replacements.get(region);
    if (replacement !== undefined) heldRegions.push({ start: region.start, end: region.end, replacement });
  }
  for (const piece of pieces) {
    const text = spliceRegions(piece.text, piece.start, heldRegions);
    if (text !== piece.text) changedTexts.set(piece.key, text);
  }
  return changedTexts;
}

/** The regions of `joined` (the parts' texts in order): each part's own, and those crossing parts that overlap none of them. */
function partRegions(matcher: RegexMatcher, joined: string, pieces: ReadonlyArray<{ start: number; text: string }>): ScanRegion[] {
  if (pieces.length <= 1) return matcher.regionsOf(joined, 0);
  const local: ScanRegion[] = [];
  for (const piece of pieces) {
    for (const region of matcher.regionsOf(piece.text, 0)) {
      local.push({ ...region, start: piece.start + region.start, end: piece.start + region.end, owner: { ...region.owner, start: piece.start + region.owner.start, end: piece.start + region.owner.end } });
    }
  }
  const boundaries = pieces.slice(1).map((piece) => piece.start);
  const crossing = matcher
    .regionsOf(joined, 0)
    .filter((region) => boundaries.some((boundary) => region.start < boundary && boundary < region.end))
    .filter((region) => !local.some((own) => own.start < region.end && region.start < own.end));
  return [...local, ...crossing].sort((a, b) => a.start - b.start);
}

function filterPart(filter: MessageFilter, part: MastraMessagePart, newText: string | undefined, where: Where, abort: AbortFunction): MastraMessagePart {
  const { matcher, channels } = filter;
  const location = where === 'input' ? 'content' : 'the stored reply';
  switch (part.type) {
    case 'text':
      return newText === undefined ? part : { ...part, text: newText };
    case 'reasoning': {
      if (where === 'output' && !channels.has('reasoning')) return part;
      const reasoning = matcher.filterText(part.reasoning, where, abort, location);
      const details = matcher.filterValue(part.details, where, abort, location) as typeof part.details;
      return reasoning === part.reasoning && details === part.details ? part : { ...part, reasoning, details };
    }
    case 'tool-invocation': {
      const invocation = part.toolInvocation as typeof part.toolInvocation & { errorText?: unknown };
      const check = (channel: RegexFilterChannel) => where === 'input' || channels.has(channel);
      const args = check('tool-input') ? matcher.filterValue(invocation.args, where, abort, location) : invocation.args;
      const result = 'result' in invocation && check('tool-result') ? matcher.filterValue(invocation.result, where, abort, location) : undefined;
      const errorText = typeof invocation.errorText === 'string' && check('tool-error') ? matcher.filterText(invocation.errorText, where, abort, location) : invocation.errorText;
      const resultChanged = 'result' in invocation && result !== invocation.result;
      if (args === invocation.args && !resultChanged && errorText === invocation.errorText) return part;
      return {
        ...part,
        toolInvocation: { ...invocation, args, ...(resultChanged ? { result } : {}), ...(errorText === undefined ? {} : { errorText }) } as typeof part.toolInvocation,
      };
    }
    case 'file': {
      if (where === 'output' && !channels.has('file')) return part;
      return filterFile(filter, part, where, abort, where === 'input' ? 'an attached file' : location);
    }
    default:
      if (part.type.startsWith('data-') && (where === 'input' || channels.has('data'))) {
        const data = (part as { data?: unknown }).data;
        const filtered = matcher.filterValue(data, where, abort, location);
        return filtered === data ? part : ({ ...part, data: filtered } as MastraMessagePart);
      }
      return part;
  }
}

/**
 * A file part: its name, and its content when it is a text file (see `text-attachments.ts`),
 * through the strategies; the content is written back in the form it came in.
 */
export function filterFile<T extends FilePart>(filter: MessageFilter, part: T, where: Where, abort: AbortFunction, location: string): T {
  const filename = part.filename === undefined ? undefined : filter.matcher.filterText(part.filename, where, abort, location);
  const named = filename === part.filename ? part : { ...part, filename };
  const attachment = textAttachment(named);
  if (attachment === undefined) return named;
  const text = filter.matcher.filterText(attachment.text, where, abort, location);
  return text === attachment.text ? named : ({ ...named, ...attachment.withText(text) } as T);
}

/** The piece of a joined text starting at `offset`, with the regions (offsets into the joined text) replaced. */
function spliceRegions(text: string, offset: number, regions: readonly HeldRegion[]): string {
  let result = '';
  let cursor = 0;
  const end = offset + text.length;
  for (const region of regions) {
    if (region.end <= offset || region.start >= end) continue;
    const start = Math.max(region.start, offset) - offset;
    result += text.slice(cursor, Math.max(cursor, start));
    if (region.start >= offset) result += region.replacement;
    cursor = Math.max(cursor, Math.min(region.end, end) - offset);
  }
  return result + text.slice(cursor);
}

/**
 * Removes from the stored reply the start of each match that continued past a step boundary (a
 * tool call): the text part that ends with that start loses it, so the stored reply holds the
 * replacement only (the continuation was replaced in the stream).
 */
export function withoutFragments(messages: MastraDBMessage[], fragments: readonly string[]): MastraDBMessage[] {
  const pending = [...fragments];
  let changed = false;
  const result = messages.map((message) => {
    if (message.role !== 'assistant' || pending.length === 0) return message;
    let partsChanged = false;
    const parts = message.content.parts.map((part): MastraMessagePart => {
      const fragment = pending[0];
      if (part.type !== 'text' || fragment === undefined || !part.text.endsWith(fragment)) return part;
      pending.shift();
      partsChanged = true;
      return { ...part, text: part.text.slice(0, part.text.length - fragment.length) };
    });
    if (!partsChanged) return message;
    changed = true;
    return { ...message, content: { ...message.content, parts } };
  });
  return changed ? result : messages;
}

/** The tool outputs (results and error texts) of a prompt, filtered; `undefined` when nothing changed. */
export function filterPrompt(matcher: RegexMatcher, prompt: LanguageModelV4Prompt, abort: AbortFunction): LanguageModelV4Prompt | undefined {
  let changed = false;
  const filtered = prompt.map((message) => {
    if (message.role !== 'tool') return message;
    const content = message.content.map((part) => {
      if (part.type !== 'tool-result') return part;
      const output = matcher.filterValue(part.output, 'output', abort, 'a tool output sent to the model');
      return output === part.output ? part : { ...part, output: output as typeof part.output };
    });
    if (content.every((part, index) => part === message.content[index])) return message;
    changed = true;
    return { ...message, content };
  });
  return changed ? filtered : undefined;
}
