/**
 * What the pass of December 2026 that gave owner sessions their heartbeat left, each injected for
 * real on the test PostgreSQL:
 *
 * 1. Reported: with `retryLimit: 0`, an owner alive but in a long tool (longer than the give-up
 *    waits for its note, 7–14 s), its session cut for longer than the sweeps' grace so that a sweep
 *    fails its attempt, learns of it only at its next write — too late, and the run is failed.
 *    Not so, by design: pg-boss's heartbeat (every `heartbeatSeconds / 2`, fenced to the attempts
 *    the worker fetched) finds the attempt no longer the owner's and aborts the job's signal, so the
 *    owner is fenced in its tool within about 5 s of the sweep and notes the loss then, well within
 *    the give-up's wait. Pinned here: the run is handed on and completes.
 * 2. `OwnerSession.close()` awaited the connection's `end()`, which waits for the server's answer:
 *    over a half-open connection (blackholed: nothing forwarded, nothing closed) closed before the
 *    heartbeat noticed, it waited for ever — and a worker's `close()` with it. It ends within its
 *    deadline and then destroys the socket.
 * 3. On PostgreSQL a journal instance's live readers of a run shared one tail keyed by the run id,
 *    and their pages asked for `run_id = $1`: a run erased and created again under its id before an
 *    old reader heard of the erase handed the old reader the new run's rows. A reader reads only the
 *    run it opened (the row's incarnation, given at insert): the old one ends with
 *    `RunNotFoundError`, a reader of the new run gets the new run's rows alone.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { ReplaySubject, filter, firstValueFrom, lastValueFrom, take, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Agent } from 'rxagent';
import { createRunWorker, type FaultPointInfo, type RunFaultPoint, type RunWorker, type RunWorkerEvent, type RunWorkerOptions } from 'rxagent/durable';
import { PostgresRunJournal } from 'rxagent/storage/postgres';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { plainLookAgent } from './fixtures/look-agent.js';
import { suitePostgres } from './fixtures/suite-postgres.js';
import { PostgresOwnerSession } from '../../src/storage/postgres/owner-session.js';
import { RunNotFoundError, type JournalEntry } from 'rxagent/durable';
import { commit, delta, start } from '../storage/journal-suite.js';

const suffix = randomUUID().slice(0, 6);
const schema = `rxagent_rt12d_${suffix}`;
const bossSchema = `pgboss_rt12d_${suffix}`;

/** The file's PostgreSQL; what `keep` is given is closed after its tests, then its schemas dropped. */
const suite = suitePostgres([schema, bossSchema]);
const { keep } = suite;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A worker's events, kept (`until` finds one that came before it was asked for). */
function recorded(worker: RunWorker): { all: RunWorkerEvent[]; until<T extends RunWorkerEvent['type']>(type: T, runId: string): Promise<Extract<RunWorkerEvent, { type: T }>> } {
  const seen = new ReplaySubject<RunWorkerEvent>();
  const all: RunWorkerEvent[] = [];
  worker.events$.subscribe(seen);
  worker.events$.subscribe((event) => all.push(event));
  return {
    all,
    until: (type, runId) => firstValueFrom(seen.pipe(filter((event): event is Extract<RunWorkerEvent, { type: typeof type }> => event.type === type && event.runId === runId))),
  };
}

