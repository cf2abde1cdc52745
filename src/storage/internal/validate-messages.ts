import { z } from 'zod';
import { InvalidMessageError, type MessageIssue } from '../../message-list/errors/invalid-message-error.js';
import type { MastraDBMessage } from '../../message-list/types.js';
import type { SaveMessagesOptions } from '../types.js';
import { storageIdProblem } from './ids.js';
import { thrownMessage } from '../../errors/thrown-message.js';

const partSchema = z.looseObject({ type: z.string().min(1) });

const messageSchema = z.looseObject({
  id: z.string().min(1),
  role: z.enum(['user', 'assistant', 'system', 'tool']),
  createdAt: z.date(),
  threadId: z.string().optional(),
  resourceId: z.string().optional(),
  type: z.string().optional(),
  content: z.looseObject({
    format: z.literal(2),
    parts: z.array(partSchema),
    content: z.string().optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  }),
});

const messagesSchema = z.array(messageSchema);

/** A UTF-16 surrogate code unit without its partner (with `u`, a valid pair is one code point). */
const loneSurrogate = /\p{Cs}/u;

/**
 * The earliest `createdAt` every store holds (PostgreSQL's `timestamptz`: 4714-11-24 00:00 UTC
 * BC; the latest a `Date` can be is within its range). An earlier date is refused on every store
 * alike, as PostgreSQL refuses it.
 */
const EARLIEST_CREATED_AT_MS = -210_866_803_200_000;

/**
 * What makes a string unfit for a text column, or `undefined`: libSQL cuts text at a NUL,
 * PostgreSQL refuses it, and both replace a lone surrogate with U+FFFD — the stored value would
 * differ from what was saved. (Message content is JSON, which escapes both: no limit there.)
 */
export function storableTextProblem(value: string): string | undefined {
  if (value.includes('\u0000')) return 'it contains a NUL character (U+0000)';
  if (loneSurrogate.test(value)) return 'it is not well-formed UTF-16 (it holds a lone surrogate)';
  return undefined;
}

/** Checks an optional text column (a thread's `title`, a resource's `workingMemory`) on every store alike: a `TypeError` naming it. */
export function assertStorableText(operation: string, field: string, value: string | undefined): void {
  const problem = value === undefined ? undefined : storableTextProblem(value);
  if (problem !== undefined) throw new TypeError(`${operation}: ${field} cannot be stored as it is: ${problem}`);
}

/**
 * Checks a date a store writes besides a message's `createdAt` (a thread's `createdAt` /
 * `updatedAt`, the store's clock) on every store alike, before anything is written: a `Date`
 * from 4714-11-24 BC on, or a `RangeError` naming it (as `getMessages`' `after`/`before`).
 */
export function storableDate(operation: string, field: string, value: Date): Date {
  const time = value instanceof Date ? value.getTime() : Number.NaN;
  if (Number.isNaN(time)) throw new RangeError(`${operation}: ${field} must be a valid Date`);
  if (time < EARLIEST_CREATED_AT_MS) {
    throw new RangeError(`${operation}: ${field} ${value.toISOString()} is before 4714-11-24 BC, the earliest date every store can hold`);
  }
  return value;
}

/**
 * Checks every message of a save before anything is written: the minimal `MastraDBMessage`
 * shape (zod), a `createdAt` every store can hold, and that a message naming a thread or resource
 * names the one being saved to.
 * Throws `InvalidMessageError` whose path starts with the message's index.
 */
export function validateMessages(
  messages: ReadonlyArray<MastraDBMessage>,
  target: { threadId: string; resourceId: string },
): void {
  const parsed = messagesSchema.safeParse(messages);
  if (!parsed.success) {
    throw new InvalidMessageError(
      parsed.error.issues.map((issue) => ({
        path: issue.path.map((key) => (typeof key === 'number' ? key : String(key))),
        message: issue.message,
      })),
      { cause: parsed.error },
    );
  }
  const issues: MessageIssue[] = [];
  messages.forEach((message, index) => {
    const idProblem = storageIdProblem(message.id);
    if (idProblem !== undefined) issues.push({ path: [index, 'id'], message: `message id: ${idProblem.message}` });
    if (message.createdAt.getTime() < EARLIEST_CREATED_AT_MS) {
      issues.push({ path: [index, 'createdAt'], message: `createdAt ${message.createdAt.toISOString()} is before 4714-11-24 BC, the earliest date every store can hold` });
    }
    const typeProblem = message.type === undefined ? undefined : storableTextProblem(message.type);
    if (typeProblem !== undefined) issues.push({ path: [index, 'type'], message: `message type: ${typeProblem}` });
    if (message.threadId !== undefined && message.threadId !== target.threadId) {
      issues.push({ path: [index, 'threadId'], message: `message belongs to thread ${JSON.stringify(message.threadId)}, not ${JSON.stringify(target.threadId)}` });
    }
    if (message.resourceId !== undefined && message.resourceId !== target.resourceId) {
      issues.push({ path: [index, 'resourceId'], message: `message belongs to resource ${JSON.stringify(message.resourceId)}, not ${JSON.stringify(target.resourceId)}` });
    }
  });
  if (issues.length > 0) throw new InvalidMessageError(issues);
}

