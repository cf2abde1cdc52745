/**
 * Faults of the inspector left over from earlier rounds, each shown failing on the code before
 * its fix, and what a hostile run, journal or client found next:
 *
 * 1. `maxBytesPerRun` counted UTF-16 units: a run of CJK text or emoji kept up to 3× (or 2×) its
 *    budget as UTF-8 JSON, and a mostly-ASCII string with one emoji twice its count in memory.
 *    Now every string is counted as the larger of its UTF-8 JSON bytes and its in-memory size
 *    (property over every code point class, escapes and lone surrogates included).
 * 2. `journalRuns` rejected the whole listing when one stored run row was corrupt (PostgreSQL rows
 *    edited with SQL); then the inspector listed the runs newer than it (asking the journal for
 *    fewer and fewer) but none older. Now the journal lists such a row in its place
 *    (`listRuns({ unusable: 'report' })`): every good run is listed in order, older ones too, and
 *    the bad one is an error row naming its field (`MalformedJournalEntryError`), as `getRun` names it.
 * 3. A run id with a lone surrogate threw `URIError` in the page script. No journal stores one
 *    (`storageIdProblem`): the inspector refuses it where a run enters it (an `InspectorError`
 *    naming it, an error row in the listing), and the page's encoding never throws.
 * 4. Storable ids `.` and `..` (and the `%2E` spellings) could not be opened from the page: the URL
 *    parser removes dot segments, so `/api/runs/..` asked for `/api/`. The page now names a run in
 *    the query (`?id=`), which no parser rewrites; every storable id round-trips.
 * 5. A client opening feed after feed: each kept up to 8 MiB of backlog and got every event
 *    serialised again for it. Now at most `MAX_FEEDS` feeds are open (the oldest is dropped: its
 *    page reconnects), and an event is serialised once for all of them.
 *
 * The page's parts are checked in Debian's Chromium when it is installed (skipped otherwise; the
 * encoding is then checked by evaluating the page's own function in Node).
 */
import { existsSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import pg from 'pg';
import { chromium, type Browser } from 'playwright-core';
import { from, lastValueFrom, of, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, type ChunkType } from 'rxagent';
import { inspect, Inspector, InspectorError, type InspectableJournal, type InspectorServer } from 'rxagent/devtools';
import { InMemoryRunJournal, MalformedJournalEntryError, type RunRecord } from 'rxagent/durable';
import { PostgresRunJournal } from 'rxagent/storage/postgres';
import { scriptedModel } from 'rxagent/testing';
import { RunRecorder } from '../../src/devtools/internal/run-recorder.js';
import { PROPERTY_RUNS, seedFor } from '../reliability/support/property.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';

const chunkOf = (type: string, payload: Record<string, unknown> = {}): ChunkType => ({ type, runId: 'run-left', from: 'AGENT', payload }) as unknown as ChunkType;
const quietAgent = () => new Agent({ id: 'quiet', model: scriptedModel({ rules: [], fallback: { text: 'one two three' } }) });

/** UTF-8 bytes of `value` as JSON. */
const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');

/** Bytes the strings and keys of `value` take in memory: 2 per UTF-16 unit in a string with a character past U+00FF, else 1. */
function heldBytes(value: unknown, seen = new Set<object>()): number {
  if (typeof value === 'string') return (/[^\x00-\xff]/.test(value) ? 2 : 1) * value.length;
  if (typeof value !== 'object' || value === null || seen.has(value)) return 0;
  seen.add(value);
  let total = 0;
  for (const [key, item] of Object.entries(value)) total += heldBytes(key) + heldBytes(item, seen);
  return total;
}

/** One GET with a Host the inspector answers to. */
function get(server: InspectorServer, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port: server.port, path }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (part: string) => (body += part));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

/** What `promise` settled with: its value, or the error's reason and message. */
const outcome = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error: InspectorError.isInstance(error) ? `${error.reason}: ${error.message}` : String(error) }),
  );

// ---- 1. the byte budget counts bytes ------------------------------------------------------------

