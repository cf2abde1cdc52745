/**
 * A durable run whose job pg-boss gives up on ends `failed` (issue 25's "left running with no
 * job" gap), in one process on the test PostgreSQL and a real pg-boss: every attempt fails until
 * retryLimit is spent, the job is dead-lettered, a worker ends the run with
 * RunAttemptsExhaustedError under a fresh claim; a live reader sees the end; nothing is written
 * or claimed after it. Handovers spend no attempt; an owner still running is fenced; ended runs
 * are left alone; two workers giving up on one run write one end; a submit-only worker never
 * works the dead-letter queue. (Workers that die on every attempt: give-up-process.test.ts.)
 */
import { randomUUID } from 'node:crypto';
import { PgBoss } from 'pg-boss';
import { ReplaySubject, filter, firstValueFrom, lastValueFrom, toArray, type Observable } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, type ChunkType } from 'rxagent';
import { resumeUIMessageStream } from 'rxagent/ai-sdk';
import {
  InMemoryRunJournal,
  RunAttemptsExhaustedError,
  createRunWorker,
  type FaultPointInfo,
  type JournalEntry,
  type RunFaultPoint,
  type RunJournal,
  type RunQueue,
  type RunWorker,
  type RunWorkerEvent,
  type RunWorkerOptions,
} from 'rxagent/durable';
import { Memory } from 'rxagent/memory';
import { PostgresRunJournal, PostgresStorage } from 'rxagent/storage/postgres';
import { scriptedModel } from 'rxagent/testing';
import { giveUpRun } from '../../src/durable/internal/give-up.js';
import { deadLetterQueueOf, generationJobIdOf, queueNameOf } from '../../src/durable/internal/queues.js';
import { jobIdIn } from './fixtures/run-jobs.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { settle, waitFor } from '../support/wait-for.js';
import { journalEntries } from './fixtures/matrix-checks.js';

const suffix = randomUUID().slice(0, 6);
const schema = `rxagent_giveup_${suffix}`;
const bossSchema = `pgboss_giveup_${suffix}`;
let server: TestPostgres;
let journal: PostgresRunJournal;
let storage: PostgresStorage;
let boss: PgBoss;
const workers: RunWorker[] = [];
const queueOf = (agentId: string): string => queueNameOf('rxagent.runs.', agentId);

function talker(id: string, wordDelayMs = 5): Agent {
  return new Agent({
    id,
    model: scriptedModel({ wordDelayMs, rules: [], fallback: { text: 'one two three four five six seven eight nine ten eleven twelve' } }),
    memory: new Memory({ storage }),
  });
}

function newWorker(options: Partial<RunWorkerOptions> & Pick<RunWorkerOptions, 'agents'>): RunWorker {
  const worker = createRunWorker({ journal, boss, concurrency: 1, queue: { pollingIntervalSeconds: 0.5 }, ...options });
  workers.push(worker);
  return worker;
}

const until = <T extends RunWorkerEvent['type']>(events$: Observable<RunWorkerEvent>, type: T, runId: string) =>
  firstValueFrom(events$.pipe(filter((event): event is Extract<RunWorkerEvent, { type: T }> => event.type === type && event.runId === runId)));

/**
 * A worker's events from now on, kept: `until` also finds one that came before it was asked for
 * (`events$` is hot: a cancel whose run ends before `cancel()` resolves would otherwise be missed,
 * which hung this file's cancel test once in a loaded CI run).
 */
function recorded(events$: Observable<RunWorkerEvent>): { until<T extends RunWorkerEvent['type']>(type: T, runId: string): Promise<Extract<RunWorkerEvent, { type: T }>> } {
  const seen = new ReplaySubject<RunWorkerEvent>();
  events$.subscribe(seen);
  return {
    until: (type, runId) => firstValueFrom(seen.pipe(filter((event): event is Extract<RunWorkerEvent, { type: typeof type }> => event.type === type && event.runId === runId))),
  };
}

/** Every entry a live reader gets, once it completes (it must: the run ends). */
const liveRead = (runId: string): Promise<JournalEntry[]> => lastValueFrom(journal.read$(runId, { live: true }).pipe(toArray()));

async function jobState(queue: string, id: string): Promise<string | undefined> {
  return (await boss.getJobById(queue, id))?.state;
}

