/**
 * `MessageHistory`: the memory input processor. Creates the thread on first use and loads its last
 * messages into the run's list as remembered history (always before the run's own messages).
 */
import type { ProcessInputArgs, Processor } from '../processor/processor-types.js';
import { ThreadNotFoundError } from '../storage/errors/thread-not-found-error.js';
import type { MemoryStorage } from '../storage/types.js';

/** What `MessageHistory` needs for one call. */
export interface MessageHistoryOptions {
  storage: MemoryStorage;
  threadId: string;
  resourceId: string;
  /** How many of the thread's last messages to load (0: none). */
  lastMessages: number;
  /** Load only; an unknown thread is a `ThreadNotFoundError`. */
  readOnly: boolean;
  title?: string;
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
  readonly id = 'message-history' as const;
  readonly name = 'Message history';
  readonly #options: MessageHistoryOptions;

  constructor(options: MessageHistoryOptions) {
    this.#options = options;
  }

  async processInput({ messageList }: ProcessInputArgs): Promise<undefined> {
    const { storage, threadId, resourceId, lastMessages, readOnly } = this.#options;
    const thread = await storage.getThread(threadId);
    if (thread === null) {
      if (readOnly) throw new ThreadNotFoundError({ threadId });
      await storage.createThread({
        id: threadId,
        resourceId,
        ...(this.#options.title === undefined ? {} : { title: this.#options.title }),
        ...(this.#options.metadata === undefined ? {} : { metadata: this.#options.metadata }),
      });
      return undefined;
    }
    if (lastMessages <= 0) return undefined;
    const history = await storage.getMessages({ threadId, resourceId, last: lastMessages });
    if (history.length > 0) messageList.add(history, 'memory');
    return undefined;
  }
}
