import { EMPTY, Observable, Subject, defer, filter, from, map, merge, switchMap, takeUntil } from 'rxjs';
import type { ChunkType } from '../../contract/chunk-types.js';
import { encodeJson, type JsonValue } from '../../contract/json-codec.js';
import { RxAgentError } from '../../errors/rxagent-error.js';
import { StorageError, type StorageOperation } from '../errors/storage-error.js';
import { closedError, guard } from '../internal/guard.js';
import {
  RUN_FORMAT,
  assertJournalId,
  assertLease,
  checkAppend,
  checkCursor,
  claimIncarnation,
  incarnationOption,
  checkNewRun,
  checkTransition,
  conflictingField,
  StoredEntry,
  encodeChunks,
  isOpen,
} from '../internal/journal-rules.js';
import { JournalReads, type ChunkRow } from '../internal/journal-tail.js';
import { resolvePurge, resolveRetention, type Retention } from '../internal/retention.js';
import { FencedError } from '../journal/errors/fenced-error.js';
import { JournalSchemaError } from '../journal/errors/journal-schema-error.js';
import { MalformedJournalEntryError } from '../journal/errors/malformed-journal-entry-error.js';
import { RunConflictError } from '../journal/errors/run-conflict-error.js';
import { RunNotFoundError } from '../journal/errors/run-not-found-error.js';
import { RunOpenError } from '../journal/errors/run-open-error.js';
import type {
  Appended,
  CreatedRun,
  DeleteRunOptions,
  EncodedChunk,
  JournalEntry,
  JournalReadOptions,
  ListRunsOptions,
  ListedRun,
  LostOwnerRun,
  NewRun,
  PurgeOptions,
  PurgeResult,
  OwnerSession,
  ClaimOptions,
  RunClaim,
  RunCommit,
  RunJournal,
  RunLease,
  RunRecord,
  RunRetentionOptions,
  RunSignal,
  RunSignalRecord,
  ToolCallRecord,
  ToolTransition,
} from '../journal/types.js';
import { MAX_INFRASTRUCTURE_LOSSES } from '../journal/types.js';
import { checkedRunRecord, listRunsOptions, listedRunRecord } from '../journal/run-record-check.js';
import { GuardedPool, positiveMs } from './guarded-pool.js';
import { JOURNAL_CHANNEL, JournalListener, type RunNotice } from './journal-listener.js';
import { migratePostgres, quoteIdentifier } from './migrations.js';
import { openPool, type PostgresStorageOptions } from './postgres-storage.js';
import type { Query } from './query.js';
import {
  commitColumns,
  commitFromRow,
  readSignals,
  runColumns,
  runFromRow,
  toolCallColumns,
  toolCallFromRow,
  type CommitRow,
  type RunRow,
  type ToolCallRow,
} from './run-journal-rows.js';
import { flushStatement } from './run-journal-flush.js';
import { RunPoller } from './run-poller.js';
import { eraseRun, purgeRound } from './run-journal-retention.js';
import { lastSeqOfType, structureRows } from './run-journal-structure.js';
import { PostgresOwnerSession, reconnectWithinOf, runsOfLostOwnersStatement } from './owner-session.js';
import { transitionToolCall } from './run-journal-ledger.js';
import { checkEpoch, fenceSettings } from './save-fence.js';

/** The largest epoch the `runs.epoch` column (integer) holds: a run there can be claimed no more. */
const MAX_EPOCH = 2_147_483_647;

/** A run row as read, checked (`MalformedJournalEntryError` naming the field this build cannot use). */
const checkedRun = (row: RunRow): RunRecord => checkedRunRecord(runFromRow(row));

/**
 * Options of `PostgresRunJournal`: those of `PostgresStorage` (connection string or pool, schema,
 * timeouts; use the memory store's schema, so memory saves can be fenced) plus how readers wait.
 * Not `retry`: the journal does not retry a failed write (a durable run's attempt fails and its
 * worker claims the run again), so passing it is a `TypeError`.
 *
 * @example
 * ```ts
 * import { PostgresRunJournal } from 'rxagent/storage/postgres';
 * const journal = new PostgresRunJournal({ connectionString: process.env.DATABASE_URL!, pollIntervalMs: 500 });
 * ```
 */
