import type { MastraDBMessage } from '../message-list/types.js';
import { ThreadNotFoundError } from './errors/thread-not-found-error.js';
import { ThreadOwnershipError } from './errors/thread-ownership-error.js';
import { assertStorageId } from './internal/ids.js';
import { closedError } from './internal/guard.js';
import { messageWindow, sliceWindow, threadWindow } from './internal/query-options.js';
import {
  metadataJson,
  toMessage,
  toResource,
  toThread,
  type MessageRecord,
  type ResourceRecord,
  type ThreadRecord,
} from './internal/records.js';
import { assertStorableText, storableDate, messageIdTakenError, messageInOtherThreadError, savePolicy, serialiseContent, validateMessages } from './internal/validate-messages.js';
import type { StorageOperation } from './errors/storage-error.js';
import type {
  CreateThreadInput,
  GetMessagesOptions,
  ListThreadsOptions,
  MemoryStorage,
  SaveMessagesOptions,
  SaveResourceInput,
  StorageResource,
  StorageThread,
} from './types.js';

/** Whether a record saved again is the stored one unchanged (a save run again), which replacing leaves as it is. */
function sameMessage(stored: MessageRecord, record: MessageRecord): boolean {
  return stored.role === record.role && stored.type === record.type && stored.content === record.content && stored.createdAt === record.createdAt;
}

/**
 * Options of `InMemoryStorage`.
 *
 * @example
 * ```ts
 * import { InMemoryStorage } from 'rxagent/memory';
 * const storage = new InMemoryStorage({ now: () => new Date('2026-01-01T00:00:00Z') });
 * ```
 */
export interface InMemoryStorageOptions {
  /** The clock for `createdAt`/`updatedAt` of threads and resources. Default: `new Date()`. */
  now?: () => Date;
  /**
   * The run journal whose epochs fence durable runs' saves (`SaveMessagesOptions.fence`): an
   * `InMemoryRunJournal` of this process. Without it, a save carrying a fence is a `TypeError`.
   */
  runJournal?: FenceChecker;
}

/**
 * What checks a fence: `InMemoryRunJournal#checkFence` (throws `FencedError` or `RunNotFoundError`).
 *
 * @example
 * ```ts
 * import { InMemoryStorage } from 'rxagent/memory';
 * import { InMemoryRunJournal } from 'rxagent/durable';
 * const runJournal = new InMemoryRunJournal();
 * const storage = new InMemoryStorage({ runJournal });
 * ```
 */
export interface FenceChecker {
  /** Throws unless `epoch` is the run's current one (of the run of `incarnation`, when given). */
  checkFence(runId: string, epoch: number, incarnation?: string): void;
  /**
   * Calls `listener` with the id of each run removed from the journal (erased, or purged past its
   * row retention): the store's messages of that run stop being its own, so a run created again
   * under the id is another run and neither replaces nor drops them.
   */
  onRunRemoved?(listener: (runId: string) => void): void;
}

/**
 * A `MemoryStorage` that keeps everything in the process: for tests, and the default when no
 * store is configured. It behaves like the SQL stores (same validation, atomic saves, JSON
 * round trip of content, stable order), so a test passing here passes there.
 *
 * @example
 * ```ts
 * import { InMemoryStorage } from 'rxagent/memory';
 * const storage = new InMemoryStorage();
 * await storage.createThread({ id: 't1', resourceId: 'u1' });
 * const history = await storage.getMessages({ threadId: 't1', last: 20 });
 * ```
 */
export class InMemoryStorage implements MemoryStorage {
  readonly #now: () => Date;
  readonly #fences: FenceChecker | undefined;
  readonly #threads = new Map<string, ThreadRecord>();
  /** Messages per thread; a `Map` keeps first-insertion order when a value is replaced. */
  readonly #messagesByThread = new Map<string, Map<string, MessageRecord>>();
  readonly #threadOfMessage = new Map<string, string>();
  readonly #resources = new Map<string, ResourceRecord>();
  #closed = false;

