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
  private readonly byId = new Map<string, MastraDBMessage>();
  private readonly sources = new Map<string, ConversationSource>();
  private readonly unsaved = new Set<string>();
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
    return this.messages.filter((message) => this.sources.get(message.id) === source);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  sourceOf(id: string): ConversationSource | undefined {
    return this.sources.get(id);
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
    if (this.byId.has(id)) this.unsaved.add(id);
  }

  clearUnsaved(): void {
    this.unsaved.clear();
  }

  unsavedMessages(): MastraDBMessage[] {
    return this.messages.filter((message) => this.unsaved.has(message.id));
  }

  /** Places a validated message: replaced by id, folded (tool results), merged or appended. */
  insert(message: MastraDBMessage, source: ConversationSource, merge: boolean): void {
    this.trusted.add(message);
    this.lastTimestamp = Math.max(this.lastTimestamp, message.createdAt.getTime());
    if (source !== 'memory') {
      if (this.stamp.threadId !== undefined) message.threadId = this.stamp.threadId;
      if (this.stamp.resourceId !== undefined) message.resourceId = this.stamp.resourceId;
    }
    const existing = this.byId.get(message.id);
    if (existing) {
      if (source === 'memory' && this.sources.get(message.id) !== 'memory') return;
      this.messages[this.messages.indexOf(existing)] = message;
      this.byId.set(message.id, message);
      this.sources.set(message.id, source);
      if (source !== 'memory') this.unsaved.add(message.id);
      return;
    }
    if (message.role === 'tool') {
      this.foldToolResults(message, source, merge);
      return;
    }
    const last = this.messages.at(-1);
    if (merge && source !== 'memory' && message.role === 'assistant' && last?.role === 'assistant' && this.sources.get(last.id) === source) {
      last.content.parts.push(...message.content.parts);
      if (message.content.metadata) last.content.metadata = { ...last.content.metadata, ...message.content.metadata };
      syncLegacyContent(last);
      this.unsaved.add(last.id);
      return;
    }
    this.append(message, source);
  }

  /** Appends a message as it is (remembered history goes before the run's own messages). */
  append(message: MastraDBMessage, source: ConversationSource): void {
    this.trusted.add(message);
    this.lastTimestamp = Math.max(this.lastTimestamp, message.createdAt.getTime());
    // Remembered history always precedes the run's own messages, whenever it is loaded.
    const firstOwn = source === 'memory' ? this.messages.findIndex((existing) => this.sources.get(existing.id) !== 'memory') : -1;
    if (firstOwn >= 0) this.messages.splice(firstOwn, 0, message);
    else this.messages.push(message);
    this.byId.set(message.id, message);
    this.sources.set(message.id, source);
    if (source !== 'memory') this.unsaved.add(message.id);
  }

  /** Removes messages by id; returns the removed ones in list order. */
  remove(ids: ReadonlyArray<string>): MastraDBMessage[] {
    const wanted = new Set(ids);
    const removed: MastraDBMessage[] = [];
    const kept: MastraDBMessage[] = [];
    for (const message of this.messages) (wanted.has(message.id) ? removed : kept).push(message);
    if (removed.length === 0) return removed;
    this.messages = kept;
    for (const message of removed) {
      this.byId.delete(message.id);
      this.sources.delete(message.id);
      this.unsaved.delete(message.id);
    }
    return removed;
  }

  /** See `MessageList.updateToolInvocation`. */
  updateToolInvocation(part: ToolInvocationPart): boolean {
    const { toolCallId, toolName } = part.toolInvocation;
    const location =
      findInvocationByCallId(this.messages, toolCallId) ??
      findPendingProviderCall(
        this.messages.filter((message) => this.sources.get(message.id) !== 'memory'),
        toolName,
      );
    if (!location) return false;
    applyInvocationUpdate(location, part);
    this.unsaved.add(location.message.id);
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
      const current = this.byId.get(message.id);
      if (!current) continue;
      let changed = false;
      if (current !== message) {
        this.messages[this.messages.indexOf(current)] = message;
        this.byId.set(message.id, message);
        changed = true;
      }
      if (this.sources.get(message.id) !== 'response') {
        this.sources.set(message.id, 'response');
        changed = true;
      }
      if (restoreMessage(snapshot) || changed) this.unsaved.add(message.id);
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
      if (source !== 'memory') this.unsaved.add(location.message.id);
      return false;
    });
    if (unmatched.length > 0) this.insert({ ...message, role: 'assistant', content: { ...message.content, parts: unmatched } }, source, merge);
  }
}
