/**
 * An outage longer than the job's heartbeat does not spend the run's attempts (issue 32 §1): the
 * database is unreachable for 14 s (every connection cut, new ones refused) while runs are open
 * on a worker whose pg-boss jobs have a 10 s heartbeat (pg-boss's minimum). Another instance that
 * still reaches the database (here a pg-boss supervising on a direct connection; without it, the
 * worker's own supervisor and its heartbeat race once the database is back) fails each job's
 * attempt when its heartbeat has gone stale; with `retryLimit: 0`
 * that attempt was the run's last, and the run ended `failed` with `RunAttemptsExhaustedError`.
 * Now the owner notes that the infrastructure, not the run, failed its attempt, the give-up refunds
 * it, and every run completes once with the crash-free client view and memory.
 */
import { randomUUID } from 'node:crypto';
import { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRunWorker, type RunWorker, type RunWorkerEvent } from 'rxagent/durable';
import { PostgresRunJournal, PostgresStorage } from 'rxagent/storage/postgres';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait-for.js';
import { DEFAULT_QUEUE_PREFIX, queueNameOf } from '../../src/durable/internal/queues.js';
import { jobIdIn } from './fixtures/run-jobs.js';
import { effects, lookAgent, lookOutcome } from './fixtures/look-agent.js';

const suffix = randomUUID().slice(0, 6);
const schema = `rxagent_long_outage_${suffix}`;
const bossSchema = `pgboss_long_outage_${suffix}`;
const RUNS = 4;
const OUTAGE_MS = 14_000;

let server: TestPostgres;
let proxy: TcpProxy;
let direct: { journal: PostgresRunJournal; storage: PostgresStorage };
let proxied: { journal: PostgresRunJournal; storage: PostgresStorage; boss: PgBoss };
let worker: RunWorker;
/** Another instance of the deployment that still reaches the database: its supervisor fails jobs whose heartbeat went stale. */
let supervisor: PgBoss;
const events: RunWorkerEvent[] = [];

beforeAll(async () => {
  server = await startTestPostgres();
  proxy = await startTcpProxy(server.connectionString);
  direct = {
    journal: new PostgresRunJournal({ connectionString: server.connectionString, schema }),
    storage: new PostgresStorage({ connectionString: server.connectionString, schema }),
  };
  const timeouts = { statementTimeoutMs: 2_000, connectionTimeoutMs: 1_000 };
  proxied = {
    journal: new PostgresRunJournal({ connectionString: proxy.connectionString, schema, ...timeouts }),
    storage: new PostgresStorage({ connectionString: proxy.connectionString, schema, ...timeouts }),
    boss: new PgBoss({ connectionString: proxy.connectionString, schema: bossSchema, superviseIntervalSeconds: 1, monitorIntervalSeconds: 1 }),
  };
  proxied.boss.on('error', () => undefined);
  await proxied.boss.start();
  supervisor = new PgBoss({ connectionString: server.connectionString, schema: bossSchema, superviseIntervalSeconds: 1, monitorIntervalSeconds: 1 });
  supervisor.on('error', () => undefined);
  await supervisor.start();
  worker = createRunWorker({
    journal: proxied.journal,
    boss: proxied.boss,
    agents: [lookAgent('long-outage-looker', proxied.storage, 150)],
    concurrency: RUNS,
    queue: { pollingIntervalSeconds: 0.5, retryLimit: 0, heartbeatSeconds: 10 },
  });
  worker.events$.subscribe((event) => events.push(event));
  await worker.start();
}, 60_000);

afterAll(async () => {
  await worker?.close().catch(() => undefined);
  await proxied?.boss.stop({ graceful: false }).catch(() => undefined);
  await supervisor?.stop({ graceful: false }).catch(() => undefined);
  await proxied?.journal.close();
  await proxied?.storage.close();
  await direct?.journal.close();
  await direct?.storage.close();
  await proxy?.close();
  await server?.stop();
}, 60_000);

const outcomeOf = (runId: string) => lookOutcome(direct.journal, direct.storage, runId);

const ended = (runId: string): boolean => events.some((event) => event.type === 'completed' && event.runId === runId);

describe(`the database unreachable for ${OUTAGE_MS / 1000} s, longer than the jobs' 10 s heartbeat`, () => {
  it('every open run completes once with the crash-free client view and memory; no attempt of the run is spent', async () => {
    const baselineId = `long-outage-base-${suffix}`;
    await worker.submit('long-outage-looker', 'Please look', { runId: baselineId, memory: { thread: `t-${baselineId}`, resource: 'u1' }, messageId: 'm-1' });
    await waitFor(() => ended(baselineId), 'the crash-free run', 30_000);
    const baseline = await outcomeOf(baselineId);
    expect(baseline.types.at(-1)).toBe('finish');

    const runIds = Array.from({ length: RUNS }, (_, index) => `long-outage-${index}-${suffix}`);
    for (const runId of runIds) await worker.submit('long-outage-looker', 'Please look', { runId, memory: { thread: `t-${runId}`, resource: 'u1' }, messageId: 'm-1' });
    // every run open (claimed, streaming its first step) when the database goes away
    await waitFor(() => runIds.every((runId) => events.some((event) => event.type === 'claimed' && event.runId === runId)), 'every run claimed', 30_000);
    proxy.cut();
    proxy.refuse(OUTAGE_MS);
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    await waitFor(() => runIds.every(ended), 'every run ended', 90_000);

    // the outage cost attempts: pg-boss failed the open runs' first jobs, their owners noted it
    const losses = await Promise.all(runIds.map((runId) => direct.journal.infrastructureLosses(runId)));
    const firstJobs = await Promise.all(runIds.map(async (runId) => proxied.boss.getJobById(queueNameOf(DEFAULT_QUEUE_PREFIX, 'long-outage-looker'), await jobIdIn(direct.journal, runId))));
    console.log(`long outage: attempts noted ${JSON.stringify(losses)}; first jobs ${firstJobs.map((job) => job?.state).join(', ')}`);
    expect(firstJobs.map((job) => job?.state)).toEqual(runIds.map(() => 'failed')); // pg-boss took each attempt (heartbeat stale)…
    expect(losses).toEqual(runIds.map(() => ['0:0'])); // …and each owner noted the loss as the infrastructure's
    for (const runId of runIds) {
      const completions = events.filter((event) => event.type === 'completed' && event.runId === runId);
      expect(completions.map((event) => event.type === 'completed' && event.status), runId).toEqual(['completed']);
      expect(await direct.journal.getRun(runId), runId).toMatchObject({ status: 'completed', terminal: 'finish' });
      const outcome = await outcomeOf(runId);
      expect(outcome.types.filter((type) => type === 'finish' || type === 'error' || type === 'abort'), runId).toEqual(['finish']);
      expect(outcome.chunks, runId).toEqual(baseline.chunks);
      expect(outcome.memory, runId).toEqual(baseline.memory);
      expect(new Set(effects.filter((key) => key.startsWith(`${runId}:`))).size, runId).toBe(1);
    }
  }, 180_000);
});
