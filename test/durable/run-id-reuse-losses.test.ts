/**
 * A run id used again after a force-erase while the old run's job is still live on the same worker
 * (real workers, one pg-boss, on PostgreSQL): what the old attempt does must stay the old run's.
 *
 * - The old run's owner, its attempt failed by the infrastructure, notes the loss (`0:0`). The
 *   note was keyed by run id alone and landed in the new run's row: the new run's first attempt,
 *   failed by the run itself with `retryLimit: 0`, was refunded and the run went on in a second
 *   job. The note now carries the incarnation and is left alone for another run under the id.
 * - The worker's "newest attempt of this run here" was keyed by run id alone: the old run's queued
 *   job, fetched while the new run's attempt ran, took the entry and removed it when it found
 *   nothing to claim. The new attempt, failed by the infrastructure, then took itself for a
 *   superseded one and stopped: its job completed and the run stayed `running` with no job. Attempts
 *   are now kept per run id and incarnation.
 */
import { randomUUID } from 'node:crypto';
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { PostgresRunJournal } from 'rxagent/storage/postgres';
import { plainLookAgent } from './fixtures/look-agent.js';
import { sharedBoss } from './fixtures/shared-boss.js';
import { deferred } from '../operators/helpers.js';
import { suitePostgres } from './fixtures/suite-postgres.js';
import { runJobId } from './fixtures/run-jobs.js';
import { queueNameOf } from '../../src/durable/internal/queues.js';

const suffix = randomUUID().slice(0, 6);
const schema = `rxagent_reuse_losses_${suffix}`;
const bossSchema = `pgboss_reuse_losses_${suffix}`;
const suite = suitePostgres([schema, bossSchema]);
const { keep } = suite;

const shared = sharedBoss(suite, bossSchema);
const { started } = shared;

const queue = (agentId: string): string => queueNameOf('rxagent.runs.', agentId);
const journalOn = (): PostgresRunJournal => keep(new PostgresRunJournal({ connectionString: suite.server.connectionString, schema }));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** An error as `pg` gives it when the server ended the connection (the infrastructure's). */
const connectionLost = (): Error => Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });

const jobState = (id: string): Promise<string | undefined> => shared.jobState(id);

/** Waits until job `id` is in one of `states`. */
async function jobIn(id: string, states: readonly string[]): Promise<void> {
  while (!states.includes((await jobState(id)) ?? '')) await sleep(100);
}

const losses = async (runId: string): Promise<string[]> =>
  (await shared.admin.query<{ losses: string[] }>(`SELECT infrastructure_losses AS losses FROM "${schema}".runs WHERE id = $1`, [runId])).rows[0]?.losses ?? [];

