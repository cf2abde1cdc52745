/**
 * Faults the red-team pass of December 2026 left, each shown on the in-memory journal and store and
 * on PostgreSQL:
 *
 * 1. A live reader of a run that is force-erased while it reads waited for ever (on PostgreSQL: no
 *    row, notification or poll told it). It ends with `RunNotFoundError`, through the erasing
 *    instance, another instance (the erase is notified) and one without notifications (its poll
 *    finds the row gone); the run's signal listener (the owner's stop channel) ends with it too, as
 *    the in-memory journal's did (on PostgreSQL it completed as if the run had ended).
 * 2. A durable run's commit that saves nothing after a takeover kept what the first owner's commit
 *    stored (the save was skipped when there was nothing to save): the fenced save goes to the store
 *    anyway and drops the run's messages under its commit prefix.
 * 3. A run id used again in its thread after its run was erased or purged: the new run's commit ids
 *    share the old run's prefix, and its save replaced or dropped the old run's messages (they were
 *    "its own"). A run removed from the journal leaves its messages no run's: the new run neither
 *    replaces nor drops them (a save under one of their ids is refused, naming it).
 * 5. A half-open owner session (the server ended it, and released its lock, while the client heard
 *    nothing: a proxy that stops forwarding without closing the client's socket) looked held for
 *    ever: another worker's sweep took the owner's run over while the owner went on in its tool.
 *    The session's heartbeat notices it, the lock is taken again within the sweeps' grace, and no
 *    run is taken over.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { filter, firstValueFrom, lastValueFrom, ReplaySubject, take, toArray } from 'rxjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { Agent, InvalidMessageError } from 'rxagent';
import { createRunWorker, InMemoryRunJournal, RunNotFoundError, type FaultPointInfo, type RunFaultPoint, type RunJournal, type RunWorker, type RunWorkerEvent } from 'rxagent/durable';
import { InMemoryStorage, saveUnsaved, type MemoryStorage } from 'rxagent/memory';
import { MessageList, type MastraDBMessage } from 'rxagent/message-list';
import { PostgresRunJournal, PostgresStorage } from 'rxagent/storage/postgres';
import { commitMessageId, commitMessageIdPrefix } from '../../src/contract/commit-message-ids.js';
import { commit, delta, finish, start } from '../storage/journal-suite.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { plainLookAgent } from './fixtures/look-agent.js';
import { suitePostgres } from './fixtures/suite-postgres.js';

const suffix = randomUUID().slice(0, 6);
const schema = `rxagent_rt12c_${suffix}`;

/** The file's PostgreSQL; what `keep` is given is closed after its tests, then its schemas dropped. */
const suite = suitePostgres([schema, `${schema}_purge`, `${schema}_boss`]);
const { keep } = suite;

/** What a promise ended with. */
async function outcome<T>(promise: Promise<T>): Promise<{ value: T } | { error: unknown }> {
  try {
    return { value: await promise };
  } catch (error) {
    return { error };
  }
}

const errorOf = (result: { value: unknown } | { error: unknown }): unknown => ('error' in result ? result.error : undefined);

/** A run claimed and started (one chunk and the input commit), still open. */
async function openRun(journal: RunJournal, threadId?: string, runId = `run-${randomUUID()}`) {
  await journal.createRun({ runId, agentId: 'support', input: null, ...(threadId === undefined ? {} : { threadId, resourceId: 'u1' }) });
  const { lease } = await journal.claim(runId, 'w1');
  await journal.append(lease, [start(runId)], commit('input'));
  return { runId, lease };
}

