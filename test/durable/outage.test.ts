/**
 * Outages don't burn a run's attempts (issue 32 §1): the worker's journal, memory and pg-boss all
 * reach PostgreSQL through a TCP proxy (test/support/tcp-proxy.ts) that resets every connection
 * every 250 ms, and refuses new ones for 100 ms after each cut, for 4 s while runs stream. With
 * `retryLimit: 0` (an attempt spent is a run given up), every run completes, once, with the
 * crash-free client view and memory; the tool's effects follow its ledger rule (idempotent: at
 * most once more, with the same key, when a cut hid its outcome).
 */
import { randomUUID } from 'node:crypto';
import { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRunWorker, type RunWorker, type RunWorkerEvent } from 'rxagent/durable';
import { PostgresRunJournal, PostgresStorage } from 'rxagent/storage/postgres';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait-for.js';
import { effects, lookAgent, lookOutcome } from './fixtures/look-agent.js';

const suffix = randomUUID().slice(0, 6);
const schema = `rxagent_outage_${suffix}`;
const bossSchema = `pgboss_outage_${suffix}`;
const RUNS = 8;
const OUTAGE_MS = 4_000;
const CUT_EVERY_MS = 250;

let server: TestPostgres;
let proxy: TcpProxy;
/** The test's own view of the database (never cut). */
let direct: { journal: PostgresRunJournal; storage: PostgresStorage };
/** The worker's (through the proxy). */
let proxied: { journal: PostgresRunJournal; storage: PostgresStorage; boss: PgBoss };
let worker: RunWorker;
const events: RunWorkerEvent[] = [];
const bossErrors: unknown[] = [];

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
  // as the docs say: an unhandled `error` event of pg-boss ends the process at the first blip
  proxied.boss.on('error', (error) => bossErrors.push(error));
  await proxied.boss.start();
  worker = createRunWorker({
    journal: proxied.journal,
    boss: proxied.boss,
    agents: [lookAgent('outage-looker', proxied.storage, 40)],
    concurrency: RUNS,
    queue: { pollingIntervalSeconds: 0.5, retryLimit: 0 },
  });
  worker.events$.subscribe((event) => events.push(event));
  await worker.start();
}, 60_000);

afterAll(async () => {
  await worker?.close().catch(() => undefined);
  await proxied?.boss.stop({ graceful: false }).catch(() => undefined);
  await proxied?.journal.close();
  await proxied?.storage.close();
  await direct?.journal.close();
  await direct?.storage.close();
  await proxy?.close();
  await server?.stop();
}, 60_000);

const outcomeOf = (runId: string) => lookOutcome(direct.journal, direct.storage, runId);

const ended = (runId: string): boolean => events.some((event) => event.type === 'completed' && event.runId === runId);

describe('connections cut every 250 ms for 4 s', () => {
  it('every run completes once, with the crash-free client view and memory; no attempt spent', async () => {
    const baselineId = `outage-base-${suffix}`;
    await worker.submit('outage-looker', 'Please look', { runId: baselineId, memory: { thread: `t-${baselineId}`, resource: 'u1' }, messageId: 'm-1' });
    await waitFor(() => ended(baselineId), 'the crash-free run', 30_000);
    const baseline = await outcomeOf(baselineId);
    expect(baseline.types.at(-1)).toBe('finish');

    const runIds = Array.from({ length: RUNS }, (_, index) => `outage-${index}-${suffix}`);
    for (const runId of runIds) await worker.submit('outage-looker', 'Please look', { runId, memory: { thread: `t-${runId}`, resource: 'u1' }, messageId: 'm-1' });
    const started = Date.now();
    while (Date.now() - started < OUTAGE_MS) {
      await new Promise((resolve) => setTimeout(resolve, CUT_EVERY_MS));
      proxy.cut();
      proxy.refuse(100);
    }
    await waitFor(() => runIds.every(ended), 'every run ended', 60_000).catch(async (error: unknown) => {
      for (const runId of runIds) {
        const run = await direct.journal.getRun(runId);
        const seen = events.filter((event) => event.runId === runId).map((event) => `${event.type}${event.type === 'committed' ? ` ${event.commit}` : ''}${event.type === 'failed' ? ` ${String((event.error as Error)?.message)}` : ''}`);
        console.log('outage: not ended', runId, run?.status, run?.epoch, seen.join(' | '));
      }
      throw error;
    });

    expect(proxy.stats.cut).toBeGreaterThan(RUNS); // the cuts hit live connections
    const failedAttempts = events.filter((event) => event.type === 'failed' && runIds.includes(event.runId)).length;
    for (const runId of runIds) {
      const completions = events.filter((event) => event.type === 'completed' && event.runId === runId);
      expect(completions.map((event) => event.type === 'completed' && event.status), runId).toEqual(['completed']);
      expect(await direct.journal.getRun(runId), runId).toMatchObject({ status: 'completed', terminal: 'finish' });
      const outcome = await outcomeOf(runId);
      expect(outcome.types.filter((type) => type === 'finish' || type === 'error' || type === 'abort'), runId).toEqual(['finish']);
      expect(outcome.chunks, runId).toEqual(baseline.chunks);
      expect(outcome.memory, runId).toEqual(baseline.memory);
      // the idempotent tool ran once, and once more at most for each attempt that failed (one cut
      // inside it each), always under the same key: one effect
      const keys = effects.filter((key) => key.startsWith(`${runId}:`));
      const failedOfRun = events.filter((event) => event.type === 'failed' && event.runId === runId).length;
      expect(keys.length, runId).toBeGreaterThanOrEqual(1);
      expect(keys.length, `${runId}: executions, ${failedOfRun} attempts failed`).toBeLessThanOrEqual(1 + failedOfRun);
      expect(new Set(keys).size, runId).toBe(1);
    }
    // the figures, for the report
    console.log(`outage: ${proxy.stats.cut} connections cut, ${proxy.stats.refused} refused, ${failedAttempts} attempts failed and claimed again, ${bossErrors.length} pg-boss error events`);
  }, 120_000);
});
