/**
 * createRunWorker in one process, on the test PostgreSQL (journal and memory in one schema,
 * pg-boss in its own): a run submitted, claimed, committed and completed; its bytes replayed by a
 * reader; cancel from another instance; a stale owner fenced; a crash simulated by a throwing
 * fault point and taken over; handover at close; bad input refused with nothing stored.
 * (Crashes of real processes: fault-matrix.test.ts.)
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { filter, firstValueFrom, type Observable } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, type ChunkType, type Processor } from 'rxagent';
import {
  InMemoryRunJournal,
  NotDurableError,
  RUN_TOKEN_HEADER,
  ToolOutcomeUnknownError,
  createRunToken,
  createRunWorker,
  runTokenAuthorization,
  type FaultPointInfo,
  type RunFaultPoint,
  type RunWorker,
  type RunWorkerEvent,
  type RunWorkerOptions,
} from 'rxagent/durable';
import { Memory } from 'rxagent/memory';
import { InMemoryStorage } from 'rxagent/memory';
import { PostgresRunJournal, PostgresStorage } from 'rxagent/storage/postgres';
import { scriptedModel } from 'rxagent/testing';
import { queueNameOf } from '../../src/durable/internal/queues.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { settle, waitFor } from '../support/wait-for.js';
import { effectiveChunks, journalEntries, uiMessageOf } from './fixtures/matrix-checks.js';

const suffix = randomUUID().slice(0, 6);
const schema = `rxagent_worker_${suffix}`;
const bossSchema = `pgboss_worker_${suffix}`;
let server: TestPostgres;
let db: pg.Pool;
let journal: PostgresRunJournal;
let storage: PostgresStorage;
let boss: PgBoss;
const workers: RunWorker[] = [];

/** Effects of the `charge` tool (not idempotent) and `lookup` (idempotent), by key. */
const effects: string[] = [];

function supportAgent(id = 'support', extra: Partial<ConstructorParameters<typeof Agent>[0]> = {}): Agent {
  return new Agent({
    id,
    model: scriptedModel({
      wordDelayMs: 5,
      rules: [
        { match: ({ toolResults }) => toolResults.length > 0, reply: ({ toolResults }) => ({ text: `Done: ${JSON.stringify(toolResults.map((result) => result.output))}.` }) },
        { match: /charge/, reply: { text: 'Charging.', toolCalls: [{ toolName: 'charge', args: { cents: 500 } }] } },
        { match: /look/, reply: { text: 'Looking.', toolCalls: [{ toolName: 'lookup', args: { q: 'a' } }] } },
      ],
      fallback: { text: 'Hello there, how can I help you today?' },
    }),
    memory: new Memory({ storage }),
    tools: {
      charge: {
        description: 'Charges the card (not idempotent)',
        inputSchema: { type: 'object', properties: { cents: { type: 'number' } } },
        execute: async ({ cents }: { cents: number }, { idempotencyKey }: { idempotencyKey: string }) => {
          effects.push(`charge:${idempotencyKey}`);
          return { charged: cents };
        },
      },
      lookup: {
        description: 'Looks up (idempotent)',
        inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
        idempotent: true,
        execute: async ({ q }: { q: string }, { idempotencyKey }: { idempotencyKey: string }) => {
          effects.push(`lookup:${idempotencyKey}`);
          return { found: q };
        },
      },
    },
    ...extra,
  });
}

function newWorker(options: Partial<RunWorkerOptions> = {}): RunWorker {
  const worker = createRunWorker({ journal, boss, agents: [supportAgent()], concurrency: 2, queue: { pollingIntervalSeconds: 0.5 }, ...options });
  workers.push(worker);
  return worker;
}

const until = <T extends RunWorkerEvent['type']>(events$: Observable<RunWorkerEvent>, type: T, runId: string) =>
  firstValueFrom(events$.pipe(filter((event): event is Extract<RunWorkerEvent, { type: T }> => event.type === type && event.runId === runId)));

const types = (chunks: readonly ChunkType[]): string[] => chunks.map((chunk) => chunk.type);

