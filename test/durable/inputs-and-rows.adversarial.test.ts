/**
 * Durable runs attacked from both ends: what an app forwards from a client into
 * `worker.submit(agentId, input, options)`, and journal rows of another build or a corrupted
 * database read back by a worker (claim, takeover, give-up) and by the readers.
 *
 * Submit (in memory: the same code runs on PostgreSQL; the huge inputs on PostgreSQL). What holds:
 * a typed error naming what was wrong before anything is stored or a job sent, or a run that ends
 * with `start` and one `error` chunk after one attempt — never a row no worker can run, never a
 * worker crash. Faults found and fixed:
 *  1. option keys named like `Object.prototype` members (`__proto__` from `JSON.parse`,
 *     `constructor`, `toString`) were refused as a `NotDurableError` whose message quoted
 *     `Object.prototype` or a native function's source: now the unknown option's `TypeError`;
 *  2. options that cannot be read (a Proxy, a getter that throws) escaped as the raw error: now a
 *     `NotDurableError` naming `options` — also when what the getter throws cannot be read either
 *     (a revoked Proxy, a null-prototype object, an `Error` whose message is a Symbol: that was a raw
 *     `TypeError` out of submit);
 *  3. options were read more than once: the run's row (thread and resource: what readers authorize
 *     by) and the stored call (what the run's memory uses) could disagree when a getter answered
 *     differently on each read; the request context checked against the processors and the run id
 *     too. Now read once, and everything is made of that one reading.
 *
 * Rows (PostgreSQL, rows edited with SQL). What holds: a typed error naming the row and field
 * (`MalformedJournalEntryError { row, field }`, `JournalSchemaError`, `RunSnapshotError`), the
 * run failed at once or left as it was, never a worker crash, an attempt spent on what no attempt
 * can fix, or a silently wrong run. Faults found and fixed:
 *  4. tool ledger: a completed row without its output was answered with `undefined`, a failed one
 *     without its error with `Error('undefined')`, a row of another tool answered the call, a row
 *     deleted made the tool run AGAIN, a duplicated id let the later row win; an unknown status was
 *     a `TypeError` of the transition. Now checked at the claim and before each call: the run fails
 *     closed with one error chunk, and the tool does not run;
 *  5. commit row: an unknown kind, a negative step, a `seq_end` past the run's chunks (the dead
 *     attempt's chunks were then not rolled back) went unnoticed: now the run fails naming the field;
 *  6. run row: a stored call that is not one (another build's input) and an agent id the worker
 *     does not run failed every attempt until the queue gave up; an unknown status was served as a
 *     run that ended without a terminal chunk; an epoch at the column's maximum failed every
 *     attempt with an overflow, a negative one burnt attempts until it reached 1; a `last_seq`
 *     behind the chunks failed every attempt with a duplicate key, one ahead of them wrote a gap.
 *     Now: the input and agent fail the run at once; the others are refused at the claim (epoch
 *     unchanged, the job not retried) and by `getRun` and the readers, naming the field;
 *  7. signals: a kind this build does not know was ignored: the run now fails closed naming it;
 *  8. chunk rows: a takeover meeting a chunk it cannot read in the open step (not JSON, no payload,
 *     an unknown type) failed every attempt, and so did the give-up: the run now fails at once;
 *  9. a seq gap made every reader of the run query the database in a loop for ever (the page after
 *     the gap was skipped and asked for again): now `MalformedJournalEntryError` naming the missing
 *     seq;
 * 10. a run of a newer format: the give-up threw on every retry of its dead-letter job; it now leaves
 *     the run as it was (a worker of the newer build may still take it).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from 'rxagent';
import {
  InMemoryRunJournal,
  JournalSchemaError,
  MalformedJournalEntryError,
  NotDurableError,
  RunConflictError,
  RunNotFoundError,
  journalStreamResponse,
  type RunJournal,
  type RunWorker,
  type RunWorkerEvent,
} from 'rxagent/durable';
import { InMemoryStorage, Memory } from 'rxagent/memory';
import { PostgresRunJournal } from 'rxagent/storage/postgres';
import { scriptedModel } from 'rxagent/testing';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { manualWorker, outcome } from './fixtures/manual-worker.js';

const revokedProxy = (): object => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
};

const talker = (id = 'support', text = 'ok'): Agent => new Agent({ id, model: scriptedModel({ rules: [], fallback: { text } }) });

/** The chunk types of a run and its last chunk's error (`name`, fields), read as a client would (in-memory journal). */
async function chunksOf(journal: RunJournal, runId: string): Promise<{ types: string[]; error: Record<string, unknown> | undefined }> {
  const entries = await lastValueFrom(journal.read$(runId, { live: false }).pipe(toArray()));
  const last = entries.at(-1)?.chunk as { type: string; payload?: { error?: Record<string, unknown> } } | undefined;
  return { types: entries.map((entry) => entry.chunk.type), error: last?.type === 'error' ? last.payload?.error : undefined };
}

// ─── submit: what an app forwards from a client ─────────────────────────────────────────────────