describe('1. maxBytesPerRun counts bytes', () => {
  /** A recorder under `maxBytes`, fed `chunks`; what it keeps as UTF-8 JSON and in memory. */
  function recorded(maxBytes: number, chunks: ChunkType[]) {
    const recorder = new RunRecorder({ runId: 'run-bytes', agentId: 'agent', title: '', caps: { maxBytes, maxChunks: 1_000_000, maxEvents: 1_000_000 }, emit: () => undefined });
    for (const chunk of chunks) recorder.chunk(chunk);
    const { events } = recorder.record();
    return { recorder, json: jsonBytes(events) + jsonBytes(recorder.chunks), held: heldBytes(events) + heldBytes(recorder.chunks) };
  }

  for (const [name, character, perCharacter] of [
    ['CJK text (3 UTF-8 bytes a character)', '漢', 3],
    ['emoji (4 UTF-8 bytes a surrogate pair)', '😀', 2],
  ] as const) {
    it(`a run of ${name} keeps at most maxBytesPerRun of UTF-8 JSON (it kept ${perCharacter}× as much)`, async () => {
      const budget = 1_000_000;
      const inspector = new Inspector({ maxBytesPerRun: budget });
      const text = character.repeat(2_000);
      const chunks = [chunkOf('start'), ...Array.from({ length: 200 }, () => chunkOf('text-delta', { id: 't0', text })), chunkOf('finish')];
      const seen = await lastValueFrom(inspector.trace(() => from(chunks)).pipe(toArray()));
      expect(seen).toHaveLength(chunks.length);
      const [summary] = inspector.runs();
      expect(summary).toMatchObject({ status: 'finish', truncated: true });
      expect(jsonBytes(inspector.run(summary!.runId))).toBeLessThanOrEqual(budget);
      // and the recorder's own view: events and the chunks kept for the export
      const { json } = recorded(budget, chunks);
      expect(json).toBeLessThanOrEqual(budget);
    });
  }

  it('a mostly-ASCII string with one emoji is held as UTF-16 (two bytes a unit): counted so', () => {
    const budget = 1_000_000;
    const text = `${'a'.repeat(9_999)}😀`;
    const { recorder, held } = recorded(budget, [chunkOf('start'), ...Array.from({ length: 100 }, () => chunkOf('text-delta', { id: 't0', text })), chunkOf('finish')]);
    expect(recorder.overBudget).toBe(true);
    expect(held).toBeLessThanOrEqual(budget);
  });

  it('what a record keeps, as UTF-8 JSON and in memory, is within the budget for strings of any code points, escapes and lone surrogates (property)', () => {
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 2_000 }),
      fc.string({ unit: 'grapheme', maxLength: 500 }),
      // every class a JSON string or UTF-16 memory counts differently: escapes, controls, 2-, 3- and 4-byte characters, lone halves
      fc.string({ unit: fc.constantFrom('"', '\\', '\n', '\u0001', '\u007f', 'é', '\u2028', '\uD800', '\uDC00', '😀', '漢', 'a'), minLength: 100, maxLength: 2_000 }),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(text, text), { minLength: 1, maxLength: 60 }), fc.integer({ min: 2_000, max: 40_000 }), (pieces, budget) => {
        const chunks = [chunkOf('start'), ...pieces.map(([key, value]) => chunkOf('data-x', { [key]: value, text: value })), chunkOf('finish')];
        const { json, held } = recorded(budget, chunks);
        expect(json).toBeLessThanOrEqual(budget);
        expect(held).toBeLessThanOrEqual(budget);
      }),
      { numRuns: Math.min(PROPERTY_RUNS, 300), seed: seedFor('inspector byte budget') },
    );
  });

  it('ASCII text is counted as before: a run that fit its budget still fits', async () => {
    const inspector = new Inspector({ maxBytesPerRun: 1_000_000 });
    const chunks = [chunkOf('start'), ...Array.from({ length: 100 }, (_, index) => chunkOf('text-delta', { id: 't0', text: `word ${index} `.repeat(100) })), chunkOf('finish')];
    await lastValueFrom(inspector.trace(() => from(chunks)));
    expect(inspector.runs()[0]).toMatchObject({ truncated: false });
  });
});