  constructor(options: InMemoryStorageOptions = {}) {
    this.#now = options.now ?? (() => new Date());
    this.#fences = options.runJournal;
    this.#fences?.onRunRemoved?.((runId) => this.#disown(runId));
  }

  /** The run `runId` is gone from the journal: its messages are no run's (as rows stored before runs were kept). */
  #disown(runId: string): void {
    for (const messages of this.#messagesByThread.values()) {
      for (const [id, record] of messages) if (record.runId === runId) messages.set(id, { ...record, runId: null });
    }
  }

  async getThread(threadId: string): Promise<StorageThread | null> {
    assertStorageId('threadId', threadId);

    this.#assertOpen('getThread');
    const record = this.#threads.get(threadId);
    return record === undefined ? null : toThread(record);
  }

  async createThread(input: CreateThreadInput): Promise<StorageThread> {
    assertStorageId('threadId', input.id);
    assertStorageId('resourceId', input.resourceId);
    assertStorableText('createThread', 'title', input.title);
    const now = this.#clock('createThread');
    const createdAt = input.createdAt === undefined ? now : storableDate('createThread', 'createdAt', input.createdAt).getTime();
    const updatedAt = input.updatedAt === undefined ? createdAt : storableDate('createThread', 'updatedAt', input.updatedAt).getTime();

    this.#assertOpen('createThread');
    const existing = this.#threads.get(input.id);
    if (existing !== undefined) {
      if (existing.resourceId !== input.resourceId) {
        throw new ThreadOwnershipError({ threadId: input.id, resourceId: input.resourceId });
      }
      return toThread(existing);
    }
    const record: ThreadRecord = {
      id: input.id,
      resourceId: input.resourceId,
      title: input.title ?? null,
      metadata: metadataJson(input.metadata),
      createdAt,
      updatedAt,
    };
    this.#threads.set(record.id, record);
    return toThread(record);
  }

  async listThreads(options: ListThreadsOptions): Promise<StorageThread[]> {
    assertStorageId('resourceId', options.resourceId);

    this.#assertOpen('listThreads');
    const window = threadWindow(options);
    const threads = [...this.#threads.values()]
      .filter((thread) => thread.resourceId === options.resourceId)
      .sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const end = window.limit === undefined ? undefined : window.offset + window.limit;
    return threads.slice(window.offset, end).map(toThread);
  }

  async deleteThread(threadId: string): Promise<void> {
    assertStorageId('threadId', threadId);

    this.#assertOpen('deleteThread');
    for (const messageId of this.#messagesByThread.get(threadId)?.keys() ?? []) {
      this.#threadOfMessage.delete(messageId);
    }
    this.#messagesByThread.delete(threadId);
    this.#threads.delete(threadId);
  }

  async getMessages(options: GetMessagesOptions): Promise<MastraDBMessage[]> {
    assertStorageId('threadId', options.threadId);
    if (options.resourceId !== undefined) assertStorageId('resourceId', options.resourceId);

    this.#assertOpen('getMessages');
    const window = messageWindow(options);
    const thread = this.#threads.get(options.threadId);
    if (thread === undefined) return [];
    if (options.resourceId !== undefined && thread.resourceId !== options.resourceId) {
      throw new ThreadOwnershipError({ threadId: options.threadId, resourceId: options.resourceId });
    }
    const after = options.after?.getTime();
    const before = options.before?.getTime();
    const kept = [...(this.#messagesByThread.get(options.threadId)?.values() ?? [])].filter(
      (message) => (after === undefined || message.createdAt > after) && (before === undefined || message.createdAt < before),
    );
    return sliceWindow(kept, window).map(toMessage);
  }

  async saveMessages(options: SaveMessagesOptions): Promise<void> {
    assertStorageId('threadId', options.threadId);
    assertStorageId('resourceId', options.resourceId);

    this.#assertOpen('saveMessages');
    validateMessages(options.messages, options);
    const { replaceable, writer, supersedes } = savePolicy(options);
    // Applied synchronously below: an abort can only come before, never half-way.
    options.abortSignal?.throwIfAborted();
    const { threadId, resourceId, fence } = options;
    if (fence !== undefined) {
      const fences = this.#fences;
      if (fences === undefined) throw new TypeError('InMemoryStorage: a fenced save needs the run journal: new InMemoryStorage({ runJournal })');
      fences.checkFence(fence.runId, fence.epoch, fence.incarnation);
      await fence.beforeCommit?.();
      // No lock to hold here: a claim during beforeCommit moved the epoch, and the save sees it.
      fences.checkFence(fence.runId, fence.epoch, fence.incarnation);
      this.#assertOpen('saveMessages');
      options.abortSignal?.throwIfAborted();
    }
    const thread = this.#threads.get(threadId);
    if (thread === undefined && options.ensureThread !== true) throw new ThreadNotFoundError({ threadId });
    if (thread !== undefined && thread.resourceId !== resourceId) {
      throw new ThreadOwnershipError({ threadId, resourceId });
    }
    // Prepare every record first; nothing is touched until all of them are ready.
    const records = options.messages.map((message, index): MessageRecord => {
      const storedIn = this.#threadOfMessage.get(message.id);
      if (storedIn !== undefined && storedIn !== threadId) throw messageInOtherThreadError(index, message.id);
      const record: MessageRecord = {
        id: message.id,
        threadId,
        resourceId,
        role: message.role,
        type: message.type ?? null,
        content: serialiseContent(message, index),
        createdAt: message.createdAt.getTime(),
        runId: writer ?? null,
      };
      const stored = storedIn === undefined ? undefined : this.#messagesByThread.get(threadId)?.get(message.id);
      if (stored === undefined) return record;
      // a replaced message stays the run's that stored it first
      const kept = { ...record, runId: stored.runId };
      const mine = writer !== undefined && stored.runId === writer;
      if (replaceable !== undefined && !replaceable.has(message.id) && !mine && !sameMessage(stored, record)) {
        throw messageIdTakenError(index, message.id, threadId, writer);
      }
      return kept;
    });
    const now = this.#clock('saveMessages');
    const target = thread ?? { id: threadId, resourceId, title: null, metadata: null, createdAt: now, updatedAt: now };
    this.#threads.set(threadId, { ...target, updatedAt: now });
    let messages = this.#messagesByThread.get(threadId);
    if (messages === undefined) {
      messages = new Map();
      this.#messagesByThread.set(threadId, messages);
    }
    for (const record of records) {
      messages.set(record.id, record);
      this.#threadOfMessage.set(record.id, threadId);
    }
    if (supersedes !== undefined) {
      // what only an earlier owner of the run's commit stored: the run's own, under its commit's prefix, not saved now
      for (const [id, record] of messages) {
        if (record.runId === supersedes.runId && id.startsWith(supersedes.idPrefix) && !supersedes.kept.has(id)) {
          messages.delete(id);
          this.#threadOfMessage.delete(id);
        }
      }
    }
  }

  async getResource(resourceId: string): Promise<StorageResource | null> {
    assertStorageId('resourceId', resourceId);

    this.#assertOpen('getResource');
    const record = this.#resources.get(resourceId);
    return record === undefined ? null : toResource(record);
  }

  async saveResource(input: SaveResourceInput): Promise<StorageResource> {
    assertStorageId('resourceId', input.id);
    assertStorableText('saveResource', 'workingMemory', input.workingMemory);

    this.#assertOpen('saveResource');
    const now = this.#clock('saveResource');
    const existing = this.#resources.get(input.id);
    const record: ResourceRecord = {
      id: input.id,
      workingMemory: input.workingMemory ?? existing?.workingMemory ?? null,
      metadata: input.metadata === undefined ? (existing?.metadata ?? null) : metadataJson(input.metadata),
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    };
    this.#resources.set(record.id, record);
    return toResource(record);
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  /** The store's clock, checked as every store checks it (`storableDate`). */
  #clock(operation: StorageOperation): number {
    return storableDate(operation, 'the store clock (`now`)', this.#now()).getTime();
  }

  #assertOpen(operation: StorageOperation): void {
    if (this.#closed) throw closedError(operation);
  }
}