describe('submit: what an app forwards from a client (in memory: the same code as on PostgreSQL)', () => {
  const setUp = async () => {
    const journal = new InMemoryRunJournal();
    // with memory: submits with memory options are the run's to take (an agent without memory refuses them at submit)
    const manual = manualWorker(journal, [new Agent({ id: 'support', model: scriptedModel({ rules: [], fallback: { text: 'ok' } }), memory: new Memory({ storage: new InMemoryStorage({ runJournal: journal }) }) })]);
    await manual.worker.start();
    /** What a refused submit left: the journal's runs and the jobs sent. */
    const leftBehind = async () => ({ runs: (await journal.listRuns({ limit: 1000 })).length, jobs: manual.calls.send });
    return { journal, ...manual, leftBehind };
  };

  it('input that is not JSON — a function, a BigInt, a cycle, a Proxy or a getter that throws, 100,000 levels deep — is a NotDurableError naming it; nothing stored, no job', async () => {
    const { worker, leftBehind } = await setUp();
    const cycle: Record<string, unknown> = { role: 'user' };
    cycle['self'] = cycle;
    let deep: unknown = 'hi';
    for (let level = 0; level < 100_000; level++) deep = [deep];
    const inputs: Array<[string, unknown, RegExp]> = [
      ['a function', () => 'hi', /function/],
      ['a BigInt', [{ role: 'user', content: 'hi', n: 1n }], /bigint/],
      ['a cycle', [cycle], /cycle/],
      ['a Proxy that throws', new Proxy([], { get: () => { throw new Error('proxy read'); }, ownKeys: () => { throw new Error('proxy keys'); } }), /proxy/],
      ['a getter that throws', [{ role: 'user', get content(): string { throw new Error('getter read'); } }], /getter read/],
      ['100,000 levels deep', deep, /depth > 1000/],
    ];
    for (const [what, input, message] of inputs) {
      const refused = await outcome(worker.submit('support', input as never));
      expect('error' in refused && NotDurableError.isInstance(refused.error) && refused.error.what, what).toBe('input');
      expect('error' in refused && (refused.error as Error).message, what).toMatch(message);
    }
    expect(await leftBehind()).toEqual({ runs: 0, jobs: 0 });
    await worker.close();
  });

  it('option keys named like Object.prototype members (__proto__ from JSON.parse, constructor, toString, valueOf) are unknown options: a TypeError naming the key, not a NotDurableError quoting Object.prototype; nothing stored, no job', async () => {
    const { worker, leftBehind } = await setUp();
    const options = [
      JSON.parse('{"__proto__": {"maxSteps": 1}}'),
      JSON.parse('{"constructor": {"prototype": {"polluted": true}}}'),
      { toString: 'x' },
      { valueOf: 1 },
      { hasOwnProperty: true },
    ];
    for (const given of options) {
      const key = Object.keys(given)[0] as string;
      const refused = await outcome(worker.submit('support', 'hi', given as never));
      expect('error' in refused && refused.error instanceof TypeError && !NotDurableError.isInstance(refused.error), key).toBe(true);
      expect('error' in refused && (refused.error as Error).message, key).toContain(`unknown option "${key}"`);
    }
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(await leftBehind()).toEqual({ runs: 0, jobs: 0 });
    await worker.close();
  });

  it('options that cannot be read (a Proxy whose traps throw, a getter that throws) are a NotDurableError naming options, never the raw error; nothing stored, no job', async () => {
    const { worker, leftBehind } = await setUp();
    const unreadable: Array<[string, unknown, string]> = [
      ['a Proxy whose ownKeys throws', new Proxy({}, { ownKeys: () => { throw new Error('keys refused'); } }), 'options'],
      ['a Proxy whose getPrototypeOf throws', new Proxy({}, { getPrototypeOf: () => { throw new Error('prototype refused'); } }), 'options'],
      ['a getter that throws', { get maxSteps(): number { throw new Error('getter refused'); } }, 'options'],
      ['a nested getter that throws', { memory: { thread: 't', get resource(): string { throw new Error('nested getter refused'); } } }, 'options'],
      // what the getter throws cannot be read either (it was a raw TypeError out of submit)
      ['a getter that throws a revoked Proxy', { get maxSteps(): number { throw revokedProxy(); } }, 'options'],
      ['a getter that throws a null-prototype object', { get maxSteps(): number { throw Object.create(null); } }, 'options'],
      ['a getter that throws an Error whose message is a Symbol', { get maxSteps(): number { throw Object.assign(new Error('x'), { message: Symbol('why') }); } }, 'options'],
    ];
    for (const [what, options, named] of unreadable) {
      const refused = await outcome(worker.submit('support', 'hi', options as never));
      expect('error' in refused && NotDurableError.isInstance(refused.error), what).toBe(true);
      expect('error' in refused && NotDurableError.isInstance(refused.error) && refused.error.what.startsWith(named), what).toBe(true);
    }
    expect(await leftBehind()).toEqual({ runs: 0, jobs: 0 });
    await worker.close();
  });

  it('options are read once: getters answering differently on each read cannot make the row (what readers authorize by) and the stored call (what the run uses) disagree', async () => {
    const { worker, journal } = await setUp();
    const flipping = (first: string, later: string) => {
      let reads = 0;
      return () => (++reads === 1 ? first : later);
    };
    const resource = flipping('alice', 'mallory');
    const thread = flipping('chat-alice', 'chat-mallory');
    const runId = flipping('run-first-read', 'run-second-read');
    const tenant = flipping('acme', 'globex');
    const options = {
      get runId() {
        return runId();
      },
      memory: {
        get thread() {
          return thread();
        },
        get resource() {
          return resource();
        },
      },
      requestContext: {
        get tenant() {
          return tenant();
        },
      },
    };
    const submitted = await worker.submit('support', 'hi', options as never);
    expect(submitted.runId).toBe('run-first-read');
    const run = await journal.getRun(submitted.runId);
    const { input } = await journal.claim(submitted.runId, 'inspector');
    const stored = input as { options: { memory: { thread: string; resource: string }; requestContext: { tenant: string } } };
    expect({ thread: run?.threadId, resource: run?.resourceId }).toEqual({ thread: stored.options.memory.thread, resource: stored.options.memory.resource });
    expect(stored.options).toMatchObject({ memory: { thread: 'chat-alice', resource: 'alice' }, requestContext: { tenant: 'acme' } });
    await worker.close();
  });

  it('ids with NUL, a lone surrogate, 10 KB, or empty (run, thread, resource) are a TypeError naming the id before anything is stored; `__proto__` is an ordinary id', async () => {
    const { worker, journal, leftBehind } = await setUp();
    const bad = ['id\u0000nul', 'lone\ud800', 'x'.repeat(10_000), ''];
    for (const id of bad) {
      for (const [field, options] of [
        ['runId', { runId: id }],
        ['threadId', { memory: { thread: id, resource: 'alice' } }],
        ['threadId', { memory: { thread: { id }, resource: 'alice' } }],
        ['resourceId', { memory: { thread: 'chat', resource: id } }],
      ] as const) {
        const refused = await outcome(worker.submit('support', 'hi', options as never));
        expect('error' in refused && refused.error instanceof TypeError && (refused.error as Error).message, `${field} ${JSON.stringify(id.slice(0, 12))}`).toMatch(
          // an empty thread or resource is the run's own option error, naming options.memory.thread / .resource
          field === 'runId' && id === '' ? /runId/ : id === '' ? new RegExp(`${field}|options\\.memory\\.${field.replace('Id', '')}`) : new RegExp(field),
        );
      }
    }
    expect(await leftBehind()).toEqual({ runs: 0, jobs: 0 });
    const { runId } = await worker.submit('support', 'hi', { runId: '__proto__', memory: { thread: '__proto__', resource: '__proto__' } } as never);
    expect(await journal.getRun(runId)).toMatchObject({ runId: '__proto__', threadId: '__proto__', resourceId: '__proto__', status: 'queued' });
    await worker.close();
  });

  it('an agent id the worker does not run (or no string at all) is a TypeError naming it; nothing stored, no job', async () => {
    const { worker, leftBehind } = await setUp();
    for (const agent of ['ghost', '__proto__', 'constructor', '', 42, null]) {
      const refused = await outcome(worker.submit(agent as never, 'hi'));
      expect('error' in refused && refused.error instanceof TypeError && (refused.error as Error).message, String(agent)).toMatch(/unknown agent/);
    }
    expect(await leftBehind()).toEqual({ runs: 0, jobs: 0 });
    await worker.close();
  });

  // Option values the run refuses (maxSteps 0 or "3", an unknown toolChoice, a string providerOptions)
  // and an empty input are refused at submit now, by the run's own check: leftover-faults.adversarial.test.ts.
  it('messages of unknown roles or part types: one attempt, and the run ends with start and one error chunk naming what was wrong', async () => {
    const { worker, journal, runJob } = await setUp();
    const cases: Array<[string, unknown, unknown, RegExp]> = [
      ['unknown role', [{ role: 'wizard', content: 'hi' }], undefined, /role/],
      ['unknown part type', [{ role: 'user', content: [{ type: 'hologram', data: 1 }] }], undefined, /hologram/],
      ['unknown UI part type', [{ id: 'm1', role: 'user', parts: [{ type: 'hologram' }] }], undefined, /hologram/],
    ];
    for (const [what, input, options, message] of cases) {
      const { runId } = await worker.submit('support', input as never, options as never);
      const { attempts } = await runJob(runId);
      const { types, error } = await chunksOf(journal, runId);
      expect({ what, attempts, types, status: (await journal.getRun(runId))?.status }).toEqual({ what, attempts: 1, types: ['start', 'error'], status: 'failed' });
      expect(String(error?.['message']), what).toMatch(message);
    }
    // maxSteps NaN is not JSON: refused at submit
    const refused = await outcome(worker.submit('support', 'hi', { maxSteps: Number.NaN }));
    expect('error' in refused && NotDurableError.isInstance(refused.error) && refused.error.what).toBe('options.maxSteps');
    await worker.close();
  });

  it('the same runId with different input is a RunConflictError { field: input }; nothing of the first run changes and no second job is sent', async () => {
    const { worker, journal, calls } = await setUp();
    const { runId } = await worker.submit('support', 'first', { runId: 'same-id', maxSteps: 2 });
    const before = { run: await journal.getRun(runId), jobs: calls.send };
    for (const [input, options] of [
      ['second', { runId: 'same-id', maxSteps: 2 }],
      ['first', { runId: 'same-id', maxSteps: 3 }],
      ['first', { runId: 'same-id', maxSteps: 2, messageId: 'other' }],
    ] as const) {
      const refused = await outcome(worker.submit('support', input, options));
      expect('error' in refused && RunConflictError.isInstance(refused.error) && refused.error.field).toBe('input');
    }
    expect({ run: await journal.getRun(runId), jobs: calls.send }).toEqual(before);
    // the same submission again is the same run
    expect(await worker.submit('support', 'first', { runId: 'same-id', maxSteps: 2 })).toEqual({ runId, created: false });
    await worker.close();
  });

  it('submit racing cancel: the stop finds no run yet (RunNotFoundError) or ends the run with abort; the worker never fails', async () => {
    const { worker, journal, runJob } = await setUp();
    for (let delay = 0; delay < 8; delay++) {
      const runId = `race-${delay}`;
      const stop = (async () => {
        for (let tick = 0; tick < delay; tick++) await Promise.resolve();
        return worker.cancel(runId, { unsafeNoAuthorization: true, reason: 'stop' });
      })();
      const [submitted, stopped] = await Promise.all([worker.submit('support', 'hi', { runId }), outcome(stop)]);
      expect(submitted.created).toBe(true);
      const { attempts } = await runJob(runId);
      const { types } = await chunksOf(journal, runId);
      if ('error' in stopped) {
        expect(RunNotFoundError.isInstance(stopped.error)).toBe(true);
        expect(types.at(-1)).toBe('finish');
      } else {
        expect(types).toEqual(['start', 'abort']);
      }
      expect(attempts).toBe(1);
    }
    await worker.close();
  });
});

