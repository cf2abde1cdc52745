/**
 * `MessageHistorySaver`: the memory output processor. Runs after every other output processor and
 * saves what the list finally holds — the run's new input and response messages — in one
 * transaction (redactions stick; removed messages and transient data chunks are not stored). It
 * replaces only the remembered messages the run updated (and, in a durable run, what its own run
 * stored): a new message under an id the thread already holds is refused (`InvalidMessageError`),
 * never written over the stored one. A durable run's save drops what only an earlier owner of its
 * commit stored (`SaveMessagesOptions.supersedesIdPrefix`).
 */
import type { MessageList } from '../message-list/message-list.js';
import type { MastraDBMessage } from '../message-list/types.js';
import type { Processor, ProcessOutputResultArgs } from '../contract/processor-types.js';
import type { MemoryFence } from '../contract/memory-types.js';
import type { MemoryStorage } from '../storage/types.js';
import { commitMessageIdPrefix } from '../contract/commit-message-ids.js';

/** Drops what must not be stored: partial tool calls (a stream cut mid-arguments). */
function storable(messages: MastraDBMessage[]): MastraDBMessage[] {
  return messages.flatMap((message) => {
    const parts = message.content.parts.filter((part) => part.type !== 'tool-invocation' || part.toolInvocation.state !== 'partial-call');
    if (parts.length === 0) return [];
    return parts.length === message.content.parts.length ? [message] : [{ ...message, content: { ...message.content, parts } }];
  });
}

/**
 * Saves the unsaved messages of `messageList` to the thread (one transaction). Only the remembered
 * messages among them (source `memory`) may replace what is stored under their ids
 * (`SaveMessagesOptions.replaceable`), and, in a durable run, the messages its run stored (the
 * fence's run); another message under a stored id rejects the save with an `InvalidMessageError`
 * naming the id, and nothing is stored.
 */
export async function saveUnsaved(
  storage: MemoryStorage,
  threadId: string,
  resourceId: string,
  messageList: MessageList,
  abortSignal?: AbortSignal,
  fence?: MemoryFence,
): Promise<number> {
  const messages = storable(messageList.drainUnsavedMessages());
  // a durable run's save goes to the store even with nothing to save: what an earlier owner of its
  // commit stored under the commit's prefix is dropped (a re-run that made none kept them all)
  if (messages.length === 0 && fence === undefined) return 0;
  // The run replaces only the remembered messages it updated (a tool call that got its result):
  // any other id the thread already holds under another message is refused, never overwritten.
  // A durable run's fenced save also replaces what its own run stored (the store keeps the fence's
  // run with each message): a takeover between memory's COMMIT and the run's final commit saves the
  // run's messages again, and a processor's output may differ between owners (a timestamp, a random
  // redaction token). Another run's message, or one stored before runs were kept, is refused.
  // Every id a durable run's commit hands out starts with the run's commit prefix (the same for every
  // owner): the save drops the run's stored messages under it that it does not hold — what only an
  // earlier owner's commit made (its hooks wrote more). The run's input and steps' replies (ids from
  // the snapshot), earlier turns and other runs' messages are not under it, and are never dropped.
  const replaceable = messages.filter((message) => messageList.getSource(message.id) === 'memory').map((message) => message.id);
  await storage.saveMessages({
    threadId,
    resourceId,
    messages,
    replaceable,
    ensureThread: true,
    ...(abortSignal === undefined ? {} : { abortSignal }),
    ...(fence === undefined
      ? {}
      : {
          fence: {
            runId: fence.runId,
            epoch: fence.epoch,
            ...(fence.beforeCommit === undefined ? {} : { beforeCommit: fence.beforeCommit }),
            ...(fence.incarnation === undefined ? {} : { incarnation: fence.incarnation }),
          },
          supersedesIdPrefix: commitMessageIdPrefix(fence.runId, fence.incarnation),
        }),
  });
  return messages.length;
}

/**
 * Saves the run's messages at the end of a successful run (last output processor).
 *
 * @example
 * ```ts
 * import { MessageHistorySaver } from 'rxagent/memory';
 * const saver = new MessageHistorySaver({ storage, threadId: 't1', resourceId: 'u1' });
 * ```
 */
export class MessageHistorySaver implements Processor<'message-history-save'> {
  /** The id. */
  readonly id = 'message-history-save' as const;
  /** A human-readable name. */
  readonly name = 'Message history (save)';
  readonly #options: { storage: MemoryStorage; threadId: string; resourceId: string; fence?: MemoryFence | undefined };

  constructor(options: {
    /** The store the threads live in. */
    storage: MemoryStorage;
    /** The id of the conversation thread. */
    threadId: string;
    /** The id of the resource (user, tenant) that owns the thread. */
    resourceId: string;
    /** A durable run's fence: the save is refused when the run has another owner. */
    fence?: MemoryFence | undefined;
  }) {
    this.#options = options;
  }

  /** The `processOutputResult` hook (see `Processor.processOutputResult` for when it runs and what it may return). */
  async processOutputResult({ messageList, abortSignal }: ProcessOutputResultArgs): Promise<undefined> {
    // An abort before the save commits rolls it back (nothing stored); after, it is ignored.
    const { storage, threadId, resourceId, fence } = this.#options;
    await saveUnsaved(storage, threadId, resourceId, messageList, abortSignal, fence);
    return undefined;
  }
}