// ---- 2. one corrupt run row does not hide the listing -------------------------------------------

describe('2. journalRuns with a run row the journal cannot use (PostgreSQL rows edited with SQL)', () => {
  let postgres: TestPostgres;
  let db: pg.Client;
  let journal: PostgresRunJournal;
  const schema = `inspector_left_${randomUUID().replaceAll('-', '').slice(0, 12)}`;

  beforeAll(async () => {
    postgres = await startTestPostgres();
    db = new pg.Client({ connectionString: postgres.connectionString });
    await db.connect();
    journal = new PostgresRunJournal({ connectionString: postgres.connectionString, schema });
  }, 120_000);
  afterAll(async () => {
    await journal?.close();
    await db?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await db?.end();
    await postgres?.stop();
  });

  /** Five runs, the newest first as listed; `edit` run on the `index`th of them. */
  async function fiveRuns(edit: string, index: number): Promise<string[]> {
    const ids = Array.from({ length: 5 }, (_, at) => `left-${at}-${randomUUID()}`);
    for (const runId of ids) {
      await journal.createRun({ runId, agentId: 'support', input: null });
      const { lease } = await journal.claim(runId, 'w');
      await journal.append(lease, [chunkOf('start')]);
    }
    const newestFirst = [...ids].reverse();
    await db.query(edit.replaceAll('S.', `"${schema}".`), [newestFirst[index]]);
    return newestFirst;
  }

  const edits: Array<[string, string, string]> = [
    ['an unknown status', "UPDATE S.runs SET status = 'paused' WHERE id = $1", 'status'],
    ['a negative epoch', 'UPDATE S.runs SET epoch = -3 WHERE id = $1', 'epoch'],
    ['format 0', 'UPDATE S.runs SET format = 0 WHERE id = $1', 'format'],
    ['a terminal on an open run', "UPDATE S.runs SET terminal = 'finish' WHERE id = $1", 'terminal'],
  ];
  it.each(edits)('a row with %s: every run is listed in order, older ones too, and it is an error row in place naming the field, from one read (runs older than it were not listed)', async (_what, edit, field) => {
    await db.query(`DELETE FROM "${schema}".runs`).catch(() => undefined);
    const ids = await fiveRuns(edit, 2);
    // the journal's strict listing still refuses as a whole, naming the row (its contract for callers that act on rows)
    const refused = await journal.listRuns({ limit: 20 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(MalformedJournalEntryError.isInstance(refused) && refused.field).toBe(field);
    const reads: unknown[] = [];
    const counted: InspectableJournal = {
      getRun: (runId) => journal.getRun(runId),
      read$: (runId, options) => journal.read$(runId, options),
      listRuns: (options) => {
        reads.push(options);
        return journal.listRuns(options);
      },
    };
    const inspector = new Inspector();
    const { runs: listed } = await inspector.journalListing(counted);
    expect(reads).toEqual([{ limit: 20, unusable: 'report' }]);
    expect((await inspector.journalRuns(journal)).map((run) => run.runId)).toEqual([ids[0], ids[1], ids[3], ids[4]]);
    expect(listed.map((run) => [run.runId, run.status])).toEqual([
      [ids[0], 'running'],
      [ids[1], 'running'],
      [ids[2], 'unreadable'],
      [ids[3], 'running'],
      [ids[4], 'running'],
    ]);
    const getRunError = await journal.getRun(ids[2]!).then(
      () => undefined,
      (error: unknown) => error as MalformedJournalEntryError,
    );
    expect(listed[2]).toEqual({
      runId: ids[2],
      status: 'unreadable',
      error: { name: 'MalformedJournalEntryError', message: getRunError?.message, row: 'runs', field, problem: getRunError?.problem },
    });
    // the route serves the same, and the page shows it (see the Chromium test below)
    const server = await inspect(quietAgent(), { port: 0, journal });
    try {
      const response = await get(server, '/api/journal');
      expect(response.status).toBe(200);
      const body = JSON.parse(response.body) as { runs: Array<{ runId: string; status: string; error?: { field?: string } }> };
      expect(body.runs.map((run) => [run.runId, run.status, run.error?.field])).toEqual([
        [ids[0], 'running', undefined],
        [ids[1], 'running', undefined],
        [ids[2], 'unreadable', field],
        [ids[3], 'running', undefined],
        [ids[4], 'running', undefined],
      ]);
      expect(response.body).not.toContain('listingEndsHere');
    } finally {
      await server.close();
    }
  }, 60_000);

  it('the newest and the oldest rows corrupt: each an error row in place, the runs between listed; a good listing is unchanged', async () => {
    await db.query(`DELETE FROM "${schema}".runs`);
    const ids = await fiveRuns("UPDATE S.runs SET status = 'paused' WHERE id = $1", 0);
    await db.query(`UPDATE "${schema}".runs SET format = 0 WHERE id = $1`, [ids[4]]);
    const { runs: listed } = await new Inspector().journalListing(journal);
    expect(listed.map((run) => [run.runId, run.status, 'error' in run ? run.error.field : undefined])).toEqual([
      [ids[0], 'unreadable', 'status'],
      [ids[1], 'running', undefined],
      [ids[2], 'running', undefined],
      [ids[3], 'running', undefined],
      [ids[4], 'unreadable', 'format'],
    ]);
    expect((await new Inspector().journalListing(journal, 2)).runs.map((run) => run.runId)).toEqual(ids.slice(0, 2));
    await db.query(`DELETE FROM "${schema}".runs WHERE id = ANY($1)`, [[ids[0], ids[4]]]);
    expect((await new Inspector().journalRuns(journal)).map((run) => run.runId)).toEqual(ids.slice(1, 4));
  }, 60_000);

  it("an app's own journal that refuses the whole listing at a row (it does not report rows in place): an InspectorError naming the row, a 409 for the page, one read", async () => {
    let reads = 0;
    const refusing: InspectableJournal = {
      getRun: async () => null,
      read$: () => of(),
      listRuns: async () => {
        reads += 1;
        throw new MalformedJournalEntryError({ runId: 'corrupt-row', seq: 0, row: 'runs', field: 'status', problem: '"paused" is not a status this build knows' });
      },
    };
    const error = await new Inspector().journalListing(refusing).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(InspectorError.isInstance(error) && [error.reason, error.message]).toEqual(['invalid-option', expect.stringMatching(/runs\.status of run "corrupt-row".*unusable: 'report'/)]);
    expect(reads).toBe(1);
    const server = await inspect(quietAgent(), { port: 0, journal: refusing });
    try {
      const response = await get(server, '/api/journal');
      expect(response.status).toBe(409);
      expect(response.body).toContain('runs.status');
    } finally {
      await server.close();
    }
  });

  it("an app's own journal listing a row with an id no journal stores (a lone surrogate) or no id: an error row naming it, the rest listed", async () => {
    const good = (runId: string): RunRecord => ({ runId, agentId: 'a', status: 'completed', epoch: 1, lastSeq: 1, format: 1, createdAt: new Date(0), updatedAt: new Date(0), terminal: 'finish' }) as RunRecord;
    const own: InspectableJournal = {
      getRun: async () => null,
      read$: () => of(),
      listRuns: async () => [
        good('a'),
        good('run-\uD800'),
        { runId: 42 } as unknown as RunRecord,
        { unusable: true, runId: 'c', error: new MalformedJournalEntryError({ runId: 'c', seq: 0, row: 'runs', field: 'epoch', problem: '-3 is not a whole number ≥ 0' }) },
        { unusable: true, runId: 'd', error: new Error('the row is gone') } as never,
        good('b'),
      ],
    };
    const { runs: listed } = await new Inspector().journalListing(own);
    expect(listed.map((run) => [typeof run.runId === 'string' ? run.runId.replace(/[\uD800-\uDFFF]/g, '?') : run.runId, run.status, 'error' in run ? run.error.field : undefined])).toEqual([
      ['a', 'completed', undefined],
      ['run-?', 'unreadable', 'id'],
      ['42', 'unreadable', 'id'],
      ['c', 'unreadable', 'epoch'],
      ['d', 'unreadable', undefined],
      ['b', 'completed', undefined],
    ]);
  });
});

// ---- 3 and 4. run ids the page must round-trip ---------------------------------------------------

/** Ids a journal stores that a URL path cannot carry as they are, or that look like encodings of one another. */
const AWKWARD_IDS = ['.', '..', '%2E%2E', '%2e', '.%2E', 'a/b', '../api/info', '?x=1#y', 'a+b c', '%', '%25', 'run%41', 'runA', '运行-🚀-1', `'"<b>`, 'x'.repeat(256)];

/** An ended journaled run with this id. */
async function endedRun(journal: InMemoryRunJournal, runId: string): Promise<void> {
  await journal.createRun({ runId, agentId: 'support', input: null });
  const { lease } = await journal.claim(runId, 'w');
  await journal.append(lease, [{ type: 'start', runId, from: 'AGENT', payload: { messageId: 'm' } }, { type: 'finish', runId, from: 'AGENT', payload: { finishReason: 'stop' } }] as ChunkType[], {
    kind: 'final',
    step: 0,
    attempt: 0,
    state: {},
    result: null,
  } as never);
}

describe('3 and 4. run ids: every storable id round-trips through the endpoints, a lone surrogate is refused where it enters', () => {
  let server: InspectorServer;
  const journal = new InMemoryRunJournal();

  beforeAll(async () => {
    for (const runId of AWKWARD_IDS) await endedRun(journal, runId);
    server = await inspect(quietAgent(), { port: 0, journal });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('opens, serves and exports every id named in the query (`?id=`): dot segments and look-alike encodings each name their own run (`/api/journal/runs/..` asked for `/api/`)', async () => {
    for (const runId of AWKWARD_IDS) {
      const query = `?id=${encodeURIComponent(runId)}`;
      const opened = await get(server, `/api/journal/run${query}`);
      expect({ runId, status: opened.status }).toEqual({ runId, status: 200 });
      expect((JSON.parse(opened.body) as { runId: string }).runId).toBe(runId);
      const served = await get(server, `/api/run${query}`);
      expect({ runId, status: served.status, id: (JSON.parse(served.body) as { runId: string }).runId }).toEqual({ runId, status: 200, id: runId });
      const exported = await get(server, `/api/run/marbles${query}&test=1`);
      expect({ runId, status: exported.status }).toEqual({ runId, status: 200 });
      expect(JSON.parse(exported.body)).toMatchObject({ diagram: 'a-(b|)', exact: true });
    }
  });

  it('a query that names no run as encodeURIComponent writes one is a 400 naming the problem: no id, two ids, bad percent-encoding, an encoded lone surrogate', async () => {
    for (const query of ['', '?id=', '?id=a&id=b', '?id=%ZZ', '?id=%E0%A4%A', '?id=%ED%A0%80', '?test=1']) {
      for (const path of ['/api/run', '/api/run/marbles', '/api/journal/run']) {
        const response = await get(server, `${path}${query}`);
        expect({ path, query, status: response.status }).toEqual({ path, query, status: 400 });
        expect(JSON.parse(response.body)).toMatchObject({ error: 'bad-request' });
      }
    }
  });

  it('a lone surrogate is refused where a run enters the inspector: openJournalRun is an InspectorError naming it (it was kept, and broke the page)', async () => {
    const runId = 'run-\uD800';
    const own: InspectableJournal = {
      getRun: async (id) => ({ runId: id, agentId: 'a', status: 'completed', epoch: 1, lastSeq: 0, format: 1, createdAt: new Date(0), updatedAt: new Date(0), terminal: 'finish' }) as RunRecord,
      read$: () => of(),
    };
    const inspector = new Inspector();
    for (const id of [runId, '\uDC00', 'a\uDBFF', '\uDC00\uD800']) {
      const settled = await outcome(inspector.openJournalRun(own, id));
      expect(settled).toEqual({ error: expect.stringMatching(/^invalid-option: .*lone surrogate/) });
    }
    expect(inspector.runs()).toEqual([]);
    // a well-formed id of the same journal opens
    expect(await outcome(inspector.openJournalRun(own, 'run-\uD83D\uDE00'))).toMatchObject({ value: { runId: 'run-😀' } });
  });

  it("the page's own id encoding never throws: it names every string as encodeURIComponent does, and none it cannot (page script evaluated in Node)", () => {
    const script = readFileSync(new URL('../../src/devtools/inspector-page/run-ids.js', import.meta.url), 'utf8');
    const exports: Record<string, (runId: string) => string | undefined> = {};
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the page's module, as the browser runs it
    new Function('exports', script.replaceAll(/^export function (\w+)/gm, 'exports.$1 = function $1'))(exports);
    const { runQuery } = exports as { runQuery: (runId: string) => string | undefined };
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: fc.constantFrom('.', '%', '/', '\uD800', '\uDC00', '😀', '#', '?', '&', '+', ' ') })), (runId) => {
        const query = runQuery(runId);
        const wellFormed = !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(runId);
        expect(query).toBe(wellFormed ? `?id=${encodeURIComponent(runId)}` : undefined);
      }),
      { numRuns: Math.min(PROPERTY_RUNS, 500), seed: seedFor('inspector page run ids') },
    );
  });
});

