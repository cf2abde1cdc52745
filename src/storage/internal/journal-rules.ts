/**
 * The rules every run journal applies the same way, before touching its store: what a valid
 * lease, cursor, append and ledger transition are, and how a terminal chunk sets the status.
 */
import type { ChunkType } from '../../contract/chunk-types.js';
import { encodeJson } from '../../contract/json-codec.js';
import { JournalCursorError } from '../journal/errors/journal-cursor-error.js';
import type {
  ClaimOptions,
  EncodedChunk,
  JournalEntry,
  NewRun,
  RunCommit,
  RunLease,
  RunStatus,
  RunTerminal,
  ToolCallRecord,
  ToolTransition,
} from '../journal/types.js';
import { storageIdProblem } from './ids.js';

/**
 * The run format this build writes and the newest it reads. 2: a run's commit ids carry its
 * incarnation (`commitIdIncarnation`); a run of format 1 keeps the ids made from its id alone.
 */
export const RUN_FORMAT = 2;

const TERMINALS: ReadonlySet<string> = new Set<RunTerminal>(['finish', 'tripwire', 'error', 'abort']);
const COMMIT_KINDS: ReadonlySet<string> = new Set(['input', 'model', 'step', 'rejected', 'final']);

/** The terminal kind of a chunk type, or `undefined`. */
export function terminalOf(type: string): RunTerminal | undefined {
  return TERMINALS.has(type) ? (type as RunTerminal) : undefined;
}

/** The status a run ends with: `finish`/`tripwire` → completed, `error` → failed, `abort` → cancelled. */
export function statusOf(terminal: RunTerminal): RunStatus {
  switch (terminal) {
    case 'finish':
    case 'tripwire':
      return 'completed';
    case 'error':
      return 'failed';
    case 'abort':
      return 'cancelled';
  }
}

/** True while a run may still be claimed and written. */
export const isOpen = (status: RunStatus): boolean => status === 'queued' || status === 'running';

/** `listRuns`' limit: an integer from 1 to 1000 (default 50), else a `RangeError` naming it. */
export function listLimit(journal: string, limit: unknown): number {
  if (limit === undefined) return 50;
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > 1000) {
    throw new RangeError(`${journal}.listRuns: limit must be an integer from 1 to 1000 (got ${String(limit)})`);
  }
  return limit;
}

/** Checks an id given to a journal method (`TypeError` naming the field). */
export function assertJournalId(method: string, field: string, value: unknown): asserts value is string {
  const problem = storageIdProblem(value);
  if (problem !== undefined) throw new TypeError(`RunJournal.${method}: ${field} is not a valid id: ${problem.message}`);
}

const isCount = (value: unknown, minimum: number): value is number => Number.isSafeInteger(value) && (value as number) >= minimum;

/** Checks the shape of a lease (its validity is the store's fence). */
export function assertLease(method: string, lease: RunLease): void {
  if (typeof lease !== 'object' || lease === null) throw new TypeError(`RunJournal.${method}: lease must be the object claim() returned`);
  assertJournalId(method, 'lease.runId', lease.runId);
  assertJournalId(method, 'lease.owner', lease.owner);
  if (!isCount(lease.epoch, 1)) throw new TypeError(`RunJournal.${method}: lease.epoch must be an integer ≥ 1 (got ${String(lease.epoch)})`);
  if (lease.incarnation !== undefined) assertJournalId(method, 'lease.incarnation', lease.incarnation);
}

/** Checks `claim`'s options and returns the incarnation asked for (`undefined`: any). */
export function claimIncarnation(options: ClaimOptions | undefined): string | undefined {
  return incarnationOption('claim', options);
}

/** Checks the options `{ incarnation? }` of journal method `method` and returns the incarnation asked for (`undefined`: any). */
export function incarnationOption(method: string, options: { readonly incarnation?: string } | undefined): string | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null) throw new TypeError(`RunJournal.${method}: options must be an object ({ incarnation? })`);
  const { incarnation } = options;
  if (incarnation !== undefined) assertJournalId(method, 'options.incarnation', incarnation);
  return incarnation;
}

