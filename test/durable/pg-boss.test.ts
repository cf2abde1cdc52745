/**
 * pg-boss 12 on the test PostgreSQL, as the durable worker uses it: its own schema, a queue with
 * heartbeatSeconds 10, a job id given by the sender (a UUID; sending it again is a no-op), work()
 * with heartbeats; a job that fails its last attempt copied to its dead-letter queue (named per job,
 * so a queue made before dead letters were used gets them too). (A job whose worker went silent
 * handed to another worker: every case of fault-matrix.test.ts; its last attempt lost to a dead
 * worker, dead-lettered: give-up-process.test.ts.)
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';

let server: TestPostgres | undefined;
let startupError: unknown;
const schema = `pgboss_${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  server = await startTestPostgres().catch((error: unknown) => {
    startupError = error;
    return undefined;
  });
});
beforeEach(() => {
  if (startupError !== undefined) throw startupError;
});
afterAll(async () => {
  if (server === undefined) return;
  if (!server.started) {
    const pool = new pg.Pool({ connectionString: server.connectionString });
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  }
  await server.stop();
});

const newBoss = () =>
  new PgBoss({ connectionString: server!.connectionString, schema, superviseIntervalSeconds: 1, monitorIntervalSeconds: 1, maintenanceIntervalSeconds: 1 });

describe('pg-boss 12 as the run queue', () => {
  it('sends a job under the caller’s UUID (again: no second job), work() gets it once and completes it', async () => {
    const boss = newBoss();
    boss.on('error', () => undefined);
    await boss.start();
    await boss.createQueue('runs-support', { heartbeatSeconds: 10, retryLimit: 3 });
    const id = randomUUID();
    expect(await boss.send('runs-support', { runId: 'r1' }, { id })).toBe(id);
    expect(await boss.send('runs-support', { runId: 'r1' }, { id })).toBeNull();
    await expect(boss.send('runs-support', { runId: 'r1' }, { id: 'run-1' })).rejects.toThrow();
    const seen: Array<{ id: string; data: unknown }> = [];
    await boss.work<{ runId: string }>('runs-support', { pollingIntervalSeconds: 0.5 }, async ([job]) => {
      seen.push({ id: job!.id, data: job!.data });
      return { done: true };
    });
    const deadline = Date.now() + 10_000;
    let state: string | undefined;
    while (Date.now() < deadline && state !== 'completed') {
      await new Promise((resolve) => setTimeout(resolve, 100));
      state = (await boss.getJobById('runs-support', id))?.state;
    }
    expect(state).toBe('completed');
    expect(seen).toEqual([{ id, data: { runId: 'r1' } }]);
    const job = await boss.getJobById('runs-support', id);
    expect(job?.heartbeatSeconds).toBe(10);
    await boss.stop({ graceful: false });
  });

  it('a job that fails its last attempt (retryLimit retries used) goes to `failed` and a copy to its dead-letter queue, given per job on a queue made without one', async () => {
    const boss = newBoss();
    boss.on('error', () => undefined);
    await boss.start();
    await boss.createQueue('runs-dead', { retryLimit: 10 });
    await boss.createQueue('runs-old', { heartbeatSeconds: 10, retryLimit: 10 }); // made before dead letters: none
    const id = randomUUID();
    expect(await boss.send('runs-old', { runId: 'r2' }, { id, retryLimit: 1, retryDelay: 0, deadLetter: 'runs-dead' })).toBe(id);
    const attempts: number[] = [];
    await boss.work<{ runId: string }>('runs-old', { pollingIntervalSeconds: 0.5 }, async ([job]) => {
      attempts.push(job!.retryCount);
      throw new Error(`attempt ${job!.retryCount} failed`);
    });
    const copies: Array<{ data: unknown; sourceId: string | null; sourceRetryCount: number | null; sourceOutput: unknown }> = [];
    await boss.work('runs-dead', { pollingIntervalSeconds: 0.5, includeMetadata: true }, async ([job]) => {
      copies.push({ data: job!.data, sourceId: job!.sourceId, sourceRetryCount: job!.sourceRetryCount, sourceOutput: job!.sourceOutput });
    });
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && copies.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    // every fetch after the first counts a retry; the attempt at retryCount = retryLimit was the last
    expect(attempts).toEqual([0, 1]);
    const failed = await boss.getJobById('runs-old', id);
    expect(failed).toMatchObject({ state: 'failed', retryLimit: 1, retryCount: 1, deadLetter: 'runs-dead' });
    expect(copies).toEqual([{ data: { runId: 'r2' }, sourceId: id, sourceRetryCount: 1, sourceOutput: expect.objectContaining({ message: 'attempt 1 failed' }) }]);
    await boss.stop({ graceful: false });
  });
});
