/**
 * One shared tail per run per journal instance: live readers of a run take its new rows from one
 * page query per wake-up, not one each (was: 300 readers of one PostgreSQL run made about 1,200
 * page queries per append — every notification, local write and poll woke every reader, and
 * each read `seq > cursor` itself). A reader that starts behind pages its backlog itself and then
 * joins without gaps or duplicates; a reader that stops reading is detached to its own paging
 * once it falls a page behind (the shared rows are not buffered for it); cancelling every reader
 * leaves no query, poll or wake-up behind.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import pg from 'pg';
import { Subject, type Subscription } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JournalReads, SHARED_PAGE_BYTES, cutPage, type ChunkRow, type TailSource } from '../../src/storage/internal/journal-tail.js';
import { InMemoryRunJournal } from '../../src/storage/journal/in-memory-run-journal.js';
import type { JournalEntry, JournalReadOptions, RunJournal, RunLease } from '../../src/storage/journal/types.js';
import { PostgresRunJournal } from '../../src/storage/postgres/postgres-run-journal.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { commit, delta, finish, start, until } from './journal-suite.js';

// a page of chunks (the statement also checks the run row is the run the read opened)
const PAGE_QUERY = /incarnation IS NOT DISTINCT FROM/;
const POLL_QUERY = /SELECT r\.id, r\.last_seq/;

/** A pool whose statements are counted by kind (every client it opens, wrapped once). */
function countedPool(connectionString: string): { pool: pg.Pool; pages: () => number; polls: () => number; pageCursors: number[] } {
  const pool = new pg.Pool({ connectionString, max: 10 });
  let pages = 0;
  let polls = 0;
  const pageCursors: number[] = [];
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const config = args[0] as string | { text?: string; values?: unknown[] } | undefined;
      const text = typeof config === 'string' ? config : config?.text;
      if (typeof text === 'string' && PAGE_QUERY.test(text)) {
        pages += 1;
        const values = typeof config === 'string' ? (args[1] as unknown[] | undefined) : config?.values;
        pageCursors.push(Number(values?.[1]));
      }
      if (typeof text === 'string' && POLL_QUERY.test(text)) polls += 1;
      return query(...args);
    };
  });
  return { pool, pages: () => pages, polls: () => polls, pageCursors };
}

/** A live reader: what it got, and whether it ended (its error, if any). */
function reader(journal: RunJournal, runId: string, options: JournalReadOptions = {}) {
  const seqs: number[] = [];
  let completed = false;
  let error: unknown;
  const subscription: Subscription = journal.read$(runId, options).subscribe({
    next: (entry: JournalEntry) => seqs.push(entry.seq),
    error: (caught: unknown) => (error = caught),
    complete: () => (completed = true),
  });
  return {
    seqs,
    subscription,
    get completed() {
      return completed;
    },
    get error() {
      return error;
    },
    get last() {
      return seqs.at(-1) ?? options.after ?? 0;
    },
  };
}

/** Every seq from `after + 1` to `last`, once, in order. */
const dense = (after: number, last: number): number[] => Array.from({ length: last - after }, (_, index) => after + 1 + index);

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function openRun(journal: RunJournal, runId: string): Promise<{ lease: RunLease; append: (count: number) => Promise<number>; end: () => Promise<number> }> {
  await journal.createRun({ runId, agentId: 'a', threadId: `t-${runId}`, input: null });
  const { lease } = await journal.claim(runId, 'w');
  await journal.append(lease, [start(runId)]);
  return {
    lease,
    append: async (count) => (await journal.append(lease, Array.from({ length: count }, (_, index) => delta(runId, `d${index}`)))).lastSeq,
    end: async () => (await journal.append(lease, [finish(runId)], commit('final'))).lastSeq,
  };
}

