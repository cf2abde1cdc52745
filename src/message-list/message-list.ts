import type { CoreSystemMessage, InboundMessage, MastraDBMessage, MessageSource, ToolInvocationPart } from './types.js';
import { InvalidMessageError } from './errors/invalid-message-error.js';
import { RxAgentError } from './errors/rxagent-error.js';
import { assertValidInbound } from './schemas/inbound-message-schema.js';
import { inboundToStored } from './internal/inbound-to-stored.js';
import { syncLegacyContent } from './internal/message-text.js';
import { applyInvocationUpdate, findInvocationByCallId, findPendingProviderCall } from './internal/tool-invocations.js';
import { SystemMessageBuckets, toCoreSystemMessages, type SystemMessageInput } from './system-messages.js';
import { restoreMessage, snapshotMessage, type MessageSnapshot, type StepBoundary } from './step-boundary.js';
import { deserializeMessage, serializeMessage, type ConversationSource, type SerializedMessageList } from './serialized-message-list.js';
import { toUIMessage } from './to-ui.js';
import type { ModelMessage } from 'ai';
import { toModelMessages } from './to-model.js';
import { toPrompt } from './to-prompt.js';
import type { AddMessageOptions, MessageListOptions, MessageListView, MessageListViews } from './message-list-types.js';

export type { AddMessageOptions, MessageListAllView, MessageListOptions, MessageListView, MessageListViews } from './message-list-types.js';

/**
 * The conversation of one agent run: remembered (memory), input and response messages in list
 * order, plus system messages in untagged and tagged buckets. Every hook of the processor
 * contract reads and edits it; memory saves what it finally holds.
 *
 * Inbound messages (strings, AI SDK `ModelMessage`/`UIMessage`, stored `MastraDBMessage`) are
 * validated, then stored as `MastraDBMessage`s (format 2). Stored messages given to `add` are
 * adopted (normalised in place, not copied) so in-place edits keep working.
 *
 * @example
 * ```ts
 * import { MessageList } from 'rxagent/message-list';
 * const messageList = new MessageList({ threadId: 'thread-1' });
 * messageList.addSystem('Be brief.').add('What is the weather in Paris?', 'input');
 * const prompt = messageList.get.all.prompt();
 * ```
 */
export class MessageList {
  /** The thread stamped on input and response messages. */
  readonly threadId: string | undefined;
  /** The resource stamped on input and response messages. */
  readonly resourceId: string | undefined;
  /** Views of the conversation by source, each in db / ui / model formats. */
  readonly get: MessageListViews;

  private messages: MastraDBMessage[] = [];
  private readonly byId = new Map<string, MastraDBMessage>();
  private readonly sources = new Map<string, ConversationSource>();
  private readonly unsaved = new Set<string>();
  private readonly trusted = new WeakSet<object>();
  private readonly boundaries = new WeakMap<StepBoundary, MessageSnapshot[]>();
  private readonly systemMessages = new SystemMessageBuckets();
  private readonly generateId: () => string;
  private readonly now: () => Date;
  private lastTimestamp = Number.NEGATIVE_INFINITY;

  constructor(options: MessageListOptions = {}) {
    this.threadId = options.threadId;
    this.resourceId = options.resourceId;
    this.generateId = options.generateId ?? (() => crypto.randomUUID());
    this.now = options.now ?? (() => new Date());
    this.get = {
      all: { ...this.view(() => this.messages.slice()), prompt: () => toPrompt({ systemMessages: this.getAllSystemMessages(), messages: this.messages }) },
      input: this.view(() => this.messagesFrom('input')),
      response: this.view(() => this.messagesFrom('response')),
      remembered: this.view(() => this.messagesFrom('memory')),
    };
  }

