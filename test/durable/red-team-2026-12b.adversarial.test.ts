/**
 * Red team, December 2026 (b): what the first pass (red-team-2026-12.adversarial.test.ts) left,
 * each injected for real on the test PostgreSQL with a real pg-boss: a TCP proxy that cuts a
 * worker's connections and refuses new ones for a while, and a worker whose queue client fails
 * the way a crash would, at the point the test names.
 *
 * - An outage of ≈ 1.4 s (every worker's connection to the journal cut and refused): the owner
 *   sessions' reconnect backoff had grown to 1–2 s, past the sweepers' grace (750 ms) once the
 *   database answered again, so a sweep took live owners' runs over (an extra takeover each: the
 *   step ran again). Now each session is back within the grace and keeps its runs.
 * - The refund of a fenced attempt: any attempt fenced after its owner's session had been seen
 *   without its lock at any point since the claim was noted as the infrastructure's, even one
 *   fenced long after for another reason. Now only an attempt that can have been fenced while the
 *   session was without its lock or within the grace after (the window of another worker's sweep).
 * - A crash during a handover (the next generation's job sent, the old job failed), the old job's
 *   retry fencing the new generation (whose job then completed), then a refund decision — or a
 *   second handover — whose job of the next generation already existed, completed: the run was
 *   left `running` with no job. Now the run goes on in the first generation whose job it can have.
 * - The session's reconnects were at most 200 ms apart whatever the workers' grace (a worker could
 *   not name it), and the worker looked at `held` every 50 ms for its whole life. Now the worker
 *   asks for a quarter of its grace (`holdOwnerSession(owner, { reconnectWithinMs })`: with
 *   `graceMs: 300` the owners keep their runs through a 1 s cut) and hears each change from the
 *   session's `lock$` (no timer of its own; the session's transitions shown on a fake connection).
 */
import { randomUUID } from 'node:crypto';
import { PgBoss } from 'pg-boss';
import { ReplaySubject, filter, firstValueFrom, type Observable } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Agent } from 'rxagent';
import { createRunWorker, type FaultPointInfo, type RunFaultPoint, type RunJob, type RunJournal, type RunQueue, type RunWorker, type RunWorkerEvent, type RunWorkerOptions } from 'rxagent/durable';
import { PostgresRunJournal } from 'rxagent/storage/postgres';
import type { OwnerLockState, OwnerSession } from '../../src/storage/journal/types.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { plainLookAgent } from './fixtures/look-agent.js';
import { queueNameOf } from '../../src/durable/internal/queues.js';
import { jobIdIn } from './fixtures/run-jobs.js';
import { PostgresOwnerSession, type SessionClock, type SessionConnection } from '../../src/storage/postgres/owner-session.js';

const suffix = randomUUID().slice(0, 6);
const schema = `rxagent_red_b_${suffix}`;
const bossSchema = `pgboss_red_b_${suffix}`;
let server: TestPostgres;
/** The test's journal (direct). */
let journal: PostgresRunJournal;
let boss: PgBoss;
const proxies: TcpProxy[] = [];
const journals: PostgresRunJournal[] = [];
const workers: RunWorker[] = [];

/** "Please look": a text and `lookups` calls of the idempotent `lookup`, one per step (it waits for `gate()` the first time it runs), then the answer. */
function lookAgent(id: string, gate: () => Promise<void> = async () => undefined, lookups = 1): Agent {
  return plainLookAgent(id, { wordDelayMs: 1, first: gate, lookups });
}

function newWorker(options: Partial<RunWorkerOptions> & Pick<RunWorkerOptions, 'agents' | 'workerId'>): RunWorker {
  const worker = createRunWorker({ journal, boss, concurrency: 1, retention: false, queue: { pollingIntervalSeconds: 0.5, retryLimit: 2 }, ...options });
  workers.push(worker);
  return worker;
}

/** A journal whose pool and owner sessions go through a proxy of their own. */
async function proxiedJournal(): Promise<{ journal: PostgresRunJournal; proxy: TcpProxy }> {
  const proxy = await startTcpProxy(server.connectionString);
  proxies.push(proxy);
  const made = new PostgresRunJournal({ connectionString: proxy.connectionString, schema, connectionTimeoutMs: 1_000 });
  journals.push(made);
  return { journal: made, proxy };
}

