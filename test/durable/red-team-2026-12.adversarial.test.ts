/**
 * Red team, December 2026: faults of the durable runtime nobody had named, each injected for real
 * on the test PostgreSQL (a TCP proxy that cuts a worker's connections and refuses new ones for a
 * while) with a real pg-boss, and `retryLimit: 0` — so an attempt spent on the infrastructure
 * would give the run up (`failed`) instead of letting it go on from its last commit.
 *
 * - The job of a handover sent while pg-boss's connection is cut: the send failed, the attempt
 *   threw, and the run was given up (RunAttemptsExhaustedError) — a blip ended it.
 * - The owner's session connection cut for longer than the other workers' lost-owner grace while
 *   the owner lives (a slow tool: nothing else of the run was written meanwhile): a sweep failed
 *   its job's attempt, the owner was fenced, and nobody noted that the infrastructure did it —
 *   the run was given up.
 * - An attempt in its infrastructure retries whose job was handed on meanwhile (a sweep failed it)
 *   to another attempt on the same worker: the old attempt found the run "claimed by this worker"
 *   and claimed it again, fencing the new one — whose job then completed, leaving the run to an
 *   attempt pg-boss no longer knew (stranded `running` once that one was aborted). Here the blips
 *   are a wrapped journal's (the error the real store throws), so the order is the test's.
 * - `cancel()` while the database blips (its read of the run, its write of the stop): the caller
 *   got the storage error and the run went on, unstopped.
 * - A run the claim finds it cannot go on from (a row edited), whose fail-closed `final` commit
 *   meets a blip: the attempt threw, the job was given up, and the run ended with
 *   RunAttemptsExhaustedError instead of the error naming the row.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { ReplaySubject, filter, firstValueFrom, take, toArray, type Observable } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from 'rxagent';
import { StorageError } from 'rxagent/memory';
import { createRunWorker, type FaultPointInfo, type RunFaultPoint, type RunWorker, type RunWorkerEvent, type RunWorkerOptions } from 'rxagent/durable';
import { PostgresRunJournal } from 'rxagent/storage/postgres';
import { journalEntries } from './fixtures/matrix-checks.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { plainLookAgent } from './fixtures/look-agent.js';
import { settle } from '../support/wait-for.js';
import { queueNameOf } from '../../src/durable/internal/queues.js';

const suffix = randomUUID().slice(0, 6);
const schema = `rxagent_red_${suffix}`;
const bossSchema = `pgboss_red_${suffix}`;
let server: TestPostgres;
/** The test's journal, and the workers' that connect directly. */
let journal: PostgresRunJournal;
/** A journal through `journalProxy` (its pool and its owner session). */
let proxiedJournal: PostgresRunJournal;
let boss: PgBoss;
/** A pg-boss through `bossProxy`. */
let proxiedBoss: PgBoss;
let journalProxy: TcpProxy;
let bossProxy: TcpProxy;
const workers: RunWorker[] = [];
/** Tool effects, by idempotency key. */
const effects: string[] = [];

/** "Please look": a text and one call of the idempotent `lookup` (its first execution takes `firstToolMs`), then the answer. */
function lookAgent(id: string, firstToolMs = 0): Agent {
  return plainLookAgent(id, { wordDelayMs: 2, effects, ...(firstToolMs > 0 ? { first: () => new Promise<void>((resolve) => setTimeout(resolve, firstToolMs)) } : {}) });
}

function newWorker(options: Partial<RunWorkerOptions> & Pick<RunWorkerOptions, 'agents' | 'workerId'>): RunWorker {
  const worker = createRunWorker({ journal, boss, concurrency: 1, retention: false, queue: { pollingIntervalSeconds: 0.5, retryLimit: 0 }, ...options });
  workers.push(worker);
  return worker;
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

/** The error the real store throws for a blip: a `StorageError` around the driver's error. */
const blip = (): StorageError => new StorageError({ operation: 'read', cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) });