describe('1. a live reader of a run force-erased while it reads', () => {
  interface Readers {
    /** The journal the reader reads through. */
    reader: RunJournal;
    /** The journal that erases the run (the same or another instance). */
    eraser: RunJournal;
  }
  const cases: Array<[string, () => Readers]> = [
    [
      'in memory',
      () => {
        const journal = new InMemoryRunJournal();
        return { reader: journal, eraser: journal };
      },
    ],
    [
      'PostgreSQL, the same instance',
      () => {
        const journal = keep(new PostgresRunJournal({ connectionString: suite.server.connectionString, schema }));
        return { reader: journal, eraser: journal };
      },
    ],
    [
      'PostgreSQL, another instance (notified)',
      () => ({
        reader: keep(new PostgresRunJournal({ connectionString: suite.server.connectionString, schema })),
        eraser: keep(new PostgresRunJournal({ connectionString: suite.server.connectionString, schema })),
      }),
    ],
    [
      'PostgreSQL, another instance, notifications off (the poll)',
      () => ({
        reader: keep(new PostgresRunJournal({ connectionString: suite.server.connectionString, schema, notify: false, pollIntervalMs: 100 })),
        eraser: keep(new PostgresRunJournal({ connectionString: suite.server.connectionString, schema, notify: false, pollIntervalMs: 100 })),
      }),
    ],
  ];

  it.each(cases)('%s: the reader ends with RunNotFoundError (it waited for ever), every live reader of the run and its signal listener', { timeout: 30_000 }, async (_name, make) => {
    const { reader, eraser } = make();
    const { runId, lease } = await openRun(reader);
    await reader.append(lease, [delta(runId, 'a')]);
    // two live readers sharing the run's tail, and the owner's signal listener
    const entries = new ReplaySubject<number>();
    const first = outcome(lastValueFrom(reader.read$(runId).pipe(toArray())));
    const second = outcome(lastValueFrom(reader.read$(runId, { after: 1 }).pipe(toArray())));
    const signals = outcome(lastValueFrom(reader.signals$(runId).pipe(toArray())));
    reader.read$(runId).subscribe({ next: (entry) => entries.next(entry.seq), error: () => undefined });
    // both rows delivered: the readers follow the tail, waiting for more
    await firstValueFrom(entries.pipe(take(2), toArray()));
    expect(await eraser.deleteRun(runId, { force: true })).toBe(true);
    for (const read of [await first, await second]) {
      const error = errorOf(read);
      expect(RunNotFoundError.isInstance(error), String(error)).toBe(true);
      expect(error).toMatchObject({ runId });
    }
    const signalError = errorOf(await signals);
    expect(RunNotFoundError.isInstance(signalError), String(signalError)).toBe(true);
  });
});

/** A text message under `id`. */
function textMessage(id: string, role: 'user' | 'assistant', text: string, at = Date.now()): MastraDBMessage {
  return { id, role, createdAt: new Date(at), content: { format: 2, parts: [{ type: 'text', text }] } } as MastraDBMessage;
}

const textOf = (message: MastraDBMessage): string => message.content.parts.map((part) => (part.type === 'text' ? part.text : part.type)).join('');

interface Backing {
  journal: RunJournal;
  storage: MemoryStorage;
  /** Removes the ended run from the journal the way retention does (purged past its row retention), where the journal purges. */
  purging?: { journal: RunJournal; storage: MemoryStorage };
}

const backings: Array<[string, () => Backing]> = [
  [
    'in memory',
    () => {
      const journal = new InMemoryRunJournal();
      const purgingJournal = new InMemoryRunJournal({ chunkRetentionSeconds: 0, runRetentionSeconds: 0 });
      return {
        journal,
        storage: new InMemoryStorage({ runJournal: journal }),
        purging: { journal: purgingJournal, storage: new InMemoryStorage({ runJournal: purgingJournal }) },
      };
    },
  ],
  [
    'PostgreSQL',
    () => {
      const purge = `${schema}_purge`;
      return {
        journal: keep(new PostgresRunJournal({ connectionString: suite.server.connectionString, schema })),
        storage: keep(new PostgresStorage({ connectionString: suite.server.connectionString, schema })),
        purging: {
          journal: keep(new PostgresRunJournal({ connectionString: suite.server.connectionString, schema: purge, chunkRetentionSeconds: 0, runRetentionSeconds: 0 })),
          storage: keep(new PostgresStorage({ connectionString: suite.server.connectionString, schema: purge })),
        },
      };
    },
  ],
];