export type PostgresRunJournalOptions = PostgresStorageOptions &
  RunRetentionOptions & {
  /**
   * Ignored by the journal (accepted because the options are `PostgresStorage`'s): every time it
   * stores — a run's `createdAt` / `updatedAt`, a commit's, a signal's, a ledger row's — is the
   * database's clock (`clock_timestamp()`), so runs order the same whichever instance wrote them.
   * @deprecated the journal takes its time from the database.
   */
  now?: () => Date;
  /** Rows per page a reader asks for. Default 500. */
  pageSize?: number;
  /** Notify readers (LISTEN/NOTIFY, ids only) on every write. Default true; `false`: readers only poll. */
  notify?: boolean;
  /**
   * How often the journal polls the runs its live readers and signal listeners watch, besides
   * notifications (the backstop), in ms: one statement per interval for all of them. Default 1000
   * (100 with `notify: false`).
   */
  pollIntervalMs?: number;
};

/**
 * A `RunJournal` on PostgreSQL: runs, chunks, commits, the tool ledger and signals in the memory
 * schema (migration 2), so any instance reads any run and a takeover fences the old owner.
 * A write is one statement (`UPDATE runs … WHERE epoch = $lease` feeding the `INSERT`s, plus at
 * most one `pg_notify` carrying `<schema>/<runId>/<lastSeq>`); tool transitions run in a
 * transaction that holds the run row `FOR SHARE`, with `idle_in_transaction_session_timeout` and
 * `lock_timeout` set to `fenceTimeoutMs`. Readers LISTEN on one shared connection per journal,
 * page history 500 rows at a time, and poll as a backstop.
 *
 * @example
 * ```ts
 * import { PostgresRunJournal, PostgresStorage } from 'rxagent/storage/postgres';
 * const connectionString = process.env.DATABASE_URL!;
 * const journal = new PostgresRunJournal({ connectionString });
 * const memoryStorage = new PostgresStorage({ connectionString }); // same schema: saves can be fenced
 * journal.read$(runId, { after: 0 }).subscribe((entry) => console.log(entry.seq, entry.json));
 * ```
 */
export class PostgresRunJournal implements RunJournal {
  readonly format = RUN_FORMAT;
  readonly #db: GuardedPool;
  readonly #ownsPool: boolean;
  readonly #schemaName: string;
  readonly #schema: string;
  readonly #statementTimeoutMs: number;
  readonly #fenceTimeoutMs: number;
  readonly #pageSize: number;
  readonly #notify: boolean;
  readonly #pollIntervalMs: number;
  readonly #retention: Retention;
  readonly #listener: JournalListener;
  readonly #poller: RunPoller;
  /** Held owner sessions, one per owner however many workers of that owner hold it. */
  readonly #sessions = new Map<string, { session: PostgresOwnerSession; holders: number }>();
  readonly #connectionTimeoutMs: number;
  /** Runs this instance wrote: its own readers learn at once, without waiting for NOTIFY. */
  readonly #local = new Subject<RunNotice>();
  /** Reads of this instance: live readers of a run share one tail (one page query per wake-up). */
  readonly #reads = new JournalReads();
  readonly #closing = new Subject<never>();
  readonly #onIdleError = (): void => undefined;
  #migrating: Promise<void> | undefined;
  #migrated = false;
  #closed = false;