/** Checks `createRun`'s input and returns the text of `input` (what "the same run" compares). */
export function checkNewRun(run: NewRun): string {
  if (typeof run !== 'object' || run === null) throw new TypeError('RunJournal.createRun: expected { runId, agentId, input }');
  assertJournalId('createRun', 'runId', run.runId);
  assertJournalId('createRun', 'agentId', run.agentId);
  if (run.threadId !== undefined) assertJournalId('createRun', 'threadId', run.threadId);
  if (run.resourceId !== undefined) assertJournalId('createRun', 'resourceId', run.resourceId);
  return encodeJson(run.input, 'run input');
}

/** The first field in which a stored run differs from a new one, or `undefined`. */
export function conflictingField(
  stored: { agentId: string; threadId?: string | undefined; resourceId?: string | undefined; input: string },
  run: NewRun,
  input: string,
): string | undefined {
  if (stored.agentId !== run.agentId) return 'agentId';
  if ((stored.threadId ?? undefined) !== run.threadId) return 'threadId';
  if ((stored.resourceId ?? undefined) !== run.resourceId) return 'resourceId';
  if (stored.input !== input) return 'input';
  return undefined;
}

/** Every chunk encoded once with the codec (`JsonEncodingError` names chunk type and path). */
export function encodeChunks(chunks: readonly ChunkType[]): EncodedChunk[] {
  if (!Array.isArray(chunks)) throw new TypeError('RunJournal.append: chunks must be an array');
  return chunks.map((chunk) => {
    const type = typeof chunk === 'object' && chunk !== null && typeof chunk.type === 'string' ? chunk.type : undefined;
    if (type === undefined) throw new TypeError('RunJournal.append: every chunk needs a string `type`');
    return { type, json: encodeJson(chunk, `chunk ${type}`) };
  });
}

/**
 * Checks one append: a commit's fields, the state as JSON text, and where terminal chunks may
 * stand (only last, only with a `final` commit, which needs one). Returns the encoded state and
 * the run's terminal kind when the append ends it.
 */
export function checkAppend(
  chunks: readonly EncodedChunk[],
  commit: RunCommit | undefined,
): { state: string | undefined; terminal: RunTerminal | undefined; toolCalls: string[] } {
  if (!Array.isArray(chunks)) throw new TypeError('RunJournal.append: chunks must be an array');
  for (let index = 0; index < chunks.length; index++) {
    const chunk = chunks[index];
    if (typeof chunk?.type !== 'string' || typeof chunk.json !== 'string') {
      throw new TypeError(`RunJournal.append: chunk ${index} must be { type, json } text`);
    }
    // U+001E never stands unescaped in JSON text; PostgresRunJournal separates a flush's rows with it
    if (chunk.json.includes('\x1e') || chunk.type.includes('\x1e')) {
      throw new TypeError(`RunJournal.append: chunk ${index} holds an unescaped U+001E, which JSON text never does`);
    }
    if (terminalOf(chunk.type) !== undefined && (commit?.kind !== 'final' || index !== chunks.length - 1)) {
      throw new TypeError(`RunJournal.append: a terminal chunk (${chunk.type}) must be the last chunk of a 'final' commit`);
    }
  }
  if (commit === undefined) return { state: undefined, terminal: undefined, toolCalls: [] };
  if (!COMMIT_KINDS.has(commit.kind)) throw new TypeError(`RunJournal.append: unknown commit kind ${JSON.stringify(commit.kind)}`);
  if (!isCount(commit.step, 0) || !isCount(commit.attempt, 0)) {
    throw new TypeError(`RunJournal.append: commit step and attempt must be integers ≥ 0 (got ${String(commit.step)}, ${String(commit.attempt)})`);
  }
  const last = chunks.at(-1);
  const terminal = last === undefined ? undefined : terminalOf(last.type);
  if (commit.kind === 'final' && terminal === undefined) {
    throw new TypeError("RunJournal.append: a 'final' commit must end with the terminal chunk (finish, tripwire, error or abort)");
  }
  const pinned = commit.toolCalls ?? [];
  if (pinned.length > 0 && commit.kind !== 'model') throw new TypeError("RunJournal.append: only a 'model' commit pins tool calls");
  const toolCalls = pinned.map((call) => {
    assertJournalId('append', 'toolCalls[].toolCallId', call.toolCallId);
    if (typeof call.toolName !== 'string' || call.toolName === '') throw new TypeError('RunJournal.append: toolCalls[].toolName must be a name');
    return encodeJson(call.args, `tool call ${call.toolCallId} args`);
  });
  return { state: encodeJson(commit.state, `${commit.kind} commit state`), terminal, toolCalls };
}

