/**
 * Red team (December 2026) of the durable readers, from what a client request reaches: a resume
 * racing the run's start (and a cache between them), keep-alive values no timer can wait for,
 * readers that disconnect mid-frame — 1,000 of one run in memory, 200 on PostgreSQL, counted in
 * open journal reads, keep-alive timers and page queries after the cancel —, and run tokens in
 * the header and the query, for another run. Faults found are marked "was:".
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Observable, finalize } from 'rxjs';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { resumeUIMessageStreamResponse } from 'rxagent/ai-sdk';
import {
  InMemoryRunJournal,
  RUN_TOKEN_HEADER,
  createRunToken,
  journalStreamResponse,
  runTokenAuthorization,
  type JournalEntry,
  type JournalReadOptions,
  type RunJournal,
} from 'rxagent/durable';
import { PostgresRunJournal } from 'rxagent/storage/postgres';
import { commit, delta, finish, start } from '../storage/journal-suite.js';

const secret = 'readers-red-team-secret-of-32-bytes-at-least';
const authorize = runTokenAuthorization({ secret });
const tokenOf = (runId: string, resourceId = 'alice'): string => createRunToken({ runId, resourceId, expiresInSeconds: 60, secret });
const open = { unsafeNoAuthorization: true } as const;
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** `inner` with its `read$` subscriptions counted (opened, still open). */
function counted(inner: RunJournal): { journal: RunJournal; opened: () => number; open: () => number } {
  let opened = 0;
  let live = 0;
  const read$ = (runId: string, options?: JournalReadOptions): Observable<JournalEntry> =>
    new Observable<JournalEntry>((subscriber) => {
      opened += 1;
      live += 1;
      return inner
        .read$(runId, options)
        .pipe(finalize(() => void (live -= 1)))
        .subscribe(subscriber);
    });
  const journal = new Proxy(inner, {
    get(target, key) {
      if (key === 'read$') return read$;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { journal, opened: () => opened, open: () => live };
}

async function liveRun(journal: RunJournal, runId: string) {
  await journal.createRun({ runId, agentId: 'a', threadId: 't', resourceId: 'alice', input: null });
  const { lease } = await journal.claim(runId, 'w');
  await journal.append(lease, [start(runId), delta(runId, 'hello')]);
  return {
    more: (text: string) => journal.append(lease, [delta(runId, text)]),
    end: () => journal.append(lease, [finish(runId)], commit('final')),
  };
}

afterEach(() => vi.restoreAllMocks());

describe('keepAliveMs of journalStreamResponse', () => {
  it.each([Number.POSITIVE_INFINITY, 2 ** 31, 0, -5, Number.NaN, '15000'])(
    '%s: a TypeError naming it, before anything is read (was: Infinity and 2^31 kept a timer firing every millisecond per reader; 0, NaN and a string sent none)',
    async (keepAliveMs) => {
      const { journal, opened } = counted(new InMemoryRunJournal());
      await liveRun(journal, 'run-1');
      const intervals = vi.spyOn(globalThis, 'setInterval');
      await expect(journalStreamResponse(journal, 'run-1', { ...open, keepAliveMs: keepAliveMs as number })).rejects.toThrow(/^journalStreamResponse: options\.keepAliveMs must be/);
      expect(opened()).toBe(0);
      expect(intervals).not.toHaveBeenCalled();
    },
  );

  it('a delay a timer can wait for still sends comments while the run is quiet', async () => {
    const journal = new InMemoryRunJournal();
    const run = await liveRun(journal, 'run-1');
    const response = await journalStreamResponse(journal, 'run-1', { ...open, keepAliveMs: 20 });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes(': keep-alive')) text += decoder.decode((await reader.read()).value);
    await reader.cancel();
    await run.end();
  });
});

describe('a resume racing the run’s start', () => {
  it.each(['journalStreamResponse', 'resumeUIMessageStreamResponse'] as const)(
    '%s: the unknown run’s 404 (and a bad cursor’s 400) is never stored by a cache; once the run exists the same request is served whole (was: a 404 without cache-control, which caches may keep)',
    async (name) => {
      const journal = new InMemoryRunJournal();
      const request = new Request('http://app/api/chat/c1/stream', { headers: { [RUN_TOKEN_HEADER]: tokenOf('run-race') } });
      const read = (after?: string) =>
        name === 'journalStreamResponse'
          ? journalStreamResponse(journal, 'run-race', { request, authorize, ...(after === undefined ? {} : { after }) })
          : resumeUIMessageStreamResponse(journal, 'run-race', { request, authorize, after: after ?? null });
      const early = await read();
      expect(early.status).toBe(404);
      expect(early.headers.get('cache-control')).toBe('no-store');
      expect(early.headers.get('x-content-type-options')).toBe('nosniff');
      const run = await liveRun(journal, 'run-race');
      const badCursor = await read('7');
      expect(badCursor.status).toBe(400);
      expect(badCursor.headers.get('cache-control')).toBe('no-store');
      const served = await read();
      expect(served.status).toBe(200);
      await run.end();
      expect(await served.text()).toContain('hello');
    },
  );
});

describe('run tokens: another run, header and query', () => {
  it('a token for run A opens nothing of run B, in the header or the query; a bad header token is not rescued by a good one in the query', async () => {
    const journal = new InMemoryRunJournal();
    for (const runId of ['run-a', 'run-b']) {
      const run = await liveRun(journal, runId);
      await run.end();
    }
    const status = async (runId: string, init: { header?: string; query?: string }) =>
      (
        await journalStreamResponse(journal, runId, {
          authorize,
          request: new Request(`http://app/runs/${runId}${init.query === undefined ? '' : `?token=${encodeURIComponent(init.query)}`}`, {
            headers: init.header === undefined ? {} : { [RUN_TOKEN_HEADER]: init.header },
          }),
        })
      ).status;
    const a = tokenOf('run-a');
    expect(await status('run-a', { header: a })).toBe(200);
    expect(await status('run-a', { query: a })).toBe(200);
    expect(await status('run-b', { header: a })).toBe(404);
    expect(await status('run-b', { query: a })).toBe(404);
    expect(await status('run-b', { header: a, query: tokenOf('run-b') })).toBe(404);
    expect(await status('run-b', { header: '', query: tokenOf('run-b') })).toBe(404);
    expect(await status('run-b', { header: tokenOf('run-b'), query: a })).toBe(200);
    expect(await status('run-b', { header: `${tokenOf('run-b')}, ${a}` })).toBe(404);
  });
});

describe('readers that disconnect mid-frame', () => {
  it('1,000 readers of one live run (with keep-alive), cancelled after a partial read: every journal read closed, every keep-alive timer cleared', { timeout: 60_000 }, async () => {
    const { journal, open: reading } = counted(new InMemoryRunJournal());
    const run = await liveRun(journal, 'run-many');
    const intervals = new Set<unknown>();
    const setInterval = globalThis.setInterval;
    const clearInterval = globalThis.clearInterval;
    vi.spyOn(globalThis, 'setInterval').mockImplementation(((handler: () => void, ms: number) => {
      const timer = setInterval(handler, ms);
      intervals.add(timer);
      return timer;
    }) as typeof globalThis.setInterval);
    vi.spyOn(globalThis, 'clearInterval').mockImplementation(((timer: ReturnType<typeof globalThis.setInterval>) => {
      intervals.delete(timer);
      clearInterval(timer);
    }) as typeof globalThis.clearInterval);
    const readers: Array<ReadableStreamDefaultReader<Uint8Array>> = [];
    for (let index = 0; index < 1000; index++) {
      const response =
        index % 2 === 0
          ? await journalStreamResponse(journal, 'run-many', { ...open, keepAliveMs: 60_000 })
          : await resumeUIMessageStreamResponse(journal, 'run-many', { ...open });
      const reader = response.body!.getReader();
      await reader.read();
      readers.push(reader);
    }
    expect(reading()).toBe(1000);
    // one keep-alive timer per response: the journal's (asked for) and the resumed UI stream's (its default since 04ccb12)
    expect(intervals.size).toBe(1000);
    await run.more('x'.repeat(100_000));
    await Promise.all(readers.map((reader) => reader.cancel()));
    await turn();
    expect(reading()).toBe(0);
    expect(intervals.size).toBe(0);
    await run.end();
  });

  describe('on PostgreSQL', () => {
    const schema = `rxagent_h16_readers_${randomUUID().slice(0, 6)}`;
    const connectionString = process.env['DATABASE_URL'] ?? 'postgres://app:app@127.0.0.1:55400/h16';
    let journal: PostgresRunJournal | undefined;
    afterAll(async () => {
      await journal?.close();
      const db = new pg.Pool({ connectionString, max: 1 });
      await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
      await db.end();
    });

    it('200 readers of one live run cancelled mid-frame: no journal read left open, and later writes make no page query for them', { timeout: 60_000 }, async () => {
      journal = new PostgresRunJournal({ connectionString, schema });
      const watched = counted(journal);
      const run = await liveRun(journal, 'run-pg');
      const readers: Array<ReadableStreamDefaultReader<Uint8Array>> = [];
      for (let index = 0; index < 200; index++) {
        const response =
          index % 2 === 0
            ? await journalStreamResponse(watched.journal, 'run-pg', { ...open, keepAliveMs: 60_000 })
            : await resumeUIMessageStreamResponse(watched.journal, 'run-pg', { ...open });
        const reader = response.body!.getReader();
        await reader.read();
        readers.push(reader);
      }
      expect(watched.open()).toBe(200);
      await Promise.all(readers.map((reader) => reader.cancel()));
      for (let wait = 0; wait < 50 && watched.open() > 0; wait++) await turn();
      expect(watched.open()).toBe(0);
      let pageQueries = 0;
      const query = pg.Client.prototype.query;
      vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
        const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text;
        if (typeof text === 'string' && /SELECT seq::float8/.test(text)) pageQueries += 1;
        return (query as (...rest: unknown[]) => unknown).apply(this, args);
      } as never);
      await run.more('after');
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(pageQueries).toBe(0);
      await run.end();
    });
  });
});
