/**
 * Takeover by the owner's database session, with real worker processes (forked with `--import
 * tsx`) on the test PostgreSQL. Two workers run the same agent; whichever claims the run first
 * stops itself at the run's second flush of step 0, and the other is its rescuer.
 *
 * - SIGKILL: the dead process's connections close, its owner session (a session-level lock) ends,
 *   and the rescuer's sweep fails the dead owner's job attempt at once: with `heartbeatSeconds: 30`
 *   the rescuer claims the run well before the heartbeat could (asserted < 10 s, not timed finer:
 *   the figures are `bench:durable -- --worker`'s), and the run completes, one attempt spent.
 * - SIGSTOP: a frozen owner's session is alive, so its run never looks like a dead owner's; the
 *   heartbeat takes it over as before, and the owner, continued, is fenced.
 * - A blip of an owner's session (its backend terminated): the lock is taken again, and the run
 *   completes once whether or not the rescuer took it over meanwhile (the epoch fences the owner).
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRunWorker, type RunWorker } from 'rxagent/durable';
import type { PostgresRunJournal, PostgresStorage } from 'rxagent/storage/postgres';
import { queueNameOf } from '../../src/durable/internal/queues.js';
import { jobIdIn } from './fixtures/run-jobs.js';
import type { TestPostgres } from '../support/postgres.js';
import { settle, waitFor } from '../support/wait-for.js';
import { matrixAgent, type KillPlan, type MatrixCase } from './fixtures/matrix.js';
import { closeDurableDb, openDurableDb } from './fixtures/durable-db.js';
import { WorkerProcess } from './fixtures/worker-processes.js';

const suffix = randomUUID().slice(0, 6);
const schema = `rxagent_session_${suffix}`;
const bossSchema = `pgboss_session_${suffix}`;
const killed: MatrixCase = { id: `killed-${suffix}`, toolConcurrency: 1, plan: { at: 'chunks-flushed', step: 0, nth: 2, signal: 'SIGKILL' } };
const frozen: MatrixCase = { id: `frozen-${suffix}`, toolConcurrency: 1, plan: { at: 'chunks-flushed', step: 0, nth: 2, signal: 'SIGSTOP' } };
const blipped: MatrixCase = { id: `blipped-${suffix}`, toolConcurrency: 1 };
const prompt = 'How much do the north, south and east stores have?';

let server: TestPostgres;
let db: pg.Pool;
let journal: PostgresRunJournal;
let storage: PostgresStorage;
let boss: PgBoss;
const submitters: RunWorker[] = [];
const processes: WorkerProcess[] = [];

/** A submit-only worker whose jobs carry `heartbeatSeconds` (the sender's policies go on the job). */
async function submitter(matrixCase: MatrixCase, heartbeatSeconds: number): Promise<RunWorker> {
  const never = async (): Promise<never> => new Promise<never>(() => undefined);
  const worker = createRunWorker({
    journal,
    boss,
    concurrency: 0,
    queue: { heartbeatSeconds },
    agents: [matrixAgent(matrixCase, { db, storage, wordDelayMs: 0, plans: new Map<string, KillPlan>(), stop: never })],
  });
  await worker.start();
  submitters.push(worker);
  return worker;
}

function pair(matrixCase: MatrixCase, heartbeatSeconds: number, wordDelayMs = 25, lostOwnerSweep?: { graceMs: number }): WorkerProcess[] {
  const pairOf = ['a', 'b'].map(
    (name) =>
      new WorkerProcess({
        connectionString: server.connectionString,
        schema,
        bossSchema,
        workerId: `${matrixCase.id}-${name}`,
        cases: [matrixCase],
        concurrency: 1,
        wordDelayMs,
        poolMax: 3,
        heartbeatSeconds,
        ...(lostOwnerSweep === undefined ? {} : { lostOwnerSweep }),
      }),
  );
  processes.push(...pairOf);
  return pairOf;
}

async function submit(worker: RunWorker, matrixCase: MatrixCase): Promise<string> {
  const runId = `${matrixCase.id}.1`;
  await worker.submit(matrixCase.id, prompt, {
    runId,
    memory: { thread: `thread-${runId}`, resource: 'user-1' },
    requestContext: { caseId: matrixCase.id },
    providerOptions: { matrix: { caseId: matrixCase.id, runId } },
  });
  return runId;
}

/** The pid of the session holding `owner`'s lock, or undefined. */
async function lockHolder(owner: string): Promise<number | undefined> {
  const { rows } = await db.query<{ pid: number }>(
    `SELECT l.pid FROM pg_locks l WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted
       AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended('rxagent.owner/' || $1::text || '/' || $2::text, 0)`,
    [schema, owner],
  );
  return rows[0]?.pid;
}

beforeAll(async () => {
  ({ server, db, journal, storage, boss } = await openDurableDb({ schema, bossSchema, poolMax: 3, bossMax: 2 }));
}, 60_000);

afterAll(async () => {
  await Promise.all(submitters.map((worker) => worker.close()));
  await closeDurableDb({ processes, boss, journal, storage, db, server });
}, 60_000);

