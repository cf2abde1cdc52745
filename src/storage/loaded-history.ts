/** History a store returned, checked before a prompt is built from it (memory's load). */
import { InvalidMessageError } from '../message-list/errors/invalid-message-error.js';
import type { MastraDBMessage } from '../message-list/types.js';
import { StorageError } from './errors/storage-error.js';
import { validateMessages } from './internal/validate-messages.js';

/**
 * The prompt is never built from what the store should not have returned: history loaded for a
 * thread must be well-formed messages of that thread and resource, each id once, at most
 * `lastMessages` of them. Anything else is a `StorageError` (`getMessages`) whose `cause` is an
 * `InvalidMessageError` naming the message (its index in the loaded history) and the field.
 *
 * @example
 * ```ts
 * const history = await storage.getMessages({ threadId, resourceId, last: 40 });
 * assertLoadedHistory(history, { threadId, resourceId, lastMessages: 40 });
 * ```
 */
export function assertLoadedHistory(history: readonly MastraDBMessage[], load: { threadId: string; resourceId: string; lastMessages: number }): void {
  const fail = (cause: InvalidMessageError): never => {
    throw new StorageError({ operation: 'getMessages', message: `the store returned history that cannot be used for thread ${JSON.stringify(load.threadId)}: ${cause.message}`, cause });
  };
  if (!Array.isArray(history)) fail(new InvalidMessageError([{ path: [], message: `expected an array of messages, got ${typeof history}` }]));
  if (history.length > load.lastMessages) {
    fail(new InvalidMessageError([{ path: [], message: `${history.length} messages, but at most lastMessages (${load.lastMessages}) were asked for` }]));
  }
  try {
    validateMessages(history, load);
  } catch (error) {
    if (InvalidMessageError.isInstance(error)) fail(error);
    throw error;
  }
  const seen = new Set<string>();
  history.forEach((message, index) => {
    if (seen.has(message.id)) fail(new InvalidMessageError([{ path: [index, 'id'], message: `message id ${JSON.stringify(message.id)} appears twice` }]));
    seen.add(message.id);
  });
}
