/**
 * `Memory`: conversation threads for an Agent. With `{ memory: { thread, resource } }` on a call,
 * history is loaded before the user's input processors and the run is saved after the user's
 * output processors, so only what the list holds after every processor is stored.
 */
import type { AgentMemory, AgentMemoryCall, AgentMemoryProcessors, MemoryFence } from '../contract/memory-types.js';
import type { MessageList } from '../message-list/message-list.js';
import type { MastraDBMessage } from '../message-list/types.js';
import type { RequestContext } from '../contract/request-context.js';
import type { MemoryStorage, StorageThread } from '../storage/types.js';
import { MessageHistory } from './message-history.js';
import { MessageHistorySaver, saveUnsaved } from './message-history-saver.js';

/** Options of `Memory`. */
export interface MemoryOptions {
  /** The store the threads live in. */
  storage: MemoryStorage;
  /** How many of the thread's last messages each run loads (default 10). */
  lastMessages?: number;
  /**
   * What a run that ends in a tripwire keeps: `'nothing'` (default — a blocked exchange leaves no
   * trace in the thread) or `'input'` (the user's message is saved, the blocked reply never is).
   */
  saveOnTripwire?: 'nothing' | 'input';
  /**
   * Store assistant messages and tool calls/results that arrive in a call's input as the agent's
   * own turns. Default `false`: with memory, input may only add user turns — a client that posts an
   * `assistant` message or a tool part with a made-up `output` gets an `InvalidMessageError`
   * naming this option (the run ends with an `error` chunk before any model call), so a request
   * body can never write the agent's history. Set it only when your own trusted code supplies the
   * history (e.g. importing a conversation). Read-only calls store nothing and are not checked.
   */
  allowAssistantInput?: boolean;
}

/**
 * Memory for an Agent.
 *
 * @example
 * ```ts
 * import { Agent } from 'rxagent';
 * import { Memory } from 'rxagent/memory';
 * import { LibSQLStorage } from 'rxagent/storage/libsql';
 * const memory = new Memory({ storage: new LibSQLStorage({ url: 'file:./.rxagent/memory.db' }), lastMessages: 20 });
 * const agent = new Agent({ id: 'support', model, memory });
 * await agent.generate('Hi, I am Ada', { memory: { thread: 'thread-1', resource: 'user-1' } });
 * ```
 */
export class Memory implements AgentMemory {
  /** The store the threads live in. */
  readonly storage: MemoryStorage;
  /** How many of the thread's latest messages are loaded as history. */
  readonly lastMessages: number;
  /** What a run that ends in a tripwire saves: `'nothing'` (default) or `'input'` (the user's message only). */
  readonly saveOnTripwire: 'nothing' | 'input';
  /** Whether input may add assistant turns and tool results (see `MemoryOptions.allowAssistantInput`). */
  readonly allowAssistantInput: boolean;

  constructor(options: MemoryOptions) {
    if (options?.storage === undefined) throw new TypeError('new Memory(options): options.storage is required.');
    const lastMessages = options.lastMessages ?? 10;
    if (!Number.isInteger(lastMessages) || lastMessages < 0) {
      throw new TypeError(`new Memory(options): lastMessages must be a whole number ≥ 0 (got ${String(options.lastMessages)}).`);
    }
    this.storage = options.storage;
    this.lastMessages = lastMessages;
    this.saveOnTripwire = options.saveOnTripwire ?? 'nothing';
    this.allowAssistantInput = options.allowAssistantInput === true;
  }

  /** The memory processors of one call (the Agent calls this). */
  processorsFor(call: {
    /** The id of the conversation thread. */
    threadId: string;
    /** The id of the resource (user, tenant) that owns the thread. */
    resourceId: string;
    /** The thread: its id, or `{ id, title?, metadata? }`. */
    thread: AgentMemoryCall['thread'];
    /** Load history, save nothing. */
    readOnly: boolean;
    /** The run's `RequestContext`. */
    requestContext: RequestContext;
    /** A durable run's fence: the saves carry it. */
    fence?: MemoryFence | undefined;
  }): AgentMemoryProcessors {
    const { threadId, resourceId, readOnly } = call;
    const thread = typeof call.thread === 'string' ? undefined : call.thread;
    const input = [
      new MessageHistory({
        storage: this.storage,
        threadId,
        resourceId,
        lastMessages: this.lastMessages,
        readOnly,
        allowAssistantInput: this.allowAssistantInput,
        ...(thread?.title === undefined ? {} : { title: thread.title }),
        ...(thread?.metadata === undefined ? {} : { metadata: thread.metadata }),
      }),
    ];
    if (readOnly) return { input, output: [] };
    return {
      input,
      output: [new MessageHistorySaver({ storage: this.storage, threadId, resourceId, fence: call.fence })],
      onTripwire: async (messageList: MessageList) => {
        if (this.saveOnTripwire !== 'input') return;
        const responseIds = messageList.get.response.db().map((message) => message.id);
        messageList.removeByIds(responseIds);
        await saveUnsaved(this.storage, threadId, resourceId, messageList, undefined, call.fence);
      },
    };
  }

  /** A thread, or null. */
  getThread(threadId: string): Promise<StorageThread | null> {
    return this.storage.getThread(threadId);
  }

  /** A thread's messages in order (all, or the last `last`). */
  getMessages(threadId: string, options: {
    /** At most this many messages: the latest ones. */
    last?: number;
  } = {
  }): Promise<MastraDBMessage[]> {
    return this.storage.getMessages({ threadId, ...(options.last === undefined ? {} : { last: options.last }) });
  }

  /** Closes the storage. */
  close(): Promise<void> {
    return this.storage.close();
  }
}
