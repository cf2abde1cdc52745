import { Observable, Subject, defer, throwError } from 'rxjs';
import type { ChunkType } from '../../contract/chunk-types.js';
import { encodeJson, type JsonValue } from '../../contract/json-codec.js';
import { closedError } from '../internal/guard.js';
import {
  RUN_FORMAT,
  assertJournalId,
  assertLease,
  assertTransition,
  checkAppend,
  claimIncarnation,
  incarnationOption,
  checkCursor,
  checkNewRun,
  checkTransition,
  conflictingField,
  encodeChunks,
  isOpen,
  statusOf,
  StoredEntry,
} from '../internal/journal-rules.js';
import { JournalReads, cutPage, type ChunkRow } from '../internal/journal-tail.js';
import type { StorageOperation } from '../errors/storage-error.js';
import { isDeltaType } from '../internal/delta-types.js';
import { resolvePurge, resolveRetention, type Retention } from '../internal/retention.js';
import { FencedError } from './errors/fenced-error.js';
import { JournalSchemaError } from './errors/journal-schema-error.js';
import { MalformedJournalEntryError } from './errors/malformed-journal-entry-error.js';
import { RunConflictError } from './errors/run-conflict-error.js';
import { RunNotFoundError } from './errors/run-not-found-error.js';
import { RunOpenError } from './errors/run-open-error.js';
import type {
  Appended,
  ClaimOptions,
  CreatedRun,
  DeleteRunOptions,
  EncodedChunk,
  JournalEntry,
  JournalReadOptions,
  ListRunsOptions,
  ListedRun,
  NewRun,
  PurgeOptions,
  PurgeResult,
  RunClaim,
  RunCommit,
  RunCommitRecord,
  RunJournal,
  RunLease,
  RunRecord,
  RunRetentionOptions,
  RunSignal,
  RunSignalRecord,
  ToolCallRecord,
  ToolTransition,
} from './types.js';
import { MAX_INFRASTRUCTURE_LOSSES } from './types.js';
import { checkedRunRecord, listRunsOptions, listedRunRecord } from './run-record-check.js';

/**
 * Options of `InMemoryRunJournal`.
 *
 * @example
 * ```ts
 * import { InMemoryRunJournal } from 'rxagent/durable';
 * const journal = new InMemoryRunJournal({ now: () => new Date('2026-01-01T00:00:00Z'), pageSize: 100 });
 * ```
 */
export interface InMemoryRunJournalOptions extends RunRetentionOptions {
  /** The clock for `createdAt`/`updatedAt` and retention. Default: `new Date()`. */
  now?: () => Date;
  /** Entries per page a reader takes at once. Default 500. */
  pageSize?: number;
}

interface StoredCommit extends Omit<RunCommitRecord, 'state'> {
  state: string;
}

interface StoredToolCall extends Omit<ToolCallRecord, 'args' | 'output' | 'error'> {
  args: string;
  output?: string;
  error?: string;
}

interface StoredRun {
  record: RunRecord;
  input: string;
  chunks: ChunkRow[];
  /** The last commit only (a claim goes on from it; older snapshots are superseded). */
  commits: StoredCommit[];
  /** How many commits the run has had (the last one's `no`). */
  commitCount: number;
  /** When the terminal chunk was written. */
  endedAt?: Date;
  toolCalls: Map<string, StoredToolCall>;
  signals: RunSignalRecord[];
  /** Attempts the infrastructure failed (`noteInfrastructureLoss`), in the order noted. */
  infrastructureLosses: string[];
  /** Emits after every write that readers or the owner's signal listener may want. */
  wake: Subject<void>;
}

const copyRecord = (record: RunRecord): RunRecord => ({
  ...record,
  createdAt: new Date(record.createdAt),
  updatedAt: new Date(record.updatedAt),
  ...(record.expiredAt === undefined ? {} : { expiredAt: new Date(record.expiredAt) }),
});

const parse = (text: string): JsonValue => JSON.parse(text) as JsonValue;