describe.each(backings)('memory of a durable run (%s)', (_name, make) => {
  let backing: Backing;
  beforeAll(() => {
    backing = make();
  });

  it('2. the next owner’s commit saves nothing: the first owner’s commit messages are dropped (they stayed), the run’s input kept', { timeout: 30_000 }, async () => {
    const { journal, storage } = backing;
    const threadId = `t-empty-${randomUUID()}`;
    const { runId, lease } = await openRun(journal, threadId);
    const input = textMessage(randomUUID(), 'user', 'Hello');
    const note = textMessage(commitMessageId(runId, 0), 'assistant', 'note of the first owner', Date.now() + 1);
    await storage.saveMessages({
      threadId,
      resourceId: 'u1',
      messages: [input, note],
      ensureThread: true,
      fence: { runId, epoch: lease.epoch },
      supersedesIdPrefix: commitMessageIdPrefix(runId),
    });
    // taken over: the next owner's commit runs again and its hooks leave nothing to save
    const { lease: next } = await journal.claim(runId, 'w2');
    expect(next.epoch).toBe(lease.epoch + 1);
    const saved = await saveUnsaved(storage, threadId, 'u1', new MessageList({ threadId, resourceId: 'u1' }), undefined, { runId, epoch: next.epoch });
    expect(saved).toBe(0);
    const messages = await storage.getMessages({ threadId });
    expect(messages.map(textOf)).toEqual(['Hello']);
    // the first owner's epoch is fenced, even with nothing to save
    const stale = await outcome(saveUnsaved(storage, threadId, 'u1', new MessageList({ threadId, resourceId: 'u1' }), undefined, { runId, epoch: lease.epoch }));
    expect(errorOf(stale)).toMatchObject({ name: 'FencedError' });
  });

  for (const how of ['erased', 'purged'] as const) {
    it(`3. a run id used again in its thread after its run was ${how}: the old run’s messages are neither dropped nor replaced by the new run`, { timeout: 30_000 }, async () => {
      const { journal, storage } = how === 'erased' ? backing : (backing.purging as NonNullable<Backing['purging']>);
      const threadId = `t-reuse-${how}-${randomUUID()}`;
      const { runId, lease } = await openRun(journal, threadId, `reused-${randomUUID()}`);
      const note = textMessage(commitMessageId(runId, 0), 'assistant', 'note of the old run');
      const other = textMessage(commitMessageId(runId, 1), 'assistant', 'second note of the old run', Date.now() + 1);
      await storage.saveMessages({ threadId, resourceId: 'u1', messages: [note, other], ensureThread: true, fence: { runId, epoch: lease.epoch }, supersedesIdPrefix: commitMessageIdPrefix(runId) });
      await journal.append(lease, [finish(runId)], commit('final', null));
      if (how === 'erased') {
        expect(await journal.deleteRun(runId)).toBe(true);
      } else {
        while (!(await journal.purgeExpired()).done);
        expect(await journal.getRun(runId)).toBeNull();
      }
      const before = await storage.getMessages({ threadId });
      expect(before.map(textOf)).toEqual(['note of the old run', 'second note of the old run']);
      // the same id again, in the same thread: another run
      const again = await openRun(journal, threadId, runId);
      const fence = { runId, epoch: again.lease.epoch };
      // its commit saves nothing: the old run's messages stay
      await saveUnsaved(storage, threadId, 'u1', new MessageList({ threadId, resourceId: 'u1' }), undefined, fence);
      expect(await storage.getMessages({ threadId })).toEqual(before);
      // its commit's first id is the old note's: refused, naming it, nothing changed
      const replaced = await outcome(
        storage.saveMessages({ threadId, resourceId: 'u1', messages: [textMessage(commitMessageId(runId, 0), 'assistant', 'note of the new run')], fence, supersedesIdPrefix: commitMessageIdPrefix(runId) }),
      );
      expect(InvalidMessageError.isInstance(errorOf(replaced)), String(errorOf(replaced))).toBe(true);
      expect(String((errorOf(replaced) as Error).message)).toContain(commitMessageId(runId, 0));
      expect(await storage.getMessages({ threadId })).toEqual(before);
    });
  }
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('5. a half-open owner session', () => {
  it('the server ends the owner’s session while its connection is blackholed and the owner is in its tool: the owner notices, takes its lock again within the grace, and no sweep takes the run over', { timeout: 120_000 }, async () => {
    const proxy = keep(await startTcpProxy(suite.server.connectionString));
    const admin = new pg.Pool({ connectionString: suite.server.connectionString, max: 2 });
    const direct = keep(new PostgresRunJournal({ connectionString: suite.server.connectionString, schema }));
    const ownerJournal = keep(new PostgresRunJournal({ connectionString: proxy.connectionString, schema, connectionTimeoutMs: 1_000 }));
    const boss = new PgBoss({ connectionString: suite.server.connectionString, schema: `${schema}_boss`, superviseIntervalSeconds: 1, monitorIntervalSeconds: 1 });
    boss.on('error', () => undefined);
    await boss.start();
    const workers: RunWorker[] = [];
    let release: () => void = () => undefined;
    try {
      const tool = new Promise<void>((resolve) => (release = resolve));
      let inTool: () => void = () => undefined;
      const toolStarted = new Promise<void>((resolve) => (inTool = resolve));
      // one first execution, the owner's: the sweeper's agent counts with it
      const executions = { count: 0 };
      const agent = (): Agent =>
        plainLookAgent('half-open', {
          executions,
          first: async () => {
            inTool();
            await tool;
          },
        });
      const graceMs = 3_000;
      const ownerId = `half-open-owner-${suffix}`;
      const claims: string[] = [];
      const faultPoint = (point: RunFaultPoint, info: FaultPointInfo): void => {
        if (point === 'tool-started') claims.push(`${info.epoch}`);
      };
      const owner = createRunWorker({ journal: ownerJournal, boss, agents: [agent()], workerId: ownerId, concurrency: 1, retention: false, faultPoint, lostOwnerSweep: { graceMs, intervalMs: 100 }, queue: { pollingIntervalSeconds: 0.5 } });
      workers.push(owner);
      const seen = new ReplaySubject<RunWorkerEvent>();
      owner.events$.subscribe(seen);
      await owner.start();
      const { runId } = await owner.submit('half-open', 'Please look');
      await toolStarted;
      // the sweeper reads the database directly: to it, the owner's session is gone once the server ended it
      const sweeper = createRunWorker({ journal: direct, boss, agents: [agent()], workerId: `half-open-sweeper-${suffix}`, concurrency: 1, retention: false, lostOwnerSweep: { graceMs, intervalMs: 100 }, queue: { pollingIntervalSeconds: 0.5 } });
      workers.push(sweeper);
      const sweeperEvents: RunWorkerEvent[] = [];
      sweeper.events$.subscribe((event) => sweeperEvents.push(event));
      await sweeper.start();
      // the owner's session: the backend holding its lock, and the port it is connected from (the proxy's)
      const lockHolder = async (): Promise<{ pid: number; port: number } | undefined> => {
        const result = await admin.query<{ pid: number; port: number }>(
          `SELECT l.pid, a.client_port AS port FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
           WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
             AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended('rxagent.owner/' || $1 || '/' || $2, 0)`,
          [schema, ownerId],
        );
        return result.rows[0];
      };
      const before = await lockHolder();
      expect(before).toBeDefined();
      // blackholed, then ended by the server: the lock is free, the owner hears nothing
      expect(proxy.freeze(before!.port)).toBe(true);
      await admin.query('SELECT pg_terminate_backend($1)', [before!.pid]);
      // the sweeps' grace twice over: a sweep takes the run over if the owner has not taken its lock again
      await sleep(2 * graceMs + 2_000);
      const after = await lockHolder();
      expect(after, 'the owner holds its lock again, from another backend').toBeDefined();
      expect(after!.pid).not.toBe(before!.pid);
      expect(sweeperEvents.filter((event) => event.type === 'claimed')).toEqual([]);
      release();
      const completed = await firstValueFrom(seen.pipe(filter((event): event is Extract<RunWorkerEvent, { type: 'completed' }> => event.type === 'completed' && event.runId === runId)));
      expect(completed.status).toBe('completed');
      expect(await direct.getRun(runId)).toMatchObject({ status: 'completed', epoch: 1 });
      expect(sweeperEvents.filter((event) => event.type === 'claimed')).toEqual([]);
      expect(claims).toEqual(['1']);
    } finally {
      release();
      // the frozen connection ended first: a session closing over it would wait for its answer
      await proxy.close();
      for (const worker of workers) await worker.close().catch(() => undefined);
      await boss.stop({ graceful: false });
      await admin.end();
    }
  });
});
