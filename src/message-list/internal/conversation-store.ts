/**
 * The ordered conversation behind a `MessageList`: its messages in list order with their source,
 * the unsaved set, the objects already validated, the strictly increasing clock, and the rules
 * that place a message (replace by id, fold tool results, merge assistant messages, remembered
 * history first) and roll the response back to a step boundary.
 */
import type { ConversationSource } from '../serialized-message-list.js';
import { restoreMessage, snapshotMessage, type MessageSnapshot, type StepBoundary } from '../step-boundary.js';
import type { MastraDBMessage, ToolInvocationPart } from '../types.js';
import { syncLegacyContent } from './message-text.js';
import { applyInvocationUpdate, findInvocationByCallId, findPendingProviderCall } from './tool-invocations.js';

/** What the store stamps on the run's own (input and response) messages. */
export interface ConversationStamp {
  threadId: string | undefined;
  resourceId: string | undefined;
}

/** What the store knows of one message it holds. */
class Entry {
  constructor(
    public message: MastraDBMessage,
    public source: ConversationSource,
    /** Added or changed since the last drain (see `MessageList.drainUnsavedMessages`). */
    public unsaved: boolean,
  ) {}
}

/**
 * The messages of one `MessageList` and the bookkeeping around them (internal to the folder).
 *
 * @example
 * ```ts
 * const store = new ConversationStore({ threadId: 't', resourceId: undefined }, () => new Date());
 * store.insert(message, 'input', true);
 * ```
 */