describe('PostgreSQL: one shared tail per run', () => {
  let server: TestPostgres | undefined;
  const schema = `rxagent_shared_tail_${randomUUID().slice(0, 8)}`;
  const opened: Array<{ close(): Promise<void> }> = [];
  const pools: pg.Pool[] = [];
  let connectionString = '';

  beforeAll(async () => {
    server = await startTestPostgres();
    connectionString = server.connectionString;
  }, 60_000);

  afterAll(async () => {
    for (const journal of opened) await journal.close();
    for (const pool of pools) await pool.end();
    const db = new pg.Pool({ connectionString, max: 1 });
    await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await db.end();
    await server?.stop();
  }, 60_000);

  /** A writer (instance A) and a counted reader journal (instance B) on one database. */
  function instances(options: { pageSize?: number; pollIntervalMs?: number } = {}) {
    const counted = countedPool(connectionString);
    pools.push(counted.pool);
    const writer = new PostgresRunJournal({ connectionString, schema });
    const readers = new PostgresRunJournal({ pool: counted.pool, schema, pageSize: options.pageSize ?? 500, pollIntervalMs: options.pollIntervalMs ?? 1000 });
    opened.push(writer, readers);
    return { writer, readers, counted };
  }

  it('300 live readers of one run, 10 appends: page queries per append bounded by a small constant, not by the readers; every reader gets each seq once, in order', { timeout: 180_000 }, async () => {
    const { writer, readers: journal, counted } = instances();
    const runId = `many-${randomUUID()}`;
    const run = await openRun(writer, runId);
    let last = await run.append(3);
    const all = Array.from({ length: 300 }, (_, index) => reader(journal, runId, { after: index % 4 }));
    await until(() => all.every((one) => one.last === last), 'every reader caught up', 60_000);
    const before = counted.pages();
    const appends = 10;
    for (let index = 0; index < appends; index++) {
      last = await run.append(1 + (index % 3));
      await until(() => all.every((one) => one.last === last), `every reader at seq ${last}`, 60_000);
    }
    const perAppend = (counted.pages() - before) / appends;
    // one query per wake-up of the run (a notification, the backstop poll), merged while one is in flight
    expect(perAppend).toBeLessThanOrEqual(4);
    last = await run.end();
    await until(() => all.every((one) => one.completed), 'every reader completed', 60_000);
    for (const [index, one] of all.entries()) {
      expect(one.error).toBeUndefined();
      expect(one.seqs).toEqual(dense(index % 4, last));
    }
  });

  it('each seq once, in order, to readers joining at random cursors and times (pages of 3 rows)', { timeout: 240_000 }, async () => {
    const { writer, readers: journal } = instances({ pageSize: 3, pollIntervalMs: 200 });
    await fc.assert(
      fc.asyncProperty(steps, async (plan) => {
        const runId = `prop-${randomUUID()}`;
        const run = await openRun(writer, runId);
        await deliveryProperty({ append: run.append, end: run.end, read: (options) => reader(journal, runId, options) }, plan);
      }),
      { numRuns: 25 },
    );
  });

  it('a reader whose client stops reading is detached from the tail: the other readers go on, and it pages on from its own cursor when read again', { timeout: 120_000 }, async () => {
    const { writer, readers: journal, counted } = instances({ pageSize: 20 });
    const runId = `slow-${randomUUID()}`;
    const run = await openRun(writer, runId);
    const fast = Array.from({ length: 20 }, () => reader(journal, runId));
    const stalled = gate();
    const slow = reader(journal, runId, { ready: stalled.ready });
    await until(() => fast.every((one) => one.last === 1) && slow.last === 1, 'readers at seq 1');
    let last = 1;
    for (let index = 0; index < 15; index++) {
      last = await run.append(15);
      await until(() => fast.every((one) => one.last === last), `fast readers at ${last}`, 30_000);
    }
    const stoppedAt = slow.last;
    expect(stoppedAt).toBeLessThan(last);
    const from = counted.pageCursors.length;
    stalled.release();
    await until(() => slow.last === last, 'the slow reader caught up', 30_000);
    // it held none of the tail's rows: what it missed came from its own page at its cursor
    expect(counted.pageCursors.slice(from)).toContain(stoppedAt);
    expect(slow.seqs).toEqual(dense(0, last));
    last = await run.end();
    await until(() => slow.completed && fast.every((one) => one.completed), 'every reader completed', 30_000);
    for (const one of [...fast, slow]) expect(one.seqs).toEqual(dense(0, last));
  });

  it('300 readers (following, paging a backlog, waiting on their client) cancelled: later writes make no page query and no poll for them', { timeout: 180_000 }, async () => {
    const { writer, readers: journal, counted } = instances({ pageSize: 5, pollIntervalMs: 200 });
    const runId = `cancel-${randomUUID()}`;
    const run = await openRun(writer, runId);
    await run.append(60);
    const stalled = gate();
    const all = Array.from({ length: 300 }, (_, index) =>
      reader(journal, runId, { after: index % 50, ...(index % 3 === 0 ? { ready: stalled.ready } : index % 3 === 1 ? { maxPageBytes: 200 } : {}) }),
    );
    await until(() => all.every((one, index) => index % 3 === 0 || one.last === 61), 'readers that read caught up', 60_000);
    await run.append(2);
    await pause(50);
    for (const one of all) one.subscription.unsubscribe();
    stalled.release();
    // the last poll and queries in flight may still answer; after them, nothing
    await pause(600);
    const pages = counted.pages();
    const polls = counted.polls();
    await run.append(3);
    await pause(1_000);
    expect(counted.pages()).toBe(pages);
    expect(counted.polls()).toBe(polls);
    for (const one of all) expect(one.error).toBeUndefined();
    await run.end();
  });
});

