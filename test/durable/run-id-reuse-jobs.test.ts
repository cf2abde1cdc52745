/**
 * A run id used again on the same pg-boss after its run was removed from the journal (force-erased
 * or purged): the new run stayed `queued` for ever. Job ids were made from the run id alone, so
 * pg-boss's kept job of the old run (completed, or still live) made the new submit's send a no-op.
 *
 * A run's jobs are named by its id and its incarnation (the same for every claim, handover and
 * retry of the run, another when it is created again), and each job carries the incarnation: its
 * claim takes that run only, and its lease writes to that run only. So a run created again gets a
 * job of its own and completes; the same run submitted again still has one job; a submit that died
 * between `createRun` and its send gets its job when submitted again; and an old job still live —
 * queued, or its owner mid-step — never claims the new run or writes into it (fenced, epoch or
 * not). Real workers, one pg-boss, on PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { createRunWorker, type RunJournal, type RunQueue, type RunWorkerEvent } from 'rxagent/durable';
import { PostgresRunJournal } from 'rxagent/storage/postgres';
import { plainLookAgent } from './fixtures/look-agent.js';
import { sharedBoss } from './fixtures/shared-boss.js';
import { deferred } from '../operators/helpers.js';
import { suitePostgres } from './fixtures/suite-postgres.js';
import { runJobId } from './fixtures/run-jobs.js';
import { queueNameOf } from '../../src/durable/internal/queues.js';

const suffix = randomUUID().slice(0, 6);
const schema = `rxagent_reuse_jobs_${suffix}`;
const purgeSchema = `${schema}_purge`;
const bossSchema = `pgboss_reuse_jobs_${suffix}`;
const suite = suitePostgres([schema, purgeSchema, bossSchema]);
const { keep } = suite;

const shared = sharedBoss(suite, bossSchema);
const { started } = shared;

const queue = (agentId: string): string => queueNameOf('rxagent.runs.', agentId);

/** The run's jobs in pg-boss: state and data, oldest first. */
async function jobsOf(agentId: string, runId: string): Promise<Array<{ id: string; state: string; data: Record<string, unknown> }>> {
  const rows = await shared.admin.query<{ id: string; state: string; data: Record<string, unknown> }>(
    `SELECT id::text, state::text, data FROM "${bossSchema}".job WHERE name = $1 AND data->>'runId' = $2 ORDER BY created_on`,
    [queue(agentId), runId],
  );
  return rows.rows;
}

const typesOf = async (journal: RunJournal, runId: string): Promise<string[]> =>
  (await lastValueFrom(journal.read$(runId, { live: false }).pipe(toArray()))).map((entry) => JSON.parse(entry.json).type as string);

const journalOn = (name: string, retention: { chunkRetentionSeconds?: number; runRetentionSeconds?: number } = {}): PostgresRunJournal =>
  keep(new PostgresRunJournal({ connectionString: suite.server.connectionString, schema: name, ...retention }));