beforeAll(async () => {
  server = await startTestPostgres();
  db = new pg.Pool({ connectionString: server.connectionString, max: 2 });
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
  await db?.end();
  await server?.stop();
}, 60_000);

describe('RunWorker: a run from submit to its end', () => {
  it('claims, commits (input, step, final), completes; the journal replays the run; memory saved once', async () => {
    const worker = newWorker();
    const events: RunWorkerEvent[] = [];
    worker.events$.subscribe((event) => events.push(event));
    await worker.start();
    const { runId, created } = await worker.submit('support', 'Hi!', { memory: { thread: `t-${suffix}-1`, resource: 'u1' }, messageId: 'm-1' });
    expect(created).toBe(true);
    await until(worker.events$, 'completed', runId);
    const ofRun = events.filter((event) => event.runId === runId);
    expect(ofRun.map((event) => (event.type === 'committed' ? `committed ${event.commit}` : event.type))).toEqual(['claimed', 'committed input', 'committed step', 'committed final', 'completed']);
    expect(await journal.getRun(runId)).toMatchObject({ status: 'completed', epoch: 1, terminal: 'finish' });
    const entries = await journalEntries(journal, runId);
    expect(entries[0]?.chunk).toMatchObject({ type: 'start', payload: { messageId: 'm-1' } });
    expect(types(entries.map((entry) => entry.chunk)).filter((type) => type === 'start' || type === 'finish')).toEqual(['start', 'finish']);
    const message = await uiMessageOf(journal, runId);
    expect(message?.id).toBe('m-1');
    expect(message?.parts.filter((part) => part.type === 'text').map((part) => (part as { text: string }).text)).toEqual(['Hello there, how can I help you today?']);
    const thread = await storage.getMessages({ threadId: `t-${suffix}-1` });
    expect(thread.map((stored) => stored.role)).toEqual(['user', 'assistant']);
    // the same run again: nothing new, one job
    expect(await worker.submit('support', 'Hi!', { runId, memory: { thread: `t-${suffix}-1`, resource: 'u1' }, messageId: 'm-1' })).toEqual({ runId, created: false });
  });

  it("cancel from another instance (concurrency 0, its own journal and connections), behind the readers' authorization: another owner's stop is refused as an unknown run and recorded nowhere; the owner's stops the run, status cancelled", async () => {
    const owner = newWorker({ agents: [supportAgent('slow', { model: scriptedModel({ wordDelayMs: 200, rules: [], fallback: { text: 'one two three four five six seven eight nine ten eleven twelve' } }) })] });
    // another instance: a journal of its own (its pool, its LISTEN connection), as a second server has
    const frontJournal = new PostgresRunJournal({ connectionString: server.connectionString, schema });
    const front = newWorker({ journal: frontJournal, concurrency: 0, agents: [supportAgent('slow')] });
    await owner.start();
    await front.start();
    const { runId } = await front.submit('slow', 'Talk slowly', { memory: { thread: `t-${suffix}-cancel`, resource: 'owner-1' } });
    await until(owner.events$, 'committed', runId);
    const secret = 'cancel-test-secret-of-32-bytes-or-more!!';
    const authorize = runTokenAuthorization({ secret });
    const stopRequest = (resourceId: string) =>
      new Request(`http://app/api/chat/c/stop`, { method: 'POST', headers: { [RUN_TOKEN_HEADER]: createRunToken({ runId, resourceId, expiresInSeconds: 60, secret }) } });
    await expect(front.cancel(runId, { request: stopRequest('intruder'), authorize, reason: 'intruder' })).rejects.toMatchObject({ name: 'RunNotFoundError' });
    await expect(front.cancel(runId, { reason: 'no authorization' } as never)).rejects.toMatchObject({ name: 'MissingAuthorizationError', what: 'RunWorker.cancel' });
    expect((await journal.getRun(runId))?.status).toBe('running');
    const stopAt = performance.now();
    await front.cancel(runId, { request: stopRequest('owner-1'), authorize, reason: 'user pressed stop' });
    const completed = await until(owner.events$, 'completed', runId);
    // reported, not asserted (docs/durable.md "Stopping a run from the client")
    console.log(`stop from another instance → run ended: ${Math.round(performance.now() - stopAt)} ms`);
    expect(completed.status).toBe('cancelled');
    const entries = await journalEntries(journal, runId);
    expect(entries.at(-1)?.chunk.type).toBe('abort');
    // the owner acted on the first stop recorded: the owner's, not the refused one
    expect(JSON.stringify(entries.at(-1)?.chunk)).toContain('user pressed stop');
    expect(JSON.stringify(entries.at(-1)?.chunk)).not.toContain('intruder');
    expect(await journal.getRun(runId)).toMatchObject({ status: 'cancelled', terminal: 'abort' });
    await expect(front.cancel('no-such-run', { unsafeNoAuthorization: true })).rejects.toMatchObject({ name: 'RunNotFoundError' });
    await front.close();
    await frontJournal.close();
  });
});