/** A `ready` the test holds: readers wait on it until `release()`. */
function gate() {
  let open = false;
  const waiting: Array<() => void> = [];
  return {
    ready: (): Promise<void> | undefined => (open ? undefined : new Promise<void>((resolve) => waiting.push(resolve))),
    release: () => {
      open = true;
      for (const resolve of waiting.splice(0)) resolve();
    },
  };
}

/** A run as a `TailSource` (a journal's), its page calls counted by cursor and held on demand. */
function fakeRun(pageSize: number) {
  const rows: ChunkRow[] = [];
  const wake = new Subject<void>();
  const cursors: number[] = [];
  let held: Promise<void> | undefined;
  let release: (() => void) | undefined;
  const source: TailSource = {
    page: async (after, limit, until, maxBytes) => {
      cursors.push(after);
      // the rows as they are when the query is made (a snapshot), answered once released
      const page = cutPage(rows.slice(after, Math.min(after + limit, until ?? Number.POSITIVE_INFINITY)), maxBytes);
      await held;
      return page;
    },
    wake$: wake,
    pageSize,
    missing: async (seq) => {
      throw new Error(`missing seq ${seq}`);
    },
  };
  return {
    source,
    wake,
    cursors,
    append(count: number, type = 'text-delta', size = 20): number {
      for (let index = 0; index < count; index++) rows.push({ seq: rows.length + 1, epoch: 1, type, json: JSON.stringify({ text: 'x'.repeat(size) }) });
      wake.next();
      return rows.length;
    },
    /** Page queries made from now on answer only once released (`unhold`, or the returned function). */
    hold(): () => void {
      held = new Promise<void>((resolve) => (release = resolve));
      return release as () => void;
    },
    /** Queries made from now on answer at once; those held stay held unless `release`. */
    stopHolding(): void {
      held = undefined;
    },
    unhold(): void {
      held = undefined;
      release?.();
    },
  };
}

const settle = async (turns = 20): Promise<void> => {
  for (let index = 0; index < turns; index++) await new Promise((resolve) => setImmediate(resolve));
};