/** The content of message `index` as JSON text; content JSON cannot hold is an `InvalidMessageError`. */
export function serialiseContent(message: MastraDBMessage, index: number): string {
  try {
    return JSON.stringify(message.content);
  } catch (error) {
    const reason = thrownMessage(error) ?? 'reading it threw a value that cannot be read';
    throw new InvalidMessageError([{ path: [index, 'content'], message: `content is not JSON-serialisable: ${reason}` }], { cause: error });
  }
}

/**
 * What a save may replace of what the thread already holds: `replaceable` — the listed ids, or
 * `undefined` when every message is an upsert — and `writer`, the run saving
 * (`SaveMessagesOptions.runId`, or the fence's run): each new message is stored as that run's, and
 * a message that run stored before may be replaced (its takeover saving again). A save with a
 * writer and no list replaces nothing else. Checked before anything is written: a list that is not
 * an array of strings, or a writer that is no storable id or that names another run than the
 * fence, is a `TypeError`; with a list or a writer an id twice in the batch is an
 * `InvalidMessageError` (which of its two versions would stay is not the caller's to leave open).
 * `supersedesIdPrefix` that is not a non-empty string, or without a writer, is a `TypeError`.
 */
export function savePolicy(options: SaveMessagesOptions): SavePolicy {
  const { replaceable, runId, fence, supersedesIdPrefix } = options;
  if (replaceable !== undefined && (!Array.isArray(replaceable) || !replaceable.every((id: unknown) => typeof id === 'string'))) {
    throw new TypeError('saveMessages: replaceable must be an array of message ids (strings)');
  }
  const writer = runId ?? fence?.runId;
  if (writer !== undefined) {
    const problem = storageIdProblem(writer);
    if (problem !== undefined) throw new TypeError(`saveMessages: ${runId === undefined ? 'fence.runId' : 'runId'} cannot name a run: ${problem.message}`);
    if (runId !== undefined && fence !== undefined && fence.runId !== runId) {
      throw new TypeError(`saveMessages: runId ${JSON.stringify(runId)} is not the fence's run ${JSON.stringify(fence.runId)}`);
    }
  }
  if (supersedesIdPrefix !== undefined) {
    if (typeof supersedesIdPrefix !== 'string' || supersedesIdPrefix === '') throw new TypeError('saveMessages: supersedesIdPrefix must be a non-empty string');
    if (writer === undefined) throw new TypeError('saveMessages: supersedesIdPrefix needs the run saving (runId or fence): it drops only what that run stored');
  }
  if (replaceable === undefined && writer === undefined) return { replaceable: undefined, writer: undefined, supersedes: undefined };
  const seen = new Set<string>();
  options.messages.forEach((message, index) => {
    if (seen.has(message.id)) {
      throw new InvalidMessageError([{ path: [index, 'id'], message: `message id ${JSON.stringify(message.id)} appears twice in the batch` }]);
    }
    seen.add(message.id);
  });
  const supersedes = writer === undefined || supersedesIdPrefix === undefined ? undefined : { runId: writer, idPrefix: supersedesIdPrefix, kept: seen };
  return { replaceable: new Set(replaceable ?? []), writer, supersedes };
}

/** What a save may replace and drop (`savePolicy`). */
export interface SavePolicy {
  /** The ids it may replace besides its run's own; `undefined`: every message is an upsert. */
  readonly replaceable: ReadonlySet<string> | undefined;
  /** The run saving: its messages may be replaced, and new ones are stored as its. */
  readonly writer: string | undefined;
  /**
   * `SaveMessagesOptions.supersedesIdPrefix`: the run's stored messages of the thread under an id
   * starting with `idPrefix` and not in `kept` (the batch's ids) are deleted.
   */
  readonly supersedes: { readonly runId: string; readonly idPrefix: string; readonly kept: ReadonlySet<string> } | undefined;
}

/**
 * The error for saving, under an id already stored in the thread, a message that would overwrite
 * the stored one (`SaveMessagesOptions.replaceable` does not list it).
 */
export function messageIdTakenError(index: number, messageId: string, threadId: string, writer?: string): InvalidMessageError {
  const whose = writer === undefined ? 'as another message' : `as a message run ${JSON.stringify(writer)} did not store`;
  return new InvalidMessageError([
    {
      path: [index, 'id'],
      message:
        `message id ${JSON.stringify(messageId)} is already stored in thread ${JSON.stringify(threadId)} ${whose}, ` +
        'which this save would overwrite: message ids must be unique (does generateId repeat ids, e.g. a counter restarted in another process?)',
    },
  ]);
}

/** The error for saving a message id that is already stored in another thread. */
export function messageInOtherThreadError(index: number, messageId: string): InvalidMessageError {
  return new InvalidMessageError([
    { path: [index, 'id'], message: `message id ${JSON.stringify(messageId)} is already stored in another thread` },
  ]);
}