  /**
   * Adds messages from `source` (`'user'` is an alias of `'input'`).
   *
   * All messages are validated before any is added (an `InvalidMessageError` names the path,
   * starting with the index when an array was given). Then, in order: system messages go to
   * `addSystem` (ignored from `memory`); a message whose id is already in the list replaces it
   * in place and takes `source` (except that a `memory` copy of an input or response message is
   * skipped: the run's version wins); a `tool`
   * message folds its results into the matching calls; an assistant message directly following
   * an assistant message of the same source (`input` or `response`) is merged into it (parts
   * appended, first id kept) unless `{ merge: false }`; anything else is appended.
   *
   * @example
   * ```ts
   * import { MessageList } from 'rxagent/message-list';
   * new MessageList().add([{ role: 'user', content: 'hi' }, { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'there' }] }], 'input');
   * ```
   */
  add(messages: InboundMessage | InboundMessage[], source: MessageSource | 'user', options: AddMessageOptions = {}): this {
    const resolved: MessageSource = source === 'user' ? 'input' : source;
    const list: ReadonlyArray<unknown> = Array.isArray(messages) ? messages : [messages];
    const indexed = Array.isArray(messages);
    assertValidInbound(list, { indexed, skip: (message) => typeof message === 'object' && message !== null && this.trusted.has(message) });
    const conversion = { generateId: this.generateId, now: () => this.nextTimestamp() };
    const converted = list.map((message) => inboundToStored(message as InboundMessage, conversion));
    if (resolved === 'system') {
      const misplaced = converted.findIndex((entry) => entry.kind !== 'system');
      if (misplaced >= 0) {
        throw new InvalidMessageError([{ path: indexed ? [misplaced, 'role'] : ['role'], message: "only system messages can be added with source 'system'" }]);
      }
    }
    for (const entry of converted) {
      if (entry.kind === 'system') {
        if (resolved !== 'memory') this.systemMessages.add([entry.message]);
      } else {
        this.insert(entry.message, resolved as ConversationSource, options.merge !== false);
      }
    }
    return this;
  }

  /**
   * Adds system messages to the untagged bucket, or to `tag`'s bucket; contents already in the
   * bucket are skipped. Empty content is an `InvalidMessageError`.
   *
   * @example
   * ```ts
   * import { MessageList } from 'rxagent/message-list';
   * new MessageList().addSystem('You are a helpful assistant.').addSystem('User prefers French.', 'memory');
   * ```
   */
  addSystem(messages: SystemMessageInput, tag?: string): this {
    this.systemMessages.add(toCoreSystemMessages(messages), tag);
    return this;
  }

  /**
   * The untagged system messages, or `tag`'s bucket.
   *
   * @example
   * ```ts
   * const instructions = messageList.getSystemMessages();
   * ```
   */
  getSystemMessages(tag?: string): CoreSystemMessage[] {
    return this.systemMessages.get(tag);
  }

  /**
   * Untagged system messages, then every tagged bucket in the order tags were first used.
   *
   * @example
   * ```ts
   * const systemMessages = messageList.getAllSystemMessages();
   * ```
   */
  getAllSystemMessages(): CoreSystemMessage[] {
    return this.systemMessages.all();
  }

  /**
   * Replaces the untagged system messages (tagged buckets are kept).
   *
   * @example
   * ```ts
   * messageList.replaceAllSystemMessages([{ role: 'system', content: 'Answer in one line.' }]);
   * ```
   */
  replaceAllSystemMessages(messages: SystemMessageInput): this {
    this.systemMessages.replaceUntagged(toCoreSystemMessages(messages));
    return this;
  }

  /**
   * Empties the untagged system messages, or removes `tag`'s bucket.
   *
   * @example
   * ```ts
   * messageList.clearSystemMessages('memory');
   * ```
   */
  clearSystemMessages(tag?: string): this {
    this.systemMessages.clear(tag);
    return this;
  }

  /**
   * Removes messages by id and returns the removed ones (in list order). They are no longer
   * unsaved: memory will not store them.
   *
   * @example
   * ```ts
   * const removed = messageList.removeByIds(['msg-1', 'msg-2']);
   * ```
   */
  removeByIds(ids: ReadonlyArray<string>): MastraDBMessage[] {
    const wanted = new Set(ids);
    const removed: MastraDBMessage[] = [];
    const kept: MastraDBMessage[] = [];
    for (const message of this.messages) (wanted.has(message.id) ? removed : kept).push(message);
    if (removed.length === 0) return removed;
    this.messages = kept;
    for (const message of removed) {
      this.byId.delete(message.id);
      this.sources.delete(message.id);
      this.unsaved.delete(message.id);
    }
    return removed;
  }

  /**
   * Merges a tool invocation update (usually state `result` or `output-error`) into the matching
   * call: the most recent invocation with the same `toolCallId`, or else the earliest pending
   * provider-executed call of the same `toolName` among input and response messages (whose id is
   * then rewritten). Returns false when nothing matches.
   *
   * @example
   * ```ts
   * messageList.updateToolInvocation({
   *   type: 'tool-invocation',
   *   toolInvocation: { state: 'result', toolCallId, toolName: 'lookup-customer', args, result: redacted },
   * });
   * ```
   */
  updateToolInvocation(part: ToolInvocationPart): boolean {
    const { toolCallId, toolName } = part.toolInvocation;
    const location =
      findInvocationByCallId(this.messages, toolCallId) ??
      findPendingProviderCall(
        this.messages.filter((message) => this.sources.get(message.id) !== 'memory'),
        toolName,
      );
    if (!location) return false;
    applyInvocationUpdate(location, part);
    this.unsaved.add(location.message.id);
    return true;
  }