describe('RunWorker: owners that go away', () => {
  it('a crash with a non-idempotent call started (a throwing fault point at tool-started): the next owner does not run it again — tool-error ToolOutcomeUnknownError, no second effect', async () => {
    let crashes = 0;
    const faultPoint = (point: RunFaultPoint, info: FaultPointInfo): void => {
      if (point === 'tool-started' && info.epoch === 1) {
        crashes += 1;
        throw new Error('simulated crash');
      }
    };
    const worker = newWorker({ agents: [supportAgent('charger')], faultPoint });
    const events: RunWorkerEvent[] = [];
    worker.events$.subscribe((event) => events.push(event));
    await worker.start();
    const { runId } = await worker.submit('charger', 'Please charge me');
    await until(worker.events$, 'completed', runId);
    expect(crashes).toBe(1);
    expect(events.filter((event) => event.runId === runId && event.type === 'failed')).toHaveLength(1);
    expect((await journal.getRun(runId))?.epoch).toBe(2);
    const chunks = effectiveChunks(await journalEntries(journal, runId));
    const toolError = chunks.find((chunk) => chunk.type === 'tool-error');
    expect(toolError?.payload).toMatchObject({ toolCallId: expect.any(String), error: { name: 'ToolOutcomeUnknownError' } });
    expect(effects.filter((effect) => effect.startsWith(`charge:${runId}:`))).toHaveLength(0);
    expect(ToolOutcomeUnknownError.isInstance(new ToolOutcomeUnknownError({ toolName: 'charge', toolCallId: 'c' }))).toBe(true);
  });

  it('an idempotent tool left started by a dead owner runs again with the same idempotencyKey', async () => {
    const faultPoint = (point: RunFaultPoint, info: FaultPointInfo): void => {
      if (point === 'tool-returned' && info.epoch === 1) throw new Error('simulated crash after the tool ran');
    };
    const worker = newWorker({ agents: [supportAgent('looker')], faultPoint });
    await worker.start();
    const { runId } = await worker.submit('looker', 'Please look');
    await until(worker.events$, 'completed', runId);
    const keys = effects.filter((effect) => effect.startsWith(`lookup:${runId}:`));
    expect(keys).toHaveLength(2);
    expect(new Set(keys).size).toBe(1);
    const results = effectiveChunks(await journalEntries(journal, runId)).filter((chunk) => chunk.type === 'tool-result');
    expect(results).toHaveLength(1);
  });

  it('a stale owner is fenced: another claim moves the epoch, the old owner stops (fenced, not failed) and writes nothing more', async () => {
    const owner = newWorker({ agents: [supportAgent('fenced', { model: scriptedModel({ wordDelayMs: 100, rules: [], fallback: { text: 'a b c d e f g h i j k l m n o p' } }) })] });
    await owner.start();
    const { runId } = await owner.submit('fenced', 'go');
    const events: RunWorkerEvent[] = [];
    owner.events$.subscribe((event) => events.push(event));
    await until(owner.events$, 'committed', runId);
    // listened for before the claim: the owner can learn of it (an append in flight refused) before the claim's own reply is read
    const fencedEvent = until(owner.events$, 'fenced', runId);
    const { lease } = await journal.claim(runId, 'intruder');
    const fenced = await fencedEvent;
    expect(fenced.epoch).toBe(1);
    const before = (await journal.getRun(runId))!.lastSeq;
    await settle(() => false, 300); // an absence check: the old owner had time to write, and wrote nothing
    expect((await journal.getRun(runId))!.lastSeq).toBe(before);
    expect(events.filter((event) => event.runId === runId && event.type === 'failed')).toEqual([]);
    expect(lease.epoch).toBe(2);
  });
});

