/**
 * System message storage for a `MessageList`: an untagged bucket plus named (tagged) buckets,
 * each de-duplicated by content, kept in insertion order.
 */
import type { UIMessage } from 'ai';
import type { CoreSystemMessage, MastraDBMessage } from './types.js';
import { InvalidMessageError, type MessageIssue } from './errors/invalid-message-error.js';
import { getMessageText } from './get-message-text.js';
import { systemModelMessageSchema } from './schemas/model-message-schema.js';
import { isRecord } from './schemas/schema-helpers.js';

/**
 * What `addSystem` accepts.
 *
 * @example
 * ```ts
 * import type { SystemMessageInput } from 'rxagent/message-list';
 * const system: SystemMessageInput = ['Be brief.', { role: 'system', content: 'Answer in French.' }];
 * ```
 */
export type SystemMessageInput = string | CoreSystemMessage | ReadonlyArray<string | CoreSystemMessage>;

/**
 * Validates and normalises system message input to `CoreSystemMessage`s. Empty content is an
 * `InvalidMessageError` (paths start with the index when an array was given).
 *
 * @example
 * ```ts
 * import { toCoreSystemMessages } from 'rxagent/message-list';
 * toCoreSystemMessages(['Be brief.', { role: 'system', content: 'Answer in French.' }]);
 * ```
 */
export function toCoreSystemMessages(input: SystemMessageInput): CoreSystemMessage[] {
  const list = typeof input === 'string' || !Array.isArray(input) ? [input as string | CoreSystemMessage] : (input as ReadonlyArray<string | CoreSystemMessage>);
  const indexed = Array.isArray(input);
  const issues: MessageIssue[] = [];
  const messages: CoreSystemMessage[] = [];
  list.forEach((entry, index) => {
    const prefix = indexed ? [index] : [];
    if (typeof entry === 'string') {
      if (entry === '') issues.push({ path: prefix, message: 'system message must not be empty' });
      else messages.push({ role: 'system', content: entry });
      return;
    }
    if (isPlainSystemMessage(entry)) {
      messages.push({ role: 'system', content: entry.content });
      return;
    }
    const result = systemModelMessageSchema.safeParse(entry);
    if (!result.success) {
      for (const issue of result.error.issues) issues.push({ path: [...prefix, ...issue.path.map((key) => (typeof key === 'symbol' ? String(key) : key))], message: issue.message });
      return;
    }
    messages.push(entry.providerOptions ? { role: 'system', content: entry.content, providerOptions: entry.providerOptions } : { role: 'system', content: entry.content });
  });
  if (issues.length > 0) throw new InvalidMessageError(issues);
  return messages;
}

/**
 * True when `entry` is `{ role: 'system', content }` with non-empty string content and no
 * `providerOptions` or `id`: what `systemModelMessageSchema` accepts, checked without running it
 * (the loop sets its system messages once per step). False means "run the schema", never
 * "invalid", so errors stay the schema's.
 */
function isPlainSystemMessage(entry: unknown): boolean {
  if (!isRecord(entry) || entry['role'] !== 'system' || entry['providerOptions'] !== undefined || entry['id'] !== undefined) return false;
  const content = entry['content'];
  return typeof content === 'string' && content.length > 0;
}

/** A system message given as a stored or UI message, as a `CoreSystemMessage` (its text joined). */
export function systemMessageFromStored(message: MastraDBMessage): CoreSystemMessage {
  const providerOptions = message.content.providerMetadata;
  return { role: 'system', content: getMessageText(message), ...(providerOptions ? { providerOptions } : {}) };
}

/** A UI system message as a `CoreSystemMessage` (its text parts joined). */
export function systemMessageFromUI(message: UIMessage): CoreSystemMessage {
  let content = '';
  for (const part of message.parts) if (part.type === 'text') content += part.text;
  return { role: 'system', content };
}

/** Untagged and tagged system messages, de-duplicated by content within each bucket. */
export class SystemMessageBuckets {
  /** Replaced, never grown in place: each bucket is an array of exactly its messages. */
  private untagged: CoreSystemMessage[] = [];
  /** Made with the first tag (most lists have none). */
  private tagged: Map<string, CoreSystemMessage[]> | undefined;

  /** Adds messages to the untagged bucket or to `tag`'s bucket, skipping contents already there. */
  add(messages: ReadonlyArray<CoreSystemMessage>, tag?: string): void {
    let bucket: CoreSystemMessage[] | undefined;
    if (tag === undefined) bucket = this.untagged;
    else {
      const tagged = (this.tagged ??= new Map());
      bucket = tagged.get(tag);
      if (bucket === undefined) {
        bucket = [];
        tagged.set(tag, bucket);
      }
    }
    let added: CoreSystemMessage[] | undefined;
    for (const message of messages) {
      const content = message.content;
      if (bucket.some((existing) => existing.content === content) || added?.some((existing) => existing.content === content)) continue;
      if (added === undefined) added = [message];
      else added.push(message);
    }
    if (added === undefined) return;
    const grown = bucket.length === 0 ? added : bucket.concat(added);
    if (tag === undefined) this.untagged = grown;
    else this.tagged?.set(tag, grown);
  }

  /** The untagged bucket, or `tag`'s bucket (a copy). */
  get(tag?: string): CoreSystemMessage[] {
    return [...(tag === undefined ? this.untagged : (this.tagged?.get(tag) ?? []))];
  }

  /** Untagged messages, then each tagged bucket in the order tags were first used. */
  all(): CoreSystemMessage[] {
    const all = [...this.untagged];
    if (this.tagged !== undefined) for (const bucket of this.tagged.values()) all.push(...bucket);
    return all;
  }

  /** Tags in the order they were first used, with their messages. */
  entries(): Array<[tag: string, messages: CoreSystemMessage[]]> {
    return this.tagged === undefined ? [] : [...this.tagged].map(([tag, messages]) => [tag, [...messages]]);
  }

  /** Replaces the untagged bucket (tagged buckets are kept). */
  replaceUntagged(messages: ReadonlyArray<CoreSystemMessage>): void {
    this.untagged = [];
    this.add(messages);
  }

  /** Empties the untagged bucket, or removes `tag`'s bucket. */
  clear(tag?: string): void {
    if (tag === undefined) this.untagged = [];
    else this.tagged?.delete(tag);
  }
}