describe('the shared tail (JournalReads over a run)', () => {
  it('wake-ups while its page query is in flight merge into one follow-up query', async () => {
    const run = fakeRun(50);
    const reads = new JournalReads();
    const all = Array.from({ length: 100 }, () => reader({ read$: (runId: string, options?: JournalReadOptions) => reads.read$(runId, run.source, options?.after ?? 0, {}) } as unknown as RunJournal, 'r'));
    await settle();
    const before = run.cursors.length;
    run.hold();
    run.append(1);
    await settle();
    for (let index = 0; index < 10; index++) run.append(1);
    run.unhold();
    await settle();
    // the query in flight, then one for the ten wake-ups that arrived during it
    expect(run.cursors.length - before).toBe(2);
    for (const one of all) expect(one.seqs).toEqual(dense(0, 11));
    for (const one of all) one.subscription.unsubscribe();
    expect(reads.sharedTails).toBe(0);
    expect(run.wake.observed).toBe(false);
  });

  it('a reader whose page was read before rows the tail read after it (it starts behind the tail): pages on to it and follows it, each seq once', async () => {
    const run = fakeRun(10);
    const reads = new JournalReads();
    const journal = { read$: (runId: string, options?: JournalReadOptions) => reads.read$(runId, run.source, options?.after ?? 0, {}) } as unknown as RunJournal;
    run.append(3);
    const first = reader(journal, 'r');
    await settle();
    expect(first.last).toBe(3);
    // the newcomer's page is taken (3 rows, nothing after) and answers late; meanwhile two rows
    // are written and the tail reads them
    const answer = run.hold();
    const late = reader(journal, 'r', { after: 3 });
    run.stopHolding();
    run.append(2);
    await settle();
    expect(first.last).toBe(5);
    answer();
    await settle();
    expect(late.error).toBeUndefined();
    expect(late.seqs).toEqual([4, 5]);
    run.append(1);
    await settle();
    expect(first.seqs).toEqual(dense(0, 6));
    expect(late.seqs).toEqual([4, 5, 6]);
    first.subscription.unsubscribe();
    late.subscription.unsubscribe();
  });

  it('a reader that stops reading is detached once more than a page behind: the tail goes on for the others, holds none of its rows, and it pages on from its own cursor when it reads again', async () => {
    const run = fakeRun(10);
    const reads = new JournalReads();
    const journal = { read$: (runId: string, options?: JournalReadOptions) => reads.read$(runId, run.source, options?.after ?? 0, { ready: options?.ready }) } as unknown as RunJournal;
    run.append(3);
    const fast = reader(journal, 'r');
    const stalled = gate();
    const slow = reader(journal, 'r', { ready: stalled.ready });
    await settle();
    expect(slow.last).toBe(3);
    for (let index = 0; index < 30; index++) {
      run.append(7);
      await settle(5);
    }
    expect(fast.seqs).toEqual(dense(0, 213));
    // it took at most the first batch before it stopped: what it missed is read from its cursor
    expect(slow.last).toBeLessThanOrEqual(10);
    const stoppedAt = slow.last;
    const from = run.cursors.length;
    stalled.release();
    await settle(40);
    expect(run.cursors.slice(from)[0]).toBe(stoppedAt);
    expect(slow.seqs).toEqual(dense(0, 213));
    // and it follows the tail again: one more append costs one query, not one per reader
    const before = run.cursors.length;
    run.append(1);
    await settle();
    expect(run.cursors.length - before).toBe(1);
    expect(slow.seqs).toEqual(dense(0, 214));
    fast.subscription.unsubscribe();
    slow.subscription.unsubscribe();
    expect(reads.sharedTails).toBe(0);
  });

  it('a page of the tail is bounded in bytes, and a reader takes it in pieces of its own maxPageBytes, ready awaited between them', async () => {
    const run = fakeRun(500);
    const reads = new JournalReads();
    let readies = 0;
    const seqs: number[] = [];
    const subscription = reads.read$('r', run.source, 0, { maxPageBytes: 10_000, ready: () => void (readies += 1) }).subscribe((entry) => seqs.push(entry.seq));
    await settle();
    const before = run.cursors.length;
    run.append(100, 'text-delta', 5_000); // ≈ 500 KB: more than a page of the tail
    await settle(60);
    expect(seqs).toEqual(dense(0, 100));
    // the tail read it in pages of at most SHARED_PAGE_BYTES (plus the empty page after a full one)
    expect(run.cursors.length - before).toBeGreaterThanOrEqual(Math.ceil((100 * 5_000) / SHARED_PAGE_BYTES));
    // at most two rows (10,000 bytes, the row starting below the bound) per piece
    expect(readies).toBeGreaterThanOrEqual(50);
    subscription.unsubscribe();
  });

  it('cancelling every reader (following, paging a backlog, waiting on ready) releases the tail, its wake-up subscription and its queries', async () => {
    const run = fakeRun(5);
    const reads = new JournalReads();
    run.append(40);
    const stalled = gate();
    const subscriptions: Subscription[] = [];
    for (let index = 0; index < 1000; index++) {
      const options = index % 3 === 0 ? { ready: stalled.ready } : index % 3 === 1 ? { maxPageBytes: 30 } : {};
      subscriptions.push(reads.read$('r', run.source, index % 40, options).subscribe());
    }
    await settle(5);
    run.append(2);
    await settle(5);
    expect(reads.sharedTails).toBe(1);
    for (const subscription of subscriptions) subscription.unsubscribe();
    expect(reads.sharedTails).toBe(0);
    expect(run.wake.observed).toBe(false);
    const before = run.cursors.length;
    stalled.release();
    run.append(5);
    await settle();
    expect(run.cursors.length).toBe(before);
  });

  it('the wake-ups failing (the journal closed, the run erased) end every reader with it, and a later reader starts a new tail', async () => {
    const run = fakeRun(5);
    const reads = new JournalReads();
    run.append(12);
    const readers = Array.from({ length: 20 }, (_, index) => reader({ read$: (runId: string) => reads.read$(runId, run.source, index, {}) } as unknown as RunJournal, 'r'));
    await settle();
    const closed = new Error('the store is closed');
    run.wake.error(closed);
    for (const one of readers) expect(one.error).toBe(closed);
    expect(reads.sharedTails).toBe(0);
  });
});

/** A step of the property: append a batch, open a reader, let time pass, or cancel a reader. */
type Step =
  | { kind: 'append'; count: number }
  | { kind: 'read'; at: number; maxPageBytes?: number; slow: 'no' | 'ticks' | 'held' }
  | { kind: 'wait'; ms: number }
  | { kind: 'cancel'; which: number };

