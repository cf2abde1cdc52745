/**
 * A run id used again after its run was removed from the journal (erased, or purged past its row
 * retention): the new run's commit handed out the old run's commit ids (they were made from the
 * run id alone), so its memory save met the old run's messages under them and the new run failed
 * with `InvalidMessageError` — a user's turn lost because an id was reused.
 *
 * A run of format 2 makes its commit ids from the run id and its incarnation (the same for every
 * claim of the run, another when a run is created again under its id): the new run saves its own
 * messages, the old run's stay as they were, and a takeover of the new run after memory's save
 * still gives the same ids (each message stored once). A run row of format 1 (stored by the build
 * before) keeps the ids made from the run id alone, so its takeover replaces what its first owner
 * stored.
 *
 * Each case runs real workers (pg-boss, a kill at `finalizing` for the takeovers), on the
 * in-memory journal and store and on PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { filter, firstValueFrom, lastValueFrom, toArray, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Agent, type Processor } from 'rxagent';
import { InMemoryStorage, Memory, type MemoryStorage } from 'rxagent/memory';
import { scriptedModel } from 'rxagent/testing';
import { createRunWorker, InMemoryRunJournal, type FaultPointInfo, type NewRun, type RunFaultPoint, type RunJournal, type RunWorkerEvent } from 'rxagent/durable';
import { PostgresRunJournal, PostgresStorage } from 'rxagent/storage/postgres';
import type { MastraDBMessage } from 'rxagent/message-list';
import { commitMessageId } from '../../src/contract/commit-message-ids.js';
import { suitePostgres } from './fixtures/suite-postgres.js';

const suffix = randomUUID().slice(0, 6);
const schema = `rxagent_cids_${suffix}`;
const purgeSchema = `${schema}_purge`;
const bossSchemas: string[] = [];
const suite = suitePostgres([schema, purgeSchema]);
const { keep } = suite;

/** Adds a note of its own to the reply through the list (no id: the commit's first id). */
const note: Processor = {
  id: 'note',
  processOutputResult: ({ messageList, runId }) => {
    messageList.add({ role: 'assistant', content: `note of ${runId}` }, 'response', { merge: false });
    return undefined;
  },
};

/** Runs to kill once at `finalizing` (after memory's save committed, before the final commit). */
const toKill = new Set<string>();
const killed = new Set<string>();
const faultPoint = (point: RunFaultPoint, info: FaultPointInfo): void => {
  if (point === 'finalizing' && toKill.has(info.runId) && !killed.has(info.runId)) {
    killed.add(info.runId);
    throw new Error('killed after the memory save, before the final commit');
  }
};

const until = <T extends RunWorkerEvent['type']>(events$: Observable<RunWorkerEvent>, type: T, runId: string) =>
  firstValueFrom(events$.pipe(filter((event): event is Extract<RunWorkerEvent, { type: T }> => event.type === type && event.runId === runId)));

/**
 * Runs `runId` durably on `thread` with a worker and a pg-boss of its own (a run created again under
 * an id would find the old run's job in the old pg-boss), killed once at `finalizing` when `kill`.
 */