// ─── rows of another build or a corrupted database ──────────────────────────────────────────────

describe('what a claim gives is checked by the worker, whatever the journal (in memory: a journal whose claim hands back edited rows)', () => {
  it('a ledger that lost the row of a call its commit pinned, or holds it twice: the run fails closed, the tool is not run again', async () => {
    for (const edit of ['lost', 'twice'] as const) {
      const effects: string[] = [];
      let crash = true;
      const inner = new InMemoryRunJournal();
      // the journal as another store might read it back: the first completed ledger row lost, or repeated as pending
      const journal = new Proxy(inner, {
        get(target, key) {
          if (key !== 'claim') {
            const value = Reflect.get(target, key, target) as unknown;
            return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
          }
          return async (runId: string, owner: string) => {
            const claim = await target.claim(runId, owner);
            const done = claim.toolCalls.find((call) => call.status === 'completed');
            if (done === undefined) return claim;
            const toolCalls = edit === 'lost' ? claim.toolCalls.filter((call) => call !== done) : [...claim.toolCalls, { ...done, status: 'pending' as const }];
            return { ...claim, toolCalls };
          };
        },
      });
      const agent = new Agent({
        id: 'payer',
        toolConcurrency: 1,
        model: scriptedModel({
          rules: [
            { match: ({ toolResults }) => toolResults.length > 0, reply: { text: 'Done.' } },
            { match: /pay/, reply: { text: 'Paying.', toolCalls: [{ toolName: 'charge', args: { cents: 1 } }, { toolName: 'charge', args: { cents: 2 } }] } },
          ],
          fallback: { text: 'ok' },
        }),
        tools: { charge: { description: 'charges', inputSchema: { type: 'object' }, execute: async () => void effects.push('charged') } },
      });
      const { worker, runJob } = manualWorker(journal, [agent], {
        faultPoint: (point) => {
          if (crash && point === 'tool-returned' && effects.length === 2) throw new Error('crash');
        },
      });
      await worker.start();
      const { runId } = await worker.submit('payer', 'please pay');
      await runJob(runId, 1);
      crash = false;
      effects.length = 0;
      const { attempts } = await runJob(runId);
      const { types, error } = await chunksOf(inner, runId);
      expect({ edit, attempts, effects, last: types.at(-1) }).toEqual({ edit, attempts: 1, effects: [], last: 'error' });
      expect(error).toMatchObject({ name: 'MalformedJournalEntryError', field: 'tool_call_id' });
      await worker.close();
    }
  });
});

