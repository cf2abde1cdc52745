/**
 * Takeovers compose (issue 32 §1), on the test PostgreSQL with a real worker and pg-boss: 1–3
 * kills at random fault points (a throwing `faultPoint` stops the owner there, as a crash would;
 * kill i stops the i-th owner at the n-th time it passes its point), then the run goes on under
 * later owners. Every reader keeps the crash-free run's client view (the journal with every
 * `retry` step reset), memory holds the exchange once, and the tool ran by its ledger rule
 * (idempotent: once more at most per kill, with the same key). Its first step calls the tool twice, one call at a time, so tool results are journaled past the model commit.
 *
 * Each case is a real run and every kill one pg-boss retry, so the case count is
 * `RXAGENT_PROPERTY_RUNS / 200` (5 in CI, 100 in a soak), at least 3.
 *
 * Also: `faultPoint` tells the step a point is in — `chunks-flushed` while step 1 streams says 1.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { PgBoss } from 'pg-boss';
import { filter, firstValueFrom, type Observable } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRunWorker, type FaultPointInfo, type RunFaultPoint, type RunWorker, type RunWorkerEvent } from 'rxagent/durable';
import { PostgresRunJournal, PostgresStorage } from 'rxagent/storage/postgres';
import { checkProperty, PROPERTY_RUNS } from '../reliability/support/property.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { effects, lookAgent, perRunIds } from './fixtures/look-agent.js';
import { effectiveChunks, journalEntries, memoryShape, normalise } from './fixtures/matrix-checks.js';

const suffix = randomUUID().slice(0, 6);
const schema = `rxagent_compose_${suffix}`;
const bossSchema = `pgboss_compose_${suffix}`;
const CASES = Math.max(3, Math.round(PROPERTY_RUNS / 200));

let server: TestPostgres;
let journal: PostgresRunJournal;
let storage: PostgresStorage;
let boss: PgBoss;
let worker: RunWorker;

/** A kill: the owner stops at the `nth` time it passes `point`. */
interface Kill {
  point: RunFaultPoint;
  nth: number;
}
/** The kills of each run (kill i for the owner at epoch i + 1), and the fault points seen. */
const plans = new Map<string, { kills: Kill[]; passed: Map<string, number>; killed: string[] }>();
const flushes: Array<{ runId: string; point: RunFaultPoint; info: FaultPointInfo }> = [];

const faultPoint = (point: RunFaultPoint, info: FaultPointInfo): void => {
  flushes.push({ runId: info.runId, point, info });
  const plan = plans.get(info.runId);
  const kill = plan?.kills[info.epoch - 1];
  if (plan === undefined || kill === undefined || kill.point !== point) return;
  const key = `${info.epoch}:${point}`;
  const count = (plan.passed.get(key) ?? 0) + 1;
  plan.passed.set(key, count);
  if (count === kill.nth) {
    plan.killed.push(`${point}#${kill.nth}@${info.epoch}`);
    throw new Error(`killed at ${point} (epoch ${info.epoch})`);
  }
};

const until = <T extends RunWorkerEvent['type']>(events$: Observable<RunWorkerEvent>, type: T, runId: string) =>
  firstValueFrom(events$.pipe(filter((event): event is Extract<RunWorkerEvent, { type: T }> => event.type === type && event.runId === runId)));

async function lookRun(runId: string, kills: Kill[]): Promise<{ status: string; chunks: unknown; memory: unknown; killed: string[] }> {
  const plan = { kills, passed: new Map<string, number>(), killed: [] as string[] };
  plans.set(runId, plan);
  const completed = until(worker.events$, 'completed', runId);
  await worker.submit('composer', 'Please look', { runId, memory: { thread: `t-${runId}`, resource: 'u1' }, messageId: 'm-1' });
  const { status } = await completed;
  const entries = await journalEntries(journal, runId);
  return {
    status,
    chunks: perRunIds(normalise(effectiveChunks(entries), runId)),
    memory: perRunIds(memoryShape(await storage.getMessages({ threadId: `t-${runId}` }), runId)),
    killed: plan.killed,
  };
}