  /**
   * A fresh message id from this list's `generateId` (the run's id generator in an Agent run).
   *
   * @example
   * ```ts
   * import { MessageList } from 'rxagent/message-list';
   * const id = new MessageList({ generateId: () => 'm-1' }).newMessageId(); // 'm-1'
   * ```
   */
  newMessageId(): string {
    return this.generateId();
  }

  /**
   * Where a message (or id) came from: `input`, `response` or `memory`; undefined when it is not
   * in the list.
   *
   * @example
   * ```ts
   * const fromMemory = messageList.getSource(message) === 'memory';
   * ```
   */
  getSource(messageOrId: MastraDBMessage | string): MessageSource | undefined {
    return this.sources.get(typeof messageOrId === 'string' ? messageOrId : messageOrId.id);
  }

  /**
   * Returns the messages added or changed since the last drain, in list order, and forgets them:
   * input and response messages added, replaced or merged into, plus any message whose tool
   * invocation the list updated (a folded tool result, `updateToolInvocation`, a rollback) —
   * even a remembered one, so the result is not lost. Replacing a remembered message with source
   * `memory` (a processor reshaping history for the prompt) does not mark it. Removed messages
   * are never returned.
   *
   * @example
   * ```ts
   * await storage.saveMessages(messageList.drainUnsavedMessages());
   * ```
   */
  drainUnsavedMessages(): MastraDBMessage[] {
    const unsaved = this.messages.filter((message) => this.unsaved.has(message.id));
    this.unsaved.clear();
    return unsaved;
  }

  /**
   * Ids of the messages `drainUnsavedMessages()` would return, in list order.
   *
   * @example
   * ```ts
   * if (messageList.getUnsavedIds().length > 0) await flush();
   * ```
   */
  getUnsavedIds(): string[] {
    return this.messages.filter((message) => this.unsaved.has(message.id)).map((message) => message.id);
  }

  /**
   * Records the state of the response before a model step, for `rollbackToStepBoundary`.
   *
   * @example
   * ```ts
   * const boundary = messageList.openStepBoundary();
   * ```
   */
  openStepBoundary(): StepBoundary {
    const responseMessages = this.messagesFrom('response');
    const last = responseMessages.at(-1);
    const lastAssistant = last?.role === 'assistant' ? last : undefined;
    const boundary: StepBoundary = {
      responseMessageIds: responseMessages.map((message) => message.id),
      lastAssistantMessageId: lastAssistant?.id,
      lastAssistantPartCount: lastAssistant?.content.parts.length ?? 0,
    };
    this.boundaries.set(boundary, responseMessages.map(snapshotMessage));
    return boundary;
  }

  /**
   * Puts the response back as it was at `boundary`: response messages added since are removed;
   * response messages that existed get back their part list (parts appended since are dropped)
   * and the tool invocation object of each part (undoing tool results folded in or set by
   * `updateToolInvocation` since); a response message replaced by id since gets its old object
   * back. Not undone: in-place edits of a part's fields, changes to input or remembered messages,
   * and response messages removed since the boundary (they stay removed).
   *
   * @example
   * ```ts
   * const boundary = messageList.openStepBoundary();
   * messageList.add(stepMessage, 'response');
   * messageList.rollbackToStepBoundary(boundary); // stepMessage's parts are gone
   * ```
   */
  rollbackToStepBoundary(boundary: StepBoundary): void {
    const snapshots = this.boundaries.get(boundary);
    if (!snapshots) throw new RxAgentError('MessageListError', 'rollbackToStepBoundary: this boundary was not opened on this MessageList');
    const keep = new Set(boundary.responseMessageIds);
    this.removeByIds(this.messagesFrom('response').filter((message) => !keep.has(message.id)).map((message) => message.id));
    for (const snapshot of snapshots) {
      const { message } = snapshot;
      const current = this.byId.get(message.id);
      if (!current) continue;
      let changed = false;
      if (current !== message) {
        this.messages[this.messages.indexOf(current)] = message;
        this.byId.set(message.id, message);
        changed = true;
      }
      if (this.sources.get(message.id) !== 'response') {
        this.sources.set(message.id, 'response');
        changed = true;
      }
      if (restoreMessage(snapshot) || changed) this.unsaved.add(message.id);
    }
  }

