/**
 * Applies what a message-phase hook returned to the run's `MessageList`, per the contract:
 * the same instance → accepted; another instance → error; an array → reconciled for the phase;
 * `{ messages, systemMessages }` → system messages replaced first; `undefined` → no change.
 */
import type { MessageList } from '../../message-list/message-list.js';
import type { CoreSystemMessage, MastraDBMessage, MessageSource } from '../../message-list/types.js';
import { ProcessorError, type ProcessorHookName } from '../../contract/errors/processor-error.js';
import { assertKnownKeys, badField } from './result-shapes.js';

/** Where the reconciliation happens and what the hook was given. */
export interface ReconcileScope {
  processorId: string;
  hook: ProcessorHookName;
  messageList: MessageList;
  /** The messages the hook was given (the phase's messages). */
  before: readonly MastraDBMessage[];
  /** Source for returned messages the list did not know. */
  defaultSource: MessageSource;
}

/** True when `value` looks like a `MessageList` (duck-typed, works across package copies). */
export function isMessageListLike(value: unknown): value is MessageList {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { removeByIds?: unknown }).removeByIds === 'function' &&
    typeof (value as { addSystem?: unknown }).addSystem === 'function' &&
    typeof (value as { get?: unknown }).get === 'object'
  );
}

/** Throws unless `returned` is the run's own list. */
export function assertSameMessageList(returned: MessageList, scope: Pick<ReconcileScope, 'processorId' | 'hook' | 'messageList'>): void {
  if (returned !== scope.messageList) {
    throw new ProcessorError(
      scope.processorId,
      scope.hook,
      'returned a MessageList instance other than the one that was passed in as an argument. ' +
        'New external MessageList instances are not supported: mutate the messageList argument (or return it) instead.',
    );
  }
}

function systemText(message: MastraDBMessage): string {
  const fromParts = message.content.parts
    .map((part) => (part.type === 'text' ? part.text : ''))
    .filter((text) => text.length > 0)
    .join('\n');
  return fromParts || message.content.content || '';
}

/**
 * Reconciles a returned message array into the list. From `processInput`, an empty array removes
 * all of the new input (none of it remains: a filtering guardrail's answer); from every other hook
 * it is "no change" (the specification's own `QualityGuardrail` returns `[]` from
 * `processOutputStep` when it passes; wiping the conversation is never what that means). To remove
 * messages there, return the ones to keep or call `messageList.removeByIds`.
 */
export function reconcileMessages(messages: readonly MastraDBMessage[], scope: ReconcileScope): void {
  if (!Array.isArray(messages)) throw badField(scope, 'messages', 'an array of messages', messages);
  if (messages.length === 0) {
    if (scope.hook === 'processInput' && scope.before.length > 0) scope.messageList.removeByIds(scope.before.map((message) => message.id));
    return;
  }
  // the messages it was given, as they were (a pass-through hook): nothing to reconcile
  if (messages.length === scope.before.length && messages.every((message, index) => message === scope.before[index])) return;
  const { messageList } = scope;
  const returnedIds = new Set<string>();
  for (const message of messages) {
    if (message === null || typeof message !== 'object' || typeof message.id !== 'string') {
      throw new ProcessorError(
        scope.processorId,
        scope.hook,
        'returned an array containing something that is not a MastraDBMessage (each needs a string id).',
      );
    }
    returnedIds.add(message.id);
  }
  const beforeById = new Map<string, MastraDBMessage>();
  for (const message of scope.before) beforeById.set(message.id, message);
  const removed: string[] = [];
  for (const id of beforeById.keys()) if (!returnedIds.has(id)) removed.push(id);
  if (removed.length > 0) messageList.removeByIds(removed);
  for (const message of messages) {
    if (message.role === 'system') {
      messageList.removeByIds([message.id]);
      messageList.addSystem(systemText(message));
      continue;
    }
    if (beforeById.get(message.id) === message) continue; // unchanged object: nothing to do
    const source = messageList.getSource(message.id) ?? scope.defaultSource;
    try {
      messageList.add(message, source, { merge: false });
    } catch (error) {
      throw ProcessorError.fromThrown(scope.processorId, scope.hook, error);
    }
  }
}

const MESSAGE_RESULT_KEYS = ['messages', 'systemMessages', 'messageList'] as const;

/** Applies a `processInput` / `processOutputStep` / `processToolResult` / `processOutputResult` result. */
export function applyMessageResult(result: unknown, scope: ReconcileScope): void {
  if (result === undefined || result === null) return;
  if (isMessageListLike(result)) {
    assertSameMessageList(result, scope);
    return;
  }
  if (Array.isArray(result)) {
    reconcileMessages(result as MastraDBMessage[], scope);
    return;
  }
  if (typeof result === 'object') {
    const shaped = result as { messages?: unknown; messageList?: unknown; systemMessages?: unknown };
    const expected = 'the messageList, an array of messages or { messages, systemMessages }';
    assertKnownKeys(result as Record<string, unknown>, MESSAGE_RESULT_KEYS, scope, expected);
    if (shaped.messages === undefined && shaped.messageList === undefined && shaped.systemMessages === undefined) {
      throw new ProcessorError(scope.processorId, scope.hook, `returned an object without messages; expected ${expected}.`);
    }
    if (shaped.messageList !== undefined && shaped.messages !== undefined) {
      throw new ProcessorError(scope.processorId, scope.hook, 'returned both messages and messageList; return only one of them.');
    }
    if (shaped.messageList !== undefined) {
      if (!isMessageListLike(shaped.messageList)) {
        throw new ProcessorError(scope.processorId, scope.hook, 'returned a messageList that is not a MessageList.');
      }
      assertSameMessageList(shaped.messageList, scope);
    }
    if (shaped.systemMessages !== undefined) {
      replaceSystemMessages(shaped.systemMessages, scope);
    }
    if (shaped.messages !== undefined) reconcileMessages(shaped.messages as MastraDBMessage[], scope);
    return;
  }
  throw new ProcessorError(
    scope.processorId,
    scope.hook,
    `returned ${typeof result}; expected the messageList, an array of messages, { messages, systemMessages } or nothing.`,
  );
}

/** Replaces the untagged system messages with what a hook returned. */
export function replaceSystemMessages(systemMessages: unknown, scope: Pick<ReconcileScope, 'processorId' | 'hook' | 'messageList'>): void {
  if (!Array.isArray(systemMessages)) throw badField(scope, 'systemMessages', 'an array of system messages', systemMessages);
  systemMessages.forEach((message: unknown, index) => {
    const shaped = message as { role?: unknown; content?: unknown } | null;
    if (typeof shaped !== 'object' || shaped === null || shaped.role !== 'system') {
      throw badField(scope, `systemMessages[${index}]`, "a system message { role: 'system', content }", message);
    }
    if (typeof shaped.content !== 'string' && !Array.isArray(shaped.content)) {
      throw badField(scope, `systemMessages[${index}].content`, 'a string', shaped.content);
    }
  });
  try {
    scope.messageList.replaceAllSystemMessages(systemMessages as CoreSystemMessage[]);
  } catch (error) {
    throw ProcessorError.fromThrown(scope.processorId, scope.hook, error);
  }
}