describe('a run id used again on the same pg-boss after its run was removed', () => {
  const removals: Array<[string, () => { journal: PostgresRunJournal; remove: (journal: PostgresRunJournal, runId: string) => Promise<void> }]> = [
    ['erased', () => ({ journal: journalOn(schema), remove: async (journal, runId) => void expect(await journal.deleteRun(runId)).toBe(true) })],
    [
      'purged',
      () => ({
        journal: journalOn(purgeSchema, { chunkRetentionSeconds: 0, runRetentionSeconds: 0 }),
        remove: async (journal, runId) => {
          while (!(await journal.purgeExpired()).done);
          expect(await journal.getRun(runId)).toBeNull();
        },
      }),
    ],
  ];
  for (const [name, make] of removals) {
    it(`${name}: the run created again gets a job of its own and completes (it stayed queued for ever)`, { timeout: 120_000 }, async () => {
      const { journal, remove } = make();
      const agentId = `again-${name}`;
      const { worker, until } = started({ journal, agents: [plainLookAgent(agentId)], concurrency: 1 });
      try {
        await worker.start();
        const runId = `again-${randomUUID()}`;
        await worker.submit(agentId, 'Hello', { runId });
        await until('completed', runId);
        const first = (await journal.getRun(runId))!;
        await remove(journal, runId);
        expect(await worker.submit(agentId, 'Hello again', { runId })).toEqual({ runId, created: true });
        await until('completed', runId, 2);
        const again = (await journal.getRun(runId))!;
        expect(again).toMatchObject({ status: 'completed', epoch: 1 });
        expect(again.incarnation).not.toBe(first.incarnation);
        // one job per incarnation, each named by it and carrying it (pg-boss completes a job once its handler returned, after the run's event)
        let jobs = await jobsOf(agentId, runId);
        while (jobs.some((job) => job.state === 'active')) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          jobs = await jobsOf(agentId, runId);
        }
        expect(jobs.map((job) => [job.id, job.state, job.data['incarnation']])).toEqual([
          [runJobId(runId, first), 'completed', first.incarnation],
          [runJobId(runId, again), 'completed', again.incarnation],
        ]);
      } finally {
        await worker.close();
      }
    });
  }

  it('the same run submitted again (idempotent) has one job', { timeout: 120_000 }, async () => {
    const journal = journalOn(schema);
    const agentId = 'twice';
    const submitter = started({ journal, agents: [plainLookAgent(agentId)], concurrency: 0 }).worker;
    await submitter.start();
    const runId = `twice-${randomUUID()}`;
    const answers = await Promise.all([submitter.submit(agentId, 'Hello', { runId }), submitter.submit(agentId, 'Hello', { runId })]);
    expect(answers.map((answer) => answer.created).sort()).toEqual([false, true]);
    expect(await submitter.submit(agentId, 'Hello', { runId })).toEqual({ runId, created: false });
    const run = (await journal.getRun(runId))!;
    expect((await jobsOf(agentId, runId)).map((job) => [job.id, job.state])).toEqual([[runJobId(runId, run), 'created']]);
    const { worker, until } = started({ journal, agents: [plainLookAgent(agentId)], concurrency: 1 });
    try {
      await worker.start();
      await until('completed', runId);
      expect(await journal.getRun(runId)).toMatchObject({ status: 'completed', epoch: 1 });
    } finally {
      await worker.close();
      await submitter.close();
    }
  });

  it('a submit that died between createRun and its send, submitted again: its job is sent, the run completes', { timeout: 120_000 }, async () => {
    const journal = journalOn(schema);
    const agentId = 'died';
    let failSend = true;
    /** pg-boss whose first send of a run's job dies (not the infrastructure's: the submit rejects with it). */
    const real = shared.boss as unknown as RunQueue;
    const dying: RunQueue = {
      createQueue: (name, options) => real.createQueue(name, options),
      work: (name, options, handler) => real.work(name, options, handler),
      getJobById: (name, id) => real.getJobById(name, id),
      offWork: (name, options) => real.offWork(name, options),
      schedule: (name, cron) => real.schedule(name, cron),
      send: async (name, data, options) => {
        if (failSend && name === queue(agentId)) {
          failSend = false;
          throw new TypeError('the submitting process died here');
        }
        return real.send(name, data, options);
      },
    };
    const submitter = createRunWorker({ journal, boss: dying, agents: [plainLookAgent(agentId)], concurrency: 0, retention: false });
    await submitter.start();
    const runId = `died-${randomUUID()}`;
    await expect(submitter.submit(agentId, 'Hello', { runId })).rejects.toThrow('the submitting process died here');
    expect(await journal.getRun(runId)).toMatchObject({ status: 'queued' });
    expect(await jobsOf(agentId, runId)).toEqual([]);
    expect(await submitter.submit(agentId, 'Hello', { runId })).toEqual({ runId, created: false });
    const run = (await journal.getRun(runId))!;
    expect((await jobsOf(agentId, runId)).map((job) => job.id)).toEqual([runJobId(runId, run)]);
    const { worker, until } = started({ journal, agents: [plainLookAgent(agentId)], concurrency: 1 });
    try {
      await worker.start();
      await until('completed', runId);
      expect(await journal.getRun(runId)).toMatchObject({ status: 'completed', epoch: 1 });
    } finally {
      await worker.close();
      await submitter.close();
    }
  });
});

