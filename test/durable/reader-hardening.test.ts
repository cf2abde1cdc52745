/**
 * The durable readers against hostile journal content, on PostgreSQL: a malformed row (not JSON,
 * a chunk missing a field, a chunk type of a newer format) ends that response with an error
 * frame and never throws out of the reader (no uncaught exception: the process serving readers
 * survives); error chunks are served without provider bodies, URLs, headers or stacks while the
 * journal keeps them; pages are bounded in bytes; a value nested 100k deep is a
 * `JsonEncodingError`, not a stack overflow.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { map, type Observable } from 'rxjs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ChunkType } from 'rxagent';
import { resumeUIMessageStream, resumeUIMessageStreamResponse } from 'rxagent/ai-sdk';
import { JsonEncodingError, encodeJson, journalStreamResponse, type JournalEntry, type JournalReadOptions, type RunJournal } from 'rxagent/durable';
import { PostgresRunJournal } from 'rxagent/storage/postgres';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { commit, delta, finish, start } from '../storage/journal-suite.js';

const schema = `rxagent_readers_${randomUUID().slice(0, 6)}`;
let server: TestPostgres;
let db: pg.Pool;
let journal: PostgresRunJournal;
const open = { unsafeNoAuthorization: true } as const;
const settle = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  server = await startTestPostgres();
  db = new pg.Pool({ connectionString: server.connectionString, max: 2 });
  journal = new PostgresRunJournal({ connectionString: server.connectionString, schema });
  await journal.getRun('warm-up'); // runs the migrations
}, 60_000);

afterAll(async () => {
  await journal?.close();
  await db?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
  await db?.end();
  await server?.stop();
}, 60_000);

/** Uncaught exceptions and unhandled rejections while a test runs (a reader that throws out of a subscriber lands here). */
const escaped: unknown[] = [];
const onEscape = (error: unknown): void => void escaped.push(error);
beforeEach(() => {
  escaped.length = 0;
  process.on('uncaughtException', onEscape);
  process.on('unhandledRejection', onEscape);
});
afterEach(() => {
  process.off('uncaughtException', onEscape);
  process.off('unhandledRejection', onEscape);
});

/** An ended run: start, two deltas, finish; then entry 3's stored text replaced by `text`. */
async function runWithRow(text: string): Promise<string> {
  const runId = `bad-${randomUUID()}`;
  await journal.createRun({ runId, agentId: 'a', input: null });
  const { lease } = await journal.claim(runId, 'w');
  await journal.append(lease, [start(runId), delta(runId, 'one'), delta(runId, 'two')]);
  await journal.append(lease, [finish(runId)], commit('final'));
  await db.query(`UPDATE ${schema}.run_chunks SET chunk = $3 WHERE run_id = $1 AND seq = $2`, [runId, 3, text]);
  return runId;
}

const MALFORMED: Record<string, (runId: string) => string> = {
  'not JSON': () => '{"type":"text-delta", oops',
  'a chunk missing a field': (runId) => JSON.stringify({ type: 'text-delta', runId, from: 'AGENT', payload: { id: 't1' } }),
  'a chunk of an unknown newer format': (runId) => JSON.stringify({ type: 'text-delta-v9', runId, from: 'AGENT', payload: { id: 't1', parts: [] } }),
  'not a chunk': () => '[1,2,3]',
};

describe.each(Object.keys(MALFORMED))('a malformed row (%s)', (kind) => {
  it('journalStreamResponse: the entries before it, then an SSE error frame naming the row; nothing escapes', async () => {
    const runId = await runWithRow(MALFORMED[kind]!(runId0()));
    const response = await journalStreamResponse(journal, runId, open);
    expect(response.status).toBe(200);
    const text = await response.text();
    const events = text.trim().split('\n\n');
    expect(events.slice(0, 2).map((event) => event.split('\n')[0])).toEqual(['id: 1', 'id: 2']);
    expect(events).toHaveLength(3);
    expect(events[2]).toMatch(/^event: error\ndata: /);
    const body = JSON.parse(events[2]!.split('\ndata: ')[1]!) as { error: { name: string; message: string } };
    expect(body.error.name).toBe('MalformedJournalEntryError');
    expect(body.error.message).toContain('Journal entry 3');
    await settle(50);
    expect(escaped).toEqual([]);
  });

  it('resumeUIMessageStreamResponse: an error chunk and [DONE]; resumeUIMessageStream: errors with MalformedJournalEntryError; nothing escapes', async () => {
    const runId = await runWithRow(MALFORMED[kind]!(runId0()));
    const response = await resumeUIMessageStreamResponse(journal, runId, open);
    const text = await response.text();
    expect(text).toContain('data: {"type":"text-delta","id":"t1","delta":"one"}');
    expect(text).not.toContain('"delta":"two"');
    expect(text.trim().split('\n\n').slice(-2)).toEqual(['data: {"type":"error","errorText":"An error occurred."}', 'data: [DONE]']);
    const reader = resumeUIMessageStream(journal, runId, open).getReader();
    let caught: unknown;
    try {
      for (;;) if ((await reader.read()).done) break;
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ name: 'MalformedJournalEntryError', seq: 3, runId });
    await settle(50);
    expect(escaped).toEqual([]);
  });
});