describe('RunWorker: a processor state that is not JSON', () => {
  it('ends the run at the commit with DurableStateError naming the processor and the path: status failed', async () => {
    const keeper: Processor<'keeper'> = {
      id: 'keeper',
      processOutputStream({ part, state }) {
        state['seen'] ??= new Set<string>();
        (state['seen'] as Set<string>).add(part.type);
        return part;
      },
    };
    const worker = newWorker({ agents: [supportAgent('keeper-agent', { outputProcessors: [keeper] })] });
    await worker.start();
    const { runId } = await worker.submit('keeper-agent', 'Hi!');
    const completed = await until(worker.events$, 'completed', runId);
    expect(completed.status).toBe('failed');
    const entries = await journalEntries(journal, runId);
    const last = entries.at(-1)!.chunk;
    expect(last.type).toBe('error');
    expect((last as ChunkType & { type: 'error' }).payload.error).toMatchObject({ name: 'DurableStateError', processorId: 'keeper', path: '$.seen', type: 'Set' });
    expect(await journal.getRun(runId)).toMatchObject({ status: 'failed', terminal: 'error', epoch: 1 });
  });
});

describe('RunWorker: close({ handover: true })', () => {
  it('releases the run at its next step commit; another worker claims it and finishes it, nothing run twice', async () => {
    let letGo: () => void = () => undefined;
    const closing = new Promise<void>((resolve) => (letGo = resolve));
    // A holds its run after the model commit until close() was called (so the next step commit is not the last)
    const faultPoint = async (point: RunFaultPoint, info: FaultPointInfo): Promise<void> => {
      if (point === 'model-committed' && info.epoch === 1) await closing;
    };
    const a = newWorker({ agents: [supportAgent('handover')], faultPoint, workerId: 'worker-a' });
    const b = newWorker({ agents: [supportAgent('handover')], workerId: 'worker-b' });
    const events: Array<RunWorkerEvent & { worker: string }> = [];
    a.events$.subscribe((event) => events.push({ ...event, worker: 'a' }));
    b.events$.subscribe((event) => events.push({ ...event, worker: 'b' }));
    await a.start();
    const { runId } = await a.submit('handover', 'Please look');
    await until(a.events$, 'committed', runId);
    const closed = a.close({ handover: true });
    letGo();
    await b.start();
    await closed;
    await waitFor(() => events.some((event) => event.type === 'completed' && event.runId === runId), 'the run completed by b', 60_000);
    const ofRun = events.filter((event) => event.runId === runId).map((event) => `${event.worker} ${event.type === 'committed' ? `committed ${event.commit}` : event.type}`);
    expect(ofRun.filter((line) => line.startsWith('a '))).toEqual(['a claimed', 'a committed input', 'a committed model', 'a committed step', 'a released']);
    expect(ofRun.filter((line) => line.startsWith('b '))).toEqual(['b claimed', 'b committed step', 'b committed final', 'b completed']);
    expect(await journal.getRun(runId)).toMatchObject({ status: 'completed', epoch: 2, owner: 'worker-b' });
    // released at a commit: nothing to roll back, the tool ran once, the answer uses its result
    const entries = await journalEntries(journal, runId);
    expect(entries.filter((entry) => entry.chunk.type === 'step-finish' && entry.chunk.payload.stepResult.reason === 'retry')).toEqual([]);
    expect(effects.filter((effect) => effect.startsWith(`lookup:${runId}:`))).toHaveLength(1);
    const message = await uiMessageOf(journal, runId);
    expect(message?.parts.filter((part) => part.type === 'text').map((part) => (part as { text: string }).text)).toEqual(['Looking.', 'Done: [{"found":"a"}].']);
  });
});

