/**
 * A poison run — one that kills its worker on every attempt — ends (issue 25's "left running with
 * no job" gap), with real worker processes: three child workers (forked with `--import tsx`) work
 * its queue with `retryLimit: 1` and the shortest heartbeat pg-boss allows (10 s); the run SIGKILLs
 * whichever process runs it, mid model stream. Each death ends the owner's database session; a
 * survivor's sweep fails the dead owner's attempt (what the heartbeat timeout did before, ≈ 10 s
 * later). After the second death the job fails for good and is copied to the dead-letter queue;
 * the surviving process gives the run up. A live reader in the test process gets the end: the
 * open parts closed, then `error` RunAttemptsExhaustedError { attempts: 2, lastFailure: 'owner
 * session ended' }; nothing is written or claimed after it, and the survivor never runs the run.
 * Wall time (three forked
 * processes; each death is seen by the survivors' owner-session sweep within a second, not after a
 * heartbeat timeout): every wait is for an event or a row, never asserted on time.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChunkType } from 'rxagent';
import { createRunWorker, type JournalEntry, type RunWorker } from 'rxagent/durable';
import type { PostgresRunJournal, PostgresStorage } from 'rxagent/storage/postgres';
import { queueNameOf } from '../../src/durable/internal/queues.js';
import { jobIdIn } from './fixtures/run-jobs.js';
import type { TestPostgres } from '../support/postgres.js';
import { settle } from '../support/wait-for.js';
import { matrixAgent, type KillPlan, type MatrixCase } from './fixtures/matrix.js';
import { closeDurableDb, openDurableDb } from './fixtures/durable-db.js';
import { WorkerProcess } from './fixtures/worker-processes.js';

const suffix = randomUUID().slice(0, 6);
const schema = `rxagent_poison_${suffix}`;
const bossSchema = `pgboss_poison_${suffix}`;
// the second flush of step 0 (the first may hold step-start alone, now that `chunks-flushed` reports the step it is in)
const poison: MatrixCase = { id: `poison-${suffix}`, toolConcurrency: 1, plan: { at: 'chunks-flushed', step: 0, nth: 2, signal: 'SIGKILL', everyEpoch: true } };
const retryLimit = 1;

let server: TestPostgres;
let db: pg.Pool;
let journal: PostgresRunJournal;
let storage: PostgresStorage;
let boss: PgBoss;
let submitter: RunWorker;
const processes: WorkerProcess[] = [];

beforeAll(async () => {
  ({ server, db, journal, storage, boss } = await openDurableDb({ schema, bossSchema, poolMax: 3, bossMax: 2, maintenanceIntervalSeconds: 1 }));
  const never = async (): Promise<never> => new Promise<never>(() => undefined);
  // the sender's queue options go on the job: the submitter has the workers' retryLimit
  submitter = createRunWorker({
    journal,
    boss,
    concurrency: 0,
    queue: { retryLimit },
    agents: [matrixAgent(poison, { db, storage, wordDelayMs: 0, plans: new Map<string, KillPlan>(), stop: never })],
  });
  await submitter.start();
}, 60_000);

afterAll(() => closeDurableDb({ processes, submitter, boss, journal, storage, db, server }), 60_000);

describe('a run that kills its worker on every attempt', () => {
  it('ends failed after retryLimit + 1 deaths: a live reader gets RunAttemptsExhaustedError, nothing is written or claimed after it', async () => {
    for (const name of ['a', 'b', 'c']) {
      processes.push(new WorkerProcess({ connectionString: server.connectionString, schema, bossSchema, workerId: `poison-${name}`, cases: [poison], concurrency: 1, wordDelayMs: 25, poolMax: 3, retryLimit }));
    }
    await Promise.all(processes.map((process) => process.ready));
    const runId = `${poison.id}.1`;
    await submitter.submit(poison.id, 'How much do the north, south and east stores have?', {
      runId,
      memory: { thread: `thread-${runId}`, resource: 'user-1' },
      providerOptions: { matrix: { caseId: poison.id, runId } },
    });
    const entries: JournalEntry[] = await lastValueFrom(journal.read$(runId, { live: true }).pipe(toArray()));

    // two owners died at the run's point; the third gave it up and never ran it
    const died = processes.filter((process) => process.stops.length > 0);
    expect(died).toHaveLength(retryLimit + 1);
    for (const process of died) expect((await process.exited).signal).toBe('SIGKILL');
    const survivor = processes.find((process) => process.stops.length === 0)!;
    await survivor.waitForEvent('its give-up event', (event) => event.type === 'completed' && event.runId === runId);
    expect(survivor.events.filter((event) => event.runId === runId).map((event) => [event.type, event.status])).toEqual([['completed', 'failed']]);

    expect(await journal.getRun(runId)).toMatchObject({ status: 'failed', terminal: 'error', epoch: retryLimit + 2, owner: survivor.name });
    const chunks = entries.map((entry) => entry.chunk);
    const last = chunks.at(-1) as ChunkType & { type: 'error' };
    // the survivors saw each owner's database session end (lostOwnerSweep): no heartbeat timeout to wait for
    expect(last.payload.error).toMatchObject({ name: 'RunAttemptsExhaustedError', runId, attempts: retryLimit + 1, lastFailure: 'owner session ended' });
    expect((last.payload.error as { message: string }).message).toMatch(/database session ended/);
    // the second owner rolled the first's attempt back (a takeover marker); the give-up closed the second's
    const markers = chunks.filter((chunk) => chunk.type === 'step-finish' && chunk.payload.stepResult.reason === 'retry');
    expect(markers).toHaveLength(1);
    // the give-up closes what the last owner left open (a text block when the kill came mid-text,
    // none when it came right after step-start's flush), then the step, then the error
    expect(chunks.slice(-2).map((chunk) => chunk.type)).toEqual(['step-finish', 'error']);
    const open = new Set<string>();
    for (const chunk of chunks) {
      if (chunk.type === 'text-start') open.add(chunk.payload.id);
      if (chunk.type === 'text-end') open.delete(chunk.payload.id);
    }
    expect([...open]).toEqual([]);
    expect(entries.map((entry) => entry.seq)).toEqual(entries.map((_, index) => index + 1));
    const { rows: calls } = await db.query<{ n: string }>('SELECT count(*) AS n FROM matrix_model_calls WHERE run_id = $1', [runId]);
    expect(Number(calls[0]!.n)).toBe(retryLimit + 1);
    expect(await boss.getJobById(queueNameOf('rxagent.runs.', poison.id), await jobIdIn(journal, runId))).toMatchObject({ state: 'failed', retryCount: retryLimit });

    // nothing after it (an absence check: the survivor keeps polling its queues meanwhile)
    const ended = await journal.getRun(runId);
    await settle(() => false, 1500);
    expect(await journal.getRun(runId)).toMatchObject({ epoch: ended!.epoch, lastSeq: ended!.lastSeq, status: 'failed' });
    expect(survivor.events.filter((event) => event.runId === runId && event.type === 'claimed')).toEqual([]);
    expect(survivor.child.exitCode).toBeNull();
  }, 120_000);
});