/** `target` with some methods replaced (the others bound to it: the real classes keep private fields). */
function wrap<T extends object>(target: T, overrides: Partial<Record<keyof T, unknown>>): T {
  return new Proxy(target, {
    get(object, key) {
      if (Object.hasOwn(overrides, key)) return overrides[key as keyof T];
      const value: unknown = Reflect.get(object, key, object);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(object) : value;
    },
  });
}

const newBoss = async (connectionString: string): Promise<PgBoss> => {
  const made = new PgBoss({ connectionString, schema: bossSchema, superviseIntervalSeconds: 1, monitorIntervalSeconds: 1, maintenanceIntervalSeconds: 1 });
  made.on('error', () => undefined);
  await made.start();
  return made;
};

beforeAll(async () => {
  server = await startTestPostgres();
  journalProxy = await startTcpProxy(server.connectionString);
  bossProxy = await startTcpProxy(server.connectionString);
  journal = new PostgresRunJournal({ connectionString: server.connectionString, schema });
  proxiedJournal = new PostgresRunJournal({ connectionString: journalProxy.connectionString, schema, connectionTimeoutMs: 1_000 });
  boss = await newBoss(server.connectionString);
  proxiedBoss = await newBoss(bossProxy.connectionString);
}, 60_000);

afterAll(async () => {
  journalProxy?.refuse(0);
  bossProxy?.refuse(0);
  for (const worker of workers) await worker.close().catch(() => undefined);
  await proxiedBoss?.stop({ graceful: false }).catch(() => undefined);
  await boss?.stop({ graceful: false });
  await proxiedJournal?.close();
  await journal?.close();
  await journalProxy?.close();
  await bossProxy?.close();
  await server?.stop();
}, 60_000);

