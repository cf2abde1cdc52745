/**
 * A takeover after memory's save committed and before the run's final commit runs the commit again:
 * memory saves the run's messages a second time. A processor whose `processOutputResult` output
 * differs between the two owners (a timestamp, a random redaction token) must not end the run: the
 * run's own messages are the run's to replace, while another run's messages under the same ids
 * (a counter `generateId` repeated) are still refused (test/memory/message-ids.adversarial.test.ts).
 *
 * Every id the run's `generateId` hands out during a durable run's commit — a `data-*` chunk a
 * `processOutputResult` hook writes, a message a hook adds through `messageList.add` without an id —
 * is made from the run id and the commit's own counter: the next owner gives the same ids in the
 * same order, so its save replaces them. A message only the first owner's commit made (its hooks
 * wrote more) is dropped by the next owner's save: the thread holds what the owner that finished
 * made, and never loses an earlier turn or the run's input and step replies.
 *
 * Each case kills the owner for real at `finalizing` (after memory's save committed), on the
 * in-memory journal and store and on PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PgBoss } from 'pg-boss';
import { filter, firstValueFrom, type Observable } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, type Processor } from 'rxagent';
import { InMemoryStorage, Memory, type MemoryStorage } from 'rxagent/memory';
import { scriptedModel } from 'rxagent/testing';
import { createRunWorker, InMemoryRunJournal, type FaultPointInfo, type RunFaultPoint, type RunJournal, type RunWorker, type RunWorkerEvent } from 'rxagent/durable';
import { PostgresRunJournal, PostgresStorage } from 'rxagent/storage/postgres';
import { LibSQLStorage } from 'rxagent/storage/libsql';
import type { MastraDBMessage } from 'rxagent/message-list';
import { commitMessageId } from '../../src/contract/commit-message-ids.js';
import { commitMessageIdPrefix } from '../../src/contract/commit-message-ids.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';

const suffix = randomUUID().slice(0, 6);
const schema = `rxagent_resave_${suffix}`;

let server: TestPostgres;
const killed = new Set<string>();
/** How many times each run's commit ran `processOutputResult` (1: the first owner, 2: the next). */
const commits = new Map<string, number>();

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

/** Adds a note of its own to the reply through the list (no id: the run's `generateId` gives it one; not merged into the reply). */
const note: Processor = {
  id: 'note',
  processOutputResult: ({ messageList, runId }) => {
    messageList.add({ role: 'assistant', content: `audit note of ${runId}` }, 'response', { merge: false });
    return undefined;
  },
};

/**
 * The first owner's commit adds two notes, each with a data chunk (merged into the note), the next
 * owner's one (a hook whose output depends on a clock or a flag): the first owner's second note is
 * the next owner's to drop.
 */
const shrinking: Processor = {
  id: 'shrinking',
  processOutputResult: ({ messageList, writer, runId }) => {
    const commit = (commits.get(runId) ?? 0) + 1;
    commits.set(runId, commit);
    const count = commit === 1 ? 2 : 1;
    for (let index = 0; index < count; index++) {
      messageList.add({ role: 'assistant', content: `note ${index} of commit ${commit}` }, 'response', { merge: false });
      writer.custom({ type: 'data-report', data: { index, commit } });
    }
    return undefined;
  },
};

/** The next owner's commit removes the run's step reply from the list (restored from the snapshot, stored by the first owner). */
const dropReply: Processor = {
  id: 'drop-reply',
  processOutputResult: ({ messageList, runId }) => {
    const commit = (commits.get(runId) ?? 0) + 1;
    commits.set(runId, commit);
    messageList.add({ role: 'assistant', content: `note of commit ${commit}` }, 'response', { merge: false });
    if (commit > 1) messageList.removeByIds(messageList.get.response.db().filter((message) => message.content.parts.some((part) => part.type === 'text' && part.text === 'Done.')).map((message) => message.id));
    return undefined;
  },
};

/**
 * The first owner's commit adds a note; the next owner's commit removes every message of the list
 * (input, reply, note): it saves nothing, and what only the first owner's commit made must go.
 */
