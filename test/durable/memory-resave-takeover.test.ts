/**
 * A takeover after memory's save committed and before the run's final commit runs the commit again:
 * memory saves the run's messages a second time. A processor whose `processOutputResult` output
 * differs between the two owners (a timestamp, a random redaction token) must not end the run: the
 * run's own messages are the run's to replace, while another run's messages under the same ids
 * (a counter `generateId` repeated) are still refused (test/memory/message-ids.adversarial.test.ts).
 * A `data-*` chunk a `processOutputResult` hook writes is kept in the reply as a message of its
 * own: its id is the same for every owner of the run, so the second save replaces it.
 */
import { randomUUID } from 'node:crypto';
import { PgBoss } from 'pg-boss';
import { filter, firstValueFrom, type Observable } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, type Processor } from 'rxagent';
import { Memory } from 'rxagent/memory';
import { scriptedModel } from 'rxagent/testing';
import { createRunWorker, type FaultPointInfo, type RunFaultPoint, type RunWorker, type RunWorkerEvent } from 'rxagent/durable';
import { PostgresRunJournal, PostgresStorage } from 'rxagent/storage/postgres';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';

const suffix = randomUUID().slice(0, 6);
const schema = `rxagent_resave_${suffix}`;
const bossSchema = `pgboss_resave_${suffix}`;

let server: TestPostgres;
let journal: PostgresRunJournal;
let storage: PostgresStorage;
let boss: PgBoss;
let worker: RunWorker;
const killed = new Set<string>();

/** Stamps every assistant message with a value no two owners share. */
const stamp: Processor = {
  id: 'stamp',
  processOutputResult: ({ messages }) =>
    messages.map((message) => (message.role === 'assistant' ? { ...message, content: { ...message.content, metadata: { stamp: randomUUID() } } } : message)),
};

/** Writes a `data-report` chunk at the commit (kept in the reply, so memory stores it). */
const report: Processor = {
  id: 'report',
  processOutputResult: ({ writer }) => {
    writer.custom({ type: 'data-report', data: { words: 1 } });
    return undefined;
  },
};

const faultPoint = (point: RunFaultPoint, info: FaultPointInfo): void => {
  if (point === 'finalizing' && info.epoch === 1 && !killed.has(info.runId)) {
    killed.add(info.runId);
    throw new Error('killed after the memory save, before the final commit');
  }
};

const until = <T extends RunWorkerEvent['type']>(events$: Observable<RunWorkerEvent>, type: T, runId: string) =>
  firstValueFrom(events$.pipe(filter((event): event is Extract<RunWorkerEvent, { type: T }> => event.type === type && event.runId === runId)));

beforeAll(async () => {
  server = await startTestPostgres();
  journal = new PostgresRunJournal({ connectionString: server.connectionString, schema });
  storage = new PostgresStorage({ connectionString: server.connectionString, schema });
  boss = new PgBoss({ connectionString: server.connectionString, schema: bossSchema, superviseIntervalSeconds: 1, monitorIntervalSeconds: 1 });
  boss.on('error', () => undefined);
  await boss.start();
  const agent = new Agent({
    id: 'stamper',
    model: scriptedModel({ rules: [], fallback: { text: 'Noted.' } }),
    memory: new Memory({ storage }),
    outputProcessors: [stamp],
  });
  // a model that answers nothing (a filtered or empty reply): the data chunk is the reply's only message
  const reporter = new Agent({
    id: 'reporter',
    model: scriptedModel({ rules: [], fallback: { text: '' } }),
    memory: new Memory({ storage }),
    outputProcessors: [report],
  });
  worker = createRunWorker({ journal, boss, agents: [agent, reporter], concurrency: 1, faultPoint, queue: { pollingIntervalSeconds: 0.5 } });
  await worker.start();
}, 60_000);

afterAll(async () => {
  await worker?.close().catch(() => undefined);
  await boss?.stop({ graceful: false });
  await journal?.close();
  await storage?.close();
  await server?.stop();
}, 60_000);

describe('memory saved again by the next owner', () => {
  it('a processOutputResult that differs between owners: the run completes, each message stored once', async () => {
    const runId = `resave-${suffix}`;
    const thread = `t-${runId}`;
    const completed = until(worker.events$, 'completed', runId);
    await worker.submit('stamper', 'Remember this', { runId, memory: { thread, resource: 'u1' } });
    const { status } = await completed;
    expect(killed.has(runId)).toBe(true);
    expect(status).toBe('completed');
    const messages = await storage.getMessages({ threadId: thread });
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(new Set(messages.map((message) => message.id)).size).toBe(2);
  }, 120_000);

  it('a data chunk written at the commit: the next owner gives its message the same id, so the thread holds it once', async () => {
    const runId = `report-${suffix}`;
    const thread = `t-${runId}`;
    const completed = until(worker.events$, 'completed', runId);
    await worker.submit('reporter', 'Count my words', { runId, memory: { thread, resource: 'u1' } });
    const { status } = await completed;
    expect(killed.has(runId)).toBe(true);
    expect(status).toBe('completed');
    const messages = await storage.getMessages({ threadId: thread });
    const reports = messages.filter((message) => message.content.parts.some((part) => part.type === 'data-report'));
    expect(reports).toHaveLength(1);
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(new Set(messages.map((message) => message.id)).size).toBe(2);
  }, 120_000);
});