function toolCallOf(stored: StoredToolCall): ToolCallRecord {
  return {
    toolCallId: stored.toolCallId,
    toolName: stored.toolName,
    args: parse(stored.args),
    status: stored.status,
    epoch: stored.epoch,
    ...(stored.output === undefined ? {} : { output: parse(stored.output) }),
    ...(stored.error === undefined ? {} : { error: parse(stored.error) }),
  };
}

/**
 * A `RunJournal` kept in this process: for tests and single-process apps (runs survive a lost
 * client, not a lost process). It applies the same rules as `PostgresRunJournal` (fencing, dense
 * `seq`, idempotent `createRun`, cursor checks, pages) and keeps chunks as the JSON text readers
 * get, so a test passing here passes there.
 *
 * @example
 * ```ts
 * import { InMemoryRunJournal } from 'rxagent/durable';
 * const journal = new InMemoryRunJournal();
 * const { created } = await journal.createRun({ runId: 'r1', agentId: 'support', input: 'Hi' });
 * const { lease } = await journal.claim('r1', 'worker-1');
 * ```
 */
export class InMemoryRunJournal implements RunJournal {
  readonly format = RUN_FORMAT;
  readonly #now: () => Date;
  readonly #pageSize: number;
  readonly #retention: Retention;
  readonly #runs = new Map<string, StoredRun>();
  /** Reads of this journal: live readers of a run (the stored run: an id erased and created again is another) share one tail. */
  readonly #reads = new JournalReads<StoredRun>();
  /** Listeners of runs removed from the journal (`onRunRemoved`: a store fenced by it). */
  readonly #removedListeners: Array<(runId: string) => void> = [];
  #signalIds = 0;
  #closed = false;