/** A placeholder run id inside the malformed text (the row's run does not matter to the check). */
const runId0 = (): string => 'r';

describe('error chunks served to clients', () => {
  it("carry the error's name only — no provider body, URL, headers or stack — in every reader, while the journal keeps the full error", async () => {
    const runId = `err-${randomUUID()}`;
    const providerError = {
      name: 'AI_APICallError',
      message: 'Bad request to https://api.provider.example/v1/chat?key=sk-SECRET-1',
      url: 'https://api.provider.example/v1/chat?key=sk-SECRET-1',
      requestBodyValues: { messages: [{ role: 'user', content: 'PRIVATE-PROMPT' }] },
      responseHeaders: { 'x-request-id': 'HEADER-VALUE' },
      responseBody: '{"error":"RESPONSE-BODY"}',
      stack: 'AI_APICallError: at postToApi (/srv/app/node_modules/STACK-FRAME.js:1:1)',
    };
    const chunks: ChunkType[] = [
      start(runId),
      { type: 'tool-call', runId, from: 'AGENT', payload: { toolCallId: 'c1', toolName: 'lookup', args: {} } },
      { type: 'tool-error', runId, from: 'AGENT', payload: { toolCallId: 'c1', toolName: 'lookup', args: {}, error: providerError } },
    ];
    await journal.createRun({ runId, agentId: 'a', input: null });
    const { lease } = await journal.claim(runId, 'w');
    await journal.append(lease, chunks);
    await journal.append(lease, [{ type: 'error', runId, from: 'AGENT', payload: { error: providerError } }], commit('final'));
    const secrets = ['sk-SECRET-1', 'api.provider.example', 'PRIVATE-PROMPT', 'HEADER-VALUE', 'RESPONSE-BODY', 'STACK-FRAME', 'Bad request'];

    const bytes = await (await journalStreamResponse(journal, runId, open)).text();
    const ui = await (await resumeUIMessageStreamResponse(journal, runId, open)).text();
    const uiChunks: unknown[] = [];
    for await (const chunk of resumeUIMessageStream(journal, runId, { ...open, onError: (error) => JSON.stringify(error) })) uiChunks.push(chunk);
    for (const served of [bytes, ui, JSON.stringify(uiChunks)]) for (const secret of secrets) expect(served).not.toContain(secret);
    const data = bytes
      .trim()
      .split('\n\n')
      .map((event) => JSON.parse(event.split('\ndata: ')[1]!) as ChunkType);
    expect(data.at(-1)).toEqual({ type: 'error', runId, from: 'AGENT', payload: { error: { name: 'AI_APICallError', message: 'An error occurred.' } } });
    expect(data.at(-2)).toMatchObject({ type: 'tool-error', payload: { toolCallId: 'c1', error: { name: 'AI_APICallError', message: 'An error occurred.' } } });
    // the journal keeps what operators need
    const stored = await db.query<{ chunk: string }>(`SELECT chunk FROM ${schema}.run_chunks WHERE run_id = $1 AND seq = 4`, [runId]);
    expect(stored.rows[0]?.chunk).toContain('sk-SECRET-1');
    expect(stored.rows[0]?.chunk).toContain('RESPONSE-BODY');
  });
});

/** `journal` with `read$` counting the entries it hands out. */
function counting(inner: RunJournal): { journal: RunJournal; read: () => number; pages: JournalReadOptions[] } {
  let read = 0;
  const pages: JournalReadOptions[] = [];
  const wrapped = Object.create(inner) as RunJournal;
  wrapped.read$ = (runId: string, options?: JournalReadOptions): Observable<JournalEntry> => {
    pages.push(options ?? {});
    return inner.read$(runId, options).pipe(
      map((entry) => {
        read += 1;
        return entry;
      }),
    );
  };
  wrapped.getRun = (runId) => inner.getRun(runId);
  wrapped.findLastSeq = (runId, type, atOrBefore) => inner.findLastSeq(runId, type, atOrBefore);
  return { journal: wrapped, read: () => read, pages };
}