describe('rows of another build or a corrupted database (PostgreSQL)', () => {
  const schema = `rxagent_rows_${randomUUID().slice(0, 8)}`;
  let server: TestPostgres;
  let db: pg.Pool;
  let journal: PostgresRunJournal;
  const charges: string[] = [];
  /** When set, the run crashes (the attempt fails) at the fault point named. */
  let crashAt: { point: string; flush?: number } | undefined;
  let manual: ReturnType<typeof manualWorker>;

  /** "pay": two calls of `charge` (not idempotent), one at a time, then the answer; anything else is a step of forty words (several flushes). */
  const payer = new Agent({
    id: 'payer',
    toolConcurrency: 1,
    model: scriptedModel({
      wordDelayMs: 3,
      rules: [
        { match: ({ toolResults }) => toolResults.length > 0, reply: ({ toolResults }) => ({ text: `Done: ${JSON.stringify(toolResults.map((result) => result.output))}.` }) },
        { match: /pay/, reply: { text: 'Paying.', toolCalls: [{ toolName: 'charge', args: { cents: 100 } }, { toolName: 'charge', args: { cents: 200 } }] } },
      ],
      fallback: { text: Array.from({ length: 40 }, (_, index) => `word${index}`).join(' ') },
    }),
    tools: {
      charge: {
        description: 'Charges the card (not idempotent)',
        inputSchema: { type: 'object', properties: { cents: { type: 'number' } } },
        execute: async ({ cents }: { cents: number }) => {
          charges.push(String(cents));
          return { charged: cents };
        },
      },
    },
  });

  const sql = (text: string, values: unknown[] = []) => db.query(text.replaceAll('S.', `"${schema}".`), values);

  beforeAll(async () => {
    server = await startTestPostgres();
    db = new pg.Pool({ connectionString: server.connectionString, max: 2 });
    journal = new PostgresRunJournal({ connectionString: server.connectionString, schema });
    manual = manualWorker(journal, [payer], {
      faultPoint: (point, info) => {
        if (crashAt !== undefined && point === crashAt.point && (crashAt.flush === undefined || info.flush === crashAt.flush)) {
          if (point !== 'tool-returned' || charges.length === 2) throw new Error(`crash at ${point}`);
        }
      },
    });
    await manual.worker.start();
  }, 60_000);

  afterAll(async () => {
    await manual?.worker.close();
    await journal?.close();
    await db?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await db?.end();
    await server?.stop();
  }, 60_000);

  /**
   * A "pay" run whose owner died after both charges ran, before the second was recorded: the last
   * commit is the step's `model` commit, the ledger holds the first call `completed` and the second
   * `started`. Returns the run id and the two call ids.
   */
  async function paidRun(): Promise<{ runId: string; done: string; started: string }> {
    const { runId } = await manual.worker.submit('payer', 'please pay', { runId: `pay-${randomUUID()}` });
    crashAt = { point: 'tool-returned' };
    charges.length = 0;
    const first = await manual.runJob(runId, 1);
    crashAt = undefined;
    charges.length = 0;
    expect(first.failures).toHaveLength(1);
    const rows = (await sql('SELECT tool_call_id, status FROM S.run_tool_calls WHERE run_id = $1 ORDER BY position', [runId])).rows as Array<{ tool_call_id: string; status: string }>;
    expect(rows.map((row) => row.status)).toEqual(['completed', 'started']);
    return { runId, done: rows[0]!.tool_call_id, started: rows[1]!.tool_call_id };
  }

  /** A talk run whose owner died mid-step after its second flush: chunks past the last commit (`input`), a text part open. */
  async function talkRun(): Promise<string> {
    const { runId } = await manual.worker.submit('payer', 'talk to me', { runId: `talk-${randomUUID()}` });
    crashAt = { point: 'chunks-flushed', flush: 2 };
    const first = await manual.runJob(runId, 1);
    crashAt = undefined;
    expect(first.failures).toHaveLength(1);
    return runId;
  }

  /** A run's chunks as stored (SQL: no reader involved), and its last chunk's error. */
  async function storedChunks(runId: string): Promise<{ types: string[]; error: Record<string, unknown> | undefined; seqs: number[] }> {
    const rows = (await sql('SELECT seq::int AS seq, type, chunk FROM S.run_chunks WHERE run_id = $1 ORDER BY seq', [runId])).rows as Array<{ seq: number; type: string; chunk: string }>;
    const last = rows.at(-1);
    const error = last?.type === 'error' ? (JSON.parse(last.chunk) as { payload: { error: Record<string, unknown> } }).payload.error : undefined;
    return { types: rows.map((row) => row.type), error, seqs: rows.map((row) => row.seq) };
  }

  /** What a run's job did after its rows were edited: attempts taken, the run's status and epoch, the tool effects, its end. */
  async function afterEdit(runId: string) {
    const { attempts, failures } = await manual.runJob(runId);
    const run = (await sql('SELECT status, epoch FROM S.runs WHERE id = $1', [runId])).rows[0] as { status: string; epoch: number };
    const { types, error } = await storedChunks(runId);
    return { attempts, failures, status: run.status, epoch: run.epoch, charges: [...charges], last: types.at(-1), error };
  }

  it('huge input (10 MB of text, 100,000 messages) is stored as it came and run: one attempt, the run completes', { timeout: 60_000 }, async () => {
    for (const input of ['x'.repeat(10_000_000), Array.from({ length: 100_000 }, (_, index) => ({ role: 'user' as const, content: `message ${index}` }))]) {
      const { runId } = await manual.worker.submit('payer', input);
      const stored = (await sql("SELECT octet_length(input::text) AS bytes, json_array_length(CASE WHEN json_typeof(input->'input') = 'array' THEN input->'input' ELSE '[]' END) AS messages FROM S.runs WHERE id = $1", [runId])).rows[0];
      expect(Number(stored.bytes)).toBeGreaterThan(typeof input === 'string' ? 10_000_000 : 2_000_000);
      expect(Number(stored.messages)).toBe(typeof input === 'string' ? 0 : 100_000);
      const { attempts } = await manual.runJob(runId);
      expect({ attempts, status: (await sql('SELECT status FROM S.runs WHERE id = $1', [runId])).rows[0].status }).toEqual({ attempts: 1, status: 'completed' });
    }
  });

  it('the unedited run goes on from its commit: the completed charge answered from the ledger, the started one answered ToolOutcomeUnknownError, nothing charged again', async () => {
    const { runId } = await paidRun();
    const after = await afterEdit(runId);
    expect(after).toMatchObject({ attempts: 1, status: 'completed', charges: [], last: 'finish' });
  });

  describe('the tool ledger', () => {
    const edits: Array<[string, (ids: { runId: string; done: string; started: string }) => Promise<unknown>, { field: string; call: 'done' | 'started' }]> = [
      ['an unknown status', ({ runId, done }) => sql("UPDATE S.run_tool_calls SET status = 'done' WHERE run_id = $1 AND tool_call_id = $2", [runId, done]), { field: 'status', call: 'done' }],
      ['a started row of an unknown status', ({ runId, started }) => sql("UPDATE S.run_tool_calls SET status = 'running' WHERE run_id = $1 AND tool_call_id = $2", [runId, started]), { field: 'status', call: 'started' }],
      ['a completed row without its output', ({ runId, done }) => sql('UPDATE S.run_tool_calls SET output = NULL WHERE run_id = $1 AND tool_call_id = $2', [runId, done]), { field: 'output', call: 'done' }],
      ['a failed row without its error', ({ runId, done }) => sql("UPDATE S.run_tool_calls SET status = 'failed', output = NULL WHERE run_id = $1 AND tool_call_id = $2", [runId, done]), { field: 'error', call: 'done' }],
      ['a row of another tool', ({ runId, done }) => sql("UPDATE S.run_tool_calls SET tool_name = 'refund' WHERE run_id = $1 AND tool_call_id = $2", [runId, done]), { field: 'tool_name', call: 'done' }],
      ['a negative epoch', ({ runId, done }) => sql('UPDATE S.run_tool_calls SET epoch = -5 WHERE run_id = $1 AND tool_call_id = $2', [runId, done]), { field: 'epoch', call: 'done' }],
      ['an epoch of a later owner', ({ runId, started }) => sql('UPDATE S.run_tool_calls SET epoch = 99 WHERE run_id = $1 AND tool_call_id = $2', [runId, started]), { field: 'epoch', call: 'started' }],
      ['a deleted row (the call was pinned by the commit)', ({ runId, done }) => sql('DELETE FROM S.run_tool_calls WHERE run_id = $1 AND tool_call_id = $2', [runId, done]), { field: 'tool_call_id', call: 'done' }],
    ];
    for (const [what, edit, expected] of edits) {
      it(`${what}: the run fails at once with MalformedJournalEntryError naming run_tool_calls and ${expected.field}; the tool is not run again`, async () => {
        const ids = await paidRun();
        await edit(ids);
        const after = await afterEdit(ids.runId);
        expect(after).toMatchObject({ attempts: 1, status: 'failed', charges: [], last: 'error' });
        expect(after.error).toMatchObject({ name: 'MalformedJournalEntryError', runId: ids.runId, row: `run_tool_calls[${ids[expected.call]}]`, field: expected.field });
      });
    }

    it('a duplicated tool call id (a database without the primary key): the run fails naming the id; the later row does not win, the tool is not run again', async () => {
      const dupSchema = `${schema}_dup`;
      const dupJournal = new PostgresRunJournal({ connectionString: server.connectionString, schema: dupSchema });
      const dup = manualWorker(dupJournal, [payer], {
        faultPoint: (point) => {
          if (crashAt !== undefined && point === crashAt.point && charges.length === 2) throw new Error('crash');
        },
      });
      await dup.worker.start();
      try {
        const { runId } = await dup.worker.submit('payer', 'please pay', { runId: 'dup-run' });
        crashAt = { point: 'tool-returned' };
        charges.length = 0;
        await dup.runJob(runId, 1);
        crashAt = undefined;
        charges.length = 0;
        await db.query(`ALTER TABLE "${dupSchema}".run_tool_calls DROP CONSTRAINT run_tool_calls_pkey`);
        const done = (await db.query(`SELECT tool_call_id FROM "${dupSchema}".run_tool_calls WHERE run_id = $1 AND status = 'completed'`, [runId])).rows[0].tool_call_id as string;
        await db.query(
          `INSERT INTO "${dupSchema}".run_tool_calls (run_id, tool_call_id, tool_name, args, status, epoch, updated_at)
           SELECT run_id, tool_call_id, tool_name, args, 'pending', epoch, now() FROM "${dupSchema}".run_tool_calls WHERE run_id = $1 AND tool_call_id = $2`,
          [runId, done],
        );
        const { attempts } = await dup.runJob(runId);
        const last = (await db.query(`SELECT chunk FROM "${dupSchema}".run_chunks WHERE run_id = $1 ORDER BY seq DESC LIMIT 1`, [runId])).rows[0].chunk as string;
        expect({ attempts, charges }).toEqual({ attempts: 1, charges: [] });
        expect(JSON.parse(last).payload.error).toMatchObject({ name: 'MalformedJournalEntryError', row: `run_tool_calls[${done}]`, field: 'tool_call_id' });
      } finally {
        await dup.worker.close();
        await dupJournal.close();
        await db.query(`DROP SCHEMA IF EXISTS "${dupSchema}" CASCADE`);
      }
    });
  });

  describe('the last commit', () => {
    const edits: Array<[string, string, string]> = [
      ['an unknown kind', "UPDATE S.run_commits SET kind = 'checkpoint' WHERE run_id = $1", 'kind'],
      ['a negative step', 'UPDATE S.run_commits SET step = -1 WHERE run_id = $1', 'step'],
      ['a negative attempt', 'UPDATE S.run_commits SET attempt = -1 WHERE run_id = $1', 'attempt'],
      ['a seq_end past the run’s chunks', 'UPDATE S.run_commits SET seq_end = 999 WHERE run_id = $1', 'seq_end'],
      ['a negative seq_end', 'UPDATE S.run_commits SET seq_end = -3 WHERE run_id = $1', 'seq_end'],
      ['an epoch of a later owner', 'UPDATE S.run_commits SET epoch = 50 WHERE run_id = $1', 'epoch'],
    ];
    for (const [what, edit, field] of edits) {
      it(`${what}: the run fails at once naming run_commits and ${field}; nothing is charged again`, async () => {
        const { runId } = await paidRun();
        const no = (await sql('SELECT no FROM S.run_commits WHERE run_id = $1', [runId])).rows[0].no as number;
        await sql(edit, [runId]);
        const after = await afterEdit(runId);
        expect(after).toMatchObject({ attempts: 1, status: 'failed', charges: [], last: 'error' });
        expect(after.error).toMatchObject({ name: 'MalformedJournalEntryError', row: `run_commits[${no}]`, field });
      });
    }

    it('a snapshot that is not one (null, a string): RunSnapshotError, the run fails after one attempt (as before)', async () => {
      for (const state of ['null', '"x"']) {
        const { runId } = await paidRun();
        await sql('UPDATE S.run_commits SET state = $2::json WHERE run_id = $1', [runId, state]);
        const after = await afterEdit(runId);
        expect(after).toMatchObject({ attempts: 1, status: 'failed', charges: [], last: 'error', error: { name: 'RunSnapshotError' } });
      }
    });
  });

  describe('the run row', () => {
    it('a stored call that is not one (another build’s input: a string, options null or missing): the run fails at once naming runs.input; no attempt is retried', async () => {
      for (const input of ['"hi"', '{"input": "pay", "options": null}', '{"input": "pay"}', '{"options": {}}', '[1, 2]']) {
        const { runId } = await paidRun();
        await sql('UPDATE S.runs SET input = $2::json WHERE id = $1', [runId, input]);
        const after = await afterEdit(runId);
        expect({ input, ...after, failures: after.failures.length }).toMatchObject({ input, attempts: 1, failures: 0, status: 'failed', charges: [], last: 'error' });
        expect(after.error).toMatchObject({ name: 'MalformedJournalEntryError', row: 'runs', field: 'input' });
      }
    });

    it('an agent id the worker does not run (the row no longer matches its queue): the run fails at once naming runs.agent_id', async () => {
      const { runId } = await paidRun();
      await sql("UPDATE S.runs SET agent_id = 'ghost' WHERE id = $1", [runId]);
      const after = await afterEdit(runId);
      expect(after).toMatchObject({ attempts: 1, status: 'failed', charges: [], last: 'error' });
      expect(after.error).toMatchObject({ name: 'MalformedJournalEntryError', row: 'runs', field: 'agent_id' });
    });

    const refusedAtClaim: Array<[string, string, string]> = [
      ['an unknown status', "UPDATE S.runs SET status = 'paused' WHERE id = $1", 'status'],
      ['a negative epoch', 'UPDATE S.runs SET epoch = -3 WHERE id = $1', 'epoch'],
      ['an epoch no claim can follow (the column’s maximum)', 'UPDATE S.runs SET epoch = 2147483647 WHERE id = $1', 'epoch'],
      ['format 0 (no build wrote it)', 'UPDATE S.runs SET format = 0 WHERE id = $1', 'format'],
      ['a terminal on an open run', "UPDATE S.runs SET terminal = 'finish' WHERE id = $1", 'terminal'],
      ['a last_seq behind its chunks', 'UPDATE S.runs SET last_seq = 3 WHERE id = $1', 'last_seq'],
      ['a last_seq ahead of its chunks', 'UPDATE S.runs SET last_seq = last_seq + 5 WHERE id = $1', 'last_seq'],
    ];
    for (const [what, edit, field] of refusedAtClaim) {
      it(`${what}: refused at the claim naming runs.${field}, the row left as it was, the job not retried; getRun and the readers name it too`, async () => {
        const { runId } = await paidRun();
        await sql(edit, [runId]);
        const before = (await sql('SELECT status, epoch, last_seq::int AS last_seq, format, terminal FROM S.runs WHERE id = $1', [runId])).rows[0];
        const eventsBefore = manual.events.length;
        const after = await afterEdit(runId);
        expect({ attempts: after.attempts, failures: after.failures.length, charges: after.charges }).toEqual({ attempts: 1, failures: 0, charges: [] });
        expect((await sql('SELECT status, epoch, last_seq::int AS last_seq, format, terminal FROM S.runs WHERE id = $1', [runId])).rows[0]).toEqual(before);
        const failed = manual.events.slice(eventsBefore).find((event) => event.type === 'failed' && event.runId === runId) as Extract<RunWorkerEvent, { type: 'failed' }> | undefined;
        expect(failed?.error).toBeInstanceOf(MalformedJournalEntryError);
        expect(failed?.error).toMatchObject({ row: 'runs', field });
        if (field === 'status' || field === 'terminal' || field === 'format' || field === 'epoch') {
          const read = await outcome(journal.getRun(runId));
          if (!(field === 'epoch' && before.epoch > 0)) {
            expect('error' in read && MalformedJournalEntryError.isInstance(read.error) && read.error.field).toBe(field);
            // an operator's reader gets the error; a client's (authorize) the unknown run's 404
            const operator = await journalStreamResponse(journal, runId, { unsafeNoAuthorization: true });
            expect(operator.status).toBe(500);
            expect(await operator.json()).toMatchObject({ error: { name: 'MalformedJournalEntryError' } });
            const client = await journalStreamResponse(journal, runId, { authorize: () => true, request: new Request('http://app/runs') });
            expect(client.status).toBe(404);
          }
        }
      });
    }

    it('a run of a newer format: JournalSchemaError at the claim, epoch unchanged (the attempt fails: a worker of the newer build may take the retry); the give-up leaves the run as it was without failing its dead-letter job', async () => {
      const { runId } = await paidRun();
      const newer = journal.format + 1;
      await sql('UPDATE S.runs SET format = $2 WHERE id = $1', [runId, newer]);
      const epoch = (await sql('SELECT epoch FROM S.runs WHERE id = $1', [runId])).rows[0].epoch as number;
      const { attempts, failures } = await manual.runJob(runId, 2);
      expect(attempts).toBe(2);
      expect(failures.every((failure) => JournalSchemaError.isInstance(failure))).toBe(true);
      expect(await outcome(manual.giveUp(runId))).toEqual({ value: undefined });
      expect((await sql('SELECT status, epoch FROM S.runs WHERE id = $1', [runId])).rows[0]).toEqual({ status: 'running', epoch });
      // what else a newer build's row holds is that build's: a status this build does not know is still the newer format's 409, not a malformed row
      await sql("UPDATE S.runs SET status = 'paused' WHERE id = $1", [runId]);
      expect(await journal.getRun(runId)).toMatchObject({ format: newer, status: 'paused' });
      const claimed = await outcome(journal.claim(runId, 'newer?'));
      expect('error' in claimed && JournalSchemaError.isInstance(claimed.error)).toBe(true);
      expect((await journalStreamResponse(journal, runId, { unsafeNoAuthorization: true })).status).toBe(409);
    });
  });

  describe('signals', () => {
    it('a kind this build does not know: the run fails closed naming run_signals and kind (it was ignored: the run went on as if nothing was asked)', async () => {
      const { runId } = await paidRun();
      await sql("INSERT INTO S.run_signals (run_id, kind, reason, created_at) VALUES ($1, 'pause', NULL, now())", [runId]);
      const id = (await sql('SELECT id::int AS id FROM S.run_signals WHERE run_id = $1', [runId])).rows[0].id as number;
      const after = await afterEdit(runId);
      expect(after).toMatchObject({ attempts: 1, status: 'failed', charges: [], last: 'error' });
      expect(after.error).toMatchObject({ name: 'MalformedJournalEntryError', row: `run_signals[${id}]`, field: 'kind' });
    });

    it('a stop whose reason is any JSON value stops the run with that reason (not a fault)', async () => {
      const { runId } = await paidRun();
      await sql("INSERT INTO S.run_signals (run_id, kind, reason, created_at) VALUES ($1, 'stop', '{\"why\": [1, 2]}', now())", [runId]);
      const after = await afterEdit(runId);
      expect(after).toMatchObject({ attempts: 1, status: 'cancelled', charges: [], last: 'abort' });
    });
  });

  describe('chunk rows', () => {
    const edits: Array<[string, string, string]> = [
      ['not JSON', 'text-start', "chunk = '{not json'"],
      ['a text-start without its payload', 'text-start', 'chunk = \'{"type":"text-start","runId":"x"}\''],
      ['a step-start without its payload', 'step-start', 'chunk = \'{"type":"step-start","runId":"x"}\''],
      ['a type this build does not know', 'text-start', 'type = \'hologram\', chunk = \'{"type":"hologram","runId":"x","payload":{}}\''],
    ];
    for (const [what, type, set] of edits) {
      it(`a takeover meeting ${what} in the open step: the run fails at once with MalformedJournalEntryError naming the seq (every attempt and the give-up failed on it)`, async () => {
        const runId = await talkRun();
        const seq = (await sql('SELECT seq::int AS seq FROM S.run_chunks WHERE run_id = $1 AND type = $2', [runId, type])).rows[0].seq as number;
        await sql(`UPDATE S.run_chunks SET ${set} WHERE run_id = $1 AND seq = $2`, [runId, seq]);
        const after = await afterEdit(runId);
        expect({ attempts: after.attempts, failures: after.failures.length, status: after.status, last: after.last }).toEqual({ attempts: 1, failures: 0, status: 'failed', last: 'error' });
        expect(after.error).toMatchObject({ name: 'MalformedJournalEntryError', runId, seq });
      });
    }
  });

  it('the give-up of a run whose open step holds a chunk it cannot read ends it failed with RunAttemptsExhaustedError, the error alone (its dead-letter job failed on the chunk)', async () => {
    const runId = await talkRun();
    const seq = (await sql("SELECT seq::int AS seq FROM S.run_chunks WHERE run_id = $1 AND type = 'text-start'", [runId])).rows[0].seq as number;
    await sql("UPDATE S.run_chunks SET chunk = '{not json' WHERE run_id = $1 AND seq = $2", [runId, seq]);
    expect(await outcome(manual.giveUp(runId))).toEqual({ value: undefined });
    const { types, error } = await storedChunks(runId);
    expect((await sql('SELECT status FROM S.runs WHERE id = $1', [runId])).rows[0].status).toBe('failed');
    expect(types.at(-1)).toBe('error');
    expect(error).toMatchObject({ name: 'RunAttemptsExhaustedError', runId });
  });

  describe('seq gaps', () => {
    it('a reader of a run with a missing row gets MalformedJournalEntryError naming the seq, live or not (it queried the database in a loop for ever)', { timeout: 20_000 }, async () => {
      const { runId } = await paidRun();
      await afterEdit(runId);
      await sql('DELETE FROM S.run_chunks WHERE run_id = $1 AND seq = 3', [runId]);
      for (const live of [false, true]) {
        const read = await outcome(lastValueFrom(journal.read$(runId, { live }).pipe(toArray())));
        expect('error' in read && MalformedJournalEntryError.isInstance(read.error) && read.error.seq, `live: ${live}`).toBe(3);
      }
      const response = await journalStreamResponse(journal, runId, { unsafeNoAuthorization: true });
      expect(await response.text()).toMatch(/event: error[\s\S]*MalformedJournalEntryError/);
    });

  });
});
