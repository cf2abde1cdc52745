/**
 * Faults the last review of durable runs left open, each shown first by a failing test, then fixed:
 *
 * 1. Run ids the store holds but a header cannot carry as they are (past U+007E, a line break,
 *    padding): the readers answered 500 and `DurableChatTransport` could neither reconnect nor
 *    stop. `x-rxagent-run-id` now carries such an id encoded (`utf-8''` and percent-encoded
 *    UTF-8, RFC 8187's form), decoded on read by the transport and by the app's routes
 *    (`decodeRunIdHeader`); plain ASCII ids travel as before. Through the real transport on a
 *    real HTTP server.
 * 2. Repeated stops: every `cancel` (the stop endpoint) of an open run added a signal row, a
 *    notification and a delivery to the owner, without bound. A run now holds at most one stop.
 *    1,000 stops counted in rows, notifications and deliveries, in memory and on PostgreSQL.
 * 3. Run tokens whose expiry lies beyond what `createRunToken` mints (far future, past what a
 *    `Date` holds) were accepted for ever: `verifyRunToken` now refuses an expiry beyond
 *    now + `maxLifetimeSeconds` (default 31 days), and the readers answer 404 as for an unknown run.
 * 4. Ids that repeat across processes (a counter as the run id): not a fault — the journal already
 *    refuses a second run under an existing id with `RunConflictError` naming the field, racing
 *    creates included, and overwrites nothing; the same submission again is the same run, by
 *    contract (the id is the run's idempotency key). In memory and on PostgreSQL (two journals on
 *    one schema: two processes).
 */