  /**
   * The list as plain JSON (dates as ISO strings), for `MessageList.deserialize`.
   *
   * @example
   * ```ts
   * const json = JSON.stringify(messageList.serialize());
   * ```
   */
  serialize(): SerializedMessageList {
    return {
      version: 1,
      ...(this.threadId !== undefined ? { threadId: this.threadId } : {}),
      ...(this.resourceId !== undefined ? { resourceId: this.resourceId } : {}),
      messages: this.messages.map((message) => ({ source: this.sources.get(message.id) ?? 'input', message: serializeMessage(message) })),
      systemMessages: this.systemMessages.get(),
      taggedSystemMessages: this.systemMessages.entries().map(([tag, messages]) => ({ tag, messages })),
      unsavedIds: this.getUnsavedIds(),
    };
  }

  /**
   * Rebuilds a list from `serialize()` output (messages are trusted, not re-validated).
   *
   * @example
   * ```ts
   * import { MessageList } from 'rxagent/message-list';
   * const restored = MessageList.deserialize(JSON.parse(json));
   * ```
   */
  static deserialize(data: SerializedMessageList, options: Pick<MessageListOptions, 'generateId' | 'now'> = {}): MessageList {
    const list = new MessageList({ ...options, threadId: data.threadId, resourceId: data.resourceId });
    list.systemMessages.add(data.systemMessages);
    for (const { tag, messages } of data.taggedSystemMessages) list.systemMessages.add(messages, tag);
    for (const { source, message } of data.messages) list.append(deserializeMessage(message), source);
    list.unsaved.clear();
    for (const id of data.unsavedIds) if (list.byId.has(id)) list.unsaved.add(id);
    return list;
  }

  private view(select: () => MastraDBMessage[]): MessageListView {
    const model = (): ModelMessage[] => toModelMessages(select());
    return { db: select, ui: () => select().map(toUIMessage), model, core: model };
  }

  private messagesFrom(source: ConversationSource): MastraDBMessage[] {
    return this.messages.filter((message) => this.sources.get(message.id) === source);
  }

  private nextTimestamp(): Date {
    const time = Math.max(this.now().getTime(), this.lastTimestamp + 1);
    this.lastTimestamp = time;
    return new Date(time);
  }

  private insert(message: MastraDBMessage, source: ConversationSource, merge: boolean): void {
    this.trusted.add(message);
    this.lastTimestamp = Math.max(this.lastTimestamp, message.createdAt.getTime());
    if (source !== 'memory') {
      if (this.threadId !== undefined) message.threadId = this.threadId;
      if (this.resourceId !== undefined) message.resourceId = this.resourceId;
    }
    const existing = this.byId.get(message.id);
    if (existing) {
      if (source === 'memory' && this.sources.get(message.id) !== 'memory') return;
      this.messages[this.messages.indexOf(existing)] = message;
      this.byId.set(message.id, message);
      this.sources.set(message.id, source);
      if (source !== 'memory') this.unsaved.add(message.id);
      return;
    }
    if (message.role === 'tool') {
      this.foldToolResults(message, source, merge);
      return;
    }
    const last = this.messages.at(-1);
    if (merge && source !== 'memory' && message.role === 'assistant' && last?.role === 'assistant' && this.sources.get(last.id) === source) {
      last.content.parts.push(...message.content.parts);
      if (message.content.metadata) last.content.metadata = { ...last.content.metadata, ...message.content.metadata };
      syncLegacyContent(last);
      this.unsaved.add(last.id);
      return;
    }
    this.append(message, source);
  }

  private append(message: MastraDBMessage, source: ConversationSource): void {
    this.trusted.add(message);
    this.lastTimestamp = Math.max(this.lastTimestamp, message.createdAt.getTime());
    // Remembered history always precedes the run's own messages, whenever it is loaded.
    const firstOwn = source === 'memory' ? this.messages.findIndex((existing) => this.sources.get(existing.id) !== 'memory') : -1;
    if (firstOwn >= 0) this.messages.splice(firstOwn, 0, message);
    else this.messages.push(message);
    this.byId.set(message.id, message);
    this.sources.set(message.id, source);
    if (source !== 'memory') this.unsaved.add(message.id);
  }

  /** Folds a `tool` message's results into the matching calls; unmatched results become an assistant message. */
  private foldToolResults(message: MastraDBMessage, source: ConversationSource, merge: boolean): void {
    const unmatched = message.content.parts.filter((part) => {
      if (part.type !== 'tool-invocation') return true;
      const location = findInvocationByCallId(this.messages, part.toolInvocation.toolCallId);
      if (!location) return true;
      applyInvocationUpdate(location, { ...part, toolInvocation: { ...part.toolInvocation, args: undefined } });
      if (source !== 'memory') this.unsaved.add(location.message.id);
      return false;
    });
    if (unmatched.length > 0) this.insert({ ...message, role: 'assistant', content: { ...message.content, parts: unmatched } }, source, merge);
  }
}
