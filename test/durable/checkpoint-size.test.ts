/**
 * Checkpoints that don't grow with steps × chunks (issue 32 §4), on the test PostgreSQL with a
 * real worker and pg-boss: a 16-step run (15 tool steps, then an answer) with a stateful output
 * processor stores commits of at most 4× its journal's bytes (both summed with octet_length /
 * pg_column_size in the database).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { filter, firstValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from 'rxagent';
import { createRunWorker, type RunWorker } from 'rxagent/durable';
import { PostgresRunJournal } from 'rxagent/storage/postgres';
import { scriptedModel } from 'rxagent/testing';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { statsProcessor } from './fixtures/matrix.js';

const suffix = randomUUID().slice(0, 6);
const schema = `rxagent_ckpt_${suffix}`;
const bossSchema = `pgboss_ckpt_${suffix}`;
let server: TestPostgres;
let db: pg.Pool;
let journal: PostgresRunJournal;
let boss: PgBoss;
let worker: RunWorker | undefined;

const words = 'the parcel left the depot this morning and should arrive before noon tomorrow'.split(' ');

beforeAll(async () => {
  server = await startTestPostgres();
  db = new pg.Pool({ connectionString: server.connectionString, max: 1 });
  journal = new PostgresRunJournal({ connectionString: server.connectionString, schema });
  boss = new PgBoss({ connectionString: server.connectionString, schema: bossSchema, superviseIntervalSeconds: 1, monitorIntervalSeconds: 1, maintenanceIntervalSeconds: 1 });
  boss.on('error', () => undefined);
  await boss.start();
}, 60_000);

afterAll(async () => {
  await worker?.close().catch(() => undefined);
  await boss?.stop({ graceful: false });
  await journal?.close();
  await db?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
  await db?.query(`DROP SCHEMA IF EXISTS "${bossSchema}" CASCADE`).catch(() => undefined);
  await db?.end();
  await server?.stop();
}, 60_000);

describe('checkpoint sizes', () => {
  it('a 16-step run with a stateful processor stores commits ≤ 4× its journal', async () => {
    const steps = 16;
    const agent = new Agent({
      id: 'tracker',
      maxSteps: steps,
      model: scriptedModel({
        rules: [
          {
            match: ({ toolResults }) => toolResults.length < steps - 1,
            reply: ({ toolResults }) => ({ text: `Step ${toolResults.length}: ${words.join(' ')}.`, toolCalls: [{ toolName: 'track', args: { step: toolResults.length } }] }),
          },
        ],
        fallback: { text: `All done: ${words.join(' ')}.` },
      }),
      tools: { track: { description: 'Tracks a parcel', inputSchema: { type: 'object', properties: { step: { type: 'number' } } }, execute: async ({ step }: { step: number }) => ({ step, where: 'depot' }) } },
      outputProcessors: [statsProcessor],
    });
    // after every commit (a row trigger, after the statement that wrote it and pruned the older ones):
    // the bytes of commit states the run then stores, and of its journal
    await journal.getRun('migrate-first');
    await db.query(`CREATE TABLE "${schema}".commit_sizes (no int, kind text, stored bigint, journal bigint)`);
    await db.query(`CREATE FUNCTION "${schema}".log_commit_size() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      INSERT INTO "${schema}".commit_sizes SELECT NEW.no, NEW.kind,
        (SELECT sum(octet_length(state::text)) FROM "${schema}".run_commits WHERE run_id = NEW.run_id),
        (SELECT sum(octet_length(chunk)) FROM "${schema}".run_chunks WHERE run_id = NEW.run_id);
      RETURN NULL; END $$`);
    await db.query(`CREATE TRIGGER log_commit_size AFTER INSERT ON "${schema}".run_commits FOR EACH ROW EXECUTE FUNCTION "${schema}".log_commit_size()`);
    worker = createRunWorker({ journal, boss, agents: [agent], concurrency: 1, queue: { pollingIntervalSeconds: 0.5 }, retention: false });
    await worker.start();
    const done = firstValueFrom(worker.events$.pipe(filter((event) => event.type === 'completed')));
    const { runId } = await worker.submit('tracker', 'Where is my parcel?');
    await done;
    const steps_ = await db.query<{ steps: number }>(`SELECT count(*)::int AS steps FROM "${schema}".run_chunks WHERE run_id = $1 AND type = 'step-start'`, [runId]);
    expect(steps_.rows[0]?.steps).toBe(steps);
    const log = (await db.query<{ no: number; kind: string; stored: string; journal: string }>(`SELECT no, kind, stored, journal FROM "${schema}".commit_sizes ORDER BY no`)).rows.map(
      (row) => ({ no: row.no, kind: row.kind, stored: Number(row.stored), journal: Number(row.journal) }),
    );
    const end = (await db.query<{ stored: number; stored_size: number; journal: number; journal_size: number }>(
      `SELECT (SELECT coalesce(sum(octet_length(state::text)), 0)::int FROM "${schema}".run_commits WHERE run_id = $1) AS stored,
              (SELECT coalesce(sum(pg_column_size(state)), 0)::int FROM "${schema}".run_commits WHERE run_id = $1) AS stored_size,
              (SELECT sum(octet_length(chunk))::int FROM "${schema}".run_chunks WHERE run_id = $1) AS journal,
              (SELECT sum(pg_column_size(chunk))::int FROM "${schema}".run_chunks WHERE run_id = $1) AS journal_size`,
      [runId],
    )).rows[0] as { stored: number; stored_size: number; journal: number; journal_size: number };
    // the largest snapshot is the last one before the final commit (whose state is null)
    const last = log.filter((entry) => entry.kind !== 'final').at(-1) as { no: number; stored: number; journal: number };
    const peak = Math.max(...log.map((entry) => entry.stored / entry.journal));
    console.log(
      `checkpoint sizes: ${log.length} commits; before the final commit (no ${last.no}) stored ${last.stored} B against a journal of ${last.journal} B (${(last.stored / last.journal).toFixed(2)}×);` +
        ` at the end ${end.stored} B (${end.stored_size} B by pg_column_size) against ${end.journal} B (${end.journal_size} B); largest ratio over the run ${peak.toFixed(2)}× ` +
        `(${log.map((entry) => `${entry.kind}:${entry.stored}/${entry.journal}`).join(' ')})`,
    );
    expect(last.stored).toBeLessThanOrEqual(4 * last.journal);
    expect(end.stored).toBeLessThanOrEqual(4 * end.journal);
  }, 60_000);
});