import { createHmac, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { UIMessage, UIMessageChunk } from 'ai';
import fc from 'fast-check';
import pg from 'pg';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from 'rxagent';
import { DurableChatTransport, resumeUIMessageStreamResponse } from 'rxagent/ai-sdk';
import {
  InMemoryRunJournal,
  RUN_ID_HEADER,
  RUN_TOKEN_HEADER,
  RunConflictError,
  RunNotFoundError,
  createRunToken,
  createRunWorker,
  decodeRunIdHeader,
  encodeRunIdHeader,
  journalStreamResponse,
  runTokenAuthorization,
  verifyRunToken,
  type RunJournal,
  type RunSignalRecord,
  type RunWorkerOptions,
} from 'rxagent/durable';
import { InMemoryStorage, Memory } from 'rxagent/memory';
import { PostgresRunJournal } from 'rxagent/storage/postgres';
import { scriptedModel } from 'rxagent/testing';
import { authorizedRun } from '../../src/storage/index.js';
import { commit, delta, finish, start } from '../storage/journal-suite.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';

const secret = 'known-faults-secret-of-at-least-32-bytes!';
const NOW = 1_800_000_000_000;
const now = (): number => NOW;
const DAY = 24 * 3600;
const RUNS = Number.parseInt(process.env['RXAGENT_PROPERTY_RUNS'] ?? '1000', 10);

/** A `boss` that records what is sent and is never started (submit and cancel only). */
function recordingBoss(): RunWorkerOptions['boss'] & { sent: string[] } {
  const sent: string[] = [];
  return {
    sent,
    createQueue: async () => undefined,
    send: async (_queue: string, _data: object, options: { id: string }) => {
      sent.push(options.id);
      return options.id;
    },
    work: async () => 'w',
    getJobById: async () => null,
    offWork: async () => undefined,
    schedule: async () => undefined,
  } as unknown as RunWorkerOptions['boss'] & { sent: string[] };
}

const tokenRequest = (runId: string, resourceId: string, init: { url?: string; headers?: Record<string, string> } = {}): Request =>
  new Request(init.url ?? 'http://app/runs', {
    headers: { [RUN_TOKEN_HEADER]: createRunToken({ runId, resourceId, expiresInSeconds: 60, secret, now }), ...init.headers },
  });

/** An ended run `runId` of `alice`: start, "hi", finish. */
async function endedRun(journal: RunJournal, runId: string): Promise<void> {
  await journal.createRun({ runId, agentId: 'a', threadId: 'chat-1', resourceId: 'alice', input: null });
  const { lease } = await journal.claim(runId, 'w');
  await journal.append(lease, [start(runId), delta(runId, 'hi')]);
  await journal.append(lease, [finish(runId)], commit('final'));
}

// ─── 1. run ids a header cannot carry as they are ────────────────────────────────────────────────

/** Ids every store holds that `Headers` refuses (past U+00FF, a line break) or changes (padding, Latin-1 bytes), and spellings of the encoding itself. */
const HEADERLESS = ['ran-ü', '运行-1', 'run-🚀', 'run-名前', 'run\nx-injected: 1', ' padded ', 'tab\there', "utf-8''run", "UTF-8''run-%41", '\u00a0nbsp'];

describe('1. run ids a header cannot carry as they are', () => {
  for (const reader of ['journalStreamResponse', 'resumeUIMessageStreamResponse'] as const) {
    it(`${reader}: a stored run with such an id is served (200), its x-rxagent-run-id encoded in visible ASCII and decoded back to the id`, async () => {
      for (const runId of HEADERLESS) {
        const journal = new InMemoryRunJournal();
        await endedRun(journal, runId);
        const response =
          reader === 'journalStreamResponse'
            ? await journalStreamResponse(journal, runId, { unsafeNoAuthorization: true })
            : await resumeUIMessageStreamResponse(journal, runId, { unsafeNoAuthorization: true });
        const body = await response.text();
        expect({ runId, status: response.status }).toEqual({ runId, status: 200 });
        const header = response.headers.get(RUN_ID_HEADER) ?? '';
        expect(header, JSON.stringify(runId)).toMatch(/^[\x21-\x7e]+$/);
        expect(decodeRunIdHeader(header)).toBe(runId);
        expect(body).toContain('hi');
        expect(body).not.toMatch(/^x-injected/m);
      }
    });
  }

  it('ids a header carries as they are (visible ASCII, inner spaces) travel unchanged, as before', async () => {
    for (const runId of [randomUUID(), 'run-1', 'run%41', 'a b', "it's", 'run:1/2?x=%ZZ']) {
      const journal = new InMemoryRunJournal();
      await endedRun(journal, runId);
      const response = await journalStreamResponse(journal, runId, { unsafeNoAuthorization: true });
      await response.body?.cancel();
      expect(response.headers.get(RUN_ID_HEADER)).toBe(runId);
      expect(encodeRunIdHeader(runId)).toBe(runId);
      expect(decodeRunIdHeader(runId)).toBe(runId);
    }
  });

  it('the encoding round-trips every id a store holds, and its value is one a header carries unchanged (property)', () => {
    const ids = fc
      .oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }), fc.string({ minLength: 1, maxLength: 40 }))
      .filter((id) => !id.includes('\u0000'));
    fc.assert(
      fc.property(ids, (runId) => {
        const value = encodeRunIdHeader(runId);
        expect(value).toMatch(/^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/);
        expect(new Headers({ [RUN_ID_HEADER]: value }).get(RUN_ID_HEADER)).toBe(value);
        expect(decodeRunIdHeader(value)).toBe(runId);
      }),
      { numRuns: RUNS },
    );
  });

  it('a header value the encoding never produces names no run (undefined): bad escapes, cut or overlong UTF-8, encoded surrogates, raw bytes past ASCII', () => {
    for (const value of ["utf-8''%ZZ", "utf-8''%C3", "utf-8''%C3%28", "utf-8''%C0%AF", "utf-8''%ED%A0%80", "utf-8''a b", "utf-8''ü", "utf-8''%", "utf-8''x'y"]) {
      expect(decodeRunIdHeader(value), value).toBeUndefined();
    }
    expect(decodeRunIdHeader(null)).toBeUndefined();
    expect(decodeRunIdHeader(undefined)).toBeUndefined();
    // a value from an older server (raw Latin-1 bytes) is read as it came
    expect(decodeRunIdHeader('ran-ü')).toBe('ran-ü');
  });

  describe('through DurableChatTransport on a real HTTP server', () => {
    let server: Server | undefined;
    afterEach(async () => {
      server?.closeAllConnections();
      await new Promise<void>((resolve) => server?.close(() => resolve()) ?? resolve());
      server = undefined;
    });

    it('the first response names the run, a dropped connection reconnects to it and stop stops it: the run id round-trips encoded, both ways', async () => {
      const runId = '运行-🚀-1';
      const authorize = runTokenAuthorization({ secret });
      const journal = new InMemoryRunJournal();
      await journal.createRun({ runId, agentId: 'a', threadId: 'c1', resourceId: 'alice', input: null });
      const { lease } = await journal.claim(runId, 'w');
      await journal.append(lease, [start(runId), { type: 'text-start', runId, from: 'AGENT', payload: { id: 't1' } }, delta(runId, 'Hello')]);

      /** What the app's routes read: the path, the header as it came, the run it names. */
      const requests: Array<{ path: string; raw: string | undefined; runId: string | undefined; status: number }> = [];
      const webRequest = (request: IncomingMessage): Request => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') headers.set(name, value);
        return new Request(new URL(request.url ?? '/', 'http://localhost'), { method: request.method ?? 'GET', headers });
      };
      server = createServer((request: IncomingMessage, response: ServerResponse) => {
        void (async () => {
          const path = new URL(request.url ?? '/', 'http://localhost').pathname;
          const raw = request.headers[RUN_ID_HEADER] as string | undefined;
          const named = decodeRunIdHeader(raw);
          let web: Response;
          let cut = false;
          if (request.method === 'POST' && path === '/api/chat') {
            const headers = { [RUN_TOKEN_HEADER]: createRunToken({ runId, resourceId: 'alice', expiresInSeconds: 60, secret }) };
            web = await resumeUIMessageStreamResponse(journal, runId, { unsafeNoAuthorization: true, headers });
            cut = true; // the connection drops after the first piece
          } else if (request.method === 'GET' && path.endsWith('/stream')) {
            web = await resumeUIMessageStreamResponse(journal, named ?? 'no-run', { request: webRequest(request), authorize, after: (request.headers['last-event-id'] as string | undefined) ?? null });
          } else if (request.method === 'POST' && path.endsWith('/stop')) {
            try {
              await authorizedRun(journal, named ?? 'no-run', { request: webRequest(request), authorize });
              await journal.signal(named ?? 'no-run', { kind: 'stop', reason: 'stopped by the user' });
              web = Response.json({ stopped: named });
            } catch (error) {
              if (!RunNotFoundError.isInstance(error)) throw error;
              web = Response.json({ error: { name: error.name } }, { status: 404 });
            }
          } else {
            web = new Response(null, { status: 404 });
          }
          requests.push({ path, raw, runId: named, status: web.status });
          response.writeHead(web.status, Object.fromEntries([...(web.headers as unknown as Iterable<[string, string]>)]));
          response.flushHeaders();
          if (web.body === null) return void response.end();
          for await (const piece of web.body as unknown as AsyncIterable<Uint8Array>) {
            if (cut) {
              response.write(piece, () => response.destroy());
              return;
            }
            response.write(piece);
          }
          response.end();
        })().catch(() => response.destroy());
      });
      await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
      const api = `http://127.0.0.1:${(server!.address() as { port: number }).port}/api/chat`;

      const transport = new DurableChatTransport<UIMessage>({ api, initialDelayMs: 5, maxDelayMs: 20 });
      const abort = new AbortController();
      const messages: UIMessage[] = [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] }];
      const reader = (await transport.sendMessages({ chatId: 'c1', messages, abortSignal: abort.signal, trigger: 'submit-message', messageId: undefined })).getReader();
      const seen: UIMessageChunk[] = [];
      const readUntil = async (check: (chunk: UIMessageChunk) => boolean): Promise<void> => {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`the stream ended early: ${JSON.stringify(seen)} / ${JSON.stringify(requests)}`);
          seen.push(value);
          if (check(value)) return;
        }
      };
      await readUntil((chunk) => chunk.type === 'text-delta' && chunk.delta === 'Hello');
      // the first response dropped: the transport reconnects to the run it named, and the run goes on
      await journal.append(lease, [delta(runId, ' again')]);
      await readUntil((chunk) => chunk.type === 'text-delta' && chunk.delta === ' again');
      abort.abort();
      await reader.cancel();
      for (const started = Date.now(); !requests.some((request) => request.path.endsWith('/stop')); ) {
        if (Date.now() - started > 5000) throw new Error(`no stop: ${JSON.stringify(requests)}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const encoded = encodeRunIdHeader(runId);
      expect(requests.map(({ path, raw, runId: named, status }) => ({ path, raw, named, status }))).toEqual([
        { path: '/api/chat', raw: undefined, named: undefined, status: 200 },
        { path: '/api/chat/c1/stream', raw: encoded, named: runId, status: 200 },
        { path: '/api/chat/c1/stop', raw: encoded, named: runId, status: 200 },
      ]);
      expect(seen.filter((chunk) => chunk.type === 'text-delta').map((chunk) => (chunk as { delta: string }).delta)).toEqual(['Hello', ' again']);
      const recorded: RunSignalRecord[] = [];
      journal.signals$(runId).subscribe((signal) => recorded.push(signal)).unsubscribe();
      expect(recorded).toMatchObject([{ kind: 'stop', reason: 'stopped by the user' }]);
    });
  });
});

// ─── 2. repeated stops ──────────────────────────────────────────────────────────────────────────

const STOPS = 1000;

describe('2. repeated owner stops are bounded: a run holds one stop', () => {
  it(`in memory: ${STOPS} stops through RunWorker.cancel (the stop endpoint) record one stop, deliver it once to the owner, keep the first reason`, async () => {
    const journal = new InMemoryRunJournal();
    const runId = 'run-stopped';
    await journal.createRun({ runId, agentId: 'a', threadId: 'c1', resourceId: 'alice', input: null });
    await journal.claim(runId, 'owner');
    const delivered: RunSignalRecord[] = [];
    const owner = journal.signals$(runId).subscribe((signal) => delivered.push(signal));
    const worker = createRunWorker({ journal, boss: recordingBoss(), agents: [], retention: false, lostOwnerSweep: false });
    const authorize = runTokenAuthorization({ secret, now });
    for (let index = 0; index < STOPS; index++) {
      await worker.cancel(runId, { request: tokenRequest(runId, 'alice'), authorize, reason: `stop ${index}` });
    }
    await Promise.all(Array.from({ length: 50 }, (_, index) => worker.cancel(runId, { request: tokenRequest(runId, 'alice'), authorize, reason: `racing ${index}` })));
    owner.unsubscribe();
    expect(delivered).toMatchObject([{ kind: 'stop', reason: 'stop 0' }]);
    // what a later owner (a takeover) reads: the one stop
    const recorded: RunSignalRecord[] = [];
    journal.signals$(runId).subscribe((signal) => recorded.push(signal)).unsubscribe();
    expect(recorded).toMatchObject([{ kind: 'stop', reason: 'stop 0' }]);
    await worker.close();
  });

  describe('on PostgreSQL (the stop endpoint on one instance, the owner on another)', () => {
    const schema = `rxagent_known_faults_${randomUUID().slice(0, 8)}`;
    let database: TestPostgres;
    let pool: pg.Pool;
    let ownerJournal: PostgresRunJournal;
    let endpointJournal: PostgresRunJournal;

    beforeAll(async () => {
      database = await startTestPostgres();
      pool = new pg.Pool({ connectionString: database.connectionString, max: 4 });
      ownerJournal = new PostgresRunJournal({ connectionString: database.connectionString, schema });
      endpointJournal = new PostgresRunJournal({ connectionString: database.connectionString, schema });
    });
    afterAll(async () => {
      await ownerJournal?.close();
      await endpointJournal?.close();
      await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
      await pool?.end();
      await database?.stop();
    });

    it(`${STOPS} stops in a row and 50 at once: one signal row, one notification, one delivery to the owner, the first reason`, { timeout: 120_000 }, async () => {
      const runId = `run-${randomUUID()}`;
      await ownerJournal.createRun({ runId, agentId: 'a', threadId: 'c1', resourceId: 'alice', input: null });
      await ownerJournal.claim(runId, 'owner');
      const delivered: RunSignalRecord[] = [];
      const owner = ownerJournal.signals$(runId).subscribe((signal) => delivered.push(signal));
      // a listener of the journal's channel: every notification the stops send
      const listener = await pool.connect();
      const notices: string[] = [];
      listener.on('notification', (message) => notices.push(message.payload ?? ''));
      await listener.query('LISTEN rxagent_journal');
      const worker = createRunWorker({ journal: endpointJournal, boss: recordingBoss(), agents: [], retention: false, lostOwnerSweep: false });
      const authorize = runTokenAuthorization({ secret, now });
      try {
        for (let index = 0; index < STOPS; index++) {
          await worker.cancel(runId, { request: tokenRequest(runId, 'alice'), authorize, reason: `stop ${index}` });
        }
        await Promise.all(Array.from({ length: 50 }, (_, index) => worker.cancel(runId, { request: tokenRequest(runId, 'alice'), authorize, reason: `racing ${index}` })));
        // notifications are delivered in commit order: one sent after the stops arrives after theirs
        await pool.query(`SELECT pg_notify('rxagent_journal', 'fence')`);
        for (const started = Date.now(); !notices.includes('fence') || delivered.length === 0; ) {
          if (Date.now() - started > 10_000) throw new Error(`waited for the fence: ${notices.length} notices, ${delivered.length} deliveries`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const rows = await pool.query(`SELECT reason::text AS reason FROM "${schema}".run_signals WHERE run_id = $1`, [runId]);
        expect(rows.rows).toEqual([{ reason: '"stop 0"' }]);
        expect(notices.filter((payload) => payload === `${schema}/${runId}/signal`)).toHaveLength(1);
        expect(delivered).toMatchObject([{ kind: 'stop', reason: 'stop 0' }]);
      } finally {
        owner.unsubscribe();
        await listener.query('UNLISTEN *').catch(() => undefined);
        listener.release();
        await worker.close();
      }
    });

    it('stops of different runs stay apart (one each), and a stop of an ended run records nothing', async () => {
      const ids = [`run-${randomUUID()}`, `run-${randomUUID()}`];
      for (const id of ids) {
        await ownerJournal.createRun({ runId: id, agentId: 'a', input: null });
        await ownerJournal.claim(id, 'owner');
      }
      await Promise.all(ids.flatMap((id) => Array.from({ length: 20 }, () => endpointJournal.signal(id, { kind: 'stop', reason: id }))));
      const counted = await pool.query<{ run_id: string; count: string }>(
        `SELECT run_id, count(*)::text AS count FROM "${schema}".run_signals WHERE run_id = ANY($1::text[]) GROUP BY run_id ORDER BY run_id`,
        [ids],
      );
      expect(counted.rows).toEqual([...ids].sort().map((id) => ({ run_id: id, count: '1' })));
      const ended = `run-${randomUUID()}`;
      await endedRun(ownerJournal, ended);
      await endpointJournal.signal(ended, { kind: 'stop' });
      expect((await pool.query(`SELECT 1 FROM "${schema}".run_signals WHERE run_id = $1`, [ended])).rowCount).toBe(0);
      const unknown = await endpointJournal.signal(`run-${randomUUID()}`, { kind: 'stop' }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(RunNotFoundError.isInstance(unknown)).toBe(true);
    });
  });
});

// ─── 3. run tokens past any lifetime ───────────────────────────────────────────────────────────

/** A token signed with the app's secret (as a build without createRunToken's cap, or another service, could mint it). */
function forged(claims: { r: string; o: string; e: unknown }, key = secret): string {
  const body = Buffer.from(JSON.stringify(claims), 'utf8').toString('base64url');
  return `rt1.${body}.${createHmac('sha256', key).update(`rt1.${body}`).digest('base64url')}`;
}
const nowSeconds = Math.floor(NOW / 1000);

describe('3. run tokens: an expiry beyond the longest lifetime is refused', () => {
  it('far-future expiries (ten years, 2^53 - 1 seconds, past what a Date holds) are refused; createRunToken’s longest (31 days) is accepted', () => {
    for (const e of [nowSeconds + 10 * 365 * DAY, Number.MAX_SAFE_INTEGER, 8.64e12 + 1, nowSeconds + 31 * DAY + 301]) {
      expect(verifyRunToken(forged({ r: 'run-1', o: 'alice', e }), { secret, now }), String(e)).toBeNull();
    }
    const longest = createRunToken({ runId: 'run-1', resourceId: 'alice', expiresInSeconds: 31 * DAY, secret, now });
    expect(verifyRunToken(longest, { secret, now })).toEqual({ runId: 'run-1', resourceId: 'alice', expiresAt: nowSeconds + 31 * DAY });
  });

  it('maxLifetimeSeconds lowers the bound (a token minted for longer is refused), with 5 minutes for clocks that disagree', () => {
    const hour = createRunToken({ runId: 'run-1', resourceId: 'alice', expiresInSeconds: 3600, secret, now });
    const twoHours = createRunToken({ runId: 'run-1', resourceId: 'alice', expiresInSeconds: 7200, secret, now });
    expect(verifyRunToken(hour, { secret, now, maxLifetimeSeconds: 3600 })).not.toBeNull();
    expect(verifyRunToken(twoHours, { secret, now, maxLifetimeSeconds: 3600 })).toBeNull();
    // minted by an instance whose clock runs 4 minutes ahead: accepted; 6 minutes: refused
    const ahead = (minutes: number) => createRunToken({ runId: 'run-1', resourceId: 'alice', expiresInSeconds: 3600, secret, now: () => NOW + minutes * 60_000 });
    expect(verifyRunToken(ahead(4), { secret, now, maxLifetimeSeconds: 3600 })).not.toBeNull();
    expect(verifyRunToken(ahead(6), { secret, now, maxLifetimeSeconds: 3600 })).toBeNull();
  });

  it('maxLifetimeSeconds must be an integer ≥ 1: a TypeError from verifyRunToken and from runTokenAuthorization when it is made', () => {
    const token = createRunToken({ runId: 'run-1', resourceId: 'alice', expiresInSeconds: 60, secret, now });
    for (const maxLifetimeSeconds of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '3600' as unknown as number]) {
      expect(() => verifyRunToken(token, { secret, now, maxLifetimeSeconds }), String(maxLifetimeSeconds)).toThrow(TypeError);
      expect(() => runTokenAuthorization({ secret, now, maxLifetimeSeconds }), String(maxLifetimeSeconds)).toThrow(TypeError);
    }
  });

  it('the readers answer a far-future token exactly as an unknown run (404, same body)', async () => {
    const journal = new InMemoryRunJournal();
    await endedRun(journal, 'run-1');
    const authorize = runTokenAuthorization({ secret, now });
    const far = forged({ r: 'run-1', o: 'alice', e: nowSeconds + 10 * 365 * DAY });
    const request = new Request('http://app/runs', { headers: { [RUN_TOKEN_HEADER]: far } });
    const refused = await journalStreamResponse(journal, 'run-1', { request, authorize });
    const unknown = await journalStreamResponse(journal, 'run-0', { request, authorize });
    expect(refused.status).toBe(404);
    expect((await refused.text()).replace('run-1', 'ID')).toBe((await unknown.text()).replace('run-0', 'ID'));
    const ui = await resumeUIMessageStreamResponse(journal, 'run-1', { request, authorize });
    expect(ui.status).toBe(404);
  });
});

// ─── 4. ids that repeat across processes ───────────────────────────────────────────────────────

describe('4. a run id that exists already (a counter as the run id, two processes): refused, never merged or overwritten', () => {
  const schema = `rxagent_known_ids_${randomUUID().slice(0, 8)}`;
  let database: TestPostgres;
  let pool: pg.Pool;
  const journals: PostgresRunJournal[] = [];

  beforeAll(async () => {
    database = await startTestPostgres();
    pool = new pg.Pool({ connectionString: database.connectionString, max: 2 });
  });
  afterAll(async () => {
    await Promise.all(journals.map((journal) => journal.close()));
    await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await pool?.end();
    await database?.stop();
  });

  /** Two processes' journals: one in-memory journal twice, or two PostgreSQL journals on one schema. */
  const kinds: Record<string, () => [RunJournal, RunJournal]> = {
    'in memory': () => {
      const shared = new InMemoryRunJournal();
      return [shared, shared];
    },
    PostgreSQL: () => {
      const pair: [PostgresRunJournal, PostgresRunJournal] = [
        new PostgresRunJournal({ connectionString: database.connectionString, schema }),
        new PostgresRunJournal({ connectionString: database.connectionString, schema }),
      ];
      journals.push(...pair);
      return pair;
    },
  };

  /** What a run's rows hold: its record, its chunks, its last commit (read without claiming on PostgreSQL). */
  async function rowsOf(journal: RunJournal, runId: string) {
    const run = await journal.getRun(runId);
    const chunks = (await lastValueFrom(journal.read$(runId, { live: false }).pipe(toArray()))).map((entry) => entry.json);
    const commits =
      journal instanceof PostgresRunJournal
        ? (await pool.query(`SELECT no, kind, epoch, state::text AS state FROM "${schema}".run_commits WHERE run_id = $1 ORDER BY no`, [runId])).rows
        : undefined;
    return { run, chunks, commits };
  }

  for (const [kind, pair] of Object.entries(kinds)) {
    describe(kind, () => {
      it('a second createRun under an existing id — another owner, thread, agent or input — is a RunConflictError naming the field; the first run’s rows are unchanged', async () => {
        const [a, b] = pair();
        const runId = `run-${randomUUID()}`;
        await a.createRun({ runId, agentId: 'support', threadId: 'chat-a', resourceId: 'alice', input: { text: 'from A' } });
        const { lease } = await a.claim(runId, 'worker-a');
        await a.append(lease, [start(runId), delta(runId, 'A')], commit('input', { who: 'a' }));
        const before = await rowsOf(a, runId);
        const others = [
          [{ resourceId: 'bob' }, 'resourceId'],
          [{ resourceId: undefined }, 'resourceId'],
          [{ threadId: 'chat-b' }, 'threadId'],
          [{ agentId: 'other' }, 'agentId'],
          [{ input: { text: 'from B' } }, 'input'],
        ] as const;
        for (const [change, field] of others) {
          const second = { runId, agentId: 'support', threadId: 'chat-a', resourceId: 'alice', input: { text: 'from A' }, ...change };
          const refused = await b.createRun(second as Parameters<RunJournal['createRun']>[0]).then(
            () => undefined,
            (error: unknown) => error,
          );
          expect(RunConflictError.isInstance(refused) && { runId: refused.runId, field: refused.field }, field).toEqual({ runId, field });
        }
        expect(await rowsOf(b, runId)).toEqual(before);
        expect(before.run).toMatchObject({ resourceId: 'alice', threadId: 'chat-a', owner: 'worker-a', epoch: 1, lastSeq: 2 });
        // the first run's owner goes on writing: nothing of it was fenced or taken
        await a.append(lease, [delta(runId, '!')]);
        expect((await a.getRun(runId))?.lastSeq).toBe(3);
      });

      it('two creates racing on one fresh id (20 ids): exactly one run is created, the other create is refused, the stored run is the winner’s', async () => {
        const [a, b] = pair();
        for (let index = 0; index < 20; index++) {
          const runId = `run-${randomUUID()}`;
          const settled = await Promise.allSettled([
            a.createRun({ runId, agentId: 'support', resourceId: 'alice', input: { from: 'a' } }),
            b.createRun({ runId, agentId: 'support', resourceId: 'bob', input: { from: 'b' } }),
          ]);
          const won = settled.flatMap((outcome, at) => (outcome.status === 'fulfilled' ? [{ at, created: outcome.value.created }] : []));
          const lost = settled.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
          expect(won).toHaveLength(1);
          expect(won[0]?.created).toBe(true);
          expect(lost.every((error) => RunConflictError.isInstance(error))).toBe(true);
          expect((await a.getRun(runId))?.resourceId).toBe(won[0]?.at === 0 ? 'alice' : 'bob');
        }
      });

      it('the same submission again is the same run (created: false) — the id is the run’s idempotency key, by contract; nothing is written twice', async () => {
        const [a, b] = pair();
        const runId = `run-${randomUUID()}`;
        const submission = { runId, agentId: 'support', threadId: 'chat-a', resourceId: 'alice', input: { text: 'Hi' } };
        expect((await a.createRun(submission)).created).toBe(true);
        const { lease } = await a.claim(runId, 'worker-a');
        await a.append(lease, [start(runId)], commit('input'));
        const before = await rowsOf(a, runId);
        expect((await b.createRun(submission)).created).toBe(false);
        expect(await rowsOf(b, runId)).toEqual(before);
      });

      it('RunWorker.submit with a counter as the run id in two workers: the second submit is refused before any job is sent for it; the first run is untouched', async () => {
        const [a, b] = pair();
        // with memory: the submits carry memory options (an agent without memory refuses them at submit)
        const agent = new Agent({ id: 'support', model: scriptedModel({ rules: [], fallback: { text: 'ok' } }), memory: new Memory({ storage: new InMemoryStorage() }) });
        // each process's generateId: a counter from 1, so both make the same ids
        const counter = (): (() => string) => {
          let next = 0;
          return () => `run-counter-${kind}-${schema}-${++next}`;
        };
        const [idsOfA, idsOfB] = [counter(), counter()];
        const bossA = recordingBoss();
        const bossB = recordingBoss();
        const workerA = createRunWorker({ journal: a, boss: bossA, agents: [agent], concurrency: 0, retention: false, lostOwnerSweep: false });
        const workerB = createRunWorker({ journal: b, boss: bossB, agents: [agent], concurrency: 0, retention: false, lostOwnerSweep: false });
        const first = await workerA.submit('support', 'Hi from alice', { runId: idsOfA(), memory: { thread: 'chat-alice', resource: 'alice' } });
        expect(first.created).toBe(true);
        const before = await rowsOf(a, first.runId);
        const refused = await workerB.submit('support', 'Hi from bob', { runId: idsOfB(), memory: { thread: 'chat-bob', resource: 'bob' } }).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(RunConflictError.isInstance(refused) && refused.runId).toBe(first.runId);
        expect(bossB.sent).toEqual([]);
        expect(bossA.sent).toHaveLength(1);
        expect(await rowsOf(b, first.runId)).toEqual(before);
        await Promise.all([workerA.close(), workerB.close()]);
      });
    });
  }
});

describe('a client that cancels a reader body while a page is on its way', () => {
  it('is no uncaught error: nothing is enqueued after the cancel (a live run, cancelled in the tick its first page arrives, 50 times)', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown): void => void uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      for (let round = 0; round < 50; round++) {
        const journal = new InMemoryRunJournal();
        const runId = `run-cancel-${round}`;
        await journal.createRun({ runId, agentId: 'a', resourceId: 'alice', input: null });
        const { lease } = await journal.claim(runId, 'w');
        await journal.append(lease, [start(runId), delta(runId, 'hi')]); // live: never ends by itself
        const response = await journalStreamResponse(journal, runId, { unsafeNoAuthorization: true });
        // the first page is framed and waits for its microtask: the client leaves before it
        await response.body?.cancel();
        for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      process.off('uncaughtException', onUncaught);
    }
    expect(uncaught).toEqual([]);
  });
});
