/**
 * `listRuns({ unusable: 'report' })`: a run row the journal cannot use (a status, epoch, format,
 * terminal or `last_seq` that `getRun` and the claim refuse) is listed in its place as an
 * `UnusableRun` — its run id and the `MalformedJournalEntryError` naming the field, the one
 * `getRun` gives — and every other run is listed as it is, in order. Before, a listing was refused
 * as a whole at the first such row, so no run older than it could be listed. A plain `listRuns()`
 * (or `unusable: 'refuse'`) still refuses: callers that act on rows keep the strict path.
 *
 * On PostgreSQL with rows edited by SQL (as another build or an operator leaves them), and in
 * memory (whose rows no caller can edit: its listing, its options, and the row check it lists
 * through, on edited records).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemoryRunJournal, MalformedJournalEntryError, type ListedRun, type RunJournal, type RunRecord, type RunStatus, type UnusableRun } from 'rxagent/durable';
import { PostgresRunJournal } from 'rxagent/storage/postgres';
import { listedRunRecord } from '../../src/storage/journal/run-record-check.js';
import { commit, delta, finish, start } from './journal-suite.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';

const settle = (promise: Promise<unknown>): Promise<{ value: unknown } | { error: unknown }> =>
  promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
const errorOf = (settled: { value: unknown } | { error: unknown }): unknown => ('error' in settled ? settled.error : undefined);

const isUnusable = (entry: ListedRun): entry is UnusableRun => 'unusable' in entry;

/** An entry as `[runId, status or 'unusable', field]`, for comparing listings. */
const shape = (entry: ListedRun): [string, string, string | undefined] => (isUnusable(entry) ? [entry.runId, 'unusable', entry.error.field] : [entry.runId, entry.status, undefined]);

/** Options a caller might misspell: each a `RangeError` naming `unusable`, never a silent default. */
const MISSPELT: unknown[] = ['skip', 'REPORT', 'Report', 'reports', '', true, 1, null, ['report'], { report: true }];

// ─── in memory ────────────────────────────────────────────────────────────────────────────────────

