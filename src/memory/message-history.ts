/**
 * `MessageHistory`: the memory input processor. Creates the thread on first use and loads its last
 * messages into the run's list as remembered history (always before the run's own messages).
 */
import type { ProcessInputArgs, Processor } from '../contract/processor-types.js';
import { InvalidMessageError, type MessageIssue } from '../message-list/errors/invalid-message-error.js';
import type { MastraDBMessage } from '../message-list/types.js';
import { ThreadNotFoundError } from '../storage/errors/thread-not-found-error.js';
import { ThreadOwnershipError } from '../storage/errors/thread-ownership-error.js';
import { assertLoadedHistory } from '../storage/loaded-history.js';
import { storageIdProblem } from '../storage/index.js';
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
  /**
   * Store assistant messages and tool results found in the call's input as the agent's own turns.
   * Default false: such input is an `InvalidMessageError` naming `allowAssistantInput` (see `MemoryOptions`).
   */
  allowAssistantInput?: boolean;
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

  /** Whether input may only add user turns: the run saves (not read-only) and the server did not opt in. */
  get #checksInput(): boolean {
    return !this.#options.readOnly && this.#options.allowAssistantInput !== true;
  }

  /** The `processInput` hook (see `Processor.processInput` for when it runs and what it may return). */
  async processInput({ messageList, abortSignal }: ProcessInputArgs): Promise<undefined> {
    const { storage, threadId, resourceId, lastMessages, readOnly } = this.#options;
    // The run's signal: a store that retries through a database blip stops when the run is aborted.
    const call = { abortSignal };
    const thread = await storage.getThread(threadId, call);
    if (thread === null) {
      reidentifyInput(messageList, new Set(), this.#checksInput);
      if (readOnly) throw new ThreadNotFoundError({ threadId });
      await storage.createThread({
        id: threadId,
        resourceId,
        ...(this.#options.title === undefined ? {} : { title: this.#options.title }),
        ...(this.#options.metadata === undefined ? {} : { metadata: this.#options.metadata }),
      }, call);
      return undefined;
    }
    // Checked here, not only by the load: with lastMessages 0 nothing else would before the model call.
    if (thread.resourceId !== resourceId) throw new ThreadOwnershipError({ threadId, resourceId });
    const history = lastMessages <= 0 ? [] : await storage.getMessages({ threadId, resourceId, last: lastMessages, abortSignal });
    assertLoadedHistory(history, { threadId, resourceId, lastMessages });
    reidentifyInput(messageList, new Set(history.map((message) => message.id)), this.#checksInput);
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
function reidentifyInput(messageList: ProcessInputArgs['messageList'], loadedIds: ReadonlySet<string>, userTurnsOnly: boolean): void {
  const input = messageList.get.input.db();
  if (input.length === 0) return;
  const fresh = input.filter((message) => !loadedIds.has(message.id));
  if (userTurnsOnly) assertUserTurns(input, fresh);
  messageList.removeByIds(input.map((message) => message.id));
  const kept = fresh.map((message) => ({ ...message, id: messageList.newMessageId() }));
  assertNewIds(fresh.map((message) => input.indexOf(message)), kept, loadedIds);
  if (kept.length > 0) messageList.add(kept, 'input', { merge: false });
}

/**
 * The ids the run's `generateId` gave the new input must be ids a store can hold, and new: one
 * that repeats a loaded message's id (a deterministic `generateId` restarted in another process)
 * would take that message's place in the prompt and, saved, overwrite it. Checked before the
 * model is called; an id repeated only in what was not loaded is refused by the save.
 */
function assertNewIds(inputIndexes: readonly number[], kept: readonly MastraDBMessage[], loadedIds: ReadonlySet<string>): void {
  const issues: MessageIssue[] = [];
  const given = new Set<string>();
  kept.forEach((message, position) => {
    const path = [inputIndexes[position] ?? position, 'id'];
    const problem = storageIdProblem(message.id);
    if (problem !== undefined) issues.push({ path, message: `the agent's generateId returned a message id no store can hold: ${problem.message}` });
    else if (loadedIds.has(message.id) || given.has(message.id)) {
      issues.push({
        path,
        message:
          `the agent's generateId returned message id ${JSON.stringify(message.id)}, which ${given.has(message.id) ? 'it already gave this run' : 'a stored message of the thread has'}: ` +
          'message ids must be unique (a counter restarted in another process repeats them)',
      });
    }
    if (typeof message.id === 'string') given.add(message.id);
  });
  if (issues.length > 0) throw new InvalidMessageError(issues);
}

/**
 * The client does not write the agent's history: a new input message must be a user turn — no
 * `assistant`/`tool` message, no tool call or tool result in it (a made-up `output` would be
 * stored as if a tool had returned it). Copies of loaded messages (dropped above) are not checked.
 */
function assertUserTurns(input: readonly MastraDBMessage[], fresh: readonly MastraDBMessage[]): void {
  const issues: MessageIssue[] = [];
  const hint = 'with memory, send only the new user message; pass new Memory({ allowAssistantInput: true }) to store trusted assistant turns';
  for (const message of fresh) {
    const index = input.indexOf(message);
    if (message.role !== 'user') {
      issues.push({ path: [index, 'role'], message: `${message.role === 'assistant' ? 'an' : 'a'} ${message.role} message in the input would be stored as the agent's own turn (${hint})` });
      continue;
    }
    message.content.parts.forEach((part, partIndex) => {
      if (part.type === 'tool-invocation') {
        issues.push({ path: [index, 'content', 'parts', partIndex], message: `a tool call or result in the input would be stored as the agent's own (${hint})` });
      }
    });
  }
  if (issues.length > 0) throw new InvalidMessageError(issues);
}

