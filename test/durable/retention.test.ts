/**
 * Long runs and old runs (issue 32 §4) in the durable layer, on the test PostgreSQL and a real
 * pg-boss: the worker schedules the journal's retention and purges when it fires; readers answer
 * 410 for an expired run and 404 for an unknown or erased one; the fencing probe leaves no run
 * behind (and erases the one earlier versions left `running`).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from 'rxagent';
import { createRunWorker, journalStreamResponse, type RunWorker } from 'rxagent/durable';
import { resumeUIMessageStreamResponse } from 'rxagent/ai-sdk';
import { Memory } from 'rxagent/memory';
import { PostgresRunJournal, PostgresStorage } from 'rxagent/storage/postgres';
import { scriptedModel } from 'rxagent/testing';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { waitFor } from '../support/wait-for.js';
import { commit, finish, start } from '../storage/journal-suite.js';

const suffix = randomUUID().slice(0, 6);
const schema = `rxagent_retention_${suffix}`;
const bossSchema = `pgboss_retention_${suffix}`;
let server: TestPostgres;
let db: pg.Pool;
let journal: PostgresRunJournal;
let storage: PostgresStorage;
let boss: PgBoss;
const workers: RunWorker[] = [];

const agent = (): Agent =>
  new Agent({ id: 'support', model: scriptedModel({ rules: [], fallback: { text: 'Hello.' } }), memory: new Memory({ storage }) });

beforeAll(async () => {
  server = await startTestPostgres();
  db = new pg.Pool({ connectionString: server.connectionString, max: 2 });
  // everything ended expires at once; rows stay an hour (410, not 404)
  journal = new PostgresRunJournal({ connectionString: server.connectionString, schema, chunkRetentionSeconds: 0, runRetentionSeconds: 3600 });
  storage = new PostgresStorage({ connectionString: server.connectionString, schema });
  boss = new PgBoss({ connectionString: server.connectionString, schema: bossSchema, superviseIntervalSeconds: 1, monitorIntervalSeconds: 1, maintenanceIntervalSeconds: 1 });
  boss.on('error', () => undefined);
  await boss.start();
}, 60_000);

afterAll(async () => {
  for (const worker of workers) await worker.close().catch(() => undefined);
  await boss?.stop({ graceful: false });
  await journal?.close();
  await storage?.close();
  await db?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
  await db?.query(`DROP SCHEMA IF EXISTS "${bossSchema}" CASCADE`).catch(() => undefined);
  await db?.end();
  await server?.stop();
}, 60_000);

/** A run that ended (one start, one finish). */
async function endedRun(runId: string): Promise<void> {
  await journal.createRun({ runId, agentId: 'support', resourceId: 'u1', input: null });
  const { lease } = await journal.claim(runId, 'test');
  await journal.append(lease, [start(runId)], commit('input'));
  await journal.append(lease, [finish(runId)], commit('final'));
}

const probeRuns = async (): Promise<Array<{ id: string; status: string }>> =>
  (await db.query<{ id: string; status: string }>(`SELECT id, status FROM "${schema}".runs WHERE id LIKE 'rxagent.fence-probe%'`)).rows;

describe('the fencing probe', () => {
  it('start() checks the memory fence and leaves no probe run (nor the one earlier versions left running)', async () => {
    // what an earlier version left: one probe run, claimed by every check, `running` for good
    await journal.createRun({ runId: 'rxagent.fence-probe', agentId: 'rxagent.fence-probe', input: null });
    await journal.claim('rxagent.fence-probe', 'old-worker.probe');
    expect(await probeRuns()).toEqual([{ id: 'rxagent.fence-probe', status: 'running' }]);
    const worker = createRunWorker({ journal, boss, agents: [agent()], concurrency: 0, retention: false });
    workers.push(worker);
    await worker.start();
    expect(await probeRuns()).toEqual([]);
    expect(await journal.getRun('rxagent.fence-probe')).toBeNull();
    // nothing a listing shows either (the inspector's list of runs)
    expect((await journal.listRuns({ limit: 100 })).filter((run) => run.runId.startsWith('rxagent.fence-probe'))).toEqual([]);
  });
});

describe('retention through pg-boss', () => {
  it('every worker schedules the purge on one queue; a worker purges when it fires: the ended run expires', async () => {
    const runId = `ended-${randomUUID()}`;
    await endedRun(runId);
    const worker = createRunWorker({ journal, boss, agents: [agent()], concurrency: 1, queue: { pollingIntervalSeconds: 0.5 }, retention: { cron: '*/5 * * * *', batchSize: 2 } });
    workers.push(worker);
    await worker.start();
    const schedules = await boss.getSchedules('rxagent.retention');
    expect(schedules.map((entry) => [entry.name, entry.cron])).toEqual([['rxagent.retention', '*/5 * * * *']]);
    expect((await boss.getQueue('rxagent.retention'))?.policy).toBe('exclusive');
    expect((await journal.getRun(runId))?.expiredAt).toBeUndefined();
    // what the schedule sends at its tick (a minute's wait in a test is not needed to see the wiring)
    await boss.send('rxagent.retention', {});
    // the purge marks the run expired, then removes its rows in batches of 2: wait for both
    const left = async (): Promise<unknown> =>
      (await db.query(`SELECT (SELECT count(*) FROM "${schema}".run_chunks WHERE run_id = $1)::int AS chunks, (SELECT count(*) FROM "${schema}".run_commits WHERE run_id = $1)::int AS commits`, [runId])).rows[0];
    let expired = false;
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      expired = (await journal.getRun(runId))?.expiredAt !== undefined;
      if (expired && JSON.stringify(await left()) === JSON.stringify({ chunks: 0, commits: 0 })) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(expired).toBe(true);
    expect(await left()).toEqual({ chunks: 0, commits: 0 });
    await worker.close();
  }, 30_000);
});

describe('readers of old runs', () => {
  it('410 for an expired run, 404 for an unknown one and for an erased one (SSE and UI readers)', async () => {
    const runId = `old-${randomUUID()}`;
    await endedRun(runId);
    const before = await journalStreamResponse(journal, runId, { unsafeNoAuthorization: true });
    expect(before.status).toBe(200);
    await before.body?.cancel();
    await journal.purgeExpired();
    const sse = await journalStreamResponse(journal, runId, { unsafeNoAuthorization: true });
    const ui = await resumeUIMessageStreamResponse(journal, runId, { unsafeNoAuthorization: true });
    const uiAfter = await resumeUIMessageStreamResponse(journal, runId, { unsafeNoAuthorization: true, after: '1' });
    expect([sse.status, ui.status, uiAfter.status]).toEqual([410, 410, 410]);
    expect(((await sse.json()) as { error: { name: string } }).error.name).toBe('RunNotFoundError');
    // an owner-checking authorization still runs first: another owner gets 404, not 410
    const refused = await journalStreamResponse(journal, runId, { authorize: (run) => run.resourceId === 'someone-else' });
    expect(refused.status).toBe(404);
    const unknown = await journalStreamResponse(journal, `never-${randomUUID()}`, { unsafeNoAuthorization: true });
    expect(unknown.status).toBe(404);
    expect(await journal.deleteRun(runId)).toBe(true);
    const erased = await resumeUIMessageStreamResponse(journal, runId, { unsafeNoAuthorization: true });
    expect(erased.status).toBe(404);
  });
});