/** A worker's events from now on, kept (`until` finds one that came before it was asked for). */
function recorded(events$: Observable<RunWorkerEvent>): { all: RunWorkerEvent[]; until<T extends RunWorkerEvent['type']>(type: T, runId: string): Promise<Extract<RunWorkerEvent, { type: T }>> } {
  const seen = new ReplaySubject<RunWorkerEvent>();
  const all: RunWorkerEvent[] = [];
  events$.subscribe(seen);
  events$.subscribe((event) => all.push(event));
  return {
    all,
    until: (type, runId) => firstValueFrom(seen.pipe(filter((event): event is Extract<RunWorkerEvent, { type: typeof type }> => event.type === type && event.runId === runId))),
  };
}

/** Resolves once `condition()` holds (asked every 50 ms); rejects naming `what` after `limitMs`. */
async function eventually(condition: () => Promise<boolean> | boolean, what: string, limitMs: number): Promise<void> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > limitMs) throw new Error(`eventually: ${what} did not happen within ${limitMs} ms`);
    await sleep(50);
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A promise and its resolver. */
function gate(): { opened: Promise<void>; open(): void } {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** The state of run `runId`'s job of `generation` in pg-boss (`null`: none). */
async function jobState(agentId: string, runId: string, generation: number): Promise<string | null> {
  return (await boss.getJobById(queueNameOf('rxagent.runs.', agentId), await jobIdIn(journal, runId, generation)))?.state ?? null;
}

/** `boss` with some methods replaced (the others bound to it). */
function wrapBoss(overrides: Partial<RunQueue>): RunQueue {
  return new Proxy(boss, {
    get(object, key) {
      if (Object.hasOwn(overrides, key)) return overrides[key as keyof RunQueue];
      const value: unknown = Reflect.get(object, key, object);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(object) : value;
    },
  }) as unknown as RunQueue;
}

beforeAll(async () => {
  server = await startTestPostgres();
  journal = new PostgresRunJournal({ connectionString: server.connectionString, schema });
  boss = new PgBoss({ connectionString: server.connectionString, schema: bossSchema, superviseIntervalSeconds: 1, monitorIntervalSeconds: 1, maintenanceIntervalSeconds: 1 });
  boss.on('error', () => undefined);
  await boss.start();
}, 60_000);

afterAll(async () => {
  for (const proxy of proxies) proxy.refuse(0);
  for (const worker of workers) await worker.close().catch(() => undefined);
  await boss?.stop({ graceful: false });
  for (const made of journals) await made.close();
  await journal?.close();
  for (const proxy of proxies) await proxy.close();
  await server?.stop();
}, 60_000);

/**
 * `owners` workers each hold one run of `agentId` in its tool (a gate) while a sweeper watches; every
 * connection of their journal (`wrap`ped, if given) is then refused for `outageMs` and cut, and the
 * tools finish 3 s after the database answers again. What each worker saw, for the test to judge.
 */
async function outageWithOwnersInTools(scenario: {
  owners: number;
  agentId: string;
  idPrefix: string;
  outageMs: number;
  ownerSweep: RunWorkerOptions['lostOwnerSweep'];
  sweeperSweep: RunWorkerOptions['lostOwnerSweep'];
  wrap?: (journal: PostgresRunJournal) => RunJournal;
}): Promise<{ runIds: string[]; events: Array<ReturnType<typeof recorded>>; sweeperEvents: ReturnType<typeof recorded>; proxy: TcpProxy }> {
  const { owners, agentId, idPrefix, outageMs } = scenario;
  const tools = gate();
  const { journal: cutJournal, proxy } = await proxiedJournal();
  const ownersJournal = scenario.wrap?.(cutJournal) ?? cutJournal;
  let started = 0;
  const faultPoint = (point: RunFaultPoint, info: FaultPointInfo): void => {
    if (point === 'tool-started' && info.epoch === 1) started++;
  };
  const events: Array<ReturnType<typeof recorded>> = [];
  for (let index = 0; index < owners; index++) {
    const owner = newWorker({ agents: [lookAgent(agentId, () => tools.opened)], journal: ownersJournal, faultPoint, workerId: `${idPrefix}-${index}-${suffix}`, lostOwnerSweep: scenario.ownerSweep });
    events.push(recorded(owner.events$));
    await owner.start();
  }
  const runIds: string[] = [];
  for (let index = 0; index < owners; index++) runIds.push((await workers.at(-1)!.submit(agentId, 'Please look')).runId);
  // each owner (concurrency 1) holds one run, in its tool
  await eventually(() => started === owners, 'every owner in its tool', 30_000);
  const sweeper = newWorker({ agents: [lookAgent(agentId)], journal: ownersJournal, workerId: `${idPrefix}-sweeper-${suffix}`, concurrency: owners, lostOwnerSweep: scenario.sweeperSweep });
  const sweeperEvents = recorded(sweeper.events$);
  await sweeper.start();
  await sleep(500);
  proxy.refuse(outageMs);
  proxy.cut();
  // the database answers again after the outage: give the sweeps time to take over what still looks lost
  await sleep(outageMs + 3_000);
  tools.open();
  for (const [index, runId] of runIds.entries()) {
    const completed = await Promise.race([...events.map((owner) => owner.until('completed', runId)), sweeperEvents.until('completed', runId)]);
    expect({ index, status: completed.status }).toEqual({ index, status: 'completed' });
  }
  return { runIds, events, sweeperEvents, proxy };
}

describe('the owner session after an outage', () => {
  it('every connection to the journal cut and refused for 1.4 s while four owners’ tools run: each owner’s session is back within the sweeper’s grace, and no run is taken over', async () => {
    const { runIds, events, sweeperEvents, proxy } = await outageWithOwnersInTools({
      owners: 4,
      agentId: 'kept',
      idPrefix: 'kept',
      outageMs: 1_400,
      ownerSweep: false,
      // the sweeper (default grace 750 ms) reads the journal through the same proxy: the outage is everyone's
      sweeperSweep: { intervalMs: 100 },
    });
    for (const runId of runIds) expect(await journal.getRun(runId)).toMatchObject({ status: 'completed', terminal: 'finish', epoch: 1 });
    expect(sweeperEvents.all.filter((event) => event.type === 'claimed')).toEqual([]);
    expect(events.flatMap((owner) => owner.all).filter((event) => event.type === 'fenced')).toEqual([]);
    expect(proxy.stats.cut).toBeGreaterThan(0);
  }, 90_000);
});

describe('a fenced attempt is the infrastructure’s only when a sweep can have fenced it', () => {
  /** One run of `agentId` on an owner whose journal goes through a proxy; its tool waits for the test. */
  async function ownerRun(agentId: string, faultPoint: RunWorkerOptions['faultPoint']): Promise<{ runId: string; proxy: TcpProxy; tool: ReturnType<typeof gate>; events: ReturnType<typeof recorded>; toolStarted: Promise<void> }> {
    const tool = gate();
    const toolStarted = gate();
    const { journal: cutJournal, proxy } = await proxiedJournal();
    const owner = newWorker({
      agents: [lookAgent(agentId, () => (toolStarted.open(), tool.opened))],
      journal: cutJournal,
      faultPoint,
      workerId: `${agentId}-owner-${suffix}`,
      lostOwnerSweep: false,
    });
    const events = recorded(owner.events$);
    await owner.start();
    const { runId } = await owner.submit(agentId, 'Please look');
    return { runId, proxy, tool, events, toolStarted: toolStarted.opened };
  }

  it('fenced by another claim long after a session blip the owner got over (its step committed since): not noted', async () => {
    const stepCommitted = gate();
    const goOn = gate();
    const faultPoint = async (point: RunFaultPoint, info: FaultPointInfo): Promise<void> => {
      if (point === 'step-committed' && info.epoch === 1) {
        stepCommitted.open();
        await goOn.opened;
      }
    };
    const { runId, proxy, tool, events, toolStarted } = await ownerRun('late-fence', faultPoint);
    await toolStarted;
    // a blip of the owner's connections (its session too): back within a few hundred ms
    proxy.refuse(300);
    proxy.cut();
    // well past the blip and the grace after it, the tool returns and the step is committed
    await sleep(300 + 2_500);
    tool.open();
    await stepCommitted.opened;
    // then another owner claims the run (not a sweep: the session is held): the owner's next write is fenced
    await journal.claim(runId, `late-fence-other-${suffix}`);
    goOn.open();
    await events.until('fenced', runId);
    await eventually(async () => (await jobState('late-fence', runId, 0)) === 'completed', 'the job completed', 20_000);
    expect(await journal.infrastructureLosses(runId)).toEqual([]);
  }, 60_000);

  it('fenced by a claim while the owner’s session was without its lock: noted, so the give-up refunds it', async () => {
    const { runId, proxy, tool, events, toolStarted } = await ownerRun('cut-fence', undefined);
    await toolStarted;
    proxy.refuse(1_000);
    proxy.cut();
    // while the owner's session is without its lock, another worker claims the run (what a sweep's takeover leads to)
    await sleep(200);
    await journal.claim(runId, `cut-fence-other-${suffix}`);
    await sleep(800 + 1_500);
    tool.open();
    await events.until('fenced', runId);
    await eventually(async () => (await jobState('cut-fence', runId, 0)) === 'completed', 'the job completed', 20_000);
    expect(await journal.infrastructureLosses(runId)).toEqual(['0:0']);
  }, 60_000);
});

describe('a crash during a handover, then the next generation’s job completed before the run did', () => {
  /**
   * Worker `a` hands the run over and dies between sending the job of generation 1 and completing
   * its own (its queue client throws after the send): generation 0's job is failed, one attempt
   * left. Worker `b` fetches both jobs; generation 1 claims first (epoch 2), then generation 0's
   * retry claims (epoch 3) and fences it: generation 1's job completes with the run still running,
   * owned by generation 0's last attempt, held at `claimed` until `then` says.
   */
  async function crashedHandover(agentId: string, then: (info: { runId: string; b: RunWorker }) => Promise<void>): Promise<{ runId: string; b: RunWorker; bEvents: ReturnType<typeof recorded> }> {
    const closing = gate();
    let crashes = 0;
    const aBoss = wrapBoss({
      send: async (name: string, data: object, options: Parameters<RunQueue['send']>[2]) => {
        const sent = await boss.send(name, data, options);
        if ((data as RunJob['data']).generation === 1) {
          crashes++;
          throw new Error('worker killed after sending the handover’s job');
        }
        return sent;
      },
    });
    const a = newWorker({
      agents: [lookAgent(agentId, undefined, 3)],
      boss: aBoss,
      workerId: `${agentId}-a-${suffix}`,
      lostOwnerSweep: false,
      queue: { pollingIntervalSeconds: 0.5, retryLimit: 1 },
      faultPoint: async (point, info) => {
        if (point === 'model-committed' && info.epoch === 1) await closing.opened;
      },
    });
    const aEvents = recorded(a.events$);
    await a.start();
    const { runId } = await a.submit(agentId, 'Please look');
    await aEvents.until('committed', runId);
    const closed = a.close({ handover: true });
    closing.open();
    await closed;
    expect(crashes).toBe(1);
    expect(await jobState(agentId, runId, 1)).toBe('created');
    // pg-boss fails the job once the handler's rejection reaches it
    await eventually(async () => (await jobState(agentId, runId, 0)) === 'retry', 'generation 0’s job failed, one attempt left', 20_000);

    const newClaimed = gate();
    const oldClaimed = gate();
    // b holds generation 0's retry until generation 1 has claimed the run
    const bBoss = wrapBoss({
      work: (name: string, options: Parameters<RunQueue['work']>[1], handler: (jobs: RunJob[]) => Promise<unknown>) =>
        boss.work(name, options, async (jobs: RunJob[]) => {
          if (jobs[0]?.data.runId === runId && jobs[0].data.generation === undefined && !name.endsWith('/dead-letter')) await newClaimed.opened;
          return handler(jobs);
        }),
    });
    const b = newWorker({
      agents: [lookAgent(agentId, undefined, 3)],
      boss: bBoss,
      workerId: `${agentId}-b-${suffix}`,
      lostOwnerSweep: false,
      concurrency: 2,
      queue: { pollingIntervalSeconds: 0.5, retryLimit: 1 },
      faultPoint: async (point, info) => {
        if (point !== 'claimed' || info.runId !== runId) return;
        if (info.epoch === 2) {
          newClaimed.open();
          await oldClaimed.opened;
        }
        if (info.epoch === 3) {
          oldClaimed.open();
          await eventually(async () => (await jobState(agentId, runId, 1)) === 'completed', 'generation 1’s job completed', 30_000);
          await then({ runId, b });
        }
      },
    });
    const bEvents = recorded(b.events$);
    await b.start();
    return { runId, b, bEvents };
  }

  it('the dead-letter decision refunds an attempt and requeues: the run goes on in a new generation and completes', async () => {
    const agentId = 'strand-requeue';
    const { runId, bEvents } = await crashedHandover(agentId, async ({ runId: id }) => {
      // generation 0's last attempt: its owner noted an outage, then it dies (the job fails for good)
      await journal.noteInfrastructureLoss(id, '0:1');
      throw new Error('worker killed');
    });
    await eventually(async () => (await journal.getRun(runId))?.status !== 'running', 'the run ended', 30_000).catch(() => undefined);
    expect(await journal.getRun(runId)).toMatchObject({ status: 'completed', terminal: 'finish' });
    const completed = await bEvents.until('completed', runId);
    expect(completed.status).toBe('completed');
    expect(await jobState(agentId, runId, 2)).toBe('completed');
  }, 90_000);

  it('generation 0’s last attempt hands the run over again: the run goes on in a new generation and completes', async () => {
    const agentId = 'strand-handover';
    const { runId } = await crashedHandover(agentId, async ({ b }) => {
      // a deploy: b hands its run over at its next step commit
      void b.close({ handover: true });
    });
    // the next owner
    const c = newWorker({ agents: [lookAgent(agentId, undefined, 3)], workerId: `${agentId}-c-${suffix}`, lostOwnerSweep: false, queue: { pollingIntervalSeconds: 0.5, retryLimit: 1 } });
    const cEvents = recorded(c.events$);
    await c.start();
    await eventually(async () => (await journal.getRun(runId))?.status !== 'running', 'the run ended', 30_000).catch(() => undefined);
    expect(await journal.getRun(runId)).toMatchObject({ status: 'completed', terminal: 'finish' });
    expect((await cEvents.until('completed', runId)).status).toBe('completed');
  }, 90_000);
});

/** `made` with its `holdOwnerSession` calls kept: the options each was asked with, and the handles. */
function keptSessions(made: PostgresRunJournal): { journal: PostgresRunJournal; asked: unknown[]; sessions: OwnerSession[] } {
  const asked: unknown[] = [];
  const sessions: OwnerSession[] = [];
  const kept = new Proxy(made, {
    get(object, key) {
      if (key === 'holdOwnerSession') {
        return (owner: string, options?: { reconnectWithinMs?: number }) => {
          asked.push(options);
          const session = object.holdOwnerSession(owner, options);
          sessions.push(session);
          return session;
        };
      }
      const value: unknown = Reflect.get(object, key, object);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(object) : value;
    },
  });
  return { journal: kept, asked, sessions };
}

describe('the owner session reconnects within the grace the worker names', () => {
  it('every worker with graceMs: 300, every journal connection cut and refused for 1 s while three owners’ tools run: each asks its session for reconnects 75 ms apart, is back within the grace, and keeps its run', async () => {
    // the deployment's workers share their options: the owners sweep too
    const lostOwnerSweep = { intervalMs: 100, graceMs: 300 };
    let asked: unknown[] = [];
    const { runIds, events, sweeperEvents, proxy } = await outageWithOwnersInTools({
      owners: 3,
      agentId: 'kept-300',
      idPrefix: 'kept300',
      outageMs: 1_000,
      ownerSweep: lostOwnerSweep,
      sweeperSweep: lostOwnerSweep,
      wrap: (cut) => {
        const kept = keptSessions(cut);
        asked = kept.asked;
        return kept.journal;
      },
    });
    for (const runId of runIds) expect(await journal.getRun(runId)).toMatchObject({ status: 'completed', terminal: 'finish', epoch: 1 });
    expect(sweeperEvents.all.filter((event) => event.type === 'claimed')).toEqual([]);
    expect([...events, sweeperEvents].flatMap((worker) => worker.all).filter((event) => event.type === 'fenced')).toEqual([]);
    expect(asked).toEqual(Array.from({ length: 3 + 1 }, () => ({ reconnectWithinMs: 75 })));
    expect(proxy.stats.cut).toBeGreaterThan(0);
    expect(proxy.stats.refused).toBeGreaterThan(0);
  }, 90_000);

  it('the worker schedules no timer to look at its session: it hears the lock lost and taken again from lock$', async () => {
    const { journal: cutJournal, proxy } = await proxiedJournal();
    const { journal: keptJournal, asked, sessions } = keptSessions(cutJournal);
    let works = 0;
    const worker = newWorker({
      agents: [lookAgent('no-looks')],
      journal: keptJournal,
      // no fetch loops of pg-boss (they have timers of their own); no sweeps (rxjs timers)
      boss: wrapBoss({ work: async () => `no-looks-work-${works++}`, offWork: async () => undefined }),
      workerId: `no-looks-${suffix}`,
      lostOwnerSweep: false,
    });
    // the intervals the worker sets (other tests' workers and pg-boss, still running, set their own)
    const setInterval = globalThis.setInterval;
    const workerIntervals: string[] = [];
    const intervals = vi.spyOn(globalThis, 'setInterval').mockImplementation(((handler: () => void, ms?: number) => {
      const stack = new Error('setInterval').stack ?? '';
      if (stack.includes('create-run-worker')) workerIntervals.push(stack);
      return setInterval(handler, ms);
    }) as typeof globalThis.setInterval);
    try {
      await worker.start();
      expect(asked).toEqual([{ reconnectWithinMs: 187 }]); // the default grace, 750 ms: a quarter
      const states: boolean[] = [];
      sessions[0]!.lock$.subscribe(({ held }) => states.push(held));
      expect(states).toEqual([true]);
      proxy.refuse(300);
      proxy.cut();
      await eventually(() => states.length >= 3, 'the lock lost and taken again', 20_000);
      expect(states).toEqual([true, false, true]);
      await worker.close();
      expect(workerIntervals).toEqual([]); // before: one, looking every 50 ms for the worker's life
    } finally {
      intervals.mockRestore();
    }
  }, 60_000);

  it('a session without lock$ (a journal of another build): start() rejects naming it, and closes that session', async () => {
    let closed = 0;
    const oldSession = { ready: async () => undefined, held: true, close: async () => void closed++ };
    const old = new Proxy(journal, {
      get(object, key) {
        if (key === 'holdOwnerSession') return () => oldSession;
        const value: unknown = Reflect.get(object, key, object);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(object) : value;
      },
    });
    const worker = newWorker({ agents: [lookAgent('old-session')], journal: old, workerId: `old-session-${suffix}`, lostOwnerSweep: false });
    await expect(worker.start()).rejects.toThrow(/^RunWorker\.start\(\): journal\.holdOwnerSession\(\) returned a session without lock\$/);
    expect(closed).toBe(1);
  });

  it.each([Number.NaN, -1, 0, 2 ** 31, Number.POSITIVE_INFINITY, '100', null])('holdOwnerSession(owner, { reconnectWithinMs: %s }): a TypeError naming it, no session held', (reconnectWithinMs) => {
    const owner = `bad-reconnect-${suffix}`;
    expect(() => journal.holdOwnerSession(owner, { reconnectWithinMs: reconnectWithinMs as number })).toThrow(
      expect.objectContaining({ name: 'TypeError', message: expect.stringMatching(/^PostgresRunJournal\.holdOwnerSession: options\.reconnectWithinMs must be a number of milliseconds above 0 and at most 2147483647/) }),
    );
    expect(() => journal.holdOwnerSession(owner, 'fast' as never)).toThrow(/^PostgresRunJournal\.holdOwnerSession: options must be an object/);
  });

  it('two holders of one owner: each holder’s lock$ completes when it closes, the other keeps the session', async () => {
    const owner = `two-holders-${suffix}`;
    const first = journal.holdOwnerSession(owner, { reconnectWithinMs: 2 ** 31 - 1 });
    const second = journal.holdOwnerSession(owner);
    await Promise.all([first.ready(), second.ready()]);
    const firstStates: Array<boolean | 'complete'> = [];
    const secondStates: Array<boolean | 'complete'> = [];
    first.lock$.subscribe({ next: ({ held }) => firstStates.push(held), complete: () => firstStates.push('complete') });
    second.lock$.subscribe({ next: ({ held }) => secondStates.push(held), complete: () => secondStates.push('complete') });
    await first.close();
    expect({ firstStates, secondStates, held: second.held }).toEqual({ firstStates: [true, 'complete'], secondStates: [true], held: true });
    await second.close();
    expect({ secondStates, held: second.held }).toEqual({ secondStates: [true, 'complete'], held: false });
  });
});

/** A virtual clock for a session: `advance(ms)` runs what is due in order, letting each connection's promises settle. */
function virtualClock(): SessionClock & { advance(ms: number): Promise<void> } {
  let now = 0;
  let made = 0;
  const due = new Map<number, { at: number; run: () => void }>();
  const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
  return {
    now: () => now,
    setTimeout: (run, ms) => {
      due.set(++made, { at: now + ms, run });
      return made;
    },
    clearTimeout: (handle) => void due.delete(handle as number),
    async advance(ms) {
      const until = now + ms;
      await settled();
      for (;;) {
        const next = [...due.entries()].filter(([, timer]) => timer.at <= until).sort(([, a], [, b]) => a.at - b.at)[0];
        if (next === undefined) break;
        due.delete(next[0]);
        now = next[1].at;
        next[1].run();
        await settled();
      }
      now = until;
    },
  };
}

/** A connection the test answers: `connect` and the lock's query as scripted, `drop()` as a cut connection. */
class FakeConnection implements SessionConnection {
  readonly #listeners: Array<() => void> = [];
  ended = false;
  constructor(
    readonly openedAt: number,
    readonly answer: 'refused' | 'locked' | 'taken',
  ) {}
  async connect(): Promise<void> {
    if (this.answer === 'refused') throw new Error('connect ECONNREFUSED');
  }
  async query(): Promise<{ rows: Array<{ locked: boolean }> }> {
    return { rows: [{ locked: this.answer === 'locked' }] };
  }
  async end(): Promise<void> {
    this.ended = true;
  }
  on(event: 'error' | 'end', listener: () => void): void {
    if (event === 'error') this.#listeners.push(listener);
  }
  drop(): void {
    for (const listener of this.#listeners) listener();
  }
}

describe('the owner session’s lock$ (a fake connection, a virtual clock)', () => {
  it('tells each change at the moment it happens, the current state first to a late subscriber, the reconnects at most reconnectWithinMs apart, and completes on close', async () => {
    const clock = virtualClock();
    // each connection's answer in turn: the lock, a refused connect, the lock held by another session (ours the server has not seen die), the lock
    const answers: Array<FakeConnection['answer']> = ['locked', 'refused', 'taken', 'locked'];
    const connections: FakeConnection[] = [];
    const random = vi.spyOn(Math, 'random').mockReturnValue(1); // each pause its whole ceiling
    try {
      const session = new PostgresOwnerSession({ options: {} } as never, 'schema', 'owner-1', 1_000, {
        reconnectWithinMs: 75,
        clock,
        connection: () => {
          const connection = new FakeConnection(clock.now(), answers[connections.length] ?? 'refused');
          connections.push(connection);
          return connection;
        },
      });
      const seen: Array<OwnerLockState | 'complete'> = [];
      session.lock$.subscribe({ next: (state) => seen.push(state), complete: () => seen.push('complete') });
      await clock.advance(0);
      expect(seen).toEqual([
        { held: false, at: 0 },
        { held: true, at: 0 },
      ]);
      await clock.advance(1_000);
      connections[0]!.drop(); // the connection cut at 1000
      await clock.advance(1_000);
      // 75 ms apart (100 ms and 200 ms before the cap): refused at 1075, taken by another at 1150, held at 1225
      expect(connections.map((connection) => [connection.openedAt, connection.answer])).toEqual([
        [0, 'locked'],
        [1075, 'refused'],
        [1150, 'taken'],
        [1225, 'locked'],
      ]);
      expect(connections.map((connection) => connection.ended)).toEqual([true, true, true, false]);
      expect(seen).toEqual([
        { held: false, at: 0 },
        { held: true, at: 0 },
        { held: false, at: 1000 },
        { held: true, at: 1225 },
      ]);
      // a subscriber after the change gets the state with the moment it began
      const late: OwnerLockState[] = [];
      session.lock$.subscribe((state) => late.push(state));
      expect(late).toEqual([{ held: true, at: 1225 }]);
      await session.close();
      expect(seen.slice(4)).toEqual([{ held: false, at: 2000 }, 'complete']);
      expect(connections[3]!.ended).toBe(true);
      await clock.advance(10_000);
      expect(connections).toHaveLength(4); // no reconnect once closed
    } finally {
      random.mockRestore();
    }
  });
});