describe('the old run’s job live on the same worker when its run is force-erased and created again', () => {
  it('its owner notes an infrastructure loss: not in the new run’s row, whose attempt failed by the run is not refunded (it went on in a second job)', { timeout: 180_000 }, async () => {
    const journal = journalOn();
    const agentId = 'old-loss';
    const oldPastTool = deferred<void>();
    const oldGate = deferred<void>();
    const newGate = deferred<void>();
    let toolStarts = 0;
    let returned = 0;
    const { worker, until } = started({
      journal,
      agents: [plainLookAgent(agentId)],
      concurrency: 2,
      workerId: `old-loss-${suffix}`,
      queue: { retryLimit: 0 },
      faultPoint: async (point) => {
        // the old run's owner, past its tool, loses the database (its attempt is the infrastructure's)
        if (point === 'tool-returned' && returned++ === 0) {
          oldPastTool.resolve();
          await oldGate.promise;
          throw connectionLost();
        }
        // the new run's first attempt fails for a reason of its own: with retryLimit 0, the run's last
        if (point === 'tool-started' && ++toolStarts === 2) {
          await newGate.promise;
          throw new Error('the new run’s attempt failed (not the infrastructure)');
        }
      },
    });
    try {
      await worker.start();
      const runId = `old-loss-${randomUUID()}`;
      await worker.submit(agentId, 'Please look', { runId });
      await oldPastTool.promise;
      const old = (await journal.getRun(runId))!;
      expect(await journal.deleteRun(runId, { force: true })).toBe(true);
      expect(await worker.submit(agentId, 'Please look', { runId })).toEqual({ runId, created: true });
      while (toolStarts < 2) await sleep(100);
      const run = (await journal.getRun(runId))!;
      expect(run).toMatchObject({ status: 'running', epoch: 1 });
      expect(run.incarnation).not.toBe(old.incarnation);
      // the old owner's attempt fails, it notes the loss and stops (its job done)
      oldGate.resolve();
      await jobIn(runJobId(runId, old), ['completed', 'failed']);
      expect(await losses(runId)).toEqual([]); // it was ['0:0']: the old run's attempt, noted in the new run's row
      newGate.resolve();
      const ended = await until('completed', runId);
      expect(ended).toMatchObject({ status: 'failed' });
      expect(await journal.getRun(runId)).toMatchObject({ status: 'failed', incarnation: run.incarnation });
      const entries = await lastValueFrom(journal.read$(runId, { live: false }).pipe(toArray()));
      const last = JSON.parse(entries.at(-1)!.json) as { type: string; payload: { error: { name: string; attempts: number } } };
      expect(last).toMatchObject({ type: 'error', payload: { error: { name: 'RunAttemptsExhaustedError', attempts: 1 } } });
      expect(await jobState(runJobId(runId, run, 1))).toBeUndefined(); // no second job
    } finally {
      oldGate.resolve();
      newGate.resolve();
      await worker.close();
    }
  });

  it('its queued job fetched while the new run’s attempt runs: the new attempt, failed by the infrastructure, claims again and completes (its job completed, the run left running)', { timeout: 180_000 }, async () => {
    const journal = journalOn();
    const agentId = 'old-queued';
    const submitter = started({ journal, agents: [plainLookAgent(agentId)], concurrency: 0 }).worker;
    await submitter.start();
    const runId = `old-queued-${randomUUID()}`;
    await submitter.submit(agentId, 'Please look', { runId });
    const old = (await journal.getRun(runId))!;
    // the old run's job held back until the new run's attempt is in its tool
    await shared.admin.query(`UPDATE "${bossSchema}".job SET start_after = now() + interval '1 hour' WHERE id = $1`, [runJobId(runId, old)]);
    expect(await journal.deleteRun(runId, { force: true })).toBe(true);
    expect(await submitter.submit(agentId, 'Please look', { runId })).toEqual({ runId, created: true });
    const run = (await journal.getRun(runId))!;
    let inTool: () => void = () => undefined;
    const newInTool = new Promise<void>((resolve) => (inTool = resolve));
    let release: () => void = () => undefined;
    const gate = new Promise<void>((open) => (release = open));
    let toolStarts = 0;
    const { worker, until } = started({
      journal,
      agents: [plainLookAgent(agentId)],
      concurrency: 2,
      workerId: `old-queued-${suffix}`,
      faultPoint: async (point) => {
        // the new run's first attempt loses the database in its tool
        if (point === 'tool-started' && ++toolStarts === 1) {
          inTool();
          await gate;
          throw connectionLost();
        }
      },
    });
    try {
      await worker.start();
      await newInTool;
      await shared.admin.query(`UPDATE "${bossSchema}".job SET start_after = now() WHERE id = $1`, [runJobId(runId, old)]);
      await jobIn(runJobId(runId, old), ['completed', 'failed']); // it claimed nothing
      release();
      await jobIn(runJobId(runId, run), ['completed', 'failed']);
      expect(await journal.getRun(runId)).toMatchObject({ status: 'completed', epoch: 2, incarnation: run.incarnation });
      await until('completed', runId);
    } finally {
      release();
      await worker.close();
      await submitter.close();
    }
  });
});