/** Checks a ledger transition's shape; returns the JSON text of its payload (args, output or error). */
export function checkTransition(transition: ToolTransition): string | undefined {
  if (typeof transition !== 'object' || transition === null) throw new TypeError('RunJournal.toolCall: expected a transition object');
  assertJournalId('toolCall', 'toolCallId', transition.toolCallId);
  switch (transition.status) {
    case 'pending':
      if (typeof transition.toolName !== 'string' || transition.toolName === '') throw new TypeError('RunJournal.toolCall: pending needs a toolName');
      return encodeJson(transition.args, `tool call ${transition.toolCallId} args`);
    case 'started':
      return undefined;
    case 'completed':
      return encodeJson(transition.output, `tool call ${transition.toolCallId} output`);
    case 'failed':
      return encodeJson(transition.error, `tool call ${transition.toolCallId} error`);
    default:
      throw new TypeError(`RunJournal.toolCall: unknown status ${JSON.stringify((transition as { status?: unknown }).status)}`);
  }
}

/**
 * Whether `transition` may follow the stored row (`undefined`: none yet), for an owner at
 * `epoch`: `→ pending` only for a new call (or the same call pinned again), `pending → started`,
 * `started → started` by a later owner, `pending | started → completed | failed`.
 * Throws a `TypeError` naming the call and both states otherwise.
 */
export function assertTransition(existing: Pick<ToolCallRecord, 'status' | 'epoch' | 'toolName'> | undefined, transition: ToolTransition, epoch: number): void {
  const from = existing?.status;
  const to = transition.status;
  const allowed =
    (from === undefined && to === 'pending') ||
    (from === 'pending' && to === 'pending' && existing?.toolName === transition.toolName) ||
    (from === 'pending' && to === 'started') ||
    (from === 'started' && to === 'started' && (existing?.epoch ?? epoch) < epoch) ||
    ((from === 'pending' || from === 'started') && (to === 'completed' || to === 'failed'));
  if (!allowed) {
    throw new TypeError(`RunJournal.toolCall: tool call ${JSON.stringify(transition.toolCallId)} cannot go from ${from ?? 'nothing'} to ${to}`);
  }
}

/**
 * Checks a read cursor against the run's `lastSeq` (`JournalCursorError` when it is not an
 * integer from 0 to `lastSeq`).
 */
export function checkCursor(runId: string, after: unknown, lastSeq: number): number {
  if (after === undefined) return 0;
  if (typeof after !== 'number' || !Number.isSafeInteger(after) || after < 0 || after > lastSeq) {
    throw new JournalCursorError({ runId, after, lastSeq });
  }
  return after;
}

/** A journal entry whose chunk is parsed from its text on first use (readers that only forward text never parse). */
export class StoredEntry implements JournalEntry {
  readonly seq: number;
  readonly epoch: number;
  readonly json: string;
  #chunk: ChunkType | undefined;

  constructor(seq: number, epoch: number, json: string) {
    this.seq = seq;
    this.epoch = epoch;
    this.json = json;
  }

  get chunk(): ChunkType {
    this.#chunk ??= JSON.parse(this.json) as ChunkType;
    return this.#chunk;
  }

  /** Plain data, as a reader would log or compare it. */
  toJSON(): { seq: number; epoch: number; chunk: ChunkType; json: string } {
    return { seq: this.seq, epoch: this.epoch, chunk: this.chunk, json: this.json };
  }
}