  constructor(options: InMemoryRunJournalOptions = {}) {
    this.#now = options.now ?? (() => new Date());
    this.#pageSize = options.pageSize ?? 500;
    this.#retention = resolveRetention('InMemoryRunJournal', options);
    if (!Number.isSafeInteger(this.#pageSize) || this.#pageSize < 1) {
      throw new RangeError(`InMemoryRunJournal: pageSize must be an integer ≥ 1 (got ${String(options.pageSize)})`);
    }
  }

  async createRun(run: NewRun): Promise<CreatedRun> {
    const input = checkNewRun(run);
    this.#assertOpen('createRun');
    const stored = this.#runs.get(run.runId);
    if (stored !== undefined) {
      const field = conflictingField({ ...stored.record, input: stored.input }, run, input);
      if (field !== undefined) throw new RunConflictError({ runId: run.runId, field });
      return { run: copyRecord(stored.record), created: false };
    }
    const now = this.#now();
    const record: RunRecord = {
      runId: run.runId,
      agentId: run.agentId,
      ...(run.threadId === undefined ? {} : { threadId: run.threadId }),
      ...(run.resourceId === undefined ? {} : { resourceId: run.resourceId }),
      status: 'queued',
      epoch: 0,
      lastSeq: 0,
      format: RUN_FORMAT,
      // another for each run created (a journal's runs and memory stores outlive no process, but a
      // store may be shared by journals): a run created again under an erased id hands out other commit ids
      incarnation: crypto.randomUUID(),
      createdAt: now,
      updatedAt: now,
    };
    this.#runs.set(run.runId, { record, input, chunks: [], commits: [], commitCount: 0, toolCalls: new Map(), signals: [], infrastructureLosses: [], wake: new Subject() });
    return { run: copyRecord(record), created: true };
  }

  async getRun(runId: string): Promise<RunRecord | null> {
    assertJournalId('getRun', 'runId', runId);
    this.#assertOpen('getRun');
    const stored = this.#runs.get(runId);
    // the row check PostgresRunJournal's getRun, the claim and listRuns make (one check)
    return stored === undefined ? null : checkedRunRecord(copyRecord(stored.record));
  }

  /**
   * The runs changed most recently, newest first (what the run inspector lists to open): `limit`
   * from 1 to 1000, default 50. Each record is checked as `getRun` and the claim check it: one this
   * build cannot use rejects the listing (`unusable: 'refuse'`, the default) or is listed in its
   * place as an `UnusableRun` (`unusable: 'report'`; see `ListRunsOptions`).
   *
   * @example
   * ```ts
   * for (const run of await journal.listRuns({ limit: 10 })) console.log(run.runId, run.status, run.epoch);
   * ```
   */
  listRuns(options?: ListRunsOptions & { unusable?: 'refuse' }): Promise<RunRecord[]>;
  listRuns(options: ListRunsOptions & { unusable: 'report' }): Promise<ListedRun[]>;
  listRuns(options?: ListRunsOptions): Promise<ListedRun[]>;
  async listRuns(options: ListRunsOptions = {}): Promise<ListedRun[]> {
    const { limit, unusable } = listRunsOptions('InMemoryRunJournal', options);
    this.#assertOpen('getRun');
    // Map order is creation order: among equal times, the later-created run first
    return [...this.#runs.values()]
      .map(({ record }) => record)
      .reverse()
      .sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime())
      .slice(0, limit)
      .map((record) => listedRunRecord(copyRecord(record), unusable));
  }

  async activeRun(threadId: string): Promise<RunRecord | null> {
    assertJournalId('activeRun', 'threadId', threadId);
    this.#assertOpen('activeRun');
    let newest: RunRecord | undefined;
    for (const { record } of this.#runs.values()) {
      // Map order is creation order: a later run with the same createdAt wins.
      if (record.threadId === threadId && isOpen(record.status) && (newest === undefined || record.createdAt >= newest.createdAt)) newest = record;
    }
    return newest === undefined ? null : checkedRunRecord(copyRecord(newest));
  }

  async claim(runId: string, owner: string, options: ClaimOptions = {}): Promise<RunClaim> {
    assertJournalId('claim', 'runId', runId);
    assertJournalId('claim', 'owner', owner);
    const incarnation = claimIncarnation(options);
    this.#assertOpen('claim');
    const stored = this.#runs.get(runId);
    // another run under the id than the one asked for (erased or purged, and created again): not found
    if (stored === undefined || (incarnation !== undefined && stored.record.incarnation !== incarnation)) throw new RunNotFoundError({ runId });
    const { record } = stored;
    checkedRunRecord(record); // the row check getRun and listRuns make: a field this build cannot use, nothing changed
    if (record.format > RUN_FORMAT) throw new JournalSchemaError({ found: record.format, known: RUN_FORMAT, runId });
    if (!isOpen(record.status)) throw new FencedError({ runId, epoch: record.epoch, currentEpoch: record.epoch, reason: 'ended', what: 'claim' });
    record.epoch += 1;
    record.owner = owner;
    record.status = 'running';
    record.updatedAt = this.#now();
    return {
      lease: { runId, epoch: record.epoch, owner, ...(record.incarnation === undefined ? {} : { incarnation: record.incarnation }) },
      run: copyRecord(record),
      input: parse(stored.input),
      commits: stored.commits.map((commit) => ({ ...commit, state: parse(commit.state) })),
      toolCalls: [...stored.toolCalls.values()].map(toolCallOf),
    };
  }

  async append(lease: RunLease, chunks: readonly ChunkType[], commit?: RunCommit): Promise<Appended> {
    return this.appendEncoded(lease, encodeChunks(chunks), commit);
  }

  async appendEncoded(lease: RunLease, chunks: readonly EncodedChunk[], commit?: RunCommit): Promise<Appended> {
    assertLease('append', lease);
    const checked = checkAppend(chunks, commit);
    this.#assertOpen('append');
    const stored = this.#fenced(lease, 'append');
    const { record } = stored;
    for (const chunk of chunks) stored.chunks.push({ seq: ++record.lastSeq, epoch: lease.epoch, type: chunk.type, json: chunk.json });
    if (commit !== undefined && checked.state !== undefined) {
      stored.commits = [{
        no: ++stored.commitCount,
        kind: commit.kind,
        step: commit.step,
        attempt: commit.attempt,
        epoch: lease.epoch,
        seqEnd: record.lastSeq,
        state: checked.state,
      }];
      for (const [index, call] of (commit.toolCalls ?? []).entries()) {
        if (stored.toolCalls.has(call.toolCallId)) continue;
        stored.toolCalls.set(call.toolCallId, {
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          args: checked.toolCalls[index] as string,
          status: 'pending',
          epoch: lease.epoch,
        });
      }
    }
    if (checked.terminal !== undefined) {
      record.terminal = checked.terminal;
      record.status = statusOf(checked.terminal);
      stored.endedAt = this.#now();
    }
    record.updatedAt = this.#now();
    if (chunks.length > 0 || checked.terminal !== undefined) stored.wake.next();
    return { lastSeq: record.lastSeq };
  }

  async toolCall(lease: RunLease, transition: ToolTransition): Promise<ToolCallRecord> {
    assertLease('toolCall', lease);
    const payload = checkTransition(transition);
    this.#assertOpen('toolCall');
    const stored = this.#fenced(lease, 'toolCall');
    const existing = stored.toolCalls.get(transition.toolCallId);
    assertTransition(existing, transition, lease.epoch);
    const next: StoredToolCall =
      transition.status === 'pending'
        ? existing ?? { toolCallId: transition.toolCallId, toolName: transition.toolName, args: payload as string, status: 'pending', epoch: lease.epoch }
        : {
            ...(existing as StoredToolCall),
            status: transition.status,
            epoch: lease.epoch,
            ...(transition.status === 'completed' ? { output: payload as string } : {}),
            ...(transition.status === 'failed' ? { error: payload as string } : {}),
          };
    stored.toolCalls.set(transition.toolCallId, next);
    return toolCallOf(next);
  }

  async signal(runId: string, signal: RunSignal): Promise<void> {
    assertJournalId('signal', 'runId', runId);
    if (signal?.kind !== 'stop') throw new TypeError(`RunJournal.signal: unknown signal kind ${JSON.stringify(signal?.kind)}`);
    const reason = signal.reason === undefined ? undefined : parse(encodeJson(signal.reason, 'signal reason'));
    this.#assertOpen('signal');
    const stored = this.#runs.get(runId);
    if (stored === undefined) throw new RunNotFoundError({ runId });
    // a run holds one signal of a kind: a repeated stop records (and wakes) nothing
    if (!isOpen(stored.record.status) || stored.signals.some((recorded) => recorded.kind === signal.kind)) return;
    stored.signals.push({ id: ++this.#signalIds, kind: 'stop', ...(reason === undefined ? {} : { reason }), createdAt: this.#now() });
    stored.wake.next();
  }

  async noteInfrastructureLoss(runId: string, attempt: string, options?: { readonly incarnation?: string }): Promise<void> {
    assertJournalId('noteInfrastructureLoss', 'runId', runId);
    assertJournalId('noteInfrastructureLoss', 'attempt', attempt);
    const incarnation = incarnationOption('noteInfrastructureLoss', options);
    this.#assertOpen('infrastructureLoss');
    const losses = this.#lossesOf(runId, incarnation);
    if (losses !== undefined && !losses.includes(attempt) && losses.length < MAX_INFRASTRUCTURE_LOSSES) losses.push(attempt);
  }

  async infrastructureLosses(runId: string, options?: { readonly incarnation?: string }): Promise<readonly string[]> {
    assertJournalId('infrastructureLosses', 'runId', runId);
    const incarnation = incarnationOption('infrastructureLosses', options);
    this.#assertOpen('infrastructureLoss');
    return [...(this.#lossesOf(runId, incarnation) ?? [])];
  }

  /** The losses noted for run `runId` — of `incarnation` when given (another run under the id has none). */
  #lossesOf(runId: string, incarnation: string | undefined): string[] | undefined {
    const stored = this.#runs.get(runId);
    return stored === undefined || (incarnation !== undefined && stored.record.incarnation !== incarnation) ? undefined : stored.infrastructureLosses;
  }

  signals$(runId: string): Observable<RunSignalRecord> {
    return defer(() => {
      assertJournalId('signals$', 'runId', runId);
      this.#assertOpen('read');
      const stored = this.#runs.get(runId);
      if (stored === undefined) return throwError(() => new RunNotFoundError({ runId }));
      return new Observable<RunSignalRecord>((subscriber) => {
        let sent = 0;
        const flush = (): void => {
          while (sent < stored.signals.length) subscriber.next({ ...(stored.signals[sent++] as RunSignalRecord) });
          if (!isOpen(stored.record.status)) subscriber.complete();
        };
        const subscription = stored.wake.subscribe({ next: flush, error: (error: unknown) => subscriber.error(error) });
        flush();
        return subscription;
      });
    });
  }

  read$(runId: string, options: JournalReadOptions = {}): Observable<JournalEntry> {
    return defer(() => {
      assertJournalId('read$', 'runId', runId);
      this.#assertOpen('read');
      const stored = this.#runs.get(runId);
      if (stored === undefined) return throwError(() => new RunNotFoundError({ runId }));
      const { record } = stored;
      if (record.expiredAt !== undefined) return throwError(() => new RunNotFoundError({ runId, reason: 'expired' }));
      if (record.format > RUN_FORMAT) return throwError(() => new JournalSchemaError({ found: record.format, known: RUN_FORMAT, runId }));
      const after = checkCursor(runId, options.after, record.lastSeq);
      const page = async (from: number, limit: number, until: number | undefined, maxBytes: number | undefined): Promise<readonly ChunkRow[]> =>
        cutPage(stored.chunks.slice(from, Math.min(from + limit, until ?? Number.POSITIVE_INFINITY)), maxBytes);
      // An ended run (or a bounded read) stops at the current end; a live one at the terminal entry.
      const end = options.live === false || !isOpen(record.status) ? record.lastSeq : undefined;
      // rows missing before `until` (a bounded read's end, or what the shared tail read): the run erased
      // or expired meanwhile (no other way loses rows here)
      const missing = async (seq: number, until: number): Promise<never> => {
        if (this.#runs.get(runId) !== stored) throw new RunNotFoundError({ runId });
        if (record.expiredAt !== undefined) throw new RunNotFoundError({ runId, reason: 'expired' });
        throw new MalformedJournalEntryError({ runId, seq, problem: `missing: the run's chunks end at seq ${seq - 1}, before seq ${until}` });
      };
      return this.#reads.read$(stored, { page, wake$: stored.wake, pageSize: this.#pageSize, missing }, after, {
        ...(end === undefined ? {} : { end }),
        ...(options.ready === undefined ? {} : { ready: options.ready }),
        maxPageBytes: options.maxPageBytes,
      });
    });
  }

  async findLastSeq(runId: string, type: string, atOrBefore: number): Promise<number> {
    assertJournalId('findLastSeq', 'runId', runId);
    this.#assertOpen('read');
    const stored = this.#runs.get(runId);
    if (stored === undefined) throw new RunNotFoundError({ runId });
    if (stored.record.expiredAt !== undefined) throw new RunNotFoundError({ runId, reason: 'expired' });
    for (let index = Math.min(atOrBefore, stored.chunks.length) - 1; index >= 0; index--) {
      if (stored.chunks[index]?.type === type) return index + 1;
    }
    return 0;
  }

  async readStructure(runId: string, range: { after: number; until: number }): Promise<JournalEntry[]> {
    assertJournalId('readStructure', 'runId', runId);
    this.#assertOpen('read');
    const stored = this.#runs.get(runId);
    if (stored === undefined) throw new RunNotFoundError({ runId });
    if (stored.record.expiredAt !== undefined) throw new RunNotFoundError({ runId, reason: 'expired' });
    return stored.chunks
      .slice(Math.max(0, Math.floor(range.after)), Math.max(0, Math.floor(range.until)))
      .filter((row) => !isDeltaType(row.type))
      .map((row) => new StoredEntry(row.seq, row.epoch, row.json));
  }

  async deleteRun(runId: string, options: DeleteRunOptions = {}): Promise<boolean> {
    assertJournalId('deleteRun', 'runId', runId);
    this.#assertOpen('deleteRun');
    const stored = this.#runs.get(runId);
    if (stored === undefined) return false;
    if (isOpen(stored.record.status) && options.force !== true) throw new RunOpenError({ runId, status: stored.record.status });
    this.#runs.delete(runId);
    // a reader paging it serves nothing more of it (its next page finds the rows gone: RunNotFoundError)
    stored.chunks = [];
    // live readers and the owner's signal listener of a forced erase learn it at once
    stored.wake.error(new RunNotFoundError({ runId }));
    this.#removed(runId);
    return true;
  }

  async purgeExpired(options?: PurgeOptions): Promise<PurgeResult> {
    const { batchSize, maxStatements } = resolvePurge(options);
    this.#assertOpen('purge');
    const now = this.#now().getTime();
    const result: PurgeResult = { expired: 0, removed: 0, runsRemoved: 0, done: true };
    // counted as PostgresRunJournal's statements would be: a mark, then each table's rows by batchSize
    let statements = 0;
    for (const [runId, stored] of this.#runs) {
      const ended = stored.endedAt?.getTime();
      if (ended === undefined) continue;
      if (stored.record.expiredAt === undefined && ended <= now - this.#retention.chunkSeconds * 1000) {
        const rows = [stored.chunks.length, stored.commits.length, stored.toolCalls.size, stored.signals.length];
        const cost = 1 + rows.reduce((sum, count) => sum + Math.floor(count / batchSize) + 1, 0);
        if (statements > 0 && statements + cost > maxStatements) return { ...result, done: false }; // a round always makes progress
        statements += cost;
        result.removed += rows.reduce((sum, count) => sum + count, 0);
        stored.chunks = [];
        stored.commits = [];
        stored.toolCalls.clear();
        stored.signals = [];
        stored.record.expiredAt = new Date(now);
        result.expired += 1;
      }
      if (stored.record.expiredAt !== undefined && ended <= now - this.#retention.runSeconds * 1000) {
        if (statements >= maxStatements) return { ...result, done: false };
        statements += 1;
        this.#runs.delete(runId);
        this.#removed(runId);
        result.removed += 1;
        result.runsRemoved += 1;
      }
    }
    return result;
  }

  /**
   * Throws unless `epoch` still owns the open run (`FencedError`, or `RunNotFoundError`): how an
   * `InMemoryStorage` built with `{ runJournal }` fences a durable run's memory save.
   */
  checkFence(runId: string, epoch: number, incarnation?: string): void {
    const stored = this.#runs.get(runId);
    if (stored === undefined) throw new RunNotFoundError({ runId });
    const owner = stored.record.owner ?? '';
    this.#fenced({ runId, epoch, owner, ...(incarnation === undefined ? {} : { incarnation }) }, 'memory save');
  }

  /**
   * Calls `listener` with the id of each run removed from this journal (erased, or purged past its
   * row retention): an `InMemoryStorage` built with `{ runJournal }` stops counting the run's
   * messages as its own, so a run created again under the id neither replaces nor drops them.
   */
  onRunRemoved(listener: (runId: string) => void): void {
    this.#removedListeners.push(listener);
  }

  #removed(runId: string): void {
    for (const listener of this.#removedListeners) listener(runId);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const stored of this.#runs.values()) stored.wake.error(closedError('read'));
  }

  /** The run behind a lease that still owns it (`FencedError` otherwise). */
  #fenced(lease: RunLease, what: string): StoredRun {
    const stored = this.#runs.get(lease.runId);
    // the lease's run erased (and maybe another created under its id, from epoch 0 again): gone
    if (stored === undefined || (lease.incarnation !== undefined && stored.record.incarnation !== lease.incarnation)) throw new RunNotFoundError({ runId: lease.runId });
    const { record } = stored;
    if (record.epoch !== lease.epoch || record.owner !== lease.owner) {
      throw new FencedError({ runId: lease.runId, epoch: lease.epoch, currentEpoch: record.epoch, reason: 'epoch', what });
    }
    if (!isOpen(record.status)) throw new FencedError({ runId: lease.runId, epoch: lease.epoch, currentEpoch: record.epoch, reason: 'ended', what });
    return stored;
  }

  #assertOpen(operation: StorageOperation): void {
    if (this.#closed) throw closedError(operation);
  }
}