// ---- 5. a client flooding the feed ---------------------------------------------------------------

describe('5. a client opening feed after feed', () => {
  it('keeps at most MAX_FEEDS feeds open (the oldest dropped: a page reconnects), and the newest still gets every event', async () => {
    const { MAX_FEEDS } = await import('../../src/devtools/internal/routes.js');
    const server = await inspect(quietAgent(), { port: 0 });
    const feeds: Array<{ closed: boolean; body: string; request: ReturnType<typeof httpRequest> }> = [];
    try {
      for (let index = 0; index < MAX_FEEDS + 24; index++) {
        const feed = { closed: false, body: '', request: httpRequest({ host: '127.0.0.1', port: server.port, path: '/api/events', agent: false }) };
        await new Promise<void>((resolve, reject) => {
          feed.request.on('response', (response) => {
            response.setEncoding('utf8');
            response.on('data', (part: string) => (feed.body += part));
            response.on('close', () => (feed.closed = true));
            resolve();
          });
          feed.request.on('error', () => (feed.closed = true));
          feed.request.on('close', () => (feed.closed = true));
          setTimeout(() => reject(new Error('no answer')), 30_000).unref();
          feed.request.end();
        });
        feeds.push(feed);
      }
      await expect.poll(() => feeds.filter((feed) => !feed.closed).length, { timeout: 30_000 }).toBeLessThanOrEqual(MAX_FEEDS);
      // the oldest were dropped, the newest are open
      expect(feeds.slice(-MAX_FEEDS).every((feed) => !feed.closed)).toBe(true);
      await lastValueFrom(server.inspector.trace(() => from([chunkOf('start'), chunkOf('finish')]), { title: 'after the flood' }));
      const newest = feeds.at(-1)!;
      await expect.poll(() => newest.body.includes('after the flood') && newest.body.includes('"run-end"'), { timeout: 30_000 }).toBe(true);
    } finally {
      for (const feed of feeds) feed.request.destroy();
      await server.close();
    }
  }, 90_000);
});