const emptying: Processor = {
  id: 'emptying',
  processOutputResult: ({ messageList, runId }) => {
    const commit = (commits.get(runId) ?? 0) + 1;
    commits.set(runId, commit);
    if (commit === 1) messageList.add({ role: 'assistant', content: 'note of commit 1' }, 'response', { merge: false });
    else messageList.removeByIds([...messageList.get.input.db(), ...messageList.get.response.db()].map((message) => message.id));
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

/** One deployment: a journal, the memory store fenced by it, a pg-boss of its own and a worker running the agents. */
interface Deployment {
  readonly storage: MemoryStorage;
  readonly worker: RunWorker;
  /** Runs `agentId` durably on `thread`, killed once at `finalizing`; resolves with its final status (and its incarnation: its commit ids carry it). */
  run(agentId: string, input: string, thread: string): Promise<{ runId: string; status: string; incarnation: string | undefined }>;
  close(): Promise<void>;
}

async function deploy(name: string, backing: () => { journal: RunJournal; storage: MemoryStorage; close: () => Promise<void> }): Promise<Deployment> {
  const { journal, storage, close } = backing();
  const boss = new PgBoss({ connectionString: server.connectionString, schema: `pgboss_resave_${name}_${suffix}`, superviseIntervalSeconds: 1, monitorIntervalSeconds: 1 });
  boss.on('error', () => undefined);
  await boss.start();
  const memory = new Memory({ storage });
  const agents = [
    new Agent({ id: 'stamper', model: scriptedModel({ rules: [], fallback: { text: 'Noted.' } }), memory, outputProcessors: [stamp] }),
    // a model that answers nothing (a filtered or empty reply): the data chunk is the reply's only message
    new Agent({ id: 'reporter', model: scriptedModel({ rules: [], fallback: { text: '' } }), memory, outputProcessors: [report] }),
    new Agent({ id: 'noter', model: scriptedModel({ rules: [], fallback: { text: 'Done.' } }), memory, outputProcessors: [note, report] }),
    new Agent({ id: 'shrinker', model: scriptedModel({ rules: [], fallback: { text: 'Done.' } }), memory, outputProcessors: [shrinking] }),
    new Agent({ id: 'dropper', model: scriptedModel({ rules: [], fallback: { text: 'Done.' } }), memory, outputProcessors: [dropReply] }),
    new Agent({ id: 'emptier', model: scriptedModel({ rules: [], fallback: { text: 'Done.' } }), memory, outputProcessors: [emptying] }),
  ];
  const worker = createRunWorker({ journal, boss, agents, concurrency: 1, faultPoint, queue: { pollingIntervalSeconds: 0.5 } });
  await worker.start();
  return {
    storage,
    worker,
    async run(agentId, input, thread) {
      const runId = `${agentId}-${name}-${randomUUID().slice(0, 8)}`;
      const completed = until(worker.events$, 'completed', runId);
      await worker.submit(agentId, input, { runId, memory: { thread, resource: 'u1' } });
      const { status } = await completed;
      expect(killed.has(runId)).toBe(true);
      return { runId, status, incarnation: (await journal.getRun(runId))?.incarnation };
    },
    async close() {
      await worker.close().catch(() => undefined);
      await boss.stop({ graceful: false });
      await close();
    },
  };
}

const backings: Array<[string, () => { journal: RunJournal; storage: MemoryStorage; close: () => Promise<void> }]> = [
  [
    'memory',
    () => {
      const journal = new InMemoryRunJournal();
      return { journal, storage: new InMemoryStorage({ runJournal: journal }), close: async () => undefined };
    },
  ],
  [
    'postgres',
    () => {
      const journal = new PostgresRunJournal({ connectionString: server.connectionString, schema });
      const storage = new PostgresStorage({ connectionString: server.connectionString, schema });
      return { journal, storage, close: async () => { await journal.close(); await storage.close(); } };
    },
  ],
];

const deployments = new Map<string, Deployment>();

beforeAll(async () => {
  server = await startTestPostgres();
  for (const [name, backing] of backings) deployments.set(name, await deploy(name, backing));
}, 120_000);

afterAll(async () => {
  for (const deployment of deployments.values()) await deployment.close();
  await server?.stop();
}, 60_000);

const textOf = (message: MastraDBMessage): string => message.content.parts.map((part) => (part.type === 'text' ? part.text : part.type)).join('');

describe.each(backings.map(([name]) => name))('memory saved again by the next owner (%s)', (name) => {
  const deployment = (): Deployment => {
    const found = deployments.get(name);
    if (found === undefined) throw new Error(`${name} did not deploy`);
    return found;
  };

  it('a processOutputResult that differs between owners: the run completes, each message stored once', async () => {
    const { storage, run } = deployment();
    const thread = `t-stamp-${name}-${suffix}`;
    const { status } = await run('stamper', 'Remember this', thread);
    expect(status).toBe('completed');
    const messages = await storage.getMessages({ threadId: thread });
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(new Set(messages.map((message) => message.id)).size).toBe(2);
  }, 120_000);

  it('a data chunk written at the commit: the next owner gives its message the same id, so the thread holds it once', async () => {
    const { storage, run } = deployment();
    const thread = `t-report-${name}-${suffix}`;
    const { status } = await run('reporter', 'Count my words', thread);
    expect(status).toBe('completed');
    const messages = await storage.getMessages({ threadId: thread });
    const reports = messages.filter((message) => message.content.parts.some((part) => part.type === 'data-report'));
    expect(reports).toHaveLength(1);
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(new Set(messages.map((message) => message.id)).size).toBe(2);
  }, 120_000);

  it('a message a processOutputResult adds through messageList.add (no id): stored once, under the id every owner gives it', async () => {
    const { storage, run } = deployment();
    const thread = `t-note-${name}-${suffix}`;
    const { runId, status, incarnation } = await run('noter', 'Audit this', thread);
    expect(status).toBe('completed');
    expect(incarnation).toEqual(expect.any(String));
    const messages = await storage.getMessages({ threadId: thread });
    // the commit's first id (the note's; the data chunk's, the second, went into the note when merged)
    expect(messages[2]?.id).toBe(commitMessageId(runId, 0, incarnation));
    expect(messages[2]?.id.startsWith(commitMessageIdPrefix(runId, incarnation))).toBe(true);
    // the `data-report` chunk `report` writes next is merged into the note
    expect(messages.map(textOf)).toEqual(['Audit this', 'step-startDone.', `audit note of ${runId}data-report`]);
    expect(new Set(messages.map((message) => message.id)).size).toBe(3);
  }, 120_000);

  it('the first owner’s commit made more than the next one’s: what only the first made is dropped, earlier turns and the run’s own input and reply kept', async () => {
    const { storage, run } = deployment();
    const thread = `t-shrink-${name}-${suffix}`;
    // an earlier turn of the thread, by another durable run that was itself taken over at the same point
    const earlier = await run('shrinker', 'First turn', thread);
    expect(earlier.status).toBe('completed');
    const before = await storage.getMessages({ threadId: thread });
    expect(before.map(textOf)).toEqual(['First turn', 'step-startDone.', 'note 0 of commit 2data-report']);
    const { status } = await run('shrinker', 'Second turn', thread);
    expect(status).toBe('completed');
    const messages = await storage.getMessages({ threadId: thread });
    expect(messages.slice(0, before.length)).toEqual(before);
    const added = messages.slice(before.length);
    expect(added.map(textOf)).toEqual(['Second turn', 'step-startDone.', 'note 0 of commit 2data-report']);
    expect(messages.flatMap((message) => message.content.parts.filter((part) => part.type === 'data-report'))).toEqual([
      { type: 'data-report', data: { index: 0, commit: 2 } },
      { type: 'data-report', data: { index: 0, commit: 2 } },
    ]);
  }, 120_000);

  it('the next owner’s commit removes the step reply it restored from the snapshot: the reply the first owner stored stays', async () => {
    const { storage, run } = deployment();
    const thread = `t-drop-${name}-${suffix}`;
    const { runId, status, incarnation } = await run('dropper', 'Keep my reply', thread);
    expect(status).toBe('completed');
    const messages = await storage.getMessages({ threadId: thread });
    expect(messages.map(textOf)).toEqual(['Keep my reply', 'step-startDone.', 'note of commit 2']);
    expect(messages[2]?.id).toBe(commitMessageId(runId, 0, incarnation));
  }, 120_000);
});

describe.each(backings.map(([name]) => name))('the next owner’s commit saves nothing (%s)', (name) => {
  it('what only the first owner’s commit stored is dropped (it stayed: a save with nothing to save was skipped), the input and reply it stored kept', async () => {
    const deployment = deployments.get(name);
    if (deployment === undefined) throw new Error(`${name} did not deploy`);
    const thread = `t-empty-${name}-${suffix}`;
    const { status } = await deployment.run('emptier', 'Forget the note', thread);
    expect(status).toBe('completed');
    const messages = await deployment.storage.getMessages({ threadId: thread });
    expect(messages.map(textOf)).toEqual(['Forget the note', 'step-startDone.']);
  }, 120_000);
});

describe('a plain run keeps its generateId at the commit', () => {
  it('a note added in processOutputResult gets the counter’s next id, not a commit id', async () => {
    let next = 0;
    const storage = new InMemoryStorage();
    const agent = new Agent({
      id: 'plain-noter',
      model: scriptedModel({ rules: [], fallback: { text: 'Done.' } }),
      memory: new Memory({ storage }),
      outputProcessors: [note],
      generateId: () => `id-${next++}`,
    });
    await agent.generate('Audit this', { runId: 'plain-run', memory: { thread: 'plain', resource: 'u1' } });
    const ids = (await storage.getMessages({ threadId: 'plain' })).map((message) => message.id);
    expect(ids).toHaveLength(3);
    expect(ids.every((id) => /^id-\d+$/.test(id))).toBe(true);
    expect(ids.some((id) => id.startsWith(commitMessageIdPrefix('plain-run')))).toBe(false);
  });
});

describe('SaveMessagesOptions.supersedesIdPrefix on every store', () => {
  const directory = mkdtempSync(join(tmpdir(), 'rxagent-supersedes-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));
  const stores: Array<[string, () => MemoryStorage]> = [
    ['in memory', () => new InMemoryStorage()],
    ['libSQL', () => new LibSQLStorage({ url: `file:${join(directory, `${randomUUID()}.db`)}` })],
    ['PostgreSQL', () => new PostgresStorage({ connectionString: server.connectionString, schema })],
  ];
  const message = (id: string, text: string, at: number): MastraDBMessage => ({
    id,
    role: 'assistant',
    createdAt: new Date(at),
    content: { format: 2, parts: [{ type: 'text', text }] },
  });

  it.each(stores)('%s: drops only the run’s own messages under the prefix that the batch does not hold', async (_name, open) => {
    const storage = open();
    try {
      const threadId = `t-sup-${randomUUID()}`;
      const base = { threadId, resourceId: 'u1', ensureThread: true };
      const prefix = commitMessageIdPrefix(`run-a-${threadId}`);
      const other = `${prefix}other-${threadId}`;
      // an earlier turn: no run, and another run, one of its ids under run a's prefix (a collision by hand)
      await storage.saveMessages({ ...base, messages: [message(`plain-${threadId}`, 'earlier', 1)] });
      await storage.saveMessages({ ...base, runId: `run-b-${threadId}`, messages: [message(other, 'run b', 2)] });
      // run a's first owner: its input-like message (another id) and two commit messages
      await storage.saveMessages({
        ...base,
        runId: `run-a-${threadId}`,
        supersedesIdPrefix: prefix,
        messages: [message(`input-${threadId}`, 'input', 3), message(`${prefix}0-${threadId}`, 'c0', 4), message(`${prefix}1-${threadId}`, 'c1', 5)],
      });
      // the next owner saves c0 again, not the input (removed from its list) nor c1
      await storage.saveMessages({ ...base, runId: `run-a-${threadId}`, supersedesIdPrefix: prefix, messages: [message(`${prefix}0-${threadId}`, 'c0 again', 4)] });
      const texts = (await storage.getMessages({ threadId })).map(textOf);
      expect(texts).toEqual(['earlier', 'run b', 'input', 'c0 again']);
    } finally {
      await storage.close();
    }
  }, 60_000);

  it.each(stores)('%s: without the run saving, or empty, it is a TypeError and nothing is stored', async (_name, open) => {
    const storage = open();
    try {
      const threadId = `t-sup-bad-${randomUUID()}`;
      const base = { threadId, resourceId: 'u1', ensureThread: true, messages: [message(`m-${threadId}`, 'x', 1)] };
      await expect(storage.saveMessages({ ...base, supersedesIdPrefix: 'p-' })).rejects.toThrow(TypeError);
      await expect(storage.saveMessages({ ...base, runId: 'r', supersedesIdPrefix: '' })).rejects.toThrow(TypeError);
      await expect(storage.saveMessages({ ...base, runId: 'r', supersedesIdPrefix: 7 as unknown as string })).rejects.toThrow(TypeError);
      expect(await storage.getMessages({ threadId })).toEqual([]);
    } finally {
      await storage.close();
    }
  }, 60_000);
});