beforeAll(async () => {
  server = await startTestPostgres();
  journal = new PostgresRunJournal({ connectionString: server.connectionString, schema });
  storage = new PostgresStorage({ connectionString: server.connectionString, schema });
  boss = new PgBoss({ connectionString: server.connectionString, schema: bossSchema, superviseIntervalSeconds: 1, monitorIntervalSeconds: 1 });
  boss.on('error', () => undefined);
  await boss.start();
  worker = createRunWorker({ journal, boss, agents: [lookAgent('composer', storage, 30, { calls: 2, toolDelayMs: 60 })], concurrency: 2, faultPoint, queue: { pollingIntervalSeconds: 0.5 } });
  await worker.start();
}, 60_000);

afterAll(async () => {
  await worker?.close().catch(() => undefined);
  await boss?.stop({ graceful: false });
  await journal?.close();
  await storage?.close();
  await server?.stop();
}, 60_000);

const points: RunFaultPoint[] = ['chunks-flushed', 'model-committed', 'tool-started', 'tool-returned', 'step-committed', 'finalizing', 'memory-save'];
const kill = fc.record({ point: fc.constantFrom(...points), nth: fc.integer({ min: 1, max: 2 }) });

describe('takeovers compose', () => {
  it(`1–3 kills at random fault points: the crash-free client view and memory once (${CASES} cases)`, async () => {
    const crashFree = await lookRun(`compose-base-${suffix}`, []);
    expect(crashFree.status).toBe('completed');
    // the case first: a second takeover after the same model commit
    // (the owner dies after the 2nd call ran, the 1st call's result journaled; its successor writes
    // the marker and the step again, and dies as it runs the 2nd call again)
    const twice = await lookRun(`compose-twice-${suffix}`, [{ point: 'tool-returned', nth: 2 }, { point: 'tool-started', nth: 1 }]);
    expect(twice.killed).toEqual(['tool-returned#2@1', 'tool-started#1@2']);
    expect(twice.chunks).toEqual(crashFree.chunks);
    expect(twice.memory).toEqual(crashFree.memory);
    await checkProperty('durable: composed takeovers keep the client view', fc.array(kill, { minLength: 1, maxLength: 3 }), async (kills) => {
      const runId = `compose-${randomUUID().slice(0, 8)}`;
      const result = await lookRun(runId, kills);
      const context = `kills ${JSON.stringify(kills)}, killed ${result.killed.join(', ')}`;
      expect(result.status, context).toBe('completed');
      expect(result.chunks, context).toEqual(crashFree.chunks);
      expect(result.memory, context).toEqual(crashFree.memory);
      const keys = effects.filter((key) => key.startsWith(`${runId}:`));
      expect(new Set(keys).size, context).toBe(2);
      expect(keys.length, context).toBeLessThanOrEqual(2 + result.killed.length);
    }, CASES);
  }, 300_000);
});

describe('faultPoint tells the step a point is in', () => {
  it('chunks-flushed while step 1 streams says stepNumber 1 (not the last commit\'s 0)', async () => {
    const runId = `steps-${suffix}`;
    await lookRun(runId, []);
    const seen = flushes.filter((flush) => flush.runId === runId).map(({ point, info }) => `${point} ${info.stepNumber}`);
    const afterStep0 = seen.slice(seen.indexOf('step-committed 0') + 1);
    expect(seen.indexOf('step-committed 0')).toBeGreaterThan(-1);
    expect(afterStep0.filter((line) => line.startsWith('chunks-flushed')).length).toBeGreaterThan(0);
    expect(afterStep0.filter((line) => line.startsWith('chunks-flushed'))).toEqual(afterStep0.filter((line) => line === 'chunks-flushed 1'));
    expect(seen.filter((line) => line.startsWith('chunks-flushed')).slice(0, 1)).toEqual(['chunks-flushed 0']);
  });
});
