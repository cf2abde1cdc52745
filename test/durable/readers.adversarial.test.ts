/**
 * The durable readers against a client that can reach the handlers an app mounts, with any run id:
 * hostile run ids (ids no store can hold, look-alikes, path and SQL forms, ids a header cannot
 * carry), hostile cursors (`Last-Event-ID`, `?after=`, UI cursors: signs, fractions, hex, 2^64,
 * repeated headers, past the end), hostile tokens (another encoding of the signature, glued
 * tokens, the last second), answers that must not tell a refused run from an unknown one, a client
 * that never reads (counted in rows handed out by the journal, not in time), and the stop
 * (`RunWorker.cancel`) for another owner's, a finished or an unknown run. In memory, and on
 * PostgreSQL for the SQL-ish ids and the huge cursors. What the security row's own tests cover
 * (run-access, reader-hardening, durable-chat-stop, journal-stream-response) is not repeated.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Observable, finalize, tap } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resumeUIMessageStream, resumeUIMessageStreamResponse } from 'rxagent/ai-sdk';
import {
  InMemoryRunJournal,
  RUN_ID_HEADER,
  RUN_TOKEN_HEADER,
  createRunToken,
  createRunWorker,
  decodeRunIdHeader,
  journalStreamResponse,
  runTokenAuthorization,
  verifyRunToken,
  type JournalEntry,
  type JournalReadOptions,
  type RunAccess,
  type RunJournal,
  type RunWorkerOptions,
} from 'rxagent/durable';
import { PostgresRunJournal } from 'rxagent/storage/postgres';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { commit, delta, finish, start } from '../storage/journal-suite.js';

const secret = 'adversarial-secret-of-at-least-32-bytes!!';
const NOW = 1_800_000_000_000;
const now = (): number => NOW;
const authorize = runTokenAuthorization({ secret, now });
const tokenOf = (runId: string, resourceId: string, options: { expiresInSeconds?: number; now?: () => number } = {}): string =>
  createRunToken({ runId, resourceId, expiresInSeconds: options.expiresInSeconds ?? 60, secret, now: options.now ?? now });
const withToken = (token: string, init: { headers?: Record<string, string>; url?: string } = {}): Request =>
  new Request(init.url ?? 'http://app/runs', { headers: { [RUN_TOKEN_HEADER]: token, ...init.headers } });
const open = { unsafeNoAuthorization: true } as const;

/** An HTTP answer reduced to what a client can compare: status, headers, body. */
interface Answer {
  status: number;
  headers: Array<[string, string]>;
  body: string;
}
const headerList = (headers: Headers): Array<[string, string]> => {
  const list: Array<[string, string]> = [];
  headers.forEach((value, name) => list.push([name, value]));
  return list;
};
const answer = async (response: Response): Promise<Answer> => ({ status: response.status, headers: headerList(response.headers), body: await response.text() });

/** The two HTTP readers and the UI stream (its error's name as a status: 404 RunNotFoundError, 400 JournalCursorError). */
const readers = {
  journalStreamResponse: async (journal: RunJournal, runId: string, access: RunAccess & { after?: string | number | null }): Promise<Answer> =>
    answer(await journalStreamResponse(journal, runId, access)),
  resumeUIMessageStreamResponse: async (journal: RunJournal, runId: string, access: RunAccess & { after?: string | number | null }): Promise<Answer> =>
    answer(await resumeUIMessageStreamResponse(journal, runId, { ...access, after: access.after === undefined || access.after === null ? null : String(access.after) })),
  resumeUIMessageStream: async (journal: RunJournal, runId: string, access: RunAccess & { after?: string | number | null }): Promise<Answer> => {
    const chunks: unknown[] = [];
    try {
      for await (const chunk of resumeUIMessageStream(journal, runId, { ...access, after: access.after === undefined || access.after === null ? null : String(access.after) })) {
        chunks.push(chunk);
      }
      return { status: 200, headers: [], body: JSON.stringify(chunks) };
    } catch (error) {
      const name = (error as Error).name;
      return { status: name === 'RunNotFoundError' ? 404 : name === 'JournalCursorError' ? 400 : 500, headers: [], body: `${name}: ${(error as Error).message}` };
    }
  },
} as const;
type ReaderName = keyof typeof readers;
const READERS = Object.keys(readers) as ReaderName[];

