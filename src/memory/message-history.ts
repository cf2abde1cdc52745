/**
 * `MessageHistory`: the memory input processor. Creates the thread on first use and loads its last
 * messages into the run's list as remembered history (always before the run's own messages).
 */
import type { ProcessInputArgs, Processor } from '../contract/processor-types.js';
import { ThreadNotFoundError } from '../storage/errors/thread-not-found-error.js';
import type { MemoryStorage } from '../storage/types.js';

/** What `MessageHistory` needs for one call. */
export interface MessageHistoryOptions {
  /** The store the threads live in. */
  storage: MemoryStorage;
  /** The id of the conversation thread. */
  threadId: string;
  /** The id of the resource (user, tenant) that owns the thread. */
  resourceId: string;
  /** How many of the thread's last messages to load (0: none). */
  lastMessages: number;
  /** Load only; an unknown thread is a `ThreadNotFoundError`. */
  readOnly: boolean;
  /** The title. */
  title?: string;
  /** Free-form metadata. */
  metadata?: Record<string, unknown>;
}

/**
 * Loads a thread's history before the user's input processors run.
 *
 * @example
 * ```ts
 * import { MessageHistory } from 'rxagent/memory';
 * const history = new MessageHistory({ storage, threadId: 't1', resourceId: 'u1', lastMessages: 10, readOnly: false });
 * ```
 */
export class MessageHistory implements Processor<'message-history'> {
  /** The id. */
  readonly id = 'message-history' as const;
  /** A human-readable name. */
  readonly name = 'Message history';
  readonly #options: MessageHistoryOptions;

  constructor(options: MessageHistoryOptions) {
    this.#options = options;
  }

  /** The `processInput` hook (see `Processor.processInput` for when it runs and what it may return). */
  async processInput({ messageList }: ProcessInputArgs): Promise<undefined> {
    const { storage, threadId, resourceId, lastMessages, readOnly } = this.#options;
    const thread = await storage.getThread(threadId);
    if (thread === null) {
      reidentifyInput(messageList, new Set());
      if (readOnly) throw new ThreadNotFoundError({ threadId });
      await storage.createThread({
        id: threadId,
        resourceId,
        ...(this.#options.title === undefined ? {} : { title: this.#options.title }),
        ...(this.#options.metadata === undefined ? {} : { metadata: this.#options.metadata }),
      });
      return undefined;
    }
    const history = lastMessages <= 0 ? [] : await storage.getMessages({ threadId, resourceId, last: lastMessages });
    reidentifyInput(messageList, new Set(history.map((message) => message.id)));
    if (history.length > 0) messageList.add(history, 'memory');
    return undefined;
  }
}

/**
 * Input (client-sent) messages never replace stored ones: a copy of a loaded history message
 * (same id) is dropped — the stored version is used — and every other input message is new
 * input under a fresh id, so an id the client chose can never overwrite a message stored
 * earlier in the thread (loaded or not).
 */
function reidentifyInput(messageList: ProcessInputArgs['messageList'], loadedIds: ReadonlySet<string>): void {
  const input = messageList.get.input.db();
  if (input.length === 0) return;
  messageList.removeByIds(input.map((message) => message.id));
  const kept = input.filter((message) => !loadedIds.has(message.id)).map((message) => ({ ...message, id: messageList.newMessageId() }));
  if (kept.length > 0) messageList.add(kept, 'input', { merge: false });
}