describe('takeover by the owner session', () => {
  it('SIGKILL: the rescuer claims the run long before the 30 s heartbeat, and it completes with one attempt spent', async () => {
    const sender = await submitter(killed, 30);
    const workers = pair(killed, 30);
    await Promise.all(workers.map((worker) => worker.ready));
    const runId = await submit(sender, killed);
    await waitFor(() => workers.some((worker) => worker.stops.length > 0), 'a worker holding the run at its kill point', 60_000);
    const victim = workers.find((worker) => worker.stops.length > 0)!;
    const rescuer = workers.find((worker) => worker !== victim)!;
    const [stop] = await victim.waitForStops(1);
    expect((await victim.exited).signal).toBe('SIGKILL');
    // well before the heartbeat (30 s): the old takeover would time this wait out
    const claimed = await rescuer.waitForEvent('the rescuer claim', (event) => event.type === 'claimed' && event.runId === runId, 20_000);
    expect(claimed.at - stop!.at).toBeLessThan(10_000);
    expect(claimed.epoch).toBe(2);
    await rescuer.waitForEvent('the run completed', (event) => event.type === 'completed' && event.runId === runId);
    expect(await journal.getRun(runId)).toMatchObject({ status: 'completed', epoch: 2, owner: rescuer.name });
    // one attempt spent, as a heartbeat takeover spends one (the worker settles the job just after the run's end)
    const jobOf = async () => boss.getJobById(queueNameOf('rxagent.runs.', killed.id), await jobIdIn(journal, runId));
    for (let tries = 0; tries < 100 && (await jobOf())?.state === 'active'; tries++) await settle(() => false, 100);
    expect(await jobOf()).toMatchObject({ state: 'completed', retryCount: 1 });
    const chunks = (await lastValueFrom(journal.read$(runId, { live: false }).pipe(toArray()))).map((entry) => entry.chunk.type);
    expect(chunks.filter((type) => type === 'finish')).toHaveLength(1);
  }, 90_000);

  it('SIGSTOP: a frozen owner keeps its session (its run never looks lost), the heartbeat takes it over, and it is fenced when continued', async () => {
    const sender = await submitter(frozen, 10);
    const workers = pair(frozen, 10);
    await Promise.all(workers.map((worker) => worker.ready));
    const runId = await submit(sender, frozen);
    await waitFor(() => workers.some((worker) => worker.stops.length > 0), 'a worker holding the run at its stop point', 60_000);
    const victim = workers.find((worker) => worker.stops.length > 0)!;
    const rescuer = workers.find((worker) => worker !== victim)!;
    // frozen, not dead: for 3 s (several sweeps of the rescuer) its lock is held and the run is not a lost owner's
    for (let index = 0; index < 12; index++) {
      expect(await journal.runsOfLostOwners([frozen.id])).toEqual([]);
      expect(await lockHolder(victim.name)).toBeDefined();
      await settle(() => false, 250);
    }
    expect(rescuer.events.filter((event) => event.type === 'claimed' && event.runId === runId)).toEqual([]);
    // the heartbeat (10 s) hands it over
    await rescuer.waitForEvent('the claim after the heartbeat', (event) => event.type === 'claimed' && event.runId === runId, 60_000);
    victim.signal('SIGCONT');
    await victim.waitForEvent('the continued owner fenced', (event) => event.type === 'fenced' && event.runId === runId, 60_000);
    await rescuer.waitForEvent('the run completed', (event) => event.type === 'completed' && event.runId === runId);
    expect(await journal.getRun(runId)).toMatchObject({ status: 'completed', epoch: 2, owner: rescuer.name });
  }, 120_000);

  it("an owner session's connection cut again and again for 1.5 s: the lock is taken again within the sweeps' grace, so the run is not taken over — it completes in epoch 1, no attempt spent", async () => {
    const sender = await submitter(blipped, 30);
    // a grace well above a reconnect on a loaded machine (the default is 750 ms)
    const workers = pair(blipped, 30, 60, { graceMs: 5000 });
    await Promise.all(workers.map((worker) => worker.ready));
    const runId = await submit(sender, blipped);
    const owner = await Promise.race(workers.map((worker) => worker.waitForEvent('the first claim', (event) => event.type === 'claimed' && event.runId === runId).then(() => worker)));
    const before = await lockHolder(owner.name);
    expect(before).toBeDefined();
    // the blip lasts ≈ 1.5 s: every session that takes the lock again is cut at once, so the
    // survivor's sweeps (every ≈ 400 ms) see the owner without its session several times
    const terminated = new Set<number>();
    for (const until = Date.now() + 1500; Date.now() < until; ) {
      const holder = await lockHolder(owner.name);
      if (holder !== undefined) {
        await db.query('SELECT pg_terminate_backend($1)', [holder]);
        terminated.add(holder);
      }
      await settle(() => false, 20);
    }
    expect(terminated.size).toBeGreaterThan(1);
    // held again, by a new session
    let after: number | undefined;
    for (let tries = 0; tries < 100 && (after === undefined || terminated.has(after)); tries++) {
      after = await lockHolder(owner.name);
      await settle(() => false, 100);
    }
    expect(after).toBeDefined();
    expect(terminated.has(after!)).toBe(false);
    const done = await Promise.race(workers.map((worker) => worker.waitForEvent('the run completed', (event) => event.type === 'completed' && event.runId === runId)));
    expect(done.status).toBe('completed');
    // the survivor saw the owner without its session, but not for the grace: nothing released, nothing fenced
    expect(await journal.getRun(runId)).toMatchObject({ status: 'completed', epoch: 1 });
    expect(workers.flatMap((worker) => worker.events).filter((event) => event.runId === runId && (event.type === 'fenced' || (event.type === 'claimed' && event.epoch > 1)))).toEqual([]);
    const job = await boss.getJobById(queueNameOf('rxagent.runs.', blipped.id), await jobIdIn(journal, runId));
    expect(job?.retryCount).toBe(0);
    const chunks = (await lastValueFrom(journal.read$(runId, { live: false }).pipe(toArray()))).map((entry) => entry.chunk.type);
    expect(chunks.filter((type) => type === 'finish')).toHaveLength(1);
    expect(chunks.filter((type) => type === 'start')).toHaveLength(1);
  }, 90_000);
});