/** run-alice (alice) and run-bob (bob), ended, 3 entries each; run-live (alice), still running. */
async function journalWithRuns(): Promise<InMemoryRunJournal & { appendLive: (count: number, ended?: boolean) => Promise<void> }> {
  const journal = new InMemoryRunJournal();
  for (const [runId, resourceId] of [['run-alice', 'alice'], ['run-bob', 'bob']] as const) {
    await journal.createRun({ runId, agentId: 'a', threadId: `t-${resourceId}`, resourceId, input: null });
    const { lease } = await journal.claim(runId, 'w');
    await journal.append(lease, [start(runId), delta(runId, 'hi')]);
    await journal.append(lease, [finish(runId)], commit('final'));
  }
  await journal.createRun({ runId: 'run-live', agentId: 'a', threadId: 't-alice', resourceId: 'alice', input: null });
  const { lease } = await journal.claim('run-live', 'w');
  await journal.append(lease, [start('run-live')]);
  const appendLive = async (count: number, ended = false): Promise<void> => {
    await journal.append(lease, Array.from({ length: count }, () => delta('run-live', 'x')));
    if (ended) await journal.append(lease, [finish('run-live')], commit('final'));
  };
  return Object.assign(journal, { appendLive });
}

/** `inner` with `read$` watched: rows handed out, subscriptions still open, and the pauses of `ready`. */
function watched(inner: RunJournal): { journal: RunJournal; rows: () => number; open: () => number; paused: () => Promise<number> } {
  let rows = 0;
  let open = 0;
  const waiters: Array<(rows: number) => void> = [];
  const read$ = (runId: string, options: JournalReadOptions = {}): Observable<JournalEntry> => {
    const ready = options.ready;
    const readyWatched =
      ready === undefined
        ? undefined
        : (): Promise<void> | void => {
            const waiting = ready();
            // a promise: the reader waits for its client; tell whoever waits for that
            if (waiting !== undefined) for (const resolve of waiters.splice(0)) resolve(rows);
            return waiting;
          };
    return new Observable<JournalEntry>((subscriber) => {
      open += 1;
      return inner
        .read$(runId, { ...options, ...(readyWatched === undefined ? {} : { ready: readyWatched }) })
        .pipe(
          tap(() => void (rows += 1)),
          finalize(() => void (open -= 1)),
        )
        .subscribe(subscriber);
    });
  };
  const journal = new Proxy(inner, {
    get(target, key) {
      if (key === 'read$') return read$;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { journal, rows: () => rows, open: () => open, paused: () => new Promise<number>((resolve) => waiters.push(resolve)) };
}

/** A macrotask: whatever microtasks the readers queued have run. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('run ids', () => {
  it.each(READERS)('%s: an id no store can hold (NUL, a decoded percent-00, 10 KB, a lone surrogate, empty) is an unknown run: 404, never a 500', async (name) => {
    const journal = await journalWithRuns();
    for (const runId of ['run-alice\u0000', decodeURIComponent('run-alice%00'), 'r'.repeat(10_000), 'run-\uD800alice', '']) {
      for (const access of [{ request: withToken(tokenOf('run-alice', 'alice')), authorize }, open] as const) {
        const got = await readers[name](journal, runId, access);
        expect(got.status, `${name} ${JSON.stringify(runId.slice(0, 20))}`).toBe(404);
        expect(got.body).toContain('RunNotFoundError');
      }
    }
  });

  it.each(READERS)('%s: ids near a real one (look-alikes, case, path forms, edge spaces, quotes, percent forms) are unknown runs, answered as any unknown run', async (name) => {
    const journal = await journalWithRuns();
    const near = ['run-аlice', 'RUN-ALICE', 'run-alice ', ' run-alice', 'run-alice/', '/run-alice', '../run-alice', 'run-bob/../run-alice', '..', '/', 'run-alice%00', "run-alice' OR '1'='1", 'run-%', 'run-_lice'];
    const unknown = await readers[name](journal, 'no-such-run', { request: withToken(tokenOf('run-alice', 'alice')), authorize });
    for (const runId of near) {
      // with alice's own token for run-alice, and with no authorization at all
      for (const access of [{ request: withToken(tokenOf('run-alice', 'alice')), authorize }, open] as const) {
        const got = await readers[name](journal, runId, access);
        expect(got.status, JSON.stringify(runId)).toBe(404);
        expect(got.headers).toEqual(unknown.headers);
        expect(got.body.replace(JSON.stringify(runId).slice(1, -1), 'ID')).toBe(unknown.body.replace('no-such-run', 'ID'));
      }
    }
  });

  for (const name of ['journalStreamResponse', 'resumeUIMessageStreamResponse'] as const) {
    it(`${name}: a run whose id a header cannot carry as it is (past U+007E, a line break) is served with the id encoded, no header injected, and leaves nothing subscribed once its body is cancelled`, async () => {
      for (const runId of ['run-名前', 'run\nx-injected: 1']) {
        const inner = new InMemoryRunJournal();
        await inner.createRun({ runId, agentId: 'a', resourceId: 'alice', input: null });
        const { lease } = await inner.claim(runId, 'w');
        await inner.append(lease, [start(runId), delta(runId, 'hi')]); // live: the body never ends by itself
        const { journal, open: subscribed } = watched(inner);
        const response = name === 'journalStreamResponse' ? await journalStreamResponse(journal, runId, open) : await resumeUIMessageStreamResponse(journal, runId, open);
        expect(response.status).toBe(200);
        const header = response.headers.get(RUN_ID_HEADER);
        expect(header, JSON.stringify(runId)).toMatch(/^utf-8''[\x21-\x7e]+$/);
        expect(decodeRunIdHeader(header)).toBe(runId);
        expect(response.headers.has('x-injected')).toBe(false);
        await response.body?.cancel();
        await turn();
        expect(subscribed(), `${name} ${JSON.stringify(runId)}: journal subscriptions left`).toBe(0);
      }
    });
  }
});

describe('cursors', () => {
  const HOSTILE = ['-1', '-0', '1.0', '1e0', '0x1', '0b1', '+1', '１', '1 1', '1,2', '18446744073709551616', '9'.repeat(16), '999999999999999', '4', 'NaN', 'Infinity'];

  it('journalStreamResponse: hostile Last-Event-ID and ?after= values are a 400 before anything is read; a refused caller gets the unknown run’s 404 instead', async () => {
    const inner = await journalWithRuns();
    const { journal, rows, open: subscribed } = watched(inner);
    const unknown = await answer(await journalStreamResponse(journal, 'run-xxxxx', { request: withToken(tokenOf('run-alice', 'alice'), { headers: { 'last-event-id': '-1' } }), authorize }));
    for (const cursor of HOSTILE) {
      // a header carries bytes only (full-width digits go in the query)
      const inHeader = /^[\x20-\x7e]*$/.test(cursor);
      for (const request of [
        ...(inHeader ? [withToken(tokenOf('run-alice', 'alice'), { headers: { 'last-event-id': cursor } })] : []),
        withToken(tokenOf('run-alice', 'alice'), { url: `http://app/runs?after=${encodeURIComponent(cursor)}` }),
      ]) {
        const got = await answer(await journalStreamResponse(journal, 'run-alice', { request, authorize }));
        expect(got.status, cursor).toBe(400);
        expect(JSON.parse(got.body)).toMatchObject({ error: { name: 'JournalCursorError' } });
      }
      // bob's run with alice's token and the same cursor: exactly the unknown run, the cursor is never looked at
      const refused = await answer(await journalStreamResponse(journal, 'run-bob', { request: withToken(tokenOf('run-alice', 'alice'), { url: `http://app/runs?after=${encodeURIComponent(cursor)}` }), authorize }));
      expect(refused.status).toBe(404);
      expect(refused.headers).toEqual(unknown.headers);
      expect(refused.body.replace('run-bob', 'ID')).toBe(unknown.body.replace('run-xxxxx', 'ID'));
    }
    // numbers given by the app: 2^64, fractions, NaN, infinities
    for (const after of [2 ** 64, 1.5, Number.NaN, Number.POSITIVE_INFINITY, -1, 4]) {
      expect((await journalStreamResponse(journal, 'run-alice', { ...open, after })).status, String(after)).toBe(400);
    }
    expect(rows()).toBe(0);
    expect(subscribed()).toBe(0);
  });

  it('journalStreamResponse: a repeated Last-Event-ID header is one malformed value (400); edge whitespace is trimmed by Headers (documented Fetch behaviour); an empty one falls back to ?after=', async () => {
    const journal = await journalWithRuns();
    const ids = async (response: Response): Promise<number[]> => [...(await response.text()).matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
    const repeated = new Headers();
    repeated.append('last-event-id', '1');
    repeated.append('last-event-id', '2');
    expect((await journalStreamResponse(journal, 'run-alice', { ...open, request: new Request('http://app/runs', { headers: repeated }) })).status).toBe(400);
    expect(await ids(await journalStreamResponse(journal, 'run-alice', { ...open, request: new Request('http://app/runs', { headers: { 'last-event-id': ' 1 ' } }) }))).toEqual([2, 3]);
    expect(await ids(await journalStreamResponse(journal, 'run-alice', { ...open, request: new Request('http://app/runs?after=2', { headers: { 'last-event-id': '' } }) }))).toEqual([3]);
    // ?after= is not trimmed: a space is a malformed cursor
    expect((await journalStreamResponse(journal, 'run-alice', { ...open, request: new Request('http://app/runs?after=%201') })).status).toBe(400);
  });

  it.each(['resumeUIMessageStreamResponse', 'resumeUIMessageStream'] as const)('%s: hostile UI cursors are a 400 (JournalCursorError) before anything is read; a refused caller gets 404', async (name) => {
    const inner = await journalWithRuns();
    const { journal, rows, open: subscribed } = watched(inner);
    const token = withToken(tokenOf('run-alice', 'alice'));
    const cursors = ['-1', '1:-1', '1:1.5', '1.5', '0x1', '1:0x1', '1:1:1', ':1', '1:', '18446744073709551616:0', '1:18446744073709551616', '999999999999999:0', '4:0', '1:9999999', ' 1', '1 ', '１:0', '00'];
    for (const after of cursors) {
      expect((await readers[name](journal, 'run-alice', { request: token, authorize, after })).status, after).toBe(400);
      expect((await readers[name](journal, 'run-bob', { request: token, authorize, after })).status, after).toBe(404);
    }
    expect(rows()).toBe(0);
    expect(subscribed()).toBe(0);
    // a cursor of another run is only a number: checked against this run's own lastSeq
    const ui = await readers[name](journal, 'run-alice', { request: token, authorize, after: '2:0' });
    expect(ui.status).toBe(200);
    expect(ui.body).not.toContain('run-bob');
  });
});

describe('run tokens', () => {
  const parts = (token: string): [string, string, string] => token.split('.') as [string, string, string];

  it('the signature in another encoding of the same bytes is refused: one token text per claims', async () => {
    const journal = await journalWithRuns();
    const token = tokenOf('run-alice', 'alice');
    const [version, body, mac] = parts(token);
    const bytes = Buffer.from(mac, 'base64url');
    // base64url has 4 spellings of a 32-byte MAC's last character (its 2 low bits are padding)
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const respelled = [...alphabet].map((last) => `${mac.slice(0, -1)}${last}`).filter((spelling) => spelling !== mac && Buffer.from(spelling, 'base64url').equals(bytes));
    expect(respelled).toHaveLength(3);
    const forms = [
      ...respelled,
      bytes.toString('base64'), // +, / and = padding
      `${mac}=`,
      `${mac}==`,
      `${mac}A`,
      ` ${mac}`,
      mac.toLowerCase(),
    ];
    for (const form of forms) {
      const forged = `${version}.${body}.${form}`;
      expect(verifyRunToken(forged, { secret, now }), form).toBeNull();
      expect((await readers.journalStreamResponse(journal, 'run-alice', { request: withToken(forged), authorize })).status, form).toBe(404);
    }
    expect(verifyRunToken(token, { secret, now })).toMatchObject({ runId: 'run-alice', resourceId: 'alice' });
  });

  it('glued, doubled or wrapped tokens open nothing; the last second before expiry opens, the expiry second does not', async () => {
    const journal = await journalWithRuns();
    const alice = tokenOf('run-alice', 'alice');
    const bob = tokenOf('run-bob', 'bob');
    const doubled = new Headers();
    doubled.append(RUN_TOKEN_HEADER, alice);
    doubled.append(RUN_TOKEN_HEADER, alice);
    const requests = [
      withToken(`${alice}${alice}`),
      withToken(`${alice}.${alice}`),
      withToken(`${bob}.${alice}`),
      withToken(`${alice} ${alice}`),
      withToken(`Bearer ${alice}`),
      withToken(`"${alice}"`),
      withToken(`${alice}.`),
      withToken(`${alice}${'A'.repeat(5000)}`),
      new Request('http://app/runs', { headers: doubled }),
      // a refused header is not rescued by a valid ?token= (the header wins, documented)
      withToken(bob, { url: `http://app/runs?token=${alice}` }),
    ];
    for (const request of requests) expect((await readers.journalStreamResponse(journal, 'run-alice', { request, authorize })).status).toBe(404);
    const minted = tokenOf('run-alice', 'alice', { expiresInSeconds: 60 });
    const at = (ms: number) => runTokenAuthorization({ secret, now: () => NOW + ms });
    expect((await readers.journalStreamResponse(journal, 'run-alice', { request: withToken(minted), authorize: at(59_999) })).status).toBe(200);
    expect((await readers.journalStreamResponse(journal, 'run-alice', { request: withToken(minted), authorize: at(60_000) })).status).toBe(404);
    // bob's own valid token on alice's run, alice's on bob's: both the unknown run
    expect((await readers.resumeUIMessageStreamResponse(journal, 'run-alice', { request: withToken(bob), authorize })).status).toBe(404);
    expect((await readers.resumeUIMessageStreamResponse(journal, 'run-bob', { request: withToken(alice), authorize })).status).toBe(404);
  });
});

describe('a refused request looks like an unknown run', () => {
  it.each(['journalStreamResponse', 'resumeUIMessageStreamResponse'] as const)('%s: same status, same headers, same body length (ids of one length), also for an expired run', async (name) => {
    const journal = new InMemoryRunJournal({ chunkRetentionSeconds: 0 });
    for (const [runId, resourceId] of [['run-bob', 'bob'], ['run-old', 'bob']] as const) {
      await journal.createRun({ runId, agentId: 'a', resourceId, input: null });
      const { lease } = await journal.claim(runId, 'w');
      await journal.append(lease, [start(runId), delta(runId, 'secret text')]);
      if (runId === 'run-old') await journal.append(lease, [finish(runId)], commit('final'));
    }
    await journal.purgeExpired();
    const request = withToken(tokenOf('run-bob', 'alice'), { headers: { 'last-event-id': '1' } });
    const unknown = await readers[name](journal, 'run-xyz', { request, authorize });
    for (const runId of ['run-bob', 'run-old']) {
      const refused = await readers[name](journal, runId, { request, authorize });
      expect(refused.status).toBe(404);
      expect(refused.headers).toEqual(unknown.headers);
      expect(refused.body.length).toBe(unknown.body.length);
      expect(refused.body).not.toContain('secret text');
      expect(refused.body.replace(runId, 'ID')).toBe(unknown.body.replace('run-xyz', 'ID'));
    }
    // the owner of the expired run is told it expired (410): only the owner
    expect((await readers[name](journal, 'run-old', { request: withToken(tokenOf('run-old', 'bob')), authorize })).status).toBe(410);
  });
});

describe('a client that never reads', () => {
  const ROW = 'x'.repeat(1024);
  const ROWS = 3000;

  it.each(READERS)('%s: the reader pauses within a few 256 KiB pages of a 3 MB history and reads no more while the run goes on; then all of it', async (name) => {
    const inner = new InMemoryRunJournal();
    await inner.createRun({ runId: 'long', agentId: 'a', input: null });
    const { lease } = await inner.claim('long', 'w');
    await inner.append(lease, [start('long'), ...Array.from({ length: ROWS }, () => delta('long', ROW))]);
    const { journal, rows, open: subscribed, paused } = watched(inner);
    const pause = paused();
    const stream: ReadableStream<unknown> =
      name === 'journalStreamResponse'
        ? (await journalStreamResponse(journal, 'long', open)).body!
        : name === 'resumeUIMessageStreamResponse'
          ? (await resumeUIMessageStreamResponse(journal, 'long', open)).body!
          : resumeUIMessageStream(journal, 'long', open);
    const readAtPause = await pause;
    await turn();
    const held = rows();
    expect(held).toBe(readAtPause);
    // at most about three pages of 256 KiB (one sent, one buffered, one read while the buffer filled)
    expect(held * ROW.length).toBeLessThanOrEqual(3 * 256 * 1024 + 3 * ROW.length);
    // the run goes on: 1,000 more rows are written, the paused reader reads none of them
    await inner.append(lease, Array.from({ length: 1000 }, () => delta('long', ROW)));
    await turn();
    expect(rows()).toBe(held);
    await inner.append(lease, [finish('long')], commit('final'));
    await turn();
    expect(rows()).toBe(held);
    // once read, everything comes
    const reader = stream.getReader();
    for (;;) if ((await reader.read()).done) break;
    expect(rows()).toBe(ROWS + 1000 + 2);
    expect(subscribed()).toBe(0);
  });
});

/** A `boss` cancel never touches (a worker that is never started). */
const idleBoss = {
  createQueue: async () => undefined,
  send: async () => null,
  work: async () => 'w',
  getJobById: async () => null,
  offWork: async () => undefined,
  schedule: async () => undefined,
} as unknown as RunWorkerOptions['boss'];

describe('RunWorker.cancel (the stop endpoint)', () => {
  async function stops(journal: InMemoryRunJournal, runId: string): Promise<number> {
    let count = 0;
    const subscription = journal.signals$(runId).subscribe({ next: () => void (count += 1), error: () => undefined });
    subscription.unsubscribe();
    return count;
  }
  const rejection = (promise: Promise<unknown>): Promise<{ name: string; message: string } | undefined> =>
    promise.then(
      () => undefined,
      (error: unknown) => ({ name: (error as Error).name, message: (error as Error).message }),
    );

  it("another owner's run is refused as an unknown run and records nothing; one's own stop, repeated, is recorded each time while the run is open; a stop of a finished run records nothing", async () => {
    const journal = await journalWithRuns();
    const worker = createRunWorker({ journal, boss: idleBoss, agents: [], retention: false, lostOwnerSweep: false });
    const alice = withToken(tokenOf('run-live', 'alice'));
    // bob's token, alice's live run
    const refused = await rejection(worker.cancel('run-live', { request: withToken(tokenOf('run-live', 'bob')), authorize }));
    const unknown = await rejection(worker.cancel('run-lives', { request: withToken(tokenOf('run-live', 'bob')), authorize }));
    expect(refused?.name).toBe('RunNotFoundError');
    expect(refused?.message.replace('run-live', 'ID')).toBe(unknown?.message.replace('run-lives', 'ID'));
    expect(await stops(journal, 'run-live')).toBe(0);
    // alice's token for run-live does not stop run-alice (ended) nor run-bob
    expect((await rejection(worker.cancel('run-bob', { request: alice, authorize })))?.name).toBe('RunNotFoundError');
    // her own stop, twice: the first recorded while the run is open, the second nothing more
    await worker.cancel('run-live', { request: alice, authorize, reason: 'stop' });
    await worker.cancel('run-live', { request: alice, authorize, reason: 'stop' });
    expect(await stops(journal, 'run-live')).toBe(1); // a run holds one stop: the second records nothing
    // a finished run: nothing recorded, nothing thrown
    await worker.cancel('run-alice', { request: withToken(tokenOf('run-alice', 'alice')), authorize });
    expect(await stops(journal, 'run-alice')).toBe(0);
    await worker.close();
  });

  it('an id no store can hold (NUL, 10 KB, a lone surrogate, empty) is an unknown run for cancel too: RunNotFoundError, never the store\'s TypeError', async () => {
    const journal = await journalWithRuns();
    const worker = createRunWorker({ journal, boss: idleBoss, agents: [], retention: false, lostOwnerSweep: false });
    for (const runId of ['run-live\u0000', 'r'.repeat(10_000), 'run-\ud800', '']) {
      const refused = await rejection(worker.cancel(runId, { request: withToken(tokenOf('run-live', 'alice')), authorize }));
      expect(refused?.name, JSON.stringify(runId.slice(0, 12))).toBe('RunNotFoundError');
    }
    expect(await stops(journal, 'run-live')).toBe(0);
    await worker.close();
  });
});

describe('on PostgreSQL: SQL-ish ids and huge cursors', () => {
  const schema = `rxagent_adv_readers_${randomUUID().slice(0, 6)}`;
  let server: TestPostgres;
  let journal: PostgresRunJournal;
  const quoted = "run'); DROP TABLE runs; --";
  const wild = 'run-%_\\';

  beforeAll(async () => {
    server = await startTestPostgres();
    journal = new PostgresRunJournal({ connectionString: server.connectionString, schema });
    for (const [runId, resourceId] of [[quoted, 'alice'], [wild, 'alice'], ['run-bob', 'bob']] as const) {
      await journal.createRun({ runId, agentId: 'a', resourceId, input: null });
      const { lease } = await journal.claim(runId, 'w');
      await journal.append(lease, [start(runId), delta(runId, 'hi')]);
      await journal.append(lease, [finish(runId)], commit('final'));
    }
  }, 60_000);

  afterAll(async () => {
    await journal?.close();
    const db = new pg.Pool({ connectionString: server.connectionString, max: 1 });
    await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await db.end();
    await server?.stop();
  }, 60_000);

  it.each(READERS)('%s: quoted and wildcard ids name exactly their run; near ids and ids no store holds are 404', async (name) => {
    for (const runId of [quoted, wild]) {
      const own = await readers[name](journal, runId, { request: withToken(tokenOf(runId, 'alice')), authorize });
      expect(own.status, runId).toBe(200);
      expect(own.body).toContain('hi');
    }
    const near = ["run'", 'run-%', 'run-%%', 'run-%_', "' OR '1'='1", "run-bob' --", 'run-b_b', 'run-bo%', 'RUN-BOB', 'run-bоb', 'run-bob\u0000', 'r'.repeat(10_000), 'run-\uDC00'];
    for (const runId of near) {
      for (const access of [{ request: withToken(tokenOf('run-bob', 'bob')), authorize }, open] as const) {
        expect((await readers[name](journal, runId, access)).status, JSON.stringify(runId.slice(0, 20))).toBe(404);
      }
    }
    expect((await readers[name](journal, 'run-bob', { request: withToken(tokenOf(quoted, 'alice')), authorize })).status).toBe(404);
  });

  it.each(READERS)('%s: 2^64, 15-digit and past-the-end cursors are a 400 (never a database error)', async (name) => {
    const cursors = name === 'journalStreamResponse' ? ['18446744073709551616', '999999999999999', '9'.repeat(400), '4'] : ['18446744073709551616:0', '999999999999999:999999', '9'.repeat(400), '4:0', '1:99999999999999999999'];
    for (const after of cursors) {
      const request = withToken(tokenOf('run-bob', 'bob'), { headers: { 'last-event-id': after } });
      const got = await readers[name](journal, 'run-bob', { request, authorize, ...(name === 'journalStreamResponse' ? {} : { after }) });
      expect(got.status, after.slice(0, 30)).toBe(400);
      expect(got.body).toContain('JournalCursorError');
    }
  });
});
