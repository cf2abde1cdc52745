/** The option and view types of `MessageList` (kept apart so `message-list.ts` holds the class only). */
import type { LanguageModelV4Prompt } from '@ai-sdk/provider';
import type { ModelMessage, UIMessage } from 'ai';
import type { MastraDBMessage } from './types.js';

/**
 * Options of `new MessageList()`.
 *
 * @example
 * ```ts
 * import type { MessageListOptions } from 'rxagent/message-list';
 * const options: MessageListOptions = { threadId: 'thread-1', generateId: () => 'msg-1', now: () => new Date(0) };
 * ```
 */
export interface MessageListOptions {
  /** Stamped on every input and response message. */
  threadId?: string;
  /** Stamped on every input and response message. */
  resourceId?: string;
  /** Id for messages that have none. Default: `crypto.randomUUID()`. */
  generateId?: () => string;
  /** Clock for `createdAt`. Default: `new Date()`. */
  now?: () => Date;
}

/**
 * Options of `MessageList.add`.
 *
 * @example
 * ```ts
 * import type { AddMessageOptions } from 'rxagent/message-list';
 * const options: AddMessageOptions = { merge: false };
 * ```
 */
export interface AddMessageOptions {
  /** `false` keeps a new assistant message separate from the assistant message before it. Default: true. */
  merge?: boolean;
}

/**
 * One slice of the conversation in each format.
 *
 * @example
 * ```ts
 * import type { MessageListView } from 'rxagent/message-list';
 * const view: MessageListView = messageList.get.input;
 * ```
 */
export interface MessageListView {
  /** The stored messages themselves (not copies: in-place edits are seen by the list). */
  db(): MastraDBMessage[];
  /** AI SDK `UIMessage`s. */
  ui(): UIMessage[];
  /** AI SDK `ModelMessage`s (tool results in `tool` messages, UI-only parts dropped). */
  model(): ModelMessage[];
  /** Alias of `model()`. */
  core(): ModelMessage[];
}

/**
 * The whole conversation, which can also be rendered as a provider prompt.
 *
 * @example
 * ```ts
 * import type { MessageListAllView } from 'rxagent/message-list';
 * const prompt = (messageList.get.all satisfies MessageListAllView).prompt();
 * ```
 */
export interface MessageListAllView extends MessageListView {
  /** System messages (untagged, then tagged buckets) followed by the conversation. */
  prompt(): LanguageModelV4Prompt;
}

/**
 * The views of `messageList.get`.
 *
 * @example
 * ```ts
 * import type { MessageListViews } from 'rxagent/message-list';
 * const { input, response }: MessageListViews = messageList.get;
 * ```
 */
export interface MessageListViews {
  /** Every message: remembered history, then the run's input and response. */
  all: MessageListAllView;
  /** The run's new input messages. */
  input: MessageListView;
  /** The run's response messages (the assistant's and tool results). */
  response: MessageListView;
  /** The history loaded from memory. */
  remembered: MessageListView;
}