// ---- the page in Chromium -----------------------------------------------------------------------

const chromiumPath = process.env.RXAGENT_CHROMIUM ?? '/usr/bin/chromium';
const launchArgs = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** `text` as a regular expression matching it literally. */
const escaped = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe.skipIf(!existsSync(chromiumPath))('the page in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: chromiumPath, args: launchArgs });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('lists, opens, exports and reloads runs of every awkward id, shows a lone-surrogate id and a corrupt row as error rows, and throws nothing', async () => {
    const stored = new InMemoryRunJournal();
    for (const runId of AWKWARD_IDS) await endedRun(stored, runId);
    // an app's own journal over it: a listed id no journal stores first, and a row it cannot use
    // (reported in place) in the middle of the stored runs
    const own: InspectableJournal = {
      getRun: (runId) => stored.getRun(runId),
      read$: (runId, options) => stored.read$(runId, options),
      listRuns: async ({ limit = 50 }: { limit?: number } = {}) => {
        const runs = await stored.listRuns({ limit: 1000, unusable: 'report' });
        const corrupt = { unusable: true as const, runId: 'corrupt-row', error: new MalformedJournalEntryError({ runId: 'corrupt-row', seq: 0, row: 'runs', field: 'status', problem: '"paused" is not a status this build knows' }) };
        const middle = Math.floor(runs.length / 2);
        return [{ ...(await stored.getRun('.'))!, runId: 'run-\uD800' }, ...runs.slice(0, middle), corrupt, ...runs.slice(middle)].slice(0, limit);
      },
    };
    const server = await inspect(quietAgent(), { port: 0, journal: own });
    const page = await browser.newPage({ viewport: { width: 1360, height: 820 } });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(String(error)));
    try {
      await page.route(/^(?!http:\/\/127\.0\.0\.1)/, (route) => route.abort());
      await page.goto(server.url);
      await page.getByTestId('feed-status').filter({ hasText: 'live' }).waitFor({ timeout: 15_000 });
      await page.getByTestId('journal-error').first().waitFor({ timeout: 15_000 });
      const errorRows = await page.getByTestId('journal-error').allTextContents();
      expect(errorRows).toHaveLength(2);
      expect(errorRows[0]).toContain('lone surrogate');
      expect(errorRows[1]).toContain('runs.status');
      expect(errorRows[1]).toContain('corrupt-row');
      // the corrupt row in its place, the runs older than it listed after it
      const rows = await page.locator('#journal-list > li').evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset['testid'] ?? 'run'));
      expect(rows).toHaveLength(AWKWARD_IDS.length + 2);
      expect(rows.indexOf('journal-error', 1)).toBe(1 + Math.floor(AWKWARD_IDS.length / 2));
      const items = page.getByTestId('journal-item');
      expect(await items.count()).toBe(AWKWARD_IDS.length);
      for (const runId of AWKWARD_IDS) {
        await page.locator('[data-testid="journal-item"]').filter({ has: page.locator('.run-title', { hasText: new RegExp(`^${escaped(runId)}$`) }) }).first().click();
        await expect.poll(() => page.locator('#run-header h2').textContent(), { timeout: 15_000 }).toBe(`journaled run ${runId}`.slice(0, 200));
        expect(await page.evaluate(() => new URLSearchParams(location.hash.slice(1)).get('run'))).toBe(runId);
      }
      // the last one opened ('x' × 256) and a dot id export; a reload selects the id in the address
      for (const runId of ['..', '%2E%2E']) {
        await page.locator('[data-testid="run-item"]').filter({ has: page.locator('.run-title', { hasText: new RegExp(`^journaled run ${escaped(runId)}$`) }) }).first().click();
        await expect.poll(() => page.locator('#run-header h2').textContent(), { timeout: 15_000 }).toBe(`journaled run ${runId}`);
        await page.getByTestId('export-marbles').click();
        await page.getByTestId('export-code').filter({ hasText: 'createChunkBuilders' }).waitFor({ timeout: 15_000 });
        expect(await page.getByTestId('export-code').textContent()).toContain(`journaled run ${runId}`);
        await page.locator('#close-export').click();
      }
      await page.reload();
      await page.getByTestId('feed-status').filter({ hasText: 'live' }).waitFor({ timeout: 15_000 });
      await expect.poll(() => page.locator('#run-header h2').textContent(), { timeout: 15_000 }).toBe('journaled run %2E%2E');
      expect(errors).toEqual([]);
    } finally {
      await page.close();
      await server.close();
    }
  }, 120_000);
});
