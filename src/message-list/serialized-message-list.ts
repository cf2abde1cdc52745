/** The plain-JSON form of a `MessageList` (`serialize()` / `MessageList.deserialize()`). */
import type { CoreSystemMessage, MastraDBMessage, MessageSource } from './types.js';

/**
 * Source of a message held in the conversation (system messages live in their own buckets).
 *
 * @example
 * ```ts
 * import type { ConversationSource } from 'rxagent/message-list';
 * const source = messageList.getSource(message) as ConversationSource;
 * ```
 */
export type ConversationSource = Exclude<MessageSource, 'system'>;

/**
 * A stored message with `createdAt` as an ISO string.
 *
 * @example
 * ```ts
 * import type { SerializedMessage } from 'rxagent/message-list';
 * const message: SerializedMessage = { id: 'm1', role: 'user', createdAt: '2025-01-01T00:00:00.000Z', content: { format: 2, parts: [{ type: 'text', text: 'hi' }] } };
 * ```
 */
export interface SerializedMessage extends Omit<MastraDBMessage, 'createdAt'> {
  /** When it was created. */
  createdAt: string;
}

/**
 * Everything a `MessageList` holds, as plain JSON.
 *
 * @example
 * ```ts
 * import { MessageList, type SerializedMessageList } from 'rxagent/message-list';
 * const saved: SerializedMessageList = JSON.parse(JSON.stringify(messageList.serialize()));
 * const restored = MessageList.deserialize(saved);
 * ```
 */
export interface SerializedMessageList {
  /** The format version. */
  version: 1;
  /** The id of the conversation thread. */
  threadId?: string;
  /** The id of the resource (user, tenant) that owns the thread. */
  resourceId?: string;
  /** The messages. */
  messages: Array<{
    /** Where it came from. */
    source: ConversationSource;
    /** The error message. */
    message: SerializedMessage;
  }>;
  /** The untagged system messages. */
  systemMessages: CoreSystemMessage[];
  /** System messages by tag. */
  taggedSystemMessages: Array<{
    /** The system messages' tag. */
    tag: string;
    /** The messages. */
    messages: CoreSystemMessage[];
  }>;
  /** Ids of the messages not saved yet. */
  unsavedIds: string[];
}

/** A deep JSON copy of a stored message, `createdAt` as an ISO string. */
export function serializeMessage(message: MastraDBMessage): SerializedMessage {
  const { createdAt, ...rest } = message;
  return { ...(JSON.parse(JSON.stringify(rest)) as Omit<MastraDBMessage, 'createdAt'>), createdAt: createdAt.toISOString() };
}

/** A stored message back from its serialized form. */
export function deserializeMessage(message: SerializedMessage): MastraDBMessage {
  const { createdAt, ...rest } = message;
  return { ...(JSON.parse(JSON.stringify(rest)) as Omit<MastraDBMessage, 'createdAt'>), createdAt: new Date(createdAt) };
}
