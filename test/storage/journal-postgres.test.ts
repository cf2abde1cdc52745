/**
 * PostgresRunJournal against a real PostgreSQL (test/support/postgres.ts): the shared journal
 * suite, then what only a database shows — two journals on one database ("two instances"),
 * fencing of a stale owner's append, tool transition and memory save, an owner idle inside a
 * fenced transaction cut off by the server, notifications vs polling, and the schema version.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FencedError } from '../../src/storage/journal/errors/fenced-error.js';
import { JournalSchemaError } from '../../src/storage/journal/errors/journal-schema-error.js';
import { PostgresRunJournal, type PostgresRunJournalOptions } from '../../src/storage/postgres/postgres-run-journal.js';
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { textMessage } from './storage-suite.js';
import { collect, commit, delta, describeRunJournal, finish, rejection, start, until } from './journal-suite.js';

let server: TestPostgres | undefined;
let startupError: unknown;
const suffix = randomUUID().slice(0, 8);
const schema = `rxagent_journal_${suffix}`;
const schemas = new Set<string>([schema]);

beforeAll(async () => {
  server = await startTestPostgres().catch((error: unknown) => {
    startupError = error;
    return undefined;
  });
});

beforeEach(() => {
  if (startupError !== undefined) throw startupError;
});

const connectionString = (): string => {
  if (server === undefined) throw new Error('PostgreSQL did not start');
  return server.connectionString;
};

afterAll(async () => {
  if (server === undefined) return;
  if (!server.started) {
    const pool = new pg.Pool({ connectionString: connectionString() });
    for (const name of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
    await pool.end();
  }
  await server.stop();
});

const journalOn = (options: Partial<PostgresRunJournalOptions> = {}) =>
  new PostgresRunJournal({ connectionString: connectionString(), schema, pageSize: 50, pollIntervalMs: 200, ...options } as PostgresRunJournalOptions);

async function sql(text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: connectionString() });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

describeRunJournal('PostgresRunJournal', () => journalOn(), {
  pageSize: 50,
  withRetention: (retention) => journalOn(retention),
  forceFormat: async (_journal, runId, format) => {
    await sql(`UPDATE "${schema}".runs SET format = $2 WHERE id = $1`, [runId, format]);
  },
});

describeRunJournal('PostgresRunJournal (notify: false, polling only)', () => journalOn({ notify: false, pollIntervalMs: 20 }), {
  pageSize: 50,
  withRetention: (retention) => journalOn({ notify: false, pollIntervalMs: 20, ...retention }),
});

describe('PostgresRunJournal across instances', () => {
  it('the server ending its connections while close() is ending them is no uncaught error', async () => {
    const uncaught: unknown[] = [];
    const record = (error: unknown): void => void uncaught.push(error);
    const admin = new pg.Pool({ connectionString: connectionString(), max: 1 });
    await admin.query('SELECT 1');
    process.on('uncaughtException', record);
    try {
      for (let round = 0; round < 10; round++) {
        const name = `closing-${suffix}-${round}`;
        const url = new URL(connectionString());
        url.searchParams.set('application_name', name);
        const journal = journalOn({ connectionString: url.toString() });
        await journal.getRun(`none-${round}`);
        // the FATAL (57P01) is on its way to the journal's idle client when close() begins ending it
        await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [name]);
        await journal.close();
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(uncaught).toEqual([]);
    } finally {
      process.removeListener('uncaughtException', record);
      await admin.end();
    }
  });

  it('two journals on one database: a reader on B follows what A writes, live, to the end (woken by NOTIFY alone)', async () => {
    const a = journalOn();
    const b = journalOn({ pollIntervalMs: 60_000 }); // only NOTIFY can wake B in time
    const runId = `tenant/a/run-${randomUUID()}`; // a '/' in the id: the payload is split at its last '/'
    await a.createRun({ runId, agentId: 'support', input: 'hi' });
    const { lease } = await a.claim(runId, 'instance-a');
    await a.append(lease, [start(runId)], commit('input'));
    const reader = collect(b, runId);
    await until(() => reader.entries.length === 1, 'the history on B');
    for (let index = 0; index < 5; index++) {
      await a.append(lease, [delta(runId, `${index}`)]);
      await until(() => reader.entries.length === index + 2, `live entry ${index} on B`);
    }
    await a.append(lease, [finish(runId)], commit('final'));
    await reader.done;
    expect(reader.completed).toBe(true);
    expect(reader.entries.map((entry) => entry.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect((await b.getRun(runId))?.status).toBe('completed');
    await Promise.all([a.close(), b.close()]);
  });

  it("times come from the database's clock: two instances whose clocks disagree by two hours order runs, claims, commits and signals as the database saw them", async () => {
    const hour = 3_600_000;
    const ahead = journalOn({ now: () => new Date(Date.now() + hour) }); // an instance whose clock runs an hour ahead
    const behind = journalOn({ now: () => new Date(Date.now() - hour) }); // and one an hour behind
    const threadId = `thread-${randomUUID()}`;
    const first = `run-${randomUUID()}`;
    const second = `run-${randomUUID()}`;
    const before = (await sql('SELECT clock_timestamp() AS t')).rows[0].t as Date;
    await ahead.createRun({ runId: first, agentId: 'support', input: 'hi', threadId });
    await behind.createRun({ runId: second, agentId: 'support', input: 'hi', threadId });
    // the newest run of the thread is the one created last, whichever instance's clock said otherwise
    expect((await ahead.activeRun(threadId))?.runId).toBe(second);
    const { lease } = await behind.claim(first, 'instance-behind');
    await behind.append(lease, [start(first)], commit('input'));
    await ahead.toolCall(lease, { toolCallId: 'c1', status: 'pending', toolName: 'send', args: {} });
    await ahead.signal(first, { kind: 'stop' });
    const after = (await sql('SELECT clock_timestamp() AS t')).rows[0].t as Date;
    const times = (
      await sql(
        `SELECT r.created_at, r.updated_at, k.created_at AS commit_at, t.updated_at AS tool_at, s.created_at AS signal_at
         FROM "${schema}".runs r, "${schema}".run_commits k, "${schema}".run_tool_calls t, "${schema}".run_signals s
         WHERE r.id = $1 AND k.run_id = r.id AND t.run_id = r.id AND s.run_id = r.id`,
        [first],
      )
    ).rows[0] as Record<string, Date>;
    for (const [column, time] of Object.entries(times)) {
      expect({ column, within: time.getTime() >= before.getTime() && time.getTime() <= after.getTime() }).toEqual({ column, within: true });
    }
    const run = await ahead.getRun(first);
    expect(run!.updatedAt.getTime()).toBeGreaterThanOrEqual(run!.createdAt.getTime());
    await Promise.all([ahead.close(), behind.close()]);
  });

  it('one shared poll per journal: 200 live readers and 200 signal listeners of 200 open runs cost a statement per interval, not one per reader; a write NOTIFY never announced still reaches its readers', async () => {
    const pool = new pg.Pool({ connectionString: connectionString(), max: 10 });
    let statements = 0;
    pool.on('acquire', () => statements++); // every statement of the journal takes a pooled connection
    const journal = new PostgresRunJournal({ pool, schema, pollIntervalMs: 100 });
    const writer = journalOn({ notify: false }); // writes no NOTIFY: only the poll can wake the readers
    const runIds = Array.from({ length: 200 }, () => `run-${randomUUID()}`);
    const leases = await Promise.all(
      runIds.map(async (runId) => {
        await writer.createRun({ runId, agentId: 'support', input: 'hi' });
        const { lease } = await writer.claim(runId, 'instance-w');
        await writer.append(lease, [start(runId)], commit('input'));
        return lease;
      }),
    );
    const readers = runIds.map((runId) => collect(journal, runId));
    const signals = runIds.map((runId) => journal.signals$(runId).subscribe({ error: () => undefined }));
    await until(() => readers.every((reader) => reader.entries.length === 1), 'every reader at its first entry');
    // the listeners' first reads done and the first polls past: a 300 ms window with at most 4 statements
    for (let last = -1, rounds = 0; (last === -1 || statements - last > 4) && rounds < 15; rounds++) {
      last = statements;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    statements = 0;
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const idle = statements;
    // 2 s at 100 ms: about 20 polls (one per reader would be 400 readers × 20 = 8,000)
    expect(idle).toBeGreaterThan(0);
    expect(idle).toBeLessThanOrEqual(30);
    for (const [index, lease] of leases.slice(0, 3).entries()) await writer.append(lease, [delta(lease.runId, `${index}`)]);
    await until(() => readers.slice(0, 3).every((reader) => reader.entries.length === 2), 'the polled readers woken');
    expect(readers.slice(3).every((reader) => reader.entries.length === 1)).toBe(true);
    for (const subscription of signals) subscription.unsubscribe();
    await Promise.all([journal.close(), writer.close()]);
    await Promise.all(readers.map((reader) => reader.done));
    await pool.end();
  });

  it("owner sessions: a running run is a lost owner's exactly while no session of its owner holds the lock; two holders of one owner share it", async () => {
    const a = journalOn();
    const b = journalOn();
    const agentId = `agent-${randomUUID()}`;
    const runId = `run-${randomUUID()}`;
    const owner = `owner-${randomUUID()}`;
    await a.createRun({ runId, agentId, input: 'hi' });
    expect(await b.runsOfLostOwners([agentId])).toEqual([]); // queued: no owner yet
    const first = a.holdOwnerSession(owner);
    const second = a.holdOwnerSession(owner); // a second worker of the same owner in this process
    await Promise.all([first.ready(), second.ready()]);
    expect(first.held && second.held).toBe(true);
    await a.claim(runId, owner);
    expect(await b.runsOfLostOwners([agentId])).toEqual([]);
    await first.close();
    expect(await b.runsOfLostOwners([agentId])).toEqual([]); // the other holder keeps it
    await second.close();
    const lost = await b.runsOfLostOwners([agentId]);
    expect(lost).toMatchObject([{ runId, agentId, owner, epoch: 1 }]);
    expect(lost[0]!.updatedAt).toBeInstanceOf(Date);
    expect(await b.runsOfLostOwners([`other-${agentId}`])).toEqual([]);
    // held again (by another journal: another instance of the same owner): alive again
    const again = b.holdOwnerSession(owner);
    await again.ready();
    expect(await a.runsOfLostOwners([agentId])).toEqual([]);
    await expect(a.runsOfLostOwners([agentId], 0)).rejects.toThrow(RangeError);
    await Promise.all([a.close(), b.close()]); // close() ends held sessions too
    const c = journalOn();
    expect(await c.runsOfLostOwners([agentId])).toMatchObject([{ runId }]);
    await c.close();
  });

  it('a takeover on B fences A: its append, tool transition and memory save are refused, nothing stored', async () => {
    const a = journalOn();
    const b = journalOn();
    const memory = new PostgresStorage({ connectionString: connectionString(), schema });
    const runId = `run-${randomUUID()}`;
    const threadId = `thread-${randomUUID()}`;
    await a.createRun({ runId, agentId: 'support', input: 'hi', threadId });
    const old = (await a.claim(runId, 'instance-a')).lease;
    await a.append(old, [start(runId)], { ...commit('model'), toolCalls: [{ toolCallId: 'c1', toolName: 'send', args: {} }] });
    const { lease, toolCalls } = await b.claim(runId, 'instance-b');
    expect(lease.epoch).toBe(2);
    expect(toolCalls.map((call) => call.status)).toEqual(['pending']);

    expect(await rejection(a.append(old, [delta(runId, 'late')]))).toMatchObject({ name: 'FencedError', reason: 'epoch', currentEpoch: 2 });
    expect(await rejection(a.toolCall(old, { toolCallId: 'c1', status: 'started' }))).toMatchObject({ name: 'FencedError', currentEpoch: 2 });
    const save = await rejection(
      memory.saveMessages({ threadId, resourceId: 'u1', ensureThread: true, messages: [textMessage(`m-${randomUUID()}`, 'x')], fence: { runId, epoch: 1 } }),
    );
    expect(FencedError.isInstance(save)).toBe(true);
    expect(await memory.getThread(threadId)).toBeNull();

    await memory.saveMessages({ threadId, resourceId: 'u1', ensureThread: true, messages: [textMessage(`m-${randomUUID()}`, 'kept')], fence: { runId, epoch: 2 } });
    expect(await memory.getMessages({ threadId })).toHaveLength(1);
    expect((await b.getRun(runId))?.lastSeq).toBe(1);
    expect((await b.toolCall(lease, { toolCallId: 'c1', status: 'started' })).epoch).toBe(2);
    await Promise.all([a.close(), b.close(), memory.close()]);
  });

  it('a run erased and created again under its id, claimed at the old owner’s epoch: the old owner’s memory save (fenced by its incarnation) is refused, nothing stored', async () => {
    const journal = journalOn();
    const memory = new PostgresStorage({ connectionString: connectionString(), schema });
    const runId = `run-${randomUUID()}`;
    const threadId = `thread-${randomUUID()}`;
    await journal.createRun({ runId, agentId: 'support', input: 'hi', threadId });
    const old = await journal.claim(runId, 'instance-a');
    await journal.deleteRun(runId, { force: true });
    await journal.createRun({ runId, agentId: 'support', input: 'hi', threadId });
    const again = await journal.claim(runId, 'instance-a');
    expect(again.lease.epoch).toBe(old.lease.epoch);
    const save = (incarnation: string | undefined) =>
      memory.saveMessages({ threadId, resourceId: 'u1', ensureThread: true, messages: [textMessage(`m-${randomUUID()}`, 'x')], fence: { runId, epoch: 1, ...(incarnation === undefined ? {} : { incarnation }) } });
    expect(await rejection(save(old.run.incarnation))).toMatchObject({ name: 'RunNotFoundError', runId });
    expect(await memory.getThread(threadId)).toBeNull();
    await save(again.run.incarnation);
    expect(await memory.getMessages({ threadId })).toHaveLength(1);
    await Promise.all([journal.close(), memory.close()]);
  });

  it('a memory save waiting in beforeCommit holds the run: a claim waits for it; a save whose owner idles past fenceTimeoutMs is cut off', async () => {
    const journal = journalOn();
    const memory = new PostgresStorage({ connectionString: connectionString(), schema, fenceTimeoutMs: 300 });
    const runId = `run-${randomUUID()}`;
    const threadId = `thread-${randomUUID()}`;
    await journal.createRun({ runId, agentId: 'support', input: 'hi' });
    const { lease } = await journal.claim(runId, 'owner-1');

    // 1. a save still working (not idle) holds FOR SHARE: the claim waits, then sees the saved messages committed first
    let release: () => void = () => undefined;
    let inside = false;
    const saving = memory.saveMessages({
      threadId, resourceId: 'u1', ensureThread: true, messages: [textMessage(`m-${randomUUID()}`, 'first')],
      fence: { runId, epoch: lease.epoch, beforeCommit: () => new Promise<void>((resolve) => { inside = true; release = resolve; }) },
    });
    await until(() => inside, 'the save inside its transaction');
    let claimedAt = 0;
    const claiming = journal.claim(runId, 'owner-2').then((claim) => { claimedAt = Date.now(); return claim; });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(claimedAt).toBe(0);
    const releasedAt = Date.now();
    release();
    await saving;
    const second = await claiming;
    expect(claimedAt).toBeGreaterThanOrEqual(releasedAt);
    expect(second.lease.epoch).toBe(2);
    expect(await memory.getMessages({ threadId })).toHaveLength(1);

    // 2. an owner paused inside its save (idle in transaction) is cut off by the server; nothing saved
    let wake: () => void = () => undefined;
    const paused = memory.saveMessages({
      threadId, resourceId: 'u1', messages: [textMessage(`m-${randomUUID()}`, 'second')],
      fence: { runId, epoch: 2, beforeCommit: () => new Promise<void>((resolve) => { wake = resolve; }) },
    });
    await new Promise((resolve) => setTimeout(resolve, 600));
    const third = await journal.claim(runId, 'owner-3');
    expect(third.lease.epoch).toBe(3);
    wake();
    const error = await rejection(paused);
    expect(error).toMatchObject({ name: 'StorageError', operation: 'saveMessages' });
    expect(await memory.getMessages({ threadId })).toHaveLength(1);
    await Promise.all([journal.close(), memory.close()]);
  });

  it('a save carrying a fence for an unknown run is RunNotFoundError, for an ended run FencedError ended', async () => {
    const journal = journalOn();
    const memory = new PostgresStorage({ connectionString: connectionString(), schema });
    const threadId = `thread-${randomUUID()}`;
    const save = (runId: string, epoch: number) =>
      memory.saveMessages({ threadId, resourceId: 'u1', ensureThread: true, messages: [textMessage(`m-${randomUUID()}`, 'x')], fence: { runId, epoch } });
    expect(await rejection(save(`run-${randomUUID()}`, 1))).toMatchObject({ name: 'RunNotFoundError' });
    const runId = `run-${randomUUID()}`;
    await journal.createRun({ runId, agentId: 'a', input: null });
    const { lease } = await journal.claim(runId, 'w');
    await journal.append(lease, [finish(runId)], commit('final'));
    expect(await rejection(save(runId, 1))).toMatchObject({ name: 'FencedError', reason: 'ended' });
    expect(await memory.getThread(threadId)).toBeNull();
    await Promise.all([journal.close(), memory.close()]);
  });

  it('one NOTIFY per flush carrying ids only: <schema>/<runId>/<lastSeq>; none with notify: false', async () => {
    const listener = new pg.Client({ connectionString: connectionString() });
    await listener.connect();
    const payloads: string[] = [];
    listener.on('notification', (message) => payloads.push(message.payload ?? ''));
    await listener.query('LISTEN rxagent_journal');
    const journal = journalOn();
    const quiet = journalOn({ notify: false });
    const runId = `run-${randomUUID()}`;
    await journal.createRun({ runId, agentId: 'a', input: null });
    const { lease } = await journal.claim(runId, 'w');
    await journal.append(lease, [start(runId), delta(runId, 'a'), delta(runId, 'b')]);
    await journal.append(lease, [], commit('step'));
    await quiet.append(lease, [delta(runId, 'c')]);
    await journal.append(lease, [finish(runId)], commit('final'));
    await until(() => payloads.length >= 2, 'the notifications');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(payloads.filter((payload) => payload.includes(runId))).toEqual([`${schema}/${runId}/3`, `${schema}/${runId}/5`]);
    await listener.end();
    await Promise.all([journal.close(), quiet.close()]);
  });

  it('a flush is one statement: chunks and commit land together or not at all', async () => {
    const journal = journalOn();
    const runId = `run-${randomUUID()}`;
    await journal.createRun({ runId, agentId: 'a', input: null });
    const { lease } = await journal.claim(runId, 'w');
    await journal.append(lease, [start(runId), delta(runId, 'x')], { ...commit('model'), toolCalls: [{ toolCallId: 'c9', toolName: 't', args: { a: 1 } }] });
    const counts = await sql(
      `SELECT (SELECT count(*) FROM "${schema}".run_chunks WHERE run_id = $1)::int AS chunks,
              (SELECT count(*) FROM "${schema}".run_commits WHERE run_id = $1)::int AS commits,
              (SELECT count(*) FROM "${schema}".run_tool_calls WHERE run_id = $1)::int AS calls,
              (SELECT last_seq FROM "${schema}".runs WHERE id = $1)::int AS last_seq`,
      [runId],
    );
    expect(counts.rows[0]).toEqual({ chunks: 2, commits: 1, calls: 1, last_seq: 2 });
    const stored = await sql(`SELECT chunk, type FROM "${schema}".run_chunks WHERE run_id = $1 ORDER BY seq`, [runId]);
    expect(stored.rows.map((row) => row.type)).toEqual(['start', 'text-delta']);
    expect(stored.rows[1].chunk).toBe(JSON.stringify(delta(runId, 'x')));
    await journal.close();
  });

  it('a schema_version newer than the build: JournalSchemaError on first use, nothing migrated or written', async () => {
    const newer = `rxagent_journal_${suffix}_newer`;
    schemas.add(newer);
    await sql(`CREATE SCHEMA "${newer}"`);
    await sql(`CREATE TABLE "${newer}".schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    await sql(`INSERT INTO "${newer}".schema_version (version) VALUES (99)`);
    const journal = journalOn({ schema: newer });
    const error = await rejection(journal.createRun({ runId: 'r', agentId: 'a', input: null }));
    expect(JournalSchemaError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ found: 99, known: 7, subject: 'schema' });
    const memory = new PostgresStorage({ connectionString: connectionString(), schema: newer });
    expect(JournalSchemaError.isInstance(await rejection(memory.getThread('t')))).toBe(true);
    const tables = await sql(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1`, [newer]);
    expect(tables.rows.map((row) => row.table_name)).toEqual(['schema_version']);
    await Promise.all([journal.close(), memory.close()]);
  });

  it('concurrent readers on two instances during writes see the same bytes', async () => {
    const a = journalOn();
    const b = journalOn();
    const runId = `run-${randomUUID()}`;
    await a.createRun({ runId, agentId: 'a', input: null });
    const { lease } = await a.claim(runId, 'w');
    const readers = [collect(a, runId), collect(b, runId), collect(b, runId)];
    for (let batch = 0; batch < 10; batch++) await a.append(lease, Array.from({ length: 30 }, (_, index) => delta(runId, `${batch}:${index}`)));
    await a.append(lease, [finish(runId)], commit('final'));
    await Promise.all(readers.map((reader) => reader.done));
    const texts = readers.map((reader) => reader.entries.map((entry) => `${entry.seq}|${entry.json}`).join('\n'));
    expect(readers[0]?.entries).toHaveLength(301);
    expect(new Set(texts).size).toBe(1);
    const replay = await lastValueFrom(b.read$(runId, { after: 299 }).pipe(toArray()));
    expect(replay.map((entry) => entry.seq)).toEqual([300, 301]);
    await Promise.all([a.close(), b.close()]);
  });
});