async function runOnce(journal: RunJournal, storage: MemoryStorage, runId: string, thread: string, input: string, kill = false): Promise<Extract<RunWorkerEvent, { type: 'completed' }>> {
  const bossSchema = `pgboss_cids_${suffix}_${bossSchemas.length}`;
  bossSchemas.push(bossSchema);
  const boss = new PgBoss({ connectionString: suite.server.connectionString, schema: bossSchema, superviseIntervalSeconds: 1, monitorIntervalSeconds: 1 });
  boss.on('error', () => undefined);
  await boss.start();
  const agent = new Agent({ id: 'noter', model: scriptedModel({ rules: [], fallback: { text: 'Done.' } }), memory: new Memory({ storage }), outputProcessors: [note] });
  const worker = createRunWorker({ journal, boss, agents: [agent], concurrency: 1, faultPoint, retention: false, queue: { pollingIntervalSeconds: 0.5 } });
  try {
    await worker.start();
    if (kill) toKill.add(runId);
    // the run's end (`status`: completed or failed); a kill's attempt is a `failed` event of its own
    const ended = until(worker.events$, 'completed', runId);
    await worker.submit('noter', input, { runId, memory: { thread, resource: 'u1' } });
    const event = await ended;
    if (kill) expect(killed.has(runId)).toBe(true);
    return event;
  } finally {
    await worker.close().catch(() => undefined);
    await boss.stop({ graceful: false });
    const admin = new pg.Client({ connectionString: suite.server.connectionString });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS "${bossSchema}" CASCADE`).catch(() => undefined);
    await admin.end();
  }
}

/** The run's last chunk as stored (what a failed run ended with). */
const lastChunk = async (journal: RunJournal, runId: string): Promise<string> => (await lastValueFrom(journal.read$(runId, { live: false }).pipe(toArray()))).at(-1)?.json ?? '';

const textOf = (message: MastraDBMessage): string => message.content.parts.map((part) => (part.type === 'text' ? part.text : part.type)).join('');

interface Backing {
  readonly journal: RunJournal;
  readonly storage: MemoryStorage;
  /** Removes the ended run from the journal. */
  remove(runId: string): Promise<void>;
}

const backings: Array<[string, () => Backing]> = [
  [
    'memory, erased',
    () => {
      const journal = new InMemoryRunJournal();
      return { journal, storage: new InMemoryStorage({ runJournal: journal }), remove: async (runId) => void expect(await journal.deleteRun(runId)).toBe(true) };
    },
  ],
  [
    'postgres, erased',
    () => {
      const journal = keep(new PostgresRunJournal({ connectionString: suite.server.connectionString, schema }));
      const storage = keep(new PostgresStorage({ connectionString: suite.server.connectionString, schema }));
      return { journal, storage, remove: async (runId) => void expect(await journal.deleteRun(runId)).toBe(true) };
    },
  ],
  [
    'postgres, purged',
    () => {
      const journal = keep(new PostgresRunJournal({ connectionString: suite.server.connectionString, schema: purgeSchema, chunkRetentionSeconds: 0, runRetentionSeconds: 0 }));
      const storage = keep(new PostgresStorage({ connectionString: suite.server.connectionString, schema: purgeSchema }));
      return {
        journal,
        storage,
        remove: async (runId) => {
          while (!(await journal.purgeExpired()).done);
          expect(await journal.getRun(runId)).toBeNull();
        },
      };
    },
  ],
];

describe.each(backings)('a run id used again after its run was removed (%s)', (_name, make) => {
  for (const kill of [false, true]) {
    it(`the new run saves its memory${kill ? ', and its takeover after memory’s save stores each message once' : ''}; the old run’s messages unchanged`, { timeout: 180_000 }, async () => {
      const { journal, storage, remove } = make();
      const thread = `t-reuse-${randomUUID()}`;
      const runId = `reused-${randomUUID()}`;
      const first = await runOnce(journal, storage, runId, thread, 'First turn');
      expect(first).toMatchObject({ type: 'completed', status: 'completed' });
      const before = await storage.getMessages({ threadId: thread });
      expect(before.map(textOf)).toEqual(['First turn', 'step-startDone.', `note of ${runId}`]);
      const { format, incarnation } = (await journal.getRun(runId))!;
      expect(format).toBe(2);
      expect(incarnation).toEqual(expect.any(String));
      // the note's id: the commit's first, made from the run id and its incarnation
      expect(before[2]?.id).toBe(commitMessageId(runId, 0, incarnation));
      await remove(runId);
      // the same id again, in the same thread: another run
      const again = await runOnce(journal, storage, runId, thread, 'Second turn', kill);
      // (it failed with the InvalidMessageError of the old note's id, its reply not stored)
      expect(again, await lastChunk(journal, runId)).toMatchObject({ type: 'completed', status: 'completed' });
      const messages = await storage.getMessages({ threadId: thread });
      expect(messages.slice(0, before.length)).toEqual(before);
      expect(messages.slice(before.length).map(textOf)).toEqual(['Second turn', 'step-startDone.', `note of ${runId}`]);
      expect(new Set(messages.map((message) => message.id)).size).toBe(6);
      const rerun = (await journal.getRun(runId))!;
      expect(rerun).toMatchObject({ status: 'completed', epoch: kill ? 2 : 1 });
      expect(rerun.incarnation).not.toBe(incarnation);
      expect(messages[5]?.id).toBe(commitMessageId(runId, 0, rerun.incarnation));
    });
  }
});

describe('a run row of format 1 (stored by the build before)', () => {
  it('keeps the commit ids made from the run id alone: its takeover after memory’s save replaces what its first owner stored', { timeout: 180_000 }, async () => {
    const admin = new pg.Pool({ connectionString: suite.server.connectionString, max: 1 });
    try {
      /** A journal whose runs are stored as the build before stored them (format 1). */
      class BuildBefore extends PostgresRunJournal {
        override async createRun(run: NewRun) {
          const created = await super.createRun(run);
          await admin.query(`UPDATE "${schema}".runs SET format = 1 WHERE id = $1 AND epoch = 0`, [run.runId]);
          return created;
        }
      }
      const journal = keep(new BuildBefore({ connectionString: suite.server.connectionString, schema }));
      const storage = keep(new PostgresStorage({ connectionString: suite.server.connectionString, schema }));
      const thread = `t-old-${randomUUID()}`;
      const runId = `old-${randomUUID()}`;
      const ended = await runOnce(journal, storage, runId, thread, 'Old turn', true);
      expect(ended).toMatchObject({ type: 'completed', status: 'completed' });
      expect(await journal.getRun(runId)).toMatchObject({ format: 1, epoch: 2 });
      const messages = await storage.getMessages({ threadId: thread });
      expect(messages.map(textOf)).toEqual(['Old turn', 'step-startDone.', `note of ${runId}`]);
      expect(messages[2]?.id).toBe(commitMessageId(runId, 0));
    } finally {
      await admin.end();
    }
  });
});