export class ConversationStore {
  private messages: MastraDBMessage[] = [];
  /** Each message by id, with its source and whether it is unsaved (one map, not three). */
  private readonly entries = new Map<string, Entry>();
  private readonly trusted = new WeakSet<object>();
  private readonly boundaries = new WeakMap<StepBoundary, MessageSnapshot[]>();
  private lastTimestamp = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly stamp: ConversationStamp,
    private readonly now: () => Date,
  ) {}

  /** The messages in list order: the live array, read only. */
  all(): readonly MastraDBMessage[] {
    return this.messages;
  }

  /** The messages of one source, in list order. */
  from(source: ConversationSource): MastraDBMessage[] {
    return this.messages.filter((message) => this.entries.get(message.id)?.source === source);
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  sourceOf(id: string): ConversationSource | undefined {
    return this.entries.get(id)?.source;
  }

  /** An object the list holds or created (not validated again when added). */
  isTrusted(message: unknown): boolean {
    return typeof message === 'object' && message !== null && this.trusted.has(message);
  }

  /** The clock's time, or 1 ms after the last message when the clock stands still. */
  nextTimestamp(): Date {
    const time = Math.max(this.now().getTime(), this.lastTimestamp + 1);
    this.lastTimestamp = time;
    return new Date(time);
  }

  markUnsaved(id: string): void {
    const entry = this.entries.get(id);
    if (entry !== undefined) entry.unsaved = true;
  }

  clearUnsaved(): void {
    for (const entry of this.entries.values()) entry.unsaved = false;
  }

  unsavedMessages(): MastraDBMessage[] {
    return this.messages.filter((message) => this.entries.get(message.id)?.unsaved === true);
  }

  /** Places a validated message: replaced by id, folded (tool results), merged or appended. */
  insert(message: MastraDBMessage, source: ConversationSource, merge: boolean): void {
    this.trusted.add(message);
    this.lastTimestamp = Math.max(this.lastTimestamp, message.createdAt.getTime());
    if (source !== 'memory') {
      if (this.stamp.threadId !== undefined) message.threadId = this.stamp.threadId;
      if (this.stamp.resourceId !== undefined) message.resourceId = this.stamp.resourceId;
    }
    const existing = this.entries.get(message.id);
    if (existing) {
      if (source === 'memory' && existing.source !== 'memory') return;
      this.messages[this.messages.indexOf(existing.message)] = message;
      existing.message = message;
      existing.source = source;
      if (source !== 'memory') existing.unsaved = true;
      return;
    }
    if (message.role === 'tool') {
      this.foldToolResults(message, source, merge);
      return;
    }
    const last = this.messages.at(-1);
    const lastEntry = last === undefined ? undefined : this.entries.get(last.id);
    if (merge && source !== 'memory' && message.role === 'assistant' && last?.role === 'assistant' && lastEntry?.source === source) {
      last.content.parts.push(...message.content.parts);
      if (message.content.metadata) last.content.metadata = { ...last.content.metadata, ...message.content.metadata };
      syncLegacyContent(last);
      lastEntry.unsaved = true;
      return;
    }
    this.append(message, source);
  }

  /** Appends a message as it is (remembered history goes before the run's own messages). */
  append(message: MastraDBMessage, source: ConversationSource): void {
    this.trusted.add(message);
    this.lastTimestamp = Math.max(this.lastTimestamp, message.createdAt.getTime());
    // Remembered history always precedes the run's own messages, whenever it is loaded.
    const firstOwn = source === 'memory' ? this.messages.findIndex((existing) => this.entries.get(existing.id)?.source !== 'memory') : -1;
    if (firstOwn >= 0) this.messages.splice(firstOwn, 0, message);
    else if (this.messages.length === 0) this.messages = [message];
    else this.messages.push(message);
    const entry = this.entries.get(message.id);
    if (entry === undefined) this.entries.set(message.id, new Entry(message, source, source !== 'memory'));
    else {
      entry.message = message;
      entry.source = source;
      if (source !== 'memory') entry.unsaved = true;
    }
  }

  /** Removes messages by id; returns the removed ones in list order. */
  remove(ids: ReadonlyArray<string>): MastraDBMessage[] {
    const wanted = new Set(ids);
    const removed: MastraDBMessage[] = [];
    const kept: MastraDBMessage[] = [];
    for (const message of this.messages) (wanted.has(message.id) ? removed : kept).push(message);
    if (removed.length === 0) return removed;
    this.messages = kept;
    for (const message of removed) this.entries.delete(message.id);
    return removed;
  }

  /** See `MessageList.updateToolInvocation`. */
  updateToolInvocation(part: ToolInvocationPart): boolean {
    const { toolCallId, toolName } = part.toolInvocation;
    const location =
      findInvocationByCallId(this.messages, toolCallId) ??
      findPendingProviderCall(
        this.messages.filter((message) => this.entries.get(message.id)?.source !== 'memory'),
        toolName,
      );
    if (!location) return false;
    applyInvocationUpdate(location, part);
    this.markUnsaved(location.message.id);
    return true;
  }

  /** See `MessageList.openStepBoundary`. */
  openStepBoundary(): StepBoundary {
    const responseMessages = this.from('response');
    const last = responseMessages.at(-1);
    const lastAssistant = last?.role === 'assistant' ? last : undefined;
    const boundary: StepBoundary = {
      responseMessageIds: responseMessages.map((message) => message.id),
      lastAssistantMessageId: lastAssistant?.id,
      lastAssistantPartCount: lastAssistant?.content.parts.length ?? 0,
    };
    this.boundaries.set(boundary, responseMessages.map(snapshotMessage));
    return boundary;
  }

  /** See `MessageList.rollbackToStepBoundary`; false when `boundary` was not opened here. */
  rollbackToStepBoundary(boundary: StepBoundary): boolean {
    const snapshots = this.boundaries.get(boundary);
    if (!snapshots) return false;
    const keep = new Set(boundary.responseMessageIds);
    this.remove(this.from('response').filter((message) => !keep.has(message.id)).map((message) => message.id));
    for (const snapshot of snapshots) {
      const { message } = snapshot;
      const entry = this.entries.get(message.id);
      if (!entry) continue;
      let changed = false;
      const current = entry.message;
      if (current !== message) {
        this.messages[this.messages.indexOf(current)] = message;
        entry.message = message;
        changed = true;
      }
      if (entry.source !== 'response') {
        entry.source = 'response';
        changed = true;
      }
      if (restoreMessage(snapshot) || changed) entry.unsaved = true;
    }
    return true;
  }

  /** Folds a `tool` message's results into the matching calls; unmatched results become an assistant message. */
  private foldToolResults(message: MastraDBMessage, source: ConversationSource, merge: boolean): void {
    const unmatched = message.content.parts.filter((part) => {
      if (part.type !== 'tool-invocation') return true;
      const location = findInvocationByCallId(this.messages, part.toolInvocation.toolCallId);
      if (!location) return true;
      applyInvocationUpdate(location, { ...part, toolInvocation: { ...part.toolInvocation, args: undefined } });
      if (source !== 'memory') this.markUnsaved(location.message.id);
      return false;
    });
    if (unmatched.length > 0) this.insert({ ...message, role: 'assistant', content: { ...message.content, parts: unmatched } }, source, merge);
  }
}