describe('1. an owner in a long tool whose session was cut long enough for a sweep to take its attempt (retryLimit 0)', () => {
  it('the owner is fenced in its tool by pg-boss’s heartbeat (not at its next write) and notes the lost attempt: the give-up hands the run on, it completes', { timeout: 150_000 }, async () => {
    const proxy = keep(await startTcpProxy(suite.server.connectionString));
    const direct = keep(new PostgresRunJournal({ connectionString: suite.server.connectionString, schema }));
    const ownerJournal = keep(new PostgresRunJournal({ connectionString: proxy.connectionString, schema, connectionTimeoutMs: 1_000 }));
    const newBoss = async (connectionString: string): Promise<PgBoss> => {
      const made = new PgBoss({ connectionString, schema: bossSchema, superviseIntervalSeconds: 1, monitorIntervalSeconds: 1, maintenanceIntervalSeconds: 1 });
      made.on('error', () => undefined);
      await made.start();
      keep({ close: () => made.stop({ graceful: false }) });
      return made;
    };
    const boss = await newBoss(suite.server.connectionString);
    // the first execution of the tool outlasts the give-up's wait for a note (7–14 s) by far
    let release: () => void = () => undefined;
    const longTool = new Promise<void>((resolve) => (release = resolve));
    keep({ close: async () => release() });
    // one first execution, the owner's: the sweeper's agent counts with it
    const executions = { count: 0 };
    let firstReturned = false;
    const agent = (): Agent =>
      plainLookAgent('long-tool', {
        executions,
        first: async () => {
          await Promise.race([longTool, sleep(60_000)]);
          firstReturned = true;
        },
      });
    const admin = new pg.Pool({ connectionString: suite.server.connectionString, max: 1 });
    keep({ close: () => admin.end() });
    const ownerId = `long-owner-${suffix}`;
    let cuts = 0;
    const faultPoint = async (point: RunFaultPoint, info: FaultPointInfo): Promise<void> => {
      if (point === 'tool-started' && info.epoch === 1 && cuts === 0) {
        cuts++;
        // the owner's session alone: its backend ended by the server, and new connections of the
        // owner's journal refused for 3 s (four times the sweeps' grace); its pool's connections stay
        proxy.refuse(3_000);
        await admin.query(
          `SELECT pg_terminate_backend(l.pid) FROM pg_locks l
           WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
             AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended('rxagent.owner/' || $1 || '/' || $2, 0)`,
          [schema, ownerId],
        );
      }
    };
    const workers: RunWorker[] = [];
    const worker = (options: { journal: PostgresRunJournal; boss: PgBoss; workerId: string; faultPoint?: RunWorkerOptions['faultPoint']; sweep: boolean }): RunWorker => {
      const made = createRunWorker({
        journal: options.journal,
        boss: options.boss,
        agents: [agent()],
        workerId: options.workerId,
        concurrency: 1,
        retention: false,
        ...(options.faultPoint === undefined ? {} : { faultPoint: options.faultPoint }),
        lostOwnerSweep: options.sweep ? { intervalMs: 100 } : false,
        queue: { pollingIntervalSeconds: 0.5, retryLimit: 0 },
      });
      workers.push(made);
      keep({ close: () => made.close() });
      return made;
    };
    const owner = worker({ journal: ownerJournal, boss, workerId: ownerId, faultPoint, sweep: false });
    const ownerEvents = recorded(owner);
    await owner.start();
    const { runId } = await owner.submit('long-tool', 'Please look');
    await ownerEvents.until('claimed', runId);
    const sweeper = worker({ journal: direct, boss, workerId: `long-sweeper-${suffix}`, sweep: true });
    const sweeperEvents = recorded(sweeper);
    await sweeper.start();
    const ended = await Promise.race([ownerEvents.until('completed', runId), sweeperEvents.until('completed', runId)]);
    const returnedBeforeTheEnd = firstReturned;
    release();
    expect(cuts).toBe(1);
    expect(ended.status).toBe('completed');
    const run = await direct.getRun(runId);
    // handed on by the give-up (the next generation's job claimed it), not failed
    expect(run).toMatchObject({ status: 'completed', terminal: 'finish', epoch: 2 });
    // the owner's attempt was noted as the infrastructure's
    expect(await direct.infrastructureLosses(runId)).toEqual(['0:0']);
    // fenced once, in its tool, by pg-boss: its heartbeat found the attempt no longer the owner's claim and aborted the job's signal
    const fenced = ownerEvents.all.filter((event) => event.runId === runId && event.type === 'fenced');
    expect(fenced).toHaveLength(1);
    expect(String((fenced[0] as { error?: { message?: string } }).error?.message)).toMatch(/no longer active under this worker's claim/);
    expect(ownerEvents.all.filter((event) => event.runId === runId && event.type === 'failed')).toEqual([]);
    // and the tool had not returned yet: the owner did not learn of it at its next write
    expect(returnedBeforeTheEnd).toBe(false);
    expect(executions.count).toBe(2);
  });
});

describe('2. an owner session closed over a blackholed connection', () => {
  it('close() resolves (it waited for ever for the server to answer its goodbye): the socket is destroyed after the deadline', { timeout: 30_000 }, async () => {
    const proxy = keep(await startTcpProxy(suite.server.connectionString));
    // the pool only lends the session its settings; the session opens a connection of its own
    const pool = new pg.Pool({ connectionString: proxy.connectionString });
    keep({ close: () => pool.end() });
    // heartbeats a minute apart: close() comes before the session could notice
    const session = new PostgresOwnerSession(pool, schema, `closing-${suffix}`, 1_000, { reconnectWithinMs: 60_000 });
    await session.ready();
    expect(session.held).toBe(true);
    proxy.freeze();
    await session.close();
    expect(session.held).toBe(false);
  });
});

describe('3. a live reader of a run erased and created again under its id before the reader heard of it (PostgreSQL)', () => {
  it('the old reader ends with RunNotFoundError and is handed none of the new run’s rows; a reader of the new run gets its rows alone', { timeout: 30_000 }, async () => {
    // the reader's instance hears of nothing but its own writes (no notifications, a poll a minute apart)
    const reader = keep(new PostgresRunJournal({ connectionString: suite.server.connectionString, schema, notify: false, pollIntervalMs: 60_000 }));
    const eraser = keep(new PostgresRunJournal({ connectionString: suite.server.connectionString, schema }));
    const runId = `again-${randomUUID()}`;
    await reader.createRun({ runId, agentId: 'support', input: null });
    const first = await reader.claim(runId, 'w1');
    await reader.append(first.lease, [start(runId, 'old'), delta(runId, 'old a')], commit('input'));
    const seen: JournalEntry[] = [];
    let caught: unknown;
    const ended = new Promise<void>((resolve) => {
      reader.read$(runId).subscribe({ next: (entry) => seen.push(entry), error: (error: unknown) => ((caught = error), resolve()), complete: resolve });
    });
    const followed = async (count: number): Promise<void> => {
      for (let waited = 0; seen.length < count && waited < 200; waited++) await sleep(25);
    };
    await followed(2);
    expect(seen.map((entry) => entry.seq)).toEqual([1, 2]);
    // erased and created again through another instance: the reader's instance heard nothing
    expect(await eraser.deleteRun(runId, { force: true })).toBe(true);
    await eraser.createRun({ runId, agentId: 'support', input: null });
    // the new run written by the reader's instance (its own write wakes the run's tail)
    const second = await reader.claim(runId, 'w2');
    await reader.append(second.lease, [start(runId, 'new'), delta(runId, 'new a'), delta(runId, 'new b')], commit('input'));
    const fresh = lastValueFrom(reader.read$(runId).pipe(take(3), toArray()));
    // (it waited for ever before, with a row of the new run)
    await Promise.race([ended, sleep(10_000)]);
    expect(seen.map((entry) => entry.seq), 'the old reader got rows of the new run').toEqual([1, 2]);
    expect(RunNotFoundError.isInstance(caught), String(caught)).toBe(true);
    const newRows = await fresh;
    expect(newRows.map((entry) => (entry.chunk as { payload: { text?: string; messageId?: string } }).payload)).toEqual([{ messageId: 'new' }, { id: 't1', text: 'new a' }, { id: 't1', text: 'new b' }]);
  });
});