  constructor(options: PostgresRunJournalOptions) {
    if ((options as { retry?: unknown } | undefined)?.retry !== undefined) {
      // accepted (the options are PostgresStorage's) and ignored until now: a caller counting on it
      // had no retries. A fenced write is not retried: its attempt fails, and the worker claims
      // again. Checked before a pool is opened.
      throw new TypeError(
        "PostgresRunJournal: options.retry is PostgresStorage's option, not the journal's: the journal does not retry a failed write (its run's attempt fails, and the worker claims the run again, backing off; docs/durable.md, \"Infrastructure failures\"). Leave retry out of the journal's options.",
      );
    }
    this.#schemaName = options.schema ?? 'rxagent';
    this.#schema = quoteIdentifier(this.#schemaName);
    const { pool, owned, timeouts } = openPool('PostgresRunJournal', options);
    this.#statementTimeoutMs = timeouts.statementTimeoutMs;
    this.#connectionTimeoutMs = timeouts.connectionTimeoutMs;
    this.#fenceTimeoutMs = positiveMs('PostgresRunJournal', 'fenceTimeoutMs', options.fenceTimeoutMs, 5000);
    this.#notify = options.notify ?? true;
    this.#pollIntervalMs = positiveMs('PostgresRunJournal', 'pollIntervalMs', options.pollIntervalMs, this.#notify ? 1000 : 100);
    this.#pageSize = options.pageSize ?? 500;
    if (!Number.isSafeInteger(this.#pageSize) || this.#pageSize < 1) {
      throw new RangeError(`PostgresRunJournal: pageSize must be an integer ≥ 1 (got ${String(options.pageSize)})`);
    }
    this.#retention = resolveRetention('PostgresRunJournal', options);
    this.#db = new GuardedPool(pool, timeouts);
    this.#ownsPool = owned;
    this.#listener = new JournalListener(this.#db, this.#schemaName);
    this.#poller = new RunPoller(this.#db, this.#schema, this.#pollIntervalMs);
    pool.on('error', this.#onIdleError);
  }

  async createRun(run: NewRun): Promise<CreatedRun> {
    const input = checkNewRun(run);
    return this.#run('createRun', async () => {
      const inserted = await this.#db.query<RunRow>(
        `INSERT INTO ${this.#schema}.runs (id, agent_id, thread_id, resource_id, format, status, input, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, 'queued', $6::json, clock_timestamp(), clock_timestamp()) ON CONFLICT (id) DO NOTHING RETURNING ${runColumns}`,
        [run.runId, run.agentId, run.threadId ?? null, run.resourceId ?? null, RUN_FORMAT, input],
      );
      if (inserted.rows[0] !== undefined) return { run: checkedRun(inserted.rows[0]), created: true };
      const stored = (
        await this.#db.query<RunRow & { input: string }>(`SELECT ${runColumns}, input::text AS input FROM ${this.#schema}.runs WHERE id = $1`, [run.runId])
      ).rows[0];
      if (stored === undefined) throw new Error(`run ${run.runId} was removed while being created`);
      const record = checkedRun(stored);
      const field = conflictingField({ ...record, input: stored.input }, run, input);
      if (field !== undefined) throw new RunConflictError({ runId: run.runId, field });
      return { run: record, created: false };
    });
  }

  /** The run's record, or `null` when there is no such run. */
  async getRun(runId: string): Promise<RunRecord | null> {
    assertJournalId('getRun', 'runId', runId);
    return this.#run('getRun', () => this.#getRun(runId));
  }

  /**
   * The runs changed most recently, newest first (what the run inspector lists to open): `limit`
   * from 1 to 1000, default 50. Reads the runs table ordered by `updated_at`: a tool's read, not a
   * hot path. Each row is checked as `getRun` and the claim check it: one this build cannot use
   * rejects the listing (`unusable: 'refuse'`, the default) or is listed in its place as an
   * `UnusableRun` (`unusable: 'report'`; see `ListRunsOptions`).
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
    const { limit, unusable } = listRunsOptions('PostgresRunJournal', options);
    return this.#run('getRun', async () => {
      const result = await this.#db.query<RunRow>(`SELECT ${runColumns} FROM ${this.#schema}.runs ORDER BY updated_at DESC, id LIMIT $1`, [limit]);
      // each row through the check getRun and the claim make (checkedRun is its 'refuse'): a row this
      // build cannot use is its MalformedJournalEntryError, thrown or in the row's place
      return result.rows.map((row) => listedRunRecord(runFromRow(row), unusable));
    });
  }

  async activeRun(threadId: string): Promise<RunRecord | null> {
    assertJournalId('activeRun', 'threadId', threadId);
    return this.#run('activeRun', async () => {
      const result = await this.#db.query<RunRow>(
        `SELECT ${runColumns} FROM ${this.#schema}.runs WHERE thread_id = $1 AND status IN ('queued', 'running')
         ORDER BY created_at DESC LIMIT 1`,
        [threadId],
      );
      return result.rows[0] === undefined ? null : checkedRun(result.rows[0]);
    });
  }

  async claim(runId: string, owner: string, options: ClaimOptions = {}): Promise<RunClaim> {
    assertJournalId('claim', 'runId', runId);
    assertJournalId('claim', 'owner', owner);
    const incarnation = claimIncarnation(options);
    return this.#run('claim', async () => {
      // Claimed only when its row is one this build can go on from: a known format, an epoch a claim
      // can follow, no terminal, and chunks that end at its last_seq (`dense`, read in the statement's
      // snapshot: an owner's flush moves both together). Else nothing changes and the refusal names why.
      const claimed = await this.#db.query<RunRow & { input: string }>(
        `WITH pre AS (SELECT r.last_seq = coalesce((SELECT max(c.seq) FROM ${this.#schema}.run_chunks c WHERE c.run_id = r.id), 0) AS dense
                        FROM ${this.#schema}.runs r WHERE r.id = $1)
         UPDATE ${this.#schema}.runs SET epoch = epoch + 1, owner = $2, status = 'running', updated_at = clock_timestamp()
         WHERE id = $1 AND status IN ('queued', 'running') AND format <= $3 AND format >= 1 AND epoch >= 0 AND epoch < $4
           AND terminal IS NULL AND (SELECT dense FROM pre) AND ($5::text IS NULL OR incarnation::text = $5::text)
         RETURNING ${runColumns}, input::text AS input`,
        [runId, owner, RUN_FORMAT, MAX_EPOCH, incarnation ?? null],
      );
      const row = claimed.rows[0];
      if (row === undefined) {
        const run = await this.#getRun(runId); // a field this build cannot use: MalformedJournalEntryError
        // none, or another run under the id than the one asked for (erased or purged, and created again)
        if (run === null || (incarnation !== undefined && run.incarnation !== incarnation)) throw new RunNotFoundError({ runId });
        if (run.format > RUN_FORMAT) throw new JournalSchemaError({ found: run.format, known: RUN_FORMAT, runId });
        if (!isOpen(run.status)) throw new FencedError({ runId, epoch: run.epoch, currentEpoch: run.epoch, reason: 'ended', what: 'claim' });
        if (run.epoch >= MAX_EPOCH) throw new MalformedJournalEntryError({ runId, seq: 0, row: 'runs', field: 'epoch', problem: `${run.epoch} is the largest epoch the journal holds: no claim can follow it` });
        const chunks = await this.#db.query<{ last: number }>(`SELECT coalesce(max(seq), 0)::float8 AS last FROM ${this.#schema}.run_chunks WHERE run_id = $1`, [runId]);
        const last = Number(chunks.rows[0]?.last ?? 0);
        if (last !== run.lastSeq) {
          throw new MalformedJournalEntryError({ runId, seq: 0, row: 'runs', field: 'last_seq', problem: `${run.lastSeq}, but the run's chunks end at seq ${last}` });
        }
        throw new FencedError({ runId, epoch: run.epoch, currentEpoch: run.epoch, reason: 'epoch', what: 'claim' }); // changed under the claim: the job comes back
      }
      const run = checkedRun(row);
      const [commits, toolCalls] = await Promise.all([
        // the last commit only: the one the new owner goes on from
        this.#db.query<CommitRow>(`SELECT ${commitColumns} FROM ${this.#schema}.run_commits WHERE run_id = $1 ORDER BY no DESC LIMIT 1`, [runId]),
        this.#db.query<ToolCallRow>(`SELECT ${toolCallColumns} FROM ${this.#schema}.run_tool_calls WHERE run_id = $1 ORDER BY position`, [runId]),
      ]);
      return {
        lease: { runId, epoch: run.epoch, owner, ...(run.incarnation === undefined ? {} : { incarnation: run.incarnation }) },
        run,
        input: JSON.parse(row.input) as JsonValue,
        commits: commits.rows.map(commitFromRow),
        toolCalls: toolCalls.rows.map(toolCallFromRow),
      };
    });
  }

  async append(lease: RunLease, chunks: readonly ChunkType[], commit?: RunCommit): Promise<Appended> {
    return this.appendEncoded(lease, encodeChunks(chunks), commit);
  }

  async appendEncoded(lease: RunLease, chunks: readonly EncodedChunk[], commit?: RunCommit): Promise<Appended> {
    assertLease('append', lease);
    const checked = checkAppend(chunks, commit);
    return this.#run('append', async () => {
      const statement = flushStatement({ schema: this.#schema, schemaName: this.#schemaName, notify: this.#notify }, lease, chunks, commit, checked);
      const result = await this.#db.query<{ last_seq: number }>(statement.text, statement.values);
      const row = result.rows[0];
      if (row === undefined) await this.#refused(lease, 'append');
      if (chunks.length > 0 || checked.terminal !== undefined) this.#local.next({ runId: lease.runId, kind: 'chunks' });
      return { lastSeq: Number(row?.last_seq) };
    });
  }

  async toolCall(lease: RunLease, transition: ToolTransition): Promise<ToolCallRecord> {
    assertLease('toolCall', lease);
    const payload = checkTransition(transition);
    const outcome = await this.#run('toolCall', () =>
      this.#db.transaction(async (query): Promise<ToolCallRecord | { refused: unknown }> => {
        await checkEpoch(query, this.#schema, lease.runId, lease.epoch, 'tool call', lease.owner, lease.incarnation);
        return transitionToolCall(query, this.#schema, lease, transition, payload);
      }, fenceSettings(this.#fenceTimeoutMs)),
    );
    if ('refused' in outcome) throw outcome.refused;
    return outcome;
  }

  async signal(runId: string, signal: RunSignal): Promise<void> {
    assertJournalId('signal', 'runId', runId);
    if (signal?.kind !== 'stop') throw new TypeError(`RunJournal.signal: unknown signal kind ${JSON.stringify(signal?.kind)}`);
    const reason = signal.reason === undefined ? null : encodeJson(signal.reason, 'signal reason');
    const recorded = await this.#run('signal', () =>
      this.#db.transaction(async (query) => {
        // a run holds one signal of a kind: its signals take turns (a lock of the run's key, two-key
        // form: apart from owner sessions' keys), so the check below sees every one recorded before
        await query('SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))', [`rxagent.signal:${this.#schemaName}`, runId]);
        // notified only when recorded: a repeated stop wakes nobody
        const notify = this.#notify ? `, (SELECT pg_notify('${JOURNAL_CHANNEL}', $4 || s.run_id || '/signal') FROM s) AS notified` : '';
        const result = await query<{ status: string; recorded: boolean }>(
          `WITH r AS (SELECT id, status FROM ${this.#schema}.runs WHERE id = $1),
                s AS (INSERT INTO ${this.#schema}.run_signals (run_id, kind, reason, created_at)
                      SELECT r.id, $2, $3::json, clock_timestamp() FROM r WHERE r.status IN ('queued', 'running')
                        AND NOT EXISTS (SELECT 1 FROM ${this.#schema}.run_signals x WHERE x.run_id = r.id AND x.kind = $2)
                      RETURNING run_id)
           SELECT r.status, EXISTS (SELECT 1 FROM s) AS recorded${notify} FROM r`,
          [runId, signal.kind, reason, ...(this.#notify ? [`${this.#schemaName}/`] : [])],
        );
        const row = result.rows[0];
        if (row === undefined) throw new RunNotFoundError({ runId });
        return row.recorded;
      }, fenceSettings(this.#fenceTimeoutMs)),
    );
    if (recorded) this.#local.next({ runId, kind: 'signal' });
  }

  async noteInfrastructureLoss(runId: string, attempt: string, options?: { readonly incarnation?: string }): Promise<void> {
    assertJournalId('noteInfrastructureLoss', 'runId', runId);
    assertJournalId('noteInfrastructureLoss', 'attempt', attempt);
    const incarnation = incarnationOption('noteInfrastructureLoss', options);
    await this.#run('infrastructureLoss', async () => {
      // the attempt's run only: another created under its id since (erased or purged) is left alone
      await this.#db.query(
        `UPDATE ${this.#schema}.runs SET infrastructure_losses = array_append(infrastructure_losses, $2)
          WHERE id = $1 AND NOT ($2 = ANY (infrastructure_losses)) AND cardinality(infrastructure_losses) < $3
            AND ($4::text IS NULL OR incarnation::text = $4::text)`,
        [runId, attempt, MAX_INFRASTRUCTURE_LOSSES, incarnation ?? null],
      );
    });
  }

  async infrastructureLosses(runId: string, options?: { readonly incarnation?: string }): Promise<readonly string[]> {
    assertJournalId('infrastructureLosses', 'runId', runId);
    const incarnation = incarnationOption('infrastructureLosses', options);
    return this.#run('infrastructureLoss', async () => {
      const result = await this.#db.query<{ losses: string[] }>(
        `SELECT infrastructure_losses AS losses FROM ${this.#schema}.runs WHERE id = $1 AND ($2::text IS NULL OR incarnation::text = $2::text)`,
        [runId, incarnation ?? null],
      );
      return result.rows[0]?.losses ?? [];
    });
  }

  signals$(runId: string): Observable<RunSignalRecord> {
    return this.#opened('read', runId, () => {
      return new Observable<RunSignalRecord>((subscriber) => {
        let after = 0;
        let reading: Promise<void> | undefined;
        const read = async (): Promise<void> => {
          for (const signal of await readSignals(this.#db, this.#schema, runId, after)) {
            after = signal.id;
            subscriber.next(signal);
          }
          const run = await this.#getRun(runId);
          // erased while listened to: the owner learns it, as from the in-memory journal
          if (run === null) throw new RunNotFoundError({ runId });
          if (!isOpen(run.status)) subscriber.complete();
        };
        const wake = (): void => {
          reading ??= read()
            .catch((error: unknown) => subscriber.error(RxAgentError.isInstance(error) ? error : new StorageError({ operation: 'read', cause: error })))
            .finally(() => (reading = undefined));
        };
        // woken by signals only (and the poll, which also sees the run end): an owner's own flushes cost it nothing here
        const subscription = this.#wake$(runId, 'signal').subscribe({ next: wake, error: (error: unknown) => subscriber.error(error) });
        wake();
        return subscription;
      });
    });
  }

  read$(runId: string, options: JournalReadOptions = {}): Observable<JournalEntry> {
    return this.#opened('read', runId, (run, incarnation) => {
      if (run.format > RUN_FORMAT) throw new JournalSchemaError({ found: run.format, known: RUN_FORMAT, runId });
      if (run.expiredAt !== undefined) throw new RunNotFoundError({ runId, reason: 'expired' });
      const after = checkCursor(runId, options.after, run.lastSeq);
      const end = options.live === false || !isOpen(run.status) ? run.lastSeq : undefined;
      const page = async (cursor: number, limit: number, until: number | undefined, maxBytes: number | undefined): Promise<ChunkRow[]> => {
        // Bounded in bytes: the rows of the page (by count) that start below maxBytes, counted by
        // octet_length (read from the stored size, without detoasting the text of rows left out).
        // Only the run this read opened: the page and the run row's incarnation in one statement (one
        // snapshot). A run erased and created again under its id is another run: the read ends with
        // RunNotFoundError instead of being handed the new run's rows.
        const chunks =
          maxBytes === undefined
            ? `SELECT seq, epoch, type, chunk FROM ${this.#schema}.run_chunks
               WHERE run_id = $1 AND seq > $2 AND seq <= $3 ORDER BY run_chunks.seq LIMIT $4`
            : `SELECT seq, epoch, type, chunk FROM (
                 SELECT seq, epoch, type, chunk, sum(octet_length(chunk)) OVER (ORDER BY seq) - octet_length(chunk) AS before
                 FROM (SELECT seq, epoch, type, chunk FROM ${this.#schema}.run_chunks
                       WHERE run_id = $1 AND seq > $2 AND seq <= $3 ORDER BY run_chunks.seq LIMIT $4) AS counted
               ) AS paged WHERE before < $6`;
        const text = `SELECT EXISTS (SELECT 1 FROM ${this.#schema}.runs WHERE id = $1 AND incarnation IS NOT DISTINCT FROM $5::bigint) AS same,
                        page.seq::float8 AS seq, page.epoch, page.type, page.chunk
                      FROM (SELECT 1) AS one LEFT JOIN LATERAL (${chunks}) AS page ON true ORDER BY page.seq`;
        const result = await guard('read', () =>
          this.#db.query<{ same: boolean; seq: number | null; epoch: number; type: string; chunk: string }>(
            text,
            maxBytes === undefined ? [runId, cursor, until ?? Number.MAX_SAFE_INTEGER, limit, incarnation] : [runId, cursor, until ?? Number.MAX_SAFE_INTEGER, limit, incarnation, maxBytes],
          ),
        );
        if (result.rows[0]?.same !== true) throw new RunNotFoundError({ runId });
        const rows = result.rows.filter((row) => row.seq !== null).map((row) => ({ seq: Number(row.seq), epoch: Number(row.epoch), type: row.type, json: row.chunk }));
        // seq is dense and a page one snapshot: a row missing before the next one is a gap, not a
        // row still to come (the read loop skipped the rows past it and asked again, for ever)
        const missing = rows.findIndex((row, index) => row.seq !== cursor + 1 + index);
        if (missing >= 0) await this.#gap(runId, cursor + 1 + missing, (rows[missing] as ChunkRow).seq);
        return rows;
      };
      const missingTail = (seq: number, until: number): Promise<never> => guard('read', () => this.#gap(runId, seq, undefined, until));
      // the run erased while read live (a notice, or the poll finding its row gone): the readers end
      // with RunNotFoundError, as the in-memory journal's do (they waited for rows for ever)
      const erased = (notice: RunNotice): RunNotice => {
        if (notice.kind === 'erased') throw new RunNotFoundError({ runId });
        return notice;
      };
      const wake$ = end === undefined ? this.#wake$(runId).pipe(map(erased)) : EMPTY;
      // keyed by the run this read opened: readers of a run created again under the id share another tail
      return this.#reads.read$(`${incarnation ?? ''}/${runId}`, { page, wake$, pageSize: this.#pageSize, missing: missingTail }, after, {
        ...(end === undefined ? {} : { end }),
        ...(options.ready === undefined ? {} : { ready: options.ready }),
        maxPageBytes: options.maxPageBytes,
      });
    });
  }

  async findLastSeq(runId: string, type: string, atOrBefore: number): Promise<number> {
    assertJournalId('findLastSeq', 'runId', runId);
    return this.#run('read', async () => {
      // One round trip: the run's existence and the seq (a structural type through its index).
      const found = await lastSeqOfType(this.#db, this.#schema, runId, type, Math.max(0, Math.floor(atOrBefore)));
      if (found === undefined) throw new RunNotFoundError({ runId });
      if (found.expired) throw new RunNotFoundError({ runId, reason: 'expired' });
      return found.seq ?? 0;
    });
  }

  async readStructure(runId: string, range: { after: number; until: number }): Promise<JournalEntry[]> {
    assertJournalId('readStructure', 'runId', runId);
    return this.#run('read', async () => {
      const run = await this.#getRun(runId);
      if (run === null) throw new RunNotFoundError({ runId });
      if (run.expiredAt !== undefined) throw new RunNotFoundError({ runId, reason: 'expired' });
      const rows = await structureRows(this.#db, this.#schema, runId, Math.max(0, Math.floor(range.after)), Math.floor(range.until));
      return rows.map((row) => new StoredEntry(row.seq, row.epoch, row.json));
    });
  }

  async deleteRun(runId: string, options: DeleteRunOptions = {}): Promise<boolean> {
    assertJournalId('deleteRun', 'runId', runId);
    const outcome = await this.#run('deleteRun', () => eraseRun(this.#db, this.#schema, runId, options.force === true, this.#notify ? `${this.#schemaName}/` : undefined));
    if (outcome === undefined) return false;
    if (!outcome.erased) throw new RunOpenError({ runId, status: outcome.status as RunRecord['status'] });
    // this instance's live readers and signal listeners of the run learn it at once
    this.#local.next({ runId, kind: 'erased' });
    return true;
  }

  async purgeExpired(options?: PurgeOptions): Promise<PurgeResult> {
    const limits = resolvePurge(options);
    return this.#run('purge', () => purgeRound(this.#db, this.#schema, this.#retention, limits));
  }

  /**
   * Holds `owner`'s database session: one dedicated connection holding a session-level advisory
   * lock keyed from the schema and the owner id, opened again (and the lock taken again) when the
   * connection is lost, at most `options.reconnectWithinMs` apart (default 200; above 0 and at most
   * 2^31 − 1, a `TypeError` naming it otherwise). While it is held, the owner's `running` runs are
   * not in {@link runsOfLostOwners}; when the owner's process dies, its session ends and they are.
   * Holders of one owner share the session (the shortest `reconnectWithinMs` applies); each
   * holder's `lock$` completes when it closes.
   */
  holdOwnerSession(owner: string, options?: { reconnectWithinMs?: number }): OwnerSession {
    assertJournalId('holdOwnerSession', 'owner', owner);
    const reconnectWithinMs = reconnectWithinOf('PostgresRunJournal.holdOwnerSession', options);
    if (this.#closed) throw closedError('read');
    let shared = this.#sessions.get(owner);
    if (shared === undefined) {
      shared = { session: new PostgresOwnerSession(this.#db.pool, this.#schemaName, owner, this.#connectionTimeoutMs, { reconnectWithinMs }), holders: 0 };
      this.#sessions.set(owner, shared);
    }
    shared.holders++;
    const { session } = shared;
    session.reconnectWithin(reconnectWithinMs);
    const entry = shared;
    let released = false;
    const closed = new Subject<void>();
    const lock$ = session.lock$.pipe(takeUntil(closed));
    return {
      ready: () => session.ready(),
      get held() {
        return session.held;
      },
      lock$,
      close: async () => {
        if (released) return;
        released = true;
        closed.next();
        closed.complete();
        if (--entry.holders > 0) return;
        if (this.#sessions.get(owner) === entry) this.#sessions.delete(owner);
        await session.close();
      },
    };
  }

  /**
   * `running` runs of `agentIds` whose owner's session lock no session of this database holds
   * (the owner died, or its session is between a lost connection and the next): one statement
   * over `pg_locks`, oldest write first, at most `limit` (default 100).
   */
  async runsOfLostOwners(agentIds: readonly string[], limit = 100): Promise<LostOwnerRun[]> {
    if (!Array.isArray(agentIds) || agentIds.some((id) => typeof id !== 'string')) {
      throw new TypeError('PostgresRunJournal.runsOfLostOwners: agentIds must be an array of agent ids (strings).');
    }
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`PostgresRunJournal.runsOfLostOwners: limit must be an integer ≥ 1 (got ${String(limit)})`);
    if (agentIds.length === 0) return [];
    return this.#run('read', async () => {
      const result = await this.#db.query<{ id: string; agent_id: string; owner: string; epoch: number; updated_at: Date }>(
        runsOfLostOwnersStatement(this.#schema, this.#schemaName),
        [agentIds, limit],
      );
      return result.rows.map((row) => ({ runId: row.id, agentId: row.agent_id, owner: row.owner, epoch: Number(row.epoch), updatedAt: row.updated_at }));
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([...this.#sessions.values()].map(({ session }) => session.close()));
    this.#sessions.clear();
    this.#closing.error(closedError('read'));
    this.#listener.close();
    this.#poller.close();
    // an owned pool keeps its error listener: `end()` resolves while its clients are still closing
    if (this.#ownsPool) await guard('close', () => this.#db.pool.end());
    else this.#db.pool.removeListener('error', this.#onIdleError);
  }

  /**
   * Wake-ups of one run: its notifications, this instance's own writes, the journal's shared poll
   * (one statement per interval for all watched runs: it wakes a run only when its row moved or a
   * signal arrived), and close.
   */
  #wake$(runId: string, kind?: RunNotice['kind']): Observable<RunNotice> {
    const news = (notice: RunNotice): boolean => notice.runId === runId && (kind === undefined || notice.kind === kind || notice.kind === 'erased');
    return merge(
      this.#listener.notices$.pipe(filter(news)),
      this.#local.pipe(filter(news)),
      this.#poller.watch$(runId).pipe(filter(news)),
      this.#closing,
    );
  }

  /**
   * A cold read: `open` builds the stream once the checks passed. A run still open is LISTENed
   * for first (when notifying), so no row written between its pages and its wait is missed; an
   * ended run's rows are all there.
   */
  #opened<T>(operation: StorageOperation, runId: string, open: (run: RunRecord, incarnation: string | null) => Promise<Observable<T>> | Observable<T>): Observable<T> {
    return defer(() => {
      assertJournalId(operation === 'read' ? 'read$' : operation, 'runId', runId);
      if (this.#closed) throw closedError(operation);
      return from(
        this.#run(operation, async () => {
          // the row and which run it is (its incarnation), in one read
          const row = (await this.#db.query<RunRow>(`SELECT ${runColumns} FROM ${this.#schema}.runs WHERE id = $1`, [runId])).rows[0];
          if (row === undefined) throw new RunNotFoundError({ runId });
          const run = checkedRun(row);
          const incarnation = row.incarnation;
          // Pages are read after this: rows written meanwhile are in them (lastSeq only grows).
          if (this.#notify && isOpen(run.status)) await this.#listener.ready();
          return open(run, incarnation);
        }),
      ).pipe(switchMap((stream) => stream));
    });
  }

  async #getRun(runId: string): Promise<RunRecord | null> {
    const result = await this.#db.query<RunRow>(`SELECT ${runColumns} FROM ${this.#schema}.runs WHERE id = $1`, [runId]);
    return result.rows[0] === undefined ? null : checkedRun(result.rows[0]);
  }

  /**
   * A read met a gap at `seq`: the next row is `next`, or (a bounded read, `next` undefined) there
   * is none up to `end`. The run's chunks were removed (expired, erased), or the rows are missing.
   */
  async #gap(runId: string, seq: number, next: number | undefined, end?: number): Promise<never> {
    const run = await this.#getRun(runId);
    if (run === null) throw new RunNotFoundError({ runId });
    if (run.expiredAt !== undefined) throw new RunNotFoundError({ runId, reason: 'expired' });
    const where = next === undefined ? `the run's chunks end at seq ${seq - 1}, before seq ${end ?? run.lastSeq}` : `the run's chunks go on at seq ${next}`;
    throw new MalformedJournalEntryError({ runId, seq, problem: `missing: ${where} (a row removed from the database)` });
  }

  /** Why a fenced write matched no row: `RunNotFoundError` or `FencedError`. */
  async #refused(lease: RunLease, what: string): Promise<never> {
    const run = await this.#getRun(lease.runId);
    // the lease's run erased (and maybe another created under its id, from epoch 0 again): gone
    if (run === null || (lease.incarnation !== undefined && run.incarnation !== lease.incarnation)) throw new RunNotFoundError({ runId: lease.runId });
    const reason = run.epoch === lease.epoch && run.owner === lease.owner && !isOpen(run.status) ? 'ended' : 'epoch';
    throw new FencedError({ runId: lease.runId, epoch: lease.epoch, currentEpoch: run.epoch, reason, what });
  }

  #run<T>(operation: StorageOperation, task: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(closedError(operation));
    return guard(operation, async () => {
      if (!this.#migrated) await this.#migrate();
      return task();
    });
  }

  #migrate(): Promise<void> {
    this.#migrating ??= this.#db
      .withClient((query: Query) => migratePostgres(query, this.#schemaName, this.#statementTimeoutMs))
      .then(() => {
        this.#migrated = true;
      })
      .catch((error: unknown) => {
        this.#migrating = undefined;
        throw RxAgentError.isInstance(error) ? error : new StorageError({ operation: 'migrate', cause: error });
      });
    return this.#migrating;
  }
}
