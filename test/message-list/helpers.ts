import { MessageList, type MastraDBMessage, type MastraMessagePart, type MessageListOptions } from '../../src/message-list/index.js';

/** A MessageList with sequential ids (`id-1`, `id-2`, …) and a fixed clock at 2025-01-01. */
export function createList(options: MessageListOptions = {}): MessageList {
  let counter = 0;
  return new MessageList({ generateId: () => `id-${++counter}`, now: () => new Date('2025-01-01T00:00:00.000Z'), ...options });
}

/** A stored message with the given parts. */
export function dbMessage(id: string, role: MastraDBMessage['role'], parts: MastraMessagePart[], createdAt = new Date('2024-12-31T00:00:00.000Z')): MastraDBMessage {
  return { id, role, createdAt, content: { format: 2, parts } };
}

/** A stored message with one text part. */
export function textMessage(id: string, role: MastraDBMessage['role'], text: string): MastraDBMessage {
  return dbMessage(id, role, [{ type: 'text', text }]);
}

/** A tool-invocation part in state `call`. */
export function toolCall(toolCallId: string, toolName: string, args: unknown = {}, extra: Partial<Extract<MastraMessagePart, { type: 'tool-invocation' }>> = {}): MastraMessagePart {
  return { type: 'tool-invocation', toolInvocation: { state: 'call', toolCallId, toolName, args }, ...extra };
}

/** The ids of messages. */
export function ids(messages: ReadonlyArray<{ id: string }>): string[] {
  return messages.map((message) => message.id);
}