const steps = fc.array(
  fc.oneof(
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('append' as const), count: fc.integer({ min: 1, max: 12 }) }) },
    {
      weight: 3,
      arbitrary: fc.record(
        { kind: fc.constant('read' as const), at: fc.double({ min: 0, max: 1, noNaN: true }), maxPageBytes: fc.integer({ min: 1, max: 400 }), slow: fc.constantFrom('no' as const, 'ticks' as const, 'held' as const) },
        { requiredKeys: ['kind', 'at', 'slow'] },
      ),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 15 }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), which: fc.nat() }) },
  ),
  { minLength: 1, maxLength: 25 },
);

/**
 * Readers joining at random cursors and times (some slow, some stopped until the end), random
 * append batches: every reader gets each seq after its cursor once, in order — up to the
 * terminal, or a prefix of that when it was cancelled.
 */
/** A run under the property: appends, the terminal, and live reads of it. */
interface RunUnderTest {
  append(count: number): Promise<number>;
  end(): Promise<number>;
  read(options: JournalReadOptions): ReturnType<typeof reader>;
}

async function journalRun(journal: RunJournal): Promise<RunUnderTest> {
  const runId = `prop-${randomUUID()}`;
  const run = await openRun(journal, runId);
  return { append: run.append, end: run.end, read: (options) => reader(journal, runId, options) };
}

/** A run read through `JournalReads` directly, its page queries answering after random delays (0–3 ms). */
function slowPagedRun(pageSize: number, delays: () => number): RunUnderTest {
  const run = fakeRun(pageSize);
  const page = run.source.page;
  const source: TailSource = {
    ...run.source,
    page: async (...args) => {
      const rows = await page(...args);
      await pause(delays());
      return rows;
    },
  };
  const reads = new JournalReads();
  run.append(1);
  return {
    append: async (count) => run.append(count),
    end: async () => run.append(1, 'finish'),
    read: (options) => reader({ read$: (runId: string) => reads.read$(runId, source, options.after ?? 0, { ready: options.ready, maxPageBytes: options.maxPageBytes }) } as unknown as RunJournal, 'r', options),
  };
}

async function deliveryProperty(run: RunUnderTest, plan: Step[]): Promise<void> {
  let last = 1;
  const readers: Array<{ after: number; one: ReturnType<typeof reader>; cancelled: boolean }> = [];
  const held: Array<() => void> = [];
  for (const step of plan) {
    if (step.kind === 'append') last = await run.append(step.count);
    else if (step.kind === 'wait') await pause(step.ms);
    else if (step.kind === 'cancel') {
      const target = readers[step.which % Math.max(1, readers.length)];
      if (target !== undefined && !target.cancelled) {
        target.cancelled = true;
        target.one.subscription.unsubscribe();
      }
    } else {
      const after = Math.floor(step.at * last);
      let ready: JournalReadOptions['ready'];
      if (step.slow === 'ticks') ready = () => new Promise<void>((resolve) => setTimeout(resolve, 1));
      if (step.slow === 'held') {
        const stop = gate();
        held.push(stop.release);
        ready = stop.ready;
      }
      readers.push({ after, one: run.read({ after, ...(step.maxPageBytes === undefined ? {} : { maxPageBytes: step.maxPageBytes }), ...(ready === undefined ? {} : { ready }) }), cancelled: false });
    }
  }
  for (const release of held) release();
  last = await run.end();
  await until(() => readers.every(({ one, cancelled }) => cancelled || one.completed || one.error !== undefined), 'every reader ended', 60_000);
  for (const { after, one, cancelled } of readers) {
    expect(one.error).toBeUndefined();
    expect(one.seqs).toEqual(dense(after, cancelled ? one.last : last));
  }
}

describe('delivery: each seq once, in order, to every reader', () => {
  it('in memory (pages of 3 rows)', { timeout: 120_000 }, async () => {
    const journal = new InMemoryRunJournal({ pageSize: 3 });
    await fc.assert(fc.asyncProperty(steps, async (plan) => deliveryProperty(await journalRun(journal), plan)), { numRuns: 150 });
  });

  it('page queries answering late (0–3 ms each, pages of 2 rows): readers start behind the tail, join it, fall behind and page again', { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(steps, fc.infiniteStream(fc.integer({ min: 0, max: 3 })), async (plan, delays) => {
        const iterator = delays[Symbol.iterator]();
        await deliveryProperty(slowPagedRun(2, () => iterator.next().value as number), plan);
      }),
      { numRuns: 100 },
    );
  });
});