describe('a blip of the queue or of the owner session spends no attempt (retryLimit 0)', () => {
  it('close({ handover: true }) whose job of the next generation is sent while pg-boss’s connections are cut: the send is tried again, the run goes on in it and completes', async () => {
    let letGo: () => void = () => undefined;
    const closing = new Promise<void>((resolve) => (letGo = resolve));
    let cuts = 0;
    const faultPoint = async (point: RunFaultPoint, info: FaultPointInfo): Promise<void> => {
      if (point === 'model-committed' && info.epoch === 1) await closing;
      // the step is committed and the run is about to be handed over: pg-boss loses the database for 1.5 s
      if (point === 'step-committed' && info.epoch === 1) {
        cuts++;
        bossProxy.refuse(1_500);
        bossProxy.cut();
      }
    };
    const a = newWorker({ agents: [lookAgent('handed')], boss: proxiedBoss, faultPoint, workerId: `hand-a-${suffix}`, lostOwnerSweep: false });
    const b = newWorker({ agents: [lookAgent('handed')], workerId: `hand-b-${suffix}`, lostOwnerSweep: false });
    const aEvents = recorded(a.events$);
    const bEvents = recorded(b.events$);
    await a.start();
    await b.start();
    // b works the dead-letter queue only while a runs (its runs queue is stopped until a closed)
    const { runId } = await a.submit('handed', 'Please look');
    await aEvents.until('claimed', runId);
    await aEvents.until('committed', runId);
    const closed = a.close({ handover: true });
    letGo();
    await aEvents.until('released', runId);
    await closed;
    const completed = await bEvents.until('completed', runId);
    expect(cuts).toBe(1);
    expect(completed.status).toBe('completed');
    expect(await journal.getRun(runId)).toMatchObject({ status: 'completed', terminal: 'finish', owner: `hand-b-${suffix}` });
    expect(aEvents.all.filter((event) => event.runId === runId && event.type === 'failed')).toEqual([]);
  }, 90_000);

  it('the owner’s session connection refused for 2 s while its tool runs: another worker’s sweep fails its attempt, the owner notes the outage, and the run goes on and completes', async () => {
    let cuts = 0;
    const faultPoint = (point: RunFaultPoint, info: FaultPointInfo): void => {
      if (point === 'tool-started' && info.epoch === 1 && cuts === 0) {
        cuts++;
        journalProxy.refuse(2_000);
        journalProxy.cut();
      }
    };
    // the owner: its journal (pool and owner session) through the proxy; its tool takes 9 s the first time
    const owner = newWorker({ agents: [lookAgent('slow', 9_000)], journal: proxiedJournal, faultPoint, workerId: `slow-a-${suffix}`, lostOwnerSweep: false });
    const ownerEvents = recorded(owner.events$);
    await owner.start();
    const { runId } = await owner.submit('slow', 'Please look');
    await ownerEvents.until('claimed', runId);
    // the sweeper (the default grace) starts once the owner holds the run
    const sweeper = newWorker({ agents: [lookAgent('slow')], workerId: `slow-b-${suffix}`, lostOwnerSweep: { intervalMs: 100 } });
    const sweeperEvents = recorded(sweeper.events$);
    await sweeper.start();
    await ownerEvents.until('fenced', runId);
    // the run goes on in the next generation's job, whichever worker takes it
    const completed = await Promise.race([ownerEvents.until('completed', runId), sweeperEvents.until('completed', runId)]);
    expect(cuts).toBe(1);
    expect(completed.status).toBe('completed');
    expect(await journal.getRun(runId)).toMatchObject({ status: 'completed', terminal: 'finish', epoch: 2 });
    expect([...ownerEvents.all, ...sweeperEvents.all].filter((event) => event.runId === runId && event.type === 'failed')).toEqual([]);
  }, 90_000);

  it('an attempt in its infrastructure retries whose job was handed on to another attempt of the same worker stops: it never claims the run from the new attempt', async () => {
    const runs = new Map<string, { ledgerBlips: number; readsDown: boolean }>();
    const faulty = wrap(journal, {
      toolCall: (...args: Parameters<PostgresRunJournal['toolCall']>) => {
        const fault = runs.get(args[0].runId);
        if (fault !== undefined && args[1].status === 'completed' && fault.ledgerBlips > 0) {
          fault.ledgerBlips--;
          return Promise.reject(blip());
        }
        return journal.toolCall(...args);
      },
      // the old attempt's look at the run before it claims again: down until the test lets it through
      getRun: (runId: string) => (runs.get(runId)?.readsDown === true ? Promise.reject(blip()) : journal.getRun(runId)),
    });
    let releaseNew: () => void = () => undefined;
    const newHeld = new Promise<void>((resolve) => (releaseNew = resolve));
    const faultPoint = async (point: RunFaultPoint, info: FaultPointInfo): Promise<void> => {
      if (point === 'claimed' && info.epoch === 2) await newHeld;
    };
    // a long heartbeat: pg-boss does not abort the old attempt's signal within the test
    const worker = newWorker({
      agents: [lookAgent('twice')],
      journal: faulty,
      faultPoint,
      workerId: `twice-${suffix}`,
      lostOwnerSweep: false,
      concurrency: 2,
      queue: { pollingIntervalSeconds: 0.5, retryLimit: 2, heartbeatSeconds: 60 },
    });
    const events = recorded(worker.events$);
    await worker.start();
    const runId = `twice-${randomUUID().slice(0, 8)}`;
    runs.set(runId, { ledgerBlips: 1, readsDown: true });
    await worker.submit('twice', 'Please look', { runId });
    // the ledger's `completed` blipped: the attempt is the infrastructure's, and its retries find the database down
    await events.until('failed', runId);
    // the queue hands the job on — what another worker's sweep does when this owner's session is gone
    const queue = queueNameOf('rxagent.runs.', 'twice');
    const [job] = await boss.findJobs(queue, { data: { runId } });
    expect(job).toMatchObject({ state: 'active', retryCount: 0 });
    await boss.fail(queue, { id: job!.id, retryCount: job!.retryCount }, { message: 'owner session ended' });
    // this worker fetches the job's next attempt, which claims the run (held there)
    await settle(() => events.all.some((event) => event.type === 'claimed' && event.runId === runId && event.epoch === 2), 30_000);
    // the database is back for the old attempt: give it the time of its longest backoff to claim again (it must not)
    runs.get(runId)!.readsDown = false;
    await settle(() => events.all.some((event) => event.type === 'claimed' && event.runId === runId && event.epoch === 3), 8_000);
    releaseNew();
    const completed = await events.until('completed', runId);
    expect(completed).toMatchObject({ status: 'completed', epoch: 2 });
    const ofRun = events.all.filter((event) => event.runId === runId);
    expect(ofRun.filter((event) => event.type === 'claimed').map((event) => event.epoch)).toEqual([1, 2]);
    expect(ofRun.filter((event) => event.type === 'fenced')).toEqual([]);
    expect(await journal.getRun(runId)).toMatchObject({ status: 'completed', terminal: 'finish', epoch: 2 });
  }, 90_000);

  it('cancel() through a blip of its read of the run and of its write of the stop: tried again, the stop is recorded once', async () => {
    const blips: string[] = [];
    const faulty = wrap(journal, {
      getRun: (runId: string) => (runId.startsWith('stop-blip-') && !blips.includes('getRun') ? (blips.push('getRun'), Promise.reject(blip())) : journal.getRun(runId)),
      signal: (...args: Parameters<PostgresRunJournal['signal']>) => (!blips.includes('signal') ? (blips.push('signal'), Promise.reject(blip())) : journal.signal(...args)),
    });
    // a submit-only instance (the one an app's stop endpoint runs on)
    const front = newWorker({ agents: [lookAgent('stopped')], journal: faulty, workerId: `front-${suffix}`, concurrency: 0 });
    await front.start();
    const runId = `stop-blip-${randomUUID().slice(0, 8)}`;
    await front.submit('stopped', 'Please look', { runId });
    await front.cancel(runId, { unsafeNoAuthorization: true, reason: 'user pressed stop' });
    expect(blips).toEqual(['getRun', 'signal']);
    const signals = await firstValueFrom(journal.signals$(runId).pipe(take(1), toArray()));
    expect(signals).toMatchObject([{ kind: 'stop', reason: 'user pressed stop' }]);
  }, 60_000);

  it('a run the claim must fail closed (its row names another agent), whose final commit meets a blip: claimed again and failed closed, naming the row — no attempt spent', async () => {
    const blips: string[] = [];
    const faulty = wrap(journal, {
      append: (...args: Parameters<PostgresRunJournal['append']>) => {
        const [lease, , commit] = args;
        if (lease.runId.startsWith('closed-blip-') && commit?.kind === 'final' && blips.length === 0) {
          blips.push(`final@${lease.epoch}`);
          return Promise.reject(blip());
        }
        return journal.append(...args);
      },
    });
    const runId = `closed-blip-${randomUUID().slice(0, 8)}`;
    // stored and queued by a submit-only instance; then its row is edited to name an agent nobody runs
    const front = newWorker({ agents: [lookAgent('closing')], workerId: `closing-front-${suffix}`, concurrency: 0 });
    await front.start();
    await front.submit('closing', 'Please look', { runId });
    const db = new pg.Pool({ connectionString: server.connectionString, max: 1 });
    try {
      await db.query(`UPDATE ${schema}.runs SET agent_id = 'ghost' WHERE id = $1`, [runId]);
    } finally {
      await db.end();
    }
    const worker = newWorker({ agents: [lookAgent('closing')], journal: faulty, workerId: `closing-${suffix}`, lostOwnerSweep: false });
    const events = recorded(worker.events$);
    await worker.start();
    const completed = await events.until('completed', runId);
    expect(blips).toEqual(['final@1']);
    expect(completed).toMatchObject({ status: 'failed', epoch: 2 });
    const entries = await journalEntries(journal, runId);
    const last = entries.at(-1)!.chunk as { type: string; payload: { error: { name: string; row?: string; field?: string } } };
    expect(last.type).toBe('error');
    expect(last.payload.error).toMatchObject({ name: 'MalformedJournalEntryError', row: 'runs', field: 'agent_id' });
  }, 60_000);
});