describe('InMemoryRunJournal.listRuns({ unusable })', () => {
  async function threeRuns(journal: InMemoryRunJournal): Promise<string[]> {
    const ids = ['mem-a', 'mem-b', 'mem-c'];
    for (const runId of ids) {
      await journal.createRun({ runId, agentId: 'support', input: null });
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    const { lease } = await journal.claim('mem-b', 'w');
    await journal.append(lease, [start('mem-b'), finish('mem-b')], commit('final', null));
    return ['mem-b', 'mem-c', 'mem-a'];
  }

  it("'report' lists the same runs as a plain listing, in its order and limit; 'refuse' is the plain listing", async () => {
    const journal = new InMemoryRunJournal();
    const newestFirst = await threeRuns(journal);
    const plain = await journal.listRuns({ limit: 1000 });
    expect(plain.map((run) => run.runId)).toEqual(newestFirst);
    expect(await journal.listRuns({ limit: 1000, unusable: 'report' })).toEqual(plain);
    expect(await journal.listRuns({ limit: 1000, unusable: 'refuse' })).toEqual(plain);
    expect(await journal.listRuns({ limit: 2, unusable: 'report' })).toEqual(plain.slice(0, 2));
    for (const run of plain) expect(run).toEqual(await journal.getRun(run.runId));
  });

  it.each(MISSPELT)('unusable: %j is a RangeError naming it (it would have been read as the default)', async (unusable) => {
    const journal = new InMemoryRunJournal();
    await threeRuns(journal);
    const error = errorOf(await settle(journal.listRuns({ unusable } as never)));
    expect(error).toBeInstanceOf(RangeError);
    expect((error as Error).message).toMatch(/^InMemoryRunJournal\.listRuns: unusable must be 'refuse' or 'report'/);
  });

  // the in-memory journal lists (and getRun and the claim read) every record through this check:
  // its records cannot be edited from outside, so the check is shown on edited copies
  const good: RunRecord = { runId: 'r1', agentId: 'a', status: 'completed', epoch: 1, lastSeq: 2, format: 1, terminal: 'finish', createdAt: new Date(0), updatedAt: new Date(0) };
  const edited: Array<[string, Partial<RunRecord>, string]> = [
    ['an unknown status', { status: 'paused' as RunStatus }, 'status'],
    ['a negative epoch', { epoch: -3 }, 'epoch'],
    ['format 0', { format: 0 }, 'format'],
    ['a terminal of another status', { terminal: 'abort' }, 'terminal'],
    ['a negative last_seq', { lastSeq: -1 }, 'last_seq'],
  ];
  it.each(edited)("the row check on a record with %s: 'report' → an UnusableRun naming the field, 'refuse' → that error thrown", (_what, edit, field) => {
    const record = { ...good, ...edit };
    const listed = listedRunRecord(record, 'report');
    expect(isUnusable(listed) && { runId: listed.runId, row: listed.error.row, field: listed.error.field }).toEqual({ runId: 'r1', row: 'runs', field });
    expect(MalformedJournalEntryError.isInstance(isUnusable(listed) && listed.error)).toBe(true);
    let thrown: unknown;
    try {
      listedRunRecord(record, 'refuse');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toEqual(isUnusable(listed) ? listed.error : undefined);
    expect(listedRunRecord(good, 'report')).toBe(good);
    expect(listedRunRecord({ ...good, format: 99, status: 'paused' as RunStatus }, 'report')).toMatchObject({ format: 99 }); // a newer build's row: its JournalSchemaError is the reader's
  });
});

// ─── PostgreSQL, rows edited with SQL ─────────────────────────────────────────────────────────────

describe('PostgresRunJournal.listRuns({ unusable }) over rows edited with SQL', () => {
  let server: TestPostgres;
  let db: pg.Pool;
  let journal: PostgresRunJournal;
  const schema = `rxagent_list_unusable_${randomUUID().slice(0, 8)}`;
  const sql = (text: string, values: unknown[] = []) => db.query(text.replaceAll('S.', `"${schema}".`), values);

  beforeAll(async () => {
    server = await startTestPostgres();
    db = new pg.Pool({ connectionString: server.connectionString, max: 2 });
    journal = new PostgresRunJournal({ connectionString: server.connectionString, schema });
    await journal.listRuns({ limit: 1 }); // migrates its schema
  }, 120_000);
  afterAll(async () => {
    await journal?.close();
    await db?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await db?.end();
    await server?.stop();
  }, 60_000);

  /** `count` runs, each changed after the one before (the listing's order: newest first, returned so). Odd ones ended. */
  async function runs(count: number): Promise<string[]> {
    await sql('DELETE FROM S.runs');
    const ids: string[] = [];
    for (let at = 0; at < count; at += 1) {
      const runId = `list-${at}-${randomUUID()}`;
      await journal.createRun({ runId, agentId: 'support', input: null });
      const { lease } = await journal.claim(runId, 'w');
      await journal.append(lease, [start(runId), delta(runId, 'hi')], commit('input'));
      if (at % 2 === 1) await journal.append(lease, [finish(runId)], commit('final', null));
      ids.push(runId);
    }
    return ids.reverse();
  }

  const edits: Array<[string, string, string]> = [
    ['an unknown status', "UPDATE S.runs SET status = 'paused' WHERE id = $1", 'status'],
    ['a negative epoch', 'UPDATE S.runs SET epoch = -3 WHERE id = $1', 'epoch'],
    ['format 0', 'UPDATE S.runs SET format = 0 WHERE id = $1', 'format'],
    ['a terminal on an open run', "UPDATE S.runs SET terminal = 'finish' WHERE id = $1 AND status = 'running'", 'terminal'],
    ['a terminal of another status', "UPDATE S.runs SET terminal = 'abort' WHERE id = $1 AND status = 'completed'", 'terminal'],
    ['a negative last_seq', 'UPDATE S.runs SET last_seq = -1 WHERE id = $1', 'last_seq'],
  ];

  it.each(edits)(
    "a row with %s in the middle: 'report' lists every run in order, the row in place carrying its id and getRun's MalformedJournalEntryError; a plain listing still refuses (it refused the whole listing: no older run could be listed)",
    async (_what, edit, field) => {
      const ids = await runs(5);
      const bad = edit.includes("'completed'") ? ids[1]! : ids[2]!; // ids[1] ended, ids[2] running
      const changed = await sql(edit, [bad]);
      expect(changed.rowCount).toBe(1);
      const listed = await journal.listRuns({ limit: 20, unusable: 'report' });
      expect(listed.map(shape)).toEqual(ids.map((runId) => (runId === bad ? [runId, 'unusable', field] : [runId, expect.any(String), undefined])));
      const fromGetRun = errorOf(await settle(journal.getRun(bad)));
      const entry = listed.find((run) => run.runId === bad);
      expect(entry).toEqual({ unusable: true, runId: bad, error: fromGetRun });
      expect(MalformedJournalEntryError.isInstance(isUnusable(entry!) && entry.error) && entry).toMatchObject({ error: { runId: bad, row: 'runs', field, seq: 0 } });
      for (const run of listed.filter((run): run is RunRecord => !isUnusable(run))) expect(run).toEqual(await journal.getRun(run.runId));
      // the strict path: the whole listing refused at the row, naming it; the claim refuses it too
      for (const strict of [() => journal.listRuns({ limit: 20 }), () => journal.listRuns({ limit: 20, unusable: 'refuse' })]) {
        const refused = errorOf(await settle(strict()));
        expect(MalformedJournalEntryError.isInstance(refused) && [refused.runId, refused.field]).toEqual([bad, field]);
      }
      const claimed = errorOf(await settle(journal.claim(bad, 'operator')));
      expect(MalformedJournalEntryError.isInstance(claimed) && claimed.field).toBe(field);
    },
    60_000,
  );

  it("several unusable rows (the newest, one in the middle, the oldest): each in place, limit counts them; mended, the row is a run again", async () => {
    const ids = await runs(6);
    await sql("UPDATE S.runs SET status = 'paused' WHERE id = $1", [ids[0]]);
    await sql('UPDATE S.runs SET epoch = -1 WHERE id = $1', [ids[3]]);
    await sql('UPDATE S.runs SET format = 0 WHERE id = $1', [ids[5]]);
    expect((await journal.listRuns({ unusable: 'report' })).map(shape)).toEqual([
      [ids[0], 'unusable', 'status'],
      [ids[1], 'running', undefined],
      [ids[2], 'completed', undefined],
      [ids[3], 'unusable', 'epoch'],
      [ids[4], 'completed', undefined],
      [ids[5], 'unusable', 'format'],
    ]);
    expect((await journal.listRuns({ limit: 4, unusable: 'report' })).map((run) => run.runId)).toEqual(ids.slice(0, 4));
    await sql('UPDATE S.runs SET epoch = 1 WHERE id = $1', [ids[3]]);
    expect((await journal.listRuns({ unusable: 'report' })).map(shape)[3]).toEqual([ids[3], 'running', undefined]);
  }, 60_000);

  it('a run of a newer format is listed as getRun gives it, not as unusable (its readers answer JournalSchemaError)', async () => {
    const ids = await runs(2);
    await sql("UPDATE S.runs SET format = 99, status = 'paused' WHERE id = $1", [ids[0]]);
    const listed = await journal.listRuns({ unusable: 'report' });
    expect(listed[0]).toEqual(await journal.getRun(ids[0]!));
    expect(listed[0]).toMatchObject({ format: 99 });
  }, 60_000);

  it.each(MISSPELT)('unusable: %j is a RangeError naming it, before anything is read', async (unusable) => {
    const error = errorOf(await settle(journal.listRuns({ unusable } as never)));
    expect(error).toBeInstanceOf(RangeError);
    expect((error as Error).message).toMatch(/^PostgresRunJournal\.listRuns: unusable must be 'refuse' or 'report'/);
  });

  it('RunJournal declares listRuns (optional) with both answers typed', async () => {
    const typed: RunJournal = journal;
    const strict: RunRecord[] | undefined = await typed.listRuns?.({ limit: 1 });
    const reported: ListedRun[] | undefined = await typed.listRuns?.({ limit: 1, unusable: 'report' });
    expect(Array.isArray(strict) && Array.isArray(reported)).toBe(true);
  });
});
