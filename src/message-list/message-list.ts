import type { CoreSystemMessage, InboundMessage, MastraDBMessage, MessageSource, ToolInvocationPart } from './types.js';
import { InvalidMessageError } from './errors/invalid-message-error.js';
import { RxAgentError } from '../errors/rxagent-error.js';
import { assertValidInbound } from './schemas/inbound-message-schema.js';
import { inboundToStored } from './internal/inbound-to-stored.js';
import { ConversationStore } from './internal/conversation-store.js';
import { SystemMessageBuckets, toCoreSystemMessages, type SystemMessageInput } from './system-messages.js';
import type { StepBoundary } from './step-boundary.js';
import { deserializeMessage, serializeMessage, type ConversationSource, type SerializedMessageList } from './serialized-message-list.js';
import { ListViews } from './message-list-views.js';
import { randomMessageId } from './conversion-options.js';
import type { AddMessageOptions, MessageListAllView, MessageListOptions, MessageListView, MessageListViews } from './message-list-types.js';

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

  /** The messages, their sources, unsaved ids and step boundaries. */
  private readonly store: ConversationStore;
  private readonly systemMessages = new SystemMessageBuckets();
  private readonly generateId: () => string;
  /** How `add` converts inbound messages: the list's ids, and its strictly increasing clock. */
  private readonly conversion: { generateId: () => string; now: () => Date };

  constructor(options: MessageListOptions = {}) {
    this.threadId = options.threadId;
    this.resourceId = options.resourceId;
    this.generateId = options.generateId ?? randomMessageId;
    this.store = new ConversationStore({ threadId: this.threadId, resourceId: this.resourceId }, options.now ?? (() => new Date()));
    this.get = new ListViews(this, this.store);
    const store = this.store;
    this.conversion = {
      generateId: this.generateId,
      now: () => store.nextTimestamp(),
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
    assertValidInbound(list, indexed, this.store);
    const conversion = this.conversion;
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
        this.store.insert(entry.message, resolved as ConversationSource, options.merge !== false);
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
    return this.store.remove(ids);
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
    return this.store.updateToolInvocation(part);
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
    return this.store.sourceOf(typeof messageOrId === 'string' ? messageOrId : messageOrId.id);
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
    const unsaved = this.store.unsavedMessages();
    this.store.clearUnsaved();
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
    return this.store.unsavedMessages().map((message) => message.id);
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
    return this.store.openStepBoundary();
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
    if (!this.store.rollbackToStepBoundary(boundary)) {
      throw new RxAgentError('MessageListError', 'rollbackToStepBoundary: this boundary was not opened on this MessageList');
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
      messages: this.store.all().map((message) => ({ source: this.store.sourceOf(message.id) ?? 'input', message: serializeMessage(message) })),
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
    const list = newMessageList({ ...options, threadId: data.threadId, resourceId: data.resourceId });
    list.systemMessages.add(data.systemMessages);
    for (const { tag, messages } of data.taggedSystemMessages) list.systemMessages.add(messages, tag);
    for (const { source, message } of data.messages) list.store.append(deserializeMessage(message), source);
    list.store.clearUnsaved();
    for (const id of data.unsavedIds) list.store.markUnsaved(id);
    return list;
  }

}

/**
 * `new MessageList(options)` from outside the class body: a class that names itself inside its own
 * body is emitted as `var MessageList = class _MessageList` by esbuild, so the built class would be
 * called `_MessageList` (checked by smoke/export-names.mjs).
 */
function newMessageList(options: MessageListOptions): MessageList {
  return new MessageList(options);
}