describe('byte bounds', () => {
  const SIZE = 100_000;
  const COUNT = 40;
  async function bigRun(): Promise<string> {
    const runId = `big-${randomUUID()}`;
    await journal.createRun({ runId, agentId: 'a', input: null });
    const { lease } = await journal.claim(runId, 'w');
    await journal.append(lease, [start(runId), ...Array.from({ length: COUNT }, (_, index) => delta(runId, `${index % 10}`.repeat(SIZE)))]);
    await journal.append(lease, [finish(runId)], commit('final'));
    return runId;
  }

  it('read$ with maxPageBytes splits a page of large chunks (a row alone when it is larger than the bound)', async () => {
    const runId = await bigRun();
    let pages = 0;
    const seqs: number[] = [];
    await new Promise<void>((resolve, reject) =>
      journal.read$(runId, { maxPageBytes: 250_000, ready: () => void (pages += 1) }).subscribe({ next: (entry) => seqs.push(entry.seq), error: reject, complete: resolve }),
    );
    expect(seqs).toEqual(Array.from({ length: COUNT + 2 }, (_, index) => index + 1));
    // 40 rows of ~100 kB: three per page at most (pages after the first are counted by `ready`)
    expect(pages).toBeGreaterThanOrEqual(Math.ceil(COUNT / 3) - 1);
    const single: number[] = [];
    await new Promise<void>((resolve, reject) =>
      journal.read$(runId, { maxPageBytes: 10, live: false }).subscribe({ next: (entry) => single.push(entry.seq), error: reject, complete: resolve }),
    );
    expect(single).toHaveLength(COUNT + 2);
    await expect(new Promise<void>((resolve, reject) => journal.read$(runId, { maxPageBytes: 0 }).subscribe({ error: reject, complete: () => resolve() }))).rejects.toThrow(/maxPageBytes/);
  });

  for (const reader of ['journalStreamResponse', 'resumeUIMessageStreamResponse'] as const) {
    it(`${reader}: a client that stops reading holds at most about its 256 KiB bound of rows, not a 500-row page`, async () => {
      const runId = await bigRun();
      const { journal: counted, read } = counting(journal);
      const response = reader === 'journalStreamResponse' ? await journalStreamResponse(counted, runId, open) : await resumeUIMessageStreamResponse(counted, runId, open);
      const body = response.body!.getReader();
      await body.read();
      await settle(300);
      // ~100 kB rows, a 256 KiB buffer and a 256 KiB page: a few pages, never the whole run
      expect(read()).toBeLessThanOrEqual(10);
      let bytes = 0;
      for (;;) {
        const { done, value } = await body.read();
        if (done) break;
        bytes += value.byteLength;
      }
      expect(read()).toBe(COUNT + 2);
      expect(bytes).toBeGreaterThan(COUNT * SIZE * 0.9);
    });
  }
});

describe('depth', () => {
  const deep = (depth: number): unknown => {
    let value: unknown = 'bottom';
    for (let index = 0; index < depth; index++) value = [value];
    return value;
  };

  it('a value nested 100k deep is a JsonEncodingError (not a stack overflow), in the codec and in a journal append', async () => {
    let caught: unknown;
    try {
      encodeJson({ type: 'data-x', data: deep(100_000) });
    } catch (error) {
      caught = error;
    }
    expect(JsonEncodingError.isInstance(caught)).toBe(true);
    expect((caught as JsonEncodingError).type).toBe('depth > 1000');
    const runId = `deep-${randomUUID()}`;
    await journal.createRun({ runId, agentId: 'a', input: null });
    const { lease } = await journal.claim(runId, 'w');
    await expect(journal.append(lease, [{ type: 'data-x', runId, from: 'AGENT', data: deep(100_000) } as unknown as ChunkType])).rejects.toMatchObject({ name: 'JsonEncodingError' });
    // at the bound it is still written, and read back the same
    expect(JSON.parse(encodeJson(deep(1000)))).toEqual(deep(1000));
    expect(() => encodeJson(deep(1001))).toThrow(JsonEncodingError);
  });

  it('a row nested 100k deep in the journal (written by something else) ends a UI response with an error frame; the byte reader serves it as stored', async () => {
    const runId = `deeprow-${randomUUID()}`;
    await journal.createRun({ runId, agentId: 'a', input: null });
    const { lease } = await journal.claim(runId, 'w');
    await journal.append(lease, [start(runId), delta(runId, 'one'), delta(runId, 'two')]);
    await journal.append(lease, [finish(runId)], commit('final'));
    const nested = `${'['.repeat(100_000)}1${']'.repeat(100_000)}`;
    await db.query(`UPDATE ${schema}.run_chunks SET chunk = $2 WHERE run_id = $1 AND seq = 3`, [
      runId,
      `{"type":"data-deep","runId":"${runId}","from":"AGENT","data":{"x":${nested}}}`,
    ]);
    const ui = await (await resumeUIMessageStreamResponse(journal, runId, open)).text();
    expect(ui.trim().split('\n\n').slice(-2)).toEqual(['data: {"type":"error","errorText":"An error occurred."}', 'data: [DONE]']);
    const bytes = await (await journalStreamResponse(journal, runId, open)).text();
    expect(bytes).toContain(nested);
    expect(bytes.trim().split('\n\n').at(-1)).toMatch(/^id: 4\n/);
    await settle(50);
    expect(escaped).toEqual([]);
  });
});