async function waitForJobState(queue: string, id: string, state: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while ((await jobState(queue, id)) !== state) {
    if (Date.now() > deadline) throw new Error(`job ${id} of ${queue} not ${state} within 60 s (now ${await jobState(queue, id)})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  server = await startTestPostgres();
  journal = new PostgresRunJournal({ connectionString: server.connectionString, schema });
  storage = new PostgresStorage({ connectionString: server.connectionString, schema });
  boss = new PgBoss({ connectionString: server.connectionString, schema: bossSchema, superviseIntervalSeconds: 1, monitorIntervalSeconds: 1, maintenanceIntervalSeconds: 1 });
  boss.on('error', () => undefined);
  await boss.start();
}, 60_000);

afterAll(async () => {
  for (const worker of workers) await worker.close({ handover: true }).catch(() => undefined);
  await boss?.stop({ graceful: false });
  await journal?.close();
  await storage?.close();
  await server?.stop();
}, 60_000);

describe('a run whose job fails every attempt', () => {
  it('ends failed after retryLimit + 1 attempts: the open parts closed, then error RunAttemptsExhaustedError; a live reader ends; nothing written or claimed after it', async () => {
    // the queue was made before (no dead letter, another retryLimit): the job's own policies hold
    await boss.createQueue(queueOf('flaky'), { retryLimit: 5 });
    const failures: number[] = [];
    const faultPoint = (point: RunFaultPoint, info: FaultPointInfo): void => {
      if (point === 'chunks-flushed') {
        failures.push(info.epoch);
        throw new Error(`storage lost at epoch ${info.epoch}`);
      }
    };
    const worker = newWorker({ agents: [talker('flaky', 20)], faultPoint, queue: { pollingIntervalSeconds: 0.5, retryLimit: 2 } });
    const events: RunWorkerEvent[] = [];
    worker.events$.subscribe((event) => events.push(event));
    await worker.start();
    const { runId } = await worker.submit('flaky', 'Talk', { messageId: 'm-flaky' });
    const read = liveRead(runId);
    const ui = (async () => {
      const chunks: Array<{ type: string }> = [];
      const reader = resumeUIMessageStream(journal, runId, { unsafeNoAuthorization: true }).getReader();
      for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(next.value);
      return chunks;
    })();
    const entries = await read;
    expect(failures).toEqual([1, 2, 3]);
    expect(await journal.getRun(runId)).toMatchObject({ status: 'failed', terminal: 'error', epoch: 4 });
    const last = entries.at(-1)!.chunk as ChunkType & { type: 'error' };
    expect(last.type).toBe('error');
    expect(last.payload.error).toMatchObject({ name: 'RunAttemptsExhaustedError', runId, attempts: 3, lastFailure: 'storage lost at epoch 3' });
    expect((last.payload.error as { message: string }).message).toMatch(/given up after 3 attempts .*storage lost at epoch 3/);
    // the last attempt's text and step closed before the error, as one final commit at the new epoch
    const tail = entries.slice(-3).map((entry) => entry.chunk);
    expect(tail.map((chunk) => chunk.type)).toEqual(['text-end', 'step-finish', 'error']);
    expect(tail[1]).toMatchObject({ payload: { stepResult: { reason: 'error', isContinued: false } } });
    expect(entries.slice(-3).map((entry) => entry.epoch)).toEqual([4, 4, 4]);
    expect(entries.map((entry) => entry.seq)).toEqual(entries.map((_, index) => index + 1));
    expect(entries.filter((entry) => entry.chunk.type === 'start')).toHaveLength(1);
    // the UI stream ends too, with the error
    const uiChunks = await ui;
    expect(uiChunks.some((chunk) => chunk.type === 'error')).toBe(true);
    // pg-boss: the run's job failed for good, its dead-letter copy completed
    expect(await boss.getJobById(queueOf('flaky'), await jobIdIn(journal, runId))).toMatchObject({ state: 'failed', retryCount: 2, retryLimit: 2, deadLetter: deadLetterQueueOf(queueOf('flaky')) });
    const ofRun = events.filter((event) => event.runId === runId).map((event) => event.type);
    expect(ofRun.filter((type) => type === 'claimed')).toHaveLength(3);
    expect(ofRun.at(-1)).toBe('completed');
    expect(events.filter((event) => event.runId === runId && event.type === 'completed')).toEqual([{ type: 'completed', runId, epoch: 4, status: 'failed' }]);
    // nothing after it: no claim, no write (an absence check: workers keep polling meanwhile)
    const before = await journal.getRun(runId);
    await settle(() => false, 1500);
    expect(await journal.getRun(runId)).toMatchObject({ epoch: 4, lastSeq: before!.lastSeq, status: 'failed' });
    // and submitting it again changes nothing: same run, its job exists
    expect(await worker.submit('flaky', 'Talk', { runId, messageId: 'm-flaky' })).toEqual({ runId, created: false });
    await settle(() => false, 1000);
    expect(await journal.getRun(runId)).toMatchObject({ epoch: 4, lastSeq: before!.lastSeq });
  }, 60_000);

  it('a run that never got a chunk written (every attempt fails at its claim) ends with start and error', async () => {
    const faultPoint = (point: RunFaultPoint): void => {
      if (point === 'claimed') throw new Error('cannot start');
    };
    const worker = newWorker({ agents: [talker('unstartable')], faultPoint, queue: { pollingIntervalSeconds: 0.5, retryLimit: 0 } });
    await worker.start();
    const { runId } = await worker.submit('unstartable', 'Talk');
    const entries = await liveRead(runId);
    expect(entries.map((entry) => entry.chunk.type)).toEqual(['start', 'error']);
    expect(entries[0]!.chunk).toMatchObject({ payload: { messageId: `msg-${runId}` } });
    expect(entries[1]!.chunk).toMatchObject({ payload: { error: { name: 'RunAttemptsExhaustedError', attempts: 1, lastFailure: 'cannot start' } } });
    expect(await journal.getRun(runId)).toMatchObject({ status: 'failed', epoch: 2 });
  }, 60_000);
});

describe('what giving up leaves alone, and what it fences', () => {
  it('close({ handover: true }) spends no attempt: with retryLimit 0 the run is handed on in a new job and completes', async () => {
    let letGo: () => void = () => undefined;
    const closing = new Promise<void>((resolve) => (letGo = resolve));
    const agent = () =>
      new Agent({
        id: 'handed',
        model: scriptedModel({
          wordDelayMs: 5,
          rules: [
            { match: ({ toolResults }) => toolResults.length > 0, reply: { text: 'Done.' } },
            { match: /look/, reply: { text: 'Looking.', toolCalls: [{ toolName: 'lookup', args: { q: 'a' } }] } },
          ],
          fallback: { text: 'Hi.' },
        }),
        memory: new Memory({ storage }),
        tools: { lookup: { description: 'Looks up', inputSchema: { type: 'object', properties: { q: { type: 'string' } } }, idempotent: true, execute: async () => ({ found: true }) } },
      });
    const faultPoint = async (point: RunFaultPoint, info: FaultPointInfo): Promise<void> => {
      if (point === 'model-committed' && info.epoch === 1) await closing;
    };
    const queue = { pollingIntervalSeconds: 0.5, retryLimit: 0 };
    const a = newWorker({ agents: [agent()], faultPoint, workerId: 'handing-a', queue });
    const b = newWorker({ agents: [agent()], workerId: 'handing-b', queue });
    await a.start();
    const { runId } = await a.submit('handed', 'Please look');
    await until(a.events$, 'committed', runId);
    const closed = a.close({ handover: true });
    letGo();
    await closed;
    await b.start();
    const completed = await until(b.events$, 'completed', runId);
    expect(completed.status).toBe('completed');
    expect(await journal.getRun(runId)).toMatchObject({ status: 'completed', terminal: 'finish', epoch: 2, owner: 'handing-b' });
    const { incarnation } = (await journal.getRun(runId))!;
    await waitForJobState(queueOf('handed'), await jobIdIn(journal, runId), 'completed');
    await waitForJobState(queueOf('handed'), await jobIdIn(journal, runId, 1), 'completed');
    // the handover's job is the same run's: named by its incarnation, and carrying it
    expect(await boss.getJobById(queueOf('handed'), await jobIdIn(journal, runId, 1))).toMatchObject({ data: { runId, incarnation, generation: 1 }, retryCount: 0 });
  }, 60_000);

  it('an owner still running when its job is given up (an expiry, say) is fenced: it writes nothing after the error', async () => {
    let letGo: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    const faultPoint = async (point: RunFaultPoint, info: FaultPointInfo): Promise<void> => {
      if (point === 'chunks-flushed' && info.epoch === 1 && info.flush === 1) await held;
    };
    // retryLimit 0: the copy below is what pg-boss makes after the job's one attempt failed
    const owner = newWorker({ agents: [talker('stuck', 10)], faultPoint, workerId: 'stuck-owner', queue: { pollingIntervalSeconds: 0.5, retryLimit: 0 } });
    const events: RunWorkerEvent[] = [];
    owner.events$.subscribe((event) => events.push(event));
    await owner.start();
    const { runId } = await owner.submit('stuck', 'Talk');
    await until(owner.events$, 'claimed', runId);
    await waitFor(() => events.some((event) => event.type === 'committed' && event.runId === runId), 'the input commit');
    // what pg-boss does when the job's last attempt fails: a copy in the dead-letter queue
    await boss.send(deadLetterQueueOf(queueOf('stuck')), { runId });
    const read = liveRead(runId);
    const completed = await until(owner.events$, 'completed', runId);
    expect(completed).toMatchObject({ status: 'failed', epoch: 2 });
    const ended = await journal.getRun(runId);
    expect(ended).toMatchObject({ status: 'failed', epoch: 2 });
    letGo();
    const fenced = await until(owner.events$, 'fenced', runId);
    expect(fenced.epoch).toBe(1);
    await settle(() => false, 300);
    expect((await journal.getRun(runId))!.lastSeq).toBe(ended!.lastSeq);
    const entries = await read;
    expect(entries.at(-1)!.chunk).toMatchObject({ type: 'error', payload: { error: { name: 'RunAttemptsExhaustedError', attempts: 1 } } });
  }, 60_000);

  it('a run no attempt ever claimed goes on in a new job with its whole budget (those attempts spend nothing)', async () => {
    const worker = newWorker({ agents: [talker('unclaimed')], queue: { pollingIntervalSeconds: 0.5, retryLimit: 3 } });
    await worker.start();
    // a run whose job failed for good before any attempt claimed it (each fetch's reply lost): queued, epoch 0
    const runId = `unclaimed-${suffix}`;
    await journal.createRun({ runId, agentId: 'unclaimed', input: { input: 'Talk', options: {} } as never });
    await boss.send(deadLetterQueueOf(queueOf('unclaimed')), { runId });
    await until(worker.events$, 'completed', runId);
    expect(await journal.getRun(runId)).toMatchObject({ status: 'completed', epoch: 1 });
    expect(await boss.getJobById(queueOf('unclaimed'), generationJobIdOf(runId, 1))).toMatchObject({ data: { runId, generation: 1, requeued: 1 }, retryLimit: 3 });
  }, 60_000);

  it('a completed or cancelled run is not touched; an unknown run is nothing to do', async () => {
    const worker = newWorker({ agents: [talker('ended', 100)] });
    const events = recorded(worker.events$);
    await worker.start();
    const done = await worker.submit('ended', 'Talk');
    await events.until('completed', done.runId);
    const stopped = await worker.submit('ended', 'Talk');
    await events.until('committed', stopped.runId);
    await worker.cancel(stopped.runId, { unsafeNoAuthorization: true });
    await events.until('completed', stopped.runId);
    const before = await Promise.all([journal.getRun(done.runId), journal.getRun(stopped.runId)]);
    expect(before.map((run) => run?.status)).toEqual(['completed', 'cancelled']);
    const dead = deadLetterQueueOf(queueOf('ended'));
    const copies = await Promise.all([done.runId, stopped.runId, `no-such-run-${suffix}`].map((runId) => boss.send(dead, { runId })));
    for (const id of copies) await waitForJobState(dead, id!, 'completed');
    const after = await Promise.all([journal.getRun(done.runId), journal.getRun(stopped.runId)]);
    expect(after.map((run) => [run?.status, run?.epoch, run?.lastSeq])).toEqual(before.map((run) => [run?.status, run?.epoch, run?.lastSeq]));
    expect(await journal.getRun(`no-such-run-${suffix}`)).toBeNull();
  }, 60_000);

  it('a dead-lettered job whose run lives on in a handover’s job is left alone', async () => {
    const worker = newWorker({ agents: [talker('later')], concurrency: 0 });
    await worker.start();
    const { runId } = await worker.submit('later', 'Talk');
    // the run was handed on (generation 1 is queued) and then the old job failed for good
    await boss.send(queueOf('later'), { runId, generation: 1 }, { id: generationJobIdOf(runId, 1) });
    const giver = newWorker({ agents: [talker('later')], concurrency: 1, queue: { pollingIntervalSeconds: 0.5 } });
    const events: RunWorkerEvent[] = [];
    giver.events$.subscribe((event) => events.push(event));
    const dead = deadLetterQueueOf(queueOf('later'));
    const copy = await boss.send(dead, { runId });
    await giver.start();
    await waitForJobState(dead, copy!, 'completed');
    await waitFor(() => events.some((event) => event.type === 'completed' && event.runId === runId), 'the run completed by the handover’s job', 30_000);
    // one claim (the handover's job), one end (its own finish)
    expect(await journal.getRun(runId)).toMatchObject({ status: 'completed', terminal: 'finish', epoch: 1 });
    expect(events.filter((event) => event.runId === runId && event.type === 'completed')).toEqual([{ type: 'completed', runId, epoch: 1, status: 'completed' }]);
  }, 60_000);
});

describe('two workers giving up on one run at once', () => {
  const journals: Array<[string, () => RunJournal]> = [
    ['PostgresRunJournal', () => journal],
    ['InMemoryRunJournal', () => new InMemoryRunJournal()],
  ];
  for (const [name, journalOf] of journals) {
    it(`${name}: one end is written (one error chunk, the last), the other sees it ended or superseded`, async () => {
      const runJournal = journalOf();
      for (let round = 0; round < 5; round += 1) {
        const runId = `race-${name}-${suffix}-${round}`;
        await runJournal.createRun({ runId, agentId: 'racer', input: { input: 'hi', options: {} } });
        const { lease } = await runJournal.claim(runId, 'owner');
        await runJournal.append(lease, [
          { type: 'start', runId, from: 'AGENT', payload: { messageId: 'm' } },
          { type: 'step-start', runId, from: 'AGENT', payload: { stepNumber: 0 } },
          { type: 'text-start', runId, from: 'AGENT', payload: { id: 't' } },
        ] as ChunkType[]);
        const error = new RunAttemptsExhaustedError({ runId, attempts: 2 });
        const outcomes = await Promise.all([giveUpRun(runJournal, { runId }, 'giver-1', error), giveUpRun(runJournal, { runId }, 'giver-2', error)]);
        // a superseded giver's job is completed; had both been superseded, a third attempt would end it
        const kinds = outcomes.map((outcome) => outcome.kind).sort();
        expect(kinds.filter((kind) => kind === 'failed')).toHaveLength(1);
        expect(kinds.every((kind) => kind === 'failed' || kind === 'ended' || kind === 'superseded')).toBe(true);
        const entries = await journalEntries(runJournal, runId);
        expect(entries.map((entry) => entry.chunk.type)).toEqual(['start', 'step-start', 'text-start', 'text-end', 'step-finish', 'error']);
        expect(await runJournal.getRun(runId)).toMatchObject({ status: 'failed', terminal: 'error' });
        expect(await giveUpRun(runJournal, { runId }, 'giver-3', error)).toEqual({ kind: 'ended' });
      }
    });
  }
});

describe('which workers give up on runs', () => {
  it('concurrency 0 works no queue (not the dead-letter queue either); concurrency > 0 works each agent’s queue, its dead-letter queue and the retention queue', async () => {
    const worked: string[] = [];
    const recording: RunQueue = {
      createQueue: (name, options) => boss.createQueue(name, options),
      send: (name, data, options) => boss.send(name, data, options),
      getJobById: (name, id) => boss.getJobById(name, id),
      offWork: (name, options) => boss.offWork(name, options),
      schedule: (name, cron) => boss.schedule(name, cron),
      work: (name, options, handler) => {
        worked.push(name);
        return boss.work(name, options, handler);
      },
    };
    const front = newWorker({ boss: recording, agents: [talker('watched')], concurrency: 0 });
    await front.start();
    expect(worked).toEqual([]);
    expect((await boss.getQueue(queueOf('watched')))?.deadLetter).toBe(deadLetterQueueOf(queueOf('watched')));
    const back = newWorker({ boss: recording, agents: [talker('watched')], concurrency: 2 });
    await back.start();
    expect([...worked].sort()).toEqual([queueOf('watched'), deadLetterQueueOf(queueOf('watched')), 'rxagent.retention'].sort()); // in no particular order
    await back.close();
  });

  it('an agent whose queue is another agent’s dead-letter queue is refused', () => {
    expect(() => createRunWorker({ journal, boss, agents: [talker('a'), talker('a/dead-letter')] })).toThrow(/agent "a\/dead-letter" has the queue "rxagent\.runs\.a\/dead-letter", the dead-letter queue of agent "a"/);
  });
});