describe('RunWorker: bad input, nothing stored', () => {
  it('NotDurableError at submit: no run row, no job', async () => {
    const worker = newWorker({ concurrency: 0 });
    await worker.start();
    const runId = `bad-${suffix}`;
    await expect(worker.submit('support', 'hi', { runId, requestContext: { at: new Date() as never } })).rejects.toSatisfy(NotDurableError.isInstance);
    await expect(worker.submit('support', 'hi', { runId, abortSignal: AbortSignal.abort() } as never)).rejects.toSatisfy(NotDurableError.isInstance);
    expect(await journal.getRun(runId)).toBeNull();
    expect(await boss.findJobs(queueNameOf('rxagent.runs.', 'support'), { data: { runId } })).toEqual([]);
  });

  it('a durableState: false processor → NotDurableError naming it', async () => {
    const volatile: Processor<'volatile'> = { id: 'volatile', durableState: false, processOutputStream: ({ part }) => part } as Processor<'volatile'>;
    const worker = newWorker({ concurrency: 0, agents: [supportAgent('volatile-agent', { outputProcessors: [volatile] })] });
    const error = await worker.submit('volatile-agent', 'hi').catch((caught: unknown) => caught);
    expect(NotDurableError.isInstance(error)).toBe(true);
    expect((error as NotDurableError).what).toBe('processor "volatile"');
  });

  it('an unknown agent → TypeError naming it and the known ids', async () => {
    const worker = newWorker({ concurrency: 0 });
    await expect(worker.submit('suport', 'hi')).rejects.toThrow(/unknown agent "suport"; this worker runs "support"/);
    expect(() => createRunWorker({ journal, boss, agents: [supportAgent(), supportAgent()] })).toThrow(/two agents with the id "support"/);
  });

  it('a boss without a method the worker calls (an older pg-boss, a wrapper) → TypeError naming what is missing', () => {
    const { getJobById: _getJobById, ...withoutGetJobById } = { createQueue: boss.createQueue.bind(boss), send: boss.send.bind(boss), work: boss.work.bind(boss), getJobById: boss.getJobById.bind(boss), offWork: boss.offWork.bind(boss), schedule: boss.schedule.bind(boss) };
    expect(() => createRunWorker({ journal, boss: withoutGetJobById as never, agents: [supportAgent()] })).toThrow(/boss has no getJobById \(a started pg-boss 12/);
    expect(() => createRunWorker({ journal, boss: {} as never, agents: [supportAgent()] })).toThrow(/boss has no createQueue, send, work, getJobById, offWork/);
    expect(() => createRunWorker({ journal, boss, concurrency: -1, agents: [supportAgent()] })).toThrow(/concurrency must be an integer ≥ 0 \(got -1\)/);
  });

  it('start() rejects when an agent’s memory cannot fence saves against the journal', async () => {
    const elsewhere = new PostgresStorage({ connectionString: server.connectionString, schema: `${schema}_other` });
    const cases: Array<[string, Memory]> = [
      ['another schema', new Memory({ storage: elsewhere })],
      ['in-memory, no journal', new Memory({ storage: new InMemoryStorage() })],
    ];
    for (const [name, memory] of cases) {
      const worker = createRunWorker({ journal, boss, concurrency: 0, agents: [supportAgent(`fence-${name.replace(/\W/g, '-')}`, { memory })] });
      const error = await worker.start().catch((caught: unknown) => caught);
      expect(NotDurableError.isInstance(error), name).toBe(true);
      expect((error as NotDurableError).what).toMatch(/memory/);
    }
    await elsewhere.close();
  });

  it('start() accepts InMemoryStorage built with the worker’s InMemoryRunJournal', async () => {
    const runJournal = new InMemoryRunJournal();
    const worker = createRunWorker({ journal: runJournal, boss, concurrency: 0, agents: [supportAgent('in-memory', { memory: new Memory({ storage: new InMemoryStorage({ runJournal }) }) })] });
    await expect(worker.start()).resolves.toBeUndefined();
    await worker.close();
  });
});