describe('the old run’s job still live when its run is force-erased and created again', () => {
  it('queued: it claims nothing (the new run is not its run); the new run’s own job runs it once', { timeout: 120_000 }, async () => {
    const journal = journalOn(schema);
    const agentId = 'queued-old';
    const submitter = started({ journal, agents: [plainLookAgent(agentId)], concurrency: 0 }).worker;
    await submitter.start();
    const runId = `queued-old-${randomUUID()}`;
    await submitter.submit(agentId, 'Hello', { runId });
    const old = (await journal.getRun(runId))!;
    expect(await journal.deleteRun(runId, { force: true })).toBe(true);
    expect(await submitter.submit(agentId, 'Please look', { runId })).toEqual({ runId, created: true });
    const run = (await journal.getRun(runId))!;
    // two jobs, the old one first in the queue
    expect((await jobsOf(agentId, runId)).map((job) => [job.id, job.state])).toEqual([
      [runJobId(runId, old), 'created'],
      [runJobId(runId, run), 'created'],
    ]);
    // both jobs fetched at once: an old job that claimed the new run would fence the new run's own job, or be fenced by it
    const { worker, until } = started({ journal, agents: [plainLookAgent(agentId, { wordDelayMs: 20 })], concurrency: 2 });
    const fenced: RunWorkerEvent[] = [];
    worker.events$.subscribe((event) => event.type === 'fenced' && fenced.push(event));
    try {
      await worker.start();
      await until('completed', runId);
      expect(fenced).toEqual([]);
      // one claim: the old job's attempt found another run under the id and left it alone
      expect(await journal.getRun(runId)).toMatchObject({ status: 'completed', epoch: 1, incarnation: run.incarnation });
      while ((await jobsOf(agentId, runId)).some((job) => job.state !== 'completed')) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await typesOf(journal, runId)).toContain('tool-result'); // the new run's input ran ("Please look")
    } finally {
      await worker.close();
      await submitter.close();
    }
  });

  it('its owner past its tool, the new run claimed by the same worker at the same epoch: the old owner is fenced, the new run holds its own rows only', { timeout: 150_000 }, async () => {
    const journal = journalOn(schema);
    const agentId = 'live-old';
    // the old run's owner waits once its tool returned (the ledger written, the tool's chunks not
    // yet): its next writes are the step's chunks. The new run's owner waits in its own tool.
    const oldPastTool = deferred<void>();
    const oldGate = deferred<void>();
    const newGate = deferred<void>();
    const toolStarts: Array<{ runId: string; epoch: number }> = [];
    let returned = 0;
    const { worker, until } = started({
      journal,
      agents: [plainLookAgent(agentId)],
      concurrency: 2,
      workerId: `live-old-${suffix}`,
      faultPoint: async (point, info) => {
        if (point === 'tool-returned' && returned++ === 0) {
          oldPastTool.resolve();
          await oldGate.promise;
        }
        if (point !== 'tool-started') return;
        toolStarts.push({ runId: info.runId, epoch: info.epoch });
        if (toolStarts.length === 2) await newGate.promise; // the new run's owner waits in its tool, its step open
      },
    });
    try {
      await worker.start();
      const runId = `live-old-${randomUUID()}`;
      await worker.submit(agentId, 'Please look', { runId });
      await oldPastTool.promise;
      const old = (await journal.getRun(runId))!;
      expect(old).toMatchObject({ status: 'running', epoch: 1 });
      expect(await journal.deleteRun(runId, { force: true })).toBe(true);
      expect(await worker.submit(agentId, 'Please look', { runId })).toEqual({ runId, created: true });
      // the new run claimed by this worker: the same owner and epoch as the old run's live owner
      while (toolStarts.length < 2) await new Promise((resolve) => setTimeout(resolve, 100));
      const run = (await journal.getRun(runId))!;
      expect(run).toMatchObject({ status: 'running', epoch: 1, owner: `live-old-${suffix}` });
      expect(run.incarnation).not.toBe(old.incarnation);
      const before = await typesOf(journal, runId);
      // the old owner goes on: its step's chunks are the old run's, fenced (they were written into the new run)
      oldGate.resolve();
      while ((await jobsOf(agentId, runId)).find((job) => job.data['incarnation'] === old.incarnation)?.state !== 'completed') {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(await typesOf(journal, runId)).toEqual(before);
      const ledger = await shared.admin.query<{ tool_call_id: string; epoch: string }>(`SELECT tool_call_id, epoch::text FROM "${schema}".run_tool_calls WHERE run_id = $1`, [runId]);
      expect(ledger.rows).toHaveLength(1); // the new run's call alone
      newGate.resolve();
      await until('completed', runId);
      const ended = (await journal.getRun(runId))!;
      expect(ended).toMatchObject({ status: 'completed', epoch: 1, incarnation: run.incarnation });
      const types = await typesOf(journal, runId);
      expect(types.filter((type) => type === 'start')).toHaveLength(1);
      expect(types.filter((type) => type === 'tool-result')).toHaveLength(1);
      expect(types.filter((type) => type === 'finish')).toHaveLength(1);
    } finally {
      oldGate.resolve();
      newGate.resolve();
      await worker.close();
    }
  });
});
