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
 */
import { randomUUID } from 'node:crypto';
import { PgBoss } from 'pg-boss';
import { ReplaySubject, filter, firstValueFrom, type Observable } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from 'rxagent';
import { createRunWorker, type FaultPointInfo, type RunFaultPoint, type RunJob, type RunQueue, type RunWorker, type RunWorkerEvent, type RunWorkerOptions } from 'rxagent/durable';
import { PostgresRunJournal } from 'rxagent/storage/postgres';
import { scriptedModel } from 'rxagent/testing';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { generationJobIdOf, queueNameOf } from '../../src/durable/internal/queues.js';

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
  let executions = 0;
  return new Agent({
    id,
    model: scriptedModel({
      wordDelayMs: 1,
      rules: [
        { match: ({ toolResults }) => toolResults.length >= lookups, reply: { text: 'Done.' } },
        { match: ({ toolResults }) => toolResults.length > 0, reply: { text: 'Once more.', toolCalls: [{ toolName: 'lookup', args: { q: 'b' } }] } },
        { match: /look/, reply: { text: 'Looking it up.', toolCalls: [{ toolName: 'lookup', args: { q: 'a' } }] } },
      ],
      fallback: { text: 'Hi.' },
    }),
    tools: {
      lookup: {
        description: 'Looks up (idempotent)',
        inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
        idempotent: true,
        execute: async () => {
          if (executions++ === 0) await gate();
          return { found: true };
        },
      },
    },
  });
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
  return (await boss.getJobById(queueNameOf('rxagent.runs.', agentId), generationJobIdOf(runId, generation)))?.state ?? null;
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

describe('the owner session after an outage', () => {
  it('every connection to the journal cut and refused for 1.4 s while four owners’ tools run: each owner’s session is back within the sweeper’s grace, and no run is taken over', async () => {
    const owners = 4;
    const tools = gate();
    const { journal: cutJournal, proxy } = await proxiedJournal();
    let started = 0;
    const faultPoint = (point: RunFaultPoint, info: FaultPointInfo): void => {
      if (point === 'tool-started' && info.epoch === 1) started++;
    };
    const agentId = 'kept';
    const events: Array<ReturnType<typeof recorded>> = [];
    for (let index = 0; index < owners; index++) {
      const owner = newWorker({ agents: [lookAgent(agentId, () => tools.opened)], journal: cutJournal, faultPoint, workerId: `kept-${index}-${suffix}`, lostOwnerSweep: false });
      events.push(recorded(owner.events$));
      await owner.start();
    }
    const runIds: string[] = [];
    for (let index = 0; index < owners; index++) runIds.push((await workers.at(-1)!.submit(agentId, 'Please look')).runId);
    // each owner (concurrency 1) holds one run, in its tool
    await eventually(() => started === owners, 'every owner in its tool', 30_000);
    // the sweeper (default grace 750 ms) reads the journal through the same proxy: the outage is everyone's
    const sweeper = newWorker({ agents: [lookAgent(agentId)], journal: cutJournal, workerId: `kept-sweeper-${suffix}`, concurrency: owners, lostOwnerSweep: { intervalMs: 100 } });
    const sweeperEvents = recorded(sweeper.events$);
    await sweeper.start();
    await sleep(500);
    proxy.refuse(1_400);
    proxy.cut();
    // the database answers again after 1.4 s: give the sweeps time to take over what still looks lost
    await sleep(1_400 + 3_000);
    tools.open();
    for (const [index, runId] of runIds.entries()) {
      const completed = await Promise.race([...events.map((owner) => owner.until('completed', runId)), sweeperEvents.until('completed', runId)]);
      expect({ index, status: completed.status }).toEqual({ index, status: 'completed' });
    }
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
