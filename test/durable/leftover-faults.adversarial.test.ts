/**
 * Faults left in the durable layer after the last two reviews, each shown first by a failing test
 * (in memory and on PostgreSQL wherever the journal is involved), then fixed:
 *
 * 1. `__proto__` keys in a submitted input (own keys, as `JSON.parse` makes them: in a part's
 *    `providerOptions`, on a message) were dropped when the input was stored (the codec's walk
 *    assigned keys): the run got other input than submitted. Now stored as given, and the run —
 *    and a second worker taking it over mid-step — gets them; nothing is polluted.
 * 2. Option values only the run checked (`maxSteps: 0`, an unknown `toolChoice`, a CR/LF header,
 *    `memory` for an agent without memory, a `runId` with control characters, an empty input) were
 *    stored and failed the run after one attempt: now the run's own check refuses them at submit
 *    (an option error, `InvalidMessageError` for an empty input); nothing stored, no job.
 * 3. `messageId` took any non-empty string (1 MB, control characters, NUL, lone surrogates): now
 *    bounded as a run id is, an option error naming `options.messageId`; a stored call of another
 *    build with such a message id fails the run at its claim (`runs.input`), its `start` carrying
 *    the run's own message id.
 * 4. `listRuns` served run rows unchecked (an unknown status, a negative epoch, format 0…): now
 *    each row is checked as `getRun` and the claim check it (`MalformedJournalEntryError { row, field }`).
 * 5. A bounded read (`live: false`, or an ended run) whose last chunk rows were gone completed
 *    short, as if the run ended there — also when the run was erased or purged between two pages.
 *    Now `MalformedJournalEntryError` naming the first missing seq, or `RunNotFoundError`
 *    (`reason: 'expired'` after a purge).
 * 6. `PostgresRunJournalOptions.retry` was accepted and ignored: now a `TypeError` saying why.
 *
 * Tried as someone who wants it to fail, where these changes touch: a second worker's takeover
 * mid-step (after the model commit) — the input's `__proto__` keys, the message id and the options
 * hold; and a database error at each write of a submit — `createRun` failing or its answer lost,
 * the queue, the job failing or its answer lost. That one was a fault too:
 * 7. the submit rejected on the first blip, and a blip after `createRun` left a run stored without
 *    its job (`queued` for ever, the thread's `activeRun`). Each write is now tried again through
 *    the infrastructure's failures for up to 10 s: one run, one job, the run completes.
 * 8. the tool ledger dropped own `__proto__` keys of a tool's result (and arguments, error) as the
 *    input's were: a call answered from it after a takeover gave the next step other data than the
 *    first owner's run had. Now kept as the tool returned it.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, InvalidMessageError } from 'rxagent';
import {
  InMemoryRunJournal,
  MalformedJournalEntryError,
  RunNotFoundError,
  journalStreamResponse,
  type RunJournal,
} from 'rxagent/durable';
import { StorageError } from 'rxagent/memory';
import { PostgresRunJournal } from 'rxagent/storage/postgres';
import { scriptedModel } from 'rxagent/testing';
import { isOptionError } from '../../src/contract/option-error.js';
import { commit, delta, finish, start } from '../storage/journal-suite.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { manualWorker, outcome, type BossFaults } from './fixtures/manual-worker.js';

/** `journal` with its `createRun` replaced (every other method the journal's own). */
function withCreateRun(journal: RunJournal, createRun: RunJournal['createRun']): RunJournal {
  return new Proxy(journal, {
    get(target, key) {
      if (key === 'createRun') return createRun;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** What a cut connection throws through a store: a `StorageError` around the driver's `ECONNRESET`. */
const connectionReset = (operation: 'createRun' | 'send' = 'createRun'): Error =>
  new StorageError({ operation: operation === 'send' ? 'append' : 'createRun', cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) });

/** A fault that throws the first `times` times it is called. */
const failing = (times: number, error: () => Error = connectionReset) => {
  let left = times;
  return (): void => {
    if (left-- > 0) throw error();
  };
};

const errorOf = (settled: { value: unknown } | { error: unknown }): unknown => ('error' in settled ? settled.error : undefined);

// ─── the journals: in memory, and PostgreSQL (its own schema on DATABASE_URL's server) ───────────

let server: TestPostgres;
let db: pg.Pool;
const schema = `rxagent_leftover_${randomUUID().slice(0, 8)}`;
const opened: PostgresRunJournal[] = [];

beforeAll(async () => {
  server = await startTestPostgres();
  db = new pg.Pool({ connectionString: server.connectionString, max: 2 });
}, 60_000);

afterAll(async () => {
  await Promise.all(opened.map((journal) => journal.close()));
  await db?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
  await db?.end();
  await server?.stop();
}, 60_000);

const journals: Record<string, (options?: { pageSize?: number }) => RunJournal> = {
  'in memory': (options = {}) => new InMemoryRunJournal(options),
  PostgreSQL: (options = {}) => {
    const journal = new PostgresRunJournal({ connectionString: server.connectionString, schema, ...options });
    opened.push(journal);
    return journal;
  },
};

/** What the journal stored for a run: its input as a worker's claim gets it (the claim is the test's: the run is not run after). */
async function storedInput(journal: RunJournal, runId: string): Promise<{ input: unknown; options: Record<string, unknown> }> {
  const claim = await journal.claim(runId, 'inspector');
  return claim.input as unknown as { input: unknown; options: Record<string, unknown> };
}

const talker = (id = 'support', text = 'ok') => {
  const model = scriptedModel({ rules: [], fallback: { text } });
  return { agent: new Agent({ id, model }), model };
};

for (const [kind, journalOf] of Object.entries(journals)) {
  describe(`${kind}`, () => {
    describe('1. __proto__ keys in a submitted input', () => {
      it('a message part, its providerOptions and the message with own __proto__ keys (as JSON.parse makes them) are stored as given, and the run gets them', async () => {
        const journal = journalOf();
        const { agent, model } = talker();
        const { worker, runJob } = manualWorker(journal, [agent]);
        await worker.start();
        const text =
          '[{"role":"user","__proto__":{"polluted":1},"content":[{"type":"text","text":"hi","providerOptions":{"__proto__":{"x":1},"acme":{"__proto__":{"y":2}}}}]}]';
        const input = JSON.parse(text) as never;
        const { runId } = await worker.submit('support', input, { runId: `proto-${randomUUID()}`, providerOptions: JSON.parse('{"__proto__":{"z":3}}') as never });
        expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
        const { attempts } = await runJob(runId);
        expect(attempts).toBe(1);
        expect((await journal.getRun(runId))?.status).toBe('completed');
        // the model was called with the part's providerOptions as given
        const prompt = JSON.stringify(model.calls[0]?.prompt);
        expect(prompt).toContain('"__proto__":{"x":1}');
        expect(JSON.stringify(model.calls[0]?.providerOptions)).toContain('"__proto__":{"z":3}');
      });

      it('what the journal stores is the input as given: every own __proto__ key, at any depth', async () => {
        const journal = journalOf();
        const { agent } = talker();
        const { worker } = manualWorker(journal, [agent]);
        await worker.start();
        const text = '[{"role":"user","__proto__":{"polluted":1},"content":[{"type":"text","text":"hi","providerOptions":{"__proto__":{"x":1},"acme":{"__proto__":{"y":[{"__proto__":null}]}}}}]}]';
        const { runId } = await worker.submit('support', JSON.parse(text) as never, { runId: `proto-${randomUUID()}` });
        const stored = await storedInput(journal, runId);
        expect(JSON.stringify(stored.input)).toBe(text);
        expect(Object.hasOwn((stored.input as Array<Record<string, unknown>>)[0] as object, '__proto__')).toBe(true);
      });
    });

    describe('2. options only the run checked', () => {
      /** Submissions the run refuses: each must be refused at submit, as the run's own option error. */
      const refusedByTheRun: Array<[string, unknown, Record<string, unknown>, RegExp]> = [
        ['maxSteps 0', 'hi', { maxSteps: 0 }, /options\.maxSteps must be a whole number ≥ 1/],
        ['maxSteps "3"', 'hi', { maxSteps: '3' }, /options\.maxSteps/],
        ['maxSteps 1.5', 'hi', { maxSteps: 1.5 }, /options\.maxSteps/],
        ['maxProcessorRetries -1', 'hi', { maxProcessorRetries: -1 }, /options\.maxProcessorRetries/],
        ['toolChoice "always"', 'hi', { toolChoice: 'always' }, /options\.toolChoice/],
        ['toolChoice { type: "tool" } without a name', 'hi', { toolChoice: { type: 'tool' } }, /options\.toolChoice\.toolName/],
        ['providerOptions a string', 'hi', { providerOptions: 'x' }, /options\.providerOptions/],
        ['modelSettings an array', 'hi', { modelSettings: [] }, /options\.modelSettings/],
        ['modelSettings.temperature a string', 'hi', { modelSettings: { temperature: 'hot' } }, /options\.modelSettings\.temperature/],
        ['a header with CR/LF', 'hi', { modelSettings: { headers: { 'x-a': 'b\r\nx-injected: 1' } } }, /options\.modelSettings\.headers/],
        ['activeTools a string', 'hi', { activeTools: 'weather' }, /options\.activeTools/],
        ['instructions a number', 'hi', { instructions: 42 }, /options\.instructions/],
        ['memory without a resource', 'hi', { memory: { thread: 't1' } }, /options\.memory/],
        ['memory with an unknown key', 'hi', { memory: { thread: 't1', resource: 'u1', readonly: true } }, /options\.memory\.readonly/],
        ['a runId with a line break', 'hi', { runId: 'run\nx-injected: 1' }, /options\.runId/],
        ['a runId with a tab', 'hi', { runId: 'run\tone' }, /options\.runId/],
      ];

      it.each(refusedByTheRun)('%s is the run’s own option error at submit; nothing stored, no job', async (_what, input, options, message) => {
        const journal = journalOf();
        const { agent } = talker();
        const { worker, sent } = manualWorker(journal, [agent]);
        await worker.start();
        const runId = typeof options['runId'] === 'string' ? (options['runId'] as string) : `bad-${randomUUID()}`;
        const refused = errorOf(await outcome(worker.submit('support', input as never, { runId, ...options } as never)));
        expect(refused).toBeInstanceOf(TypeError);
        expect(isOptionError(refused), String(refused)).toBe(true);
        expect((refused as Error).message).toMatch(message);
        expect(await journal.getRun(runId)).toBeNull();
        expect(sent).toEqual([]);
        await worker.close();
      });

      it('an empty input is the run’s InvalidMessageError at submit; nothing stored, no job', async () => {
        const journal = journalOf();
        const { agent } = talker();
        const { worker, sent } = manualWorker(journal, [agent]);
        await worker.start();
        const runId = `bad-${randomUUID()}`;
        const refused = errorOf(await outcome(worker.submit('support', [] as never, { runId })));
        expect(InvalidMessageError.isInstance(refused) && (refused as Error).message).toMatch(/empty/);
        expect({ run: await journal.getRun(runId), sent }).toEqual({ run: null, sent: [] });
        await worker.close();
      });

      it('memory options for an agent without memory are refused at submit (the run refused them after one attempt)', async () => {
        const journal = journalOf();
        const { agent } = talker();
        const { worker, sent } = manualWorker(journal, [agent]);
        await worker.start();
        const runId = `bad-${randomUUID()}`;
        const refused = errorOf(await outcome(worker.submit('support', 'hi', { runId, memory: { thread: 't1', resource: 'u1' } })));
        expect(isOptionError(refused) && (refused as Error).message).toMatch(/options\.memory is set but agent "support" has no memory/);
        expect({ run: await journal.getRun(runId), sent }).toEqual({ run: null, sent: [] });
        await worker.close();
      });

      it('valid options still run as before (the check refuses nothing the run takes)', async () => {
        const journal = journalOf();
        const { agent } = talker();
        const { worker, runJob } = manualWorker(journal, [agent]);
        await worker.start();
        const { runId } = await worker.submit('support', [{ role: 'user', content: 'hi' }], {
          runId: `ok-${randomUUID()}`,
          maxSteps: 2,
          maxProcessorRetries: 0,
          toolChoice: 'auto',
          activeTools: [],
          modelSettings: { temperature: 0.2, headers: { 'x-a': 'b' } },
          providerOptions: { acme: { user: 'u' } },
          instructions: 'Be brief.',
          messageId: 'm-1',
          requestContext: { tenant: 'acme' },
        });
        expect((await runJob(runId)).attempts).toBe(1);
        expect((await journal.getRun(runId))?.status).toBe('completed');
        await worker.close();
      });
    });

    describe('3. messageId', () => {
      const badIds: Array<[string, unknown, RegExp]> = [
        ['1 MB', 'm'.repeat(1 << 20), /at most 256/],
        ['257 UTF-16 units', 'm'.repeat(257), /at most 256/],
        ['a line break', 'm\nx-injected: 1', /control characters/],
        ['a tab', 'm\t1', /control characters/],
        ['DEL', 'm\u007f', /control characters/],
        ['NUL', 'm\u0000', /NUL/],
        ['a lone surrogate', 'm\ud800', /lone surrogate/],
        ['empty', '', /empty/],
        ['a number', 42, /string/],
        ['null', null, /string|null/],
      ];
      it.each(badIds)('a messageId with %s is an option error naming options.messageId at submit; nothing stored, no job', async (_what, messageId, message) => {
        const journal = journalOf();
        const { agent } = talker();
        const { worker, sent } = manualWorker(journal, [agent]);
        await worker.start();
        const runId = `bad-${randomUUID()}`;
        const refused = errorOf(await outcome(worker.submit('support', 'hi', { runId, messageId } as never)));
        expect(refused).toBeInstanceOf(TypeError);
        expect((refused as Error).message).toMatch(/options\.messageId/);
        expect((refused as Error).message).toMatch(message);
        expect((refused as Error).message.length).toBeLessThan(400);
        expect({ run: await journal.getRun(runId), sent }).toEqual({ run: null, sent: [] });
        await worker.close();
      });

      it('a stored call whose messageId submit would refuse (another build’s row, an edit): the claim fails the run at once naming runs.input (its start with the run’s own message id); the model is never called', async () => {
        const journal = journalOf();
        const { agent, model } = talker();
        const { worker, runJob, sent } = manualWorker(journal, [agent]);
        await worker.start();
        for (const messageId of ['m\nx-injected: 1', 'm'.repeat(300), '']) {
          const runId = `stored-${randomUUID()}`;
          await journal.createRun({ runId, agentId: 'support', input: { input: 'hi', options: { messageId } } });
          sent.push({ queue: 'rxagent.runs.support', data: { runId }, id: runId });
          expect((await runJob(runId)).attempts).toBe(1);
          const entries = await lastValueFrom(journal.read$(runId, { live: false }).pipe(toArray()));
          const last = entries.at(-1)?.chunk as { type: string; payload?: { error?: Record<string, unknown> } } | undefined;
          expect({ status: (await journal.getRun(runId))?.status, types: entries.map((entry) => entry.chunk.type) }).toEqual({ status: 'failed', types: ['start', 'error'] });
          // the start carries the run's own message id, never the stored one
          expect(entries[0]?.chunk).toMatchObject({ payload: { messageId: `msg-${runId}` } });
          expect(last?.payload?.error).toMatchObject({ name: 'MalformedJournalEntryError', row: 'runs', field: 'input' });
          expect(String(last?.payload?.error?.['message'])).toMatch(/options\.messageId/);
        }
        expect(model.calls).toHaveLength(0);
        await worker.close();
      });

      it('ids a run id may be are message ids too (256 units, emoji, spaces, __proto__); the run starts with it', async () => {
        const journal = journalOf();
        const { agent } = talker();
        const { worker, runJob } = manualWorker(journal, [agent]);
        await worker.start();
        for (const messageId of ['m'.repeat(256), 'msg-🚀-名前', 'a b', '__proto__']) {
          const { runId } = await worker.submit('support', 'hi', { runId: `ok-${randomUUID()}`, messageId });
          await runJob(runId);
          const [first] = await lastValueFrom(journal.read$(runId, { live: false }).pipe(toArray()));
          expect(first?.chunk).toMatchObject({ type: 'start', payload: { messageId } });
        }
        await worker.close();
      });
    });

    describe('a second worker’s takeover mid-step', () => {
      it('the run’s input with __proto__ keys, its message id and its options reach the model of the worker that takes it over (after the model commit, before the tool ran)', { timeout: 30_000 }, async () => {
        const journal = journalOf();
        const lookups: string[] = [];
        const modelOf = () =>
          scriptedModel({
            rules: [
              { match: ({ toolResults }) => toolResults.length > 0, reply: { text: 'Found it.' } },
              { match: /look/, reply: { text: 'Looking.', toolCalls: [{ toolName: 'lookup', args: { q: 'x' } }] } },
            ],
          });
        const agentOf = (model: ReturnType<typeof modelOf>) =>
          new Agent({
            id: 'looker',
            model,
            tools: {
              lookup: {
                description: 'Looks something up (idempotent)',
                inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
                execute: async ({ q }: { q: string }) => {
                  lookups.push(q);
                  return { found: q };
                },
              },
            },
          });
        const [firstModel, secondModel] = [modelOf(), modelOf()];
        let crashed = false;
        const first = manualWorker(journal, [agentOf(firstModel)], {
          workerId: 'worker-a',
          faultPoint: (point) => {
            if (point === 'model-committed' && !crashed) {
              crashed = true;
              throw new Error('worker-a dies after the model commit');
            }
          },
        });
        const second = manualWorker(journal, [agentOf(secondModel)], { workerId: 'worker-b' });
        await first.worker.start();
        await second.worker.start();
        const text = '[{"role":"user","content":[{"type":"text","text":"please look","providerOptions":{"__proto__":{"x":1},"acme":{"__proto__":{"y":2}}}}]}]';
        const { runId } = await first.worker.submit('looker', JSON.parse(text) as never, {
          runId: `takeover-${randomUUID()}`,
          messageId: 'm-given',
          providerOptions: JSON.parse('{"acme":{"__proto__":{"z":3}}}') as never,
          maxSteps: 3,
        });
        expect((await first.runJob(runId, 1)).failures).toHaveLength(1);
        // worker-b runs the job's retry: a takeover from the model commit
        const job = first.sent.find((each) => each.data.runId === runId)!;
        await second.handlers.get(job.queue)!([{ id: job.id, data: job.data, signal: new AbortController().signal, retryCount: 1 }]);
        const run = await journal.getRun(runId);
        expect({ status: run?.status, owner: run?.owner, epoch: run?.epoch }).toEqual({ status: 'completed', owner: 'worker-b', epoch: 2 });
        const entries = await lastValueFrom(journal.read$(runId, { live: false }).pipe(toArray()));
        expect(entries.filter((entry) => entry.chunk.type === 'start').map((entry) => (entry.chunk as unknown as { payload: { messageId: string } }).payload.messageId)).toEqual(['m-given']);
        expect(lookups).toEqual(['x']);
        // worker-b's model call (the step after the tool) was made of the stored input and options, __proto__ keys included
        expect({ first: firstModel.calls.length, second: secondModel.calls.length }).toEqual({ first: 1, second: 1 });
        for (const call of [...firstModel.calls, ...secondModel.calls]) {
          expect(JSON.stringify(call.prompt)).toContain('"providerOptions":{"__proto__":{"x":1},"acme":{"__proto__":{"y":2}}}');
          expect(JSON.stringify(call.providerOptions)).toContain('"acme":{"__proto__":{"z":3}}');
        }
        expect(({} as { x?: unknown; z?: unknown }).x ?? ({} as { z?: unknown }).z).toBeUndefined();
        await Promise.all([first.worker.close(), second.worker.close()]);
      });
    });

    describe('a tool result answered from the ledger after a takeover', () => {
      it('a completed call’s result with own __proto__ keys reaches the next step of the worker that took over as the tool returned it (it was dropped in the ledger)', { timeout: 30_000 }, async () => {
        const journal = journalOf();
        const executed: string[] = [];
        const modelOf = () =>
          scriptedModel({
            rules: [
              { match: ({ toolResults }) => toolResults.length > 0, reply: { text: 'Found them.' } },
              { match: /look/, reply: { text: 'Looking.', toolCalls: [{ toolName: 'lookup', args: { q: 'a' } }, { toolName: 'lookup', args: { q: 'b' } }] } },
            ],
          });
        const agentOf = (model: ReturnType<typeof modelOf>) =>
          new Agent({
            id: 'looker',
            model,
            toolConcurrency: 1,
            tools: {
              lookup: {
                description: 'Looks something up',
                inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
                idempotent: true,
                execute: async ({ q }: { q: string }) => {
                  executed.push(q);
                  return JSON.parse(`{"q":"${q}","__proto__":{"hidden":"${q}"}}`) as unknown;
                },
              },
            },
          });
        const [firstModel, secondModel] = [modelOf(), modelOf()];
        let started = 0;
        const first = manualWorker(journal, [agentOf(firstModel)], {
          workerId: 'worker-a',
          faultPoint: (point) => {
            // the second call starts: the first one's result is in the ledger, completed
            if (point === 'tool-started' && ++started === 2) throw new Error('worker-a dies while the second call runs');
          },
        });
        const second = manualWorker(journal, [agentOf(secondModel)], { workerId: 'worker-b' });
        await first.worker.start();
        await second.worker.start();
        const { runId } = await first.worker.submit('looker', 'please look', { runId: `ledger-${randomUUID()}` });
        expect((await first.runJob(runId, 1)).failures).toHaveLength(1);
        const job = first.sent.find((each) => each.data.runId === runId)!;
        await second.handlers.get(job.queue)!([{ id: job.id, data: job.data, signal: new AbortController().signal, retryCount: 1 }]);
        expect((await journal.getRun(runId))?.status).toBe('completed');
        // worker-a ran the first call (completed in the ledger) and died before running the second:
        // worker-b answered the first from the ledger and ran the second
        expect(executed).toEqual(['a', 'b']);
        const prompt = JSON.stringify(secondModel.calls.at(-1)?.prompt);
        expect(prompt).toContain('"__proto__":{"hidden":"a"}');
        expect(prompt).toContain('"__proto__":{"hidden":"b"}');
        expect(({} as { hidden?: unknown }).hidden).toBeUndefined();
        await Promise.all([first.worker.close(), second.worker.close()]);
      });
    });

    describe('a database error at each write of a submit (createRun, the queue, the job)', () => {
      /** The run submitted through the faults, then run: one row, one job, completed. */
      async function submitThrough(options: { createRun?: { before?: () => void; after?: () => void }; boss?: BossFaults }) {
        const base = journalOf();
        const journal = withCreateRun(base, async (run) => {
          options.createRun?.before?.();
          const created = await base.createRun(run);
          options.createRun?.after?.();
          return created;
        });
        const { agent } = talker();
        const { worker, sent, runJob } = manualWorker(journal, [agent], {}, options.boss);
        const runId = `blip-${randomUUID()}`;
        const submitted = await outcome(worker.submit('support', 'hi', { runId }));
        return { base, worker, sent, runJob, runId, submitted };
      }

      const blips: Array<[string, Parameters<typeof submitThrough>[0]]> = [
        ['createRun fails once (nothing written)', { createRun: { before: failing(1) } }],
        ['createRun’s answer is lost once (the row written)', { createRun: { after: failing(1) } }],
        ['createRun fails three times in a row', { createRun: { before: failing(3) } }],
        ['createQueue fails once', { boss: { createQueue: { before: failing(1) } } }],
        ['send fails once (no job written)', { boss: { send: { before: failing(1) } } }],
        ['send’s answer is lost once (the job written)', { boss: { send: { after: failing(1) } } }],
      ];
      it.each(blips)('%s: a blip, the submit goes on; one run, one job, and the run completes (the submit rejected and left a run without its job)', { timeout: 30_000 }, async (_what, faults) => {
        const { base, worker, sent, runJob, runId, submitted } = await submitThrough(faults);
        expect(submitted).toEqual({ value: { runId, created: true } });
        expect(sent.filter((job) => job.data.runId === runId)).toHaveLength(1);
        await worker.start();
        expect((await runJob(runId)).attempts).toBe(1);
        expect((await base.getRun(runId))?.status).toBe('completed');
        await worker.close();
      });

      it('a failure that is not the infrastructure’s (a constraint, bad input) is not retried: the submit rejects with it at once', async () => {
        let tries = 0;
        const constraint = () => Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' });
        const { worker, sent, runId, submitted, base } = await submitThrough({
          createRun: {
            before: () => {
              tries++;
              throw constraint();
            },
          },
        });
        expect(errorOf(submitted)).toMatchObject({ code: '23505' });
        expect({ tries, sent, run: await base.getRun(runId) }).toEqual({ tries: 1, sent: [], run: null });
        await worker.close();
      });
    });

    describe('5. a bounded read of a run whose last chunks are gone', () => {
      /** An ended run of `count` chunks (start, deltas, finish). */
      async function endedRun(journal: RunJournal, count = 6): Promise<string> {
        const runId = `tail-${randomUUID()}`;
        await journal.createRun({ runId, agentId: 'support', input: null });
        const { lease } = await journal.claim(runId, 'w');
        await journal.append(lease, [start(runId)], commit('input'));
        await journal.append(lease, Array.from({ length: count - 2 }, (_, index) => delta(runId, `d${index}`)));
        await journal.append(lease, [finish(runId)], commit('final', null));
        return runId;
      }

      it('the run erased while a bounded read pages it: RunNotFoundError, not a short read that completes', async () => {
        const journal = journalOf({ pageSize: 2 });
        const runId = await endedRun(journal);
        let pages = 0;
        const ready = async (): Promise<void> => {
          if (++pages === 1) await journal.deleteRun(runId);
        };
        const read = await outcome(lastValueFrom(journal.read$(runId, { live: false, ready }).pipe(toArray())));
        expect(RunNotFoundError.isInstance(errorOf(read)), JSON.stringify('value' in read ? read.value.length : String(errorOf(read)))).toBe(true);
      });

      it('the run’s chunks purged while a bounded read pages it: RunNotFoundError { reason: expired } (410), not a short read', async () => {
        const retained = kind === 'in memory' ? new InMemoryRunJournal({ pageSize: 2, chunkRetentionSeconds: 0 }) : new PostgresRunJournal({ connectionString: server.connectionString, schema: `${schema}_purge`, pageSize: 2, chunkRetentionSeconds: 0 });
        if (retained instanceof PostgresRunJournal) opened.push(retained);
        const runId = await endedRun(retained);
        let pages = 0;
        const ready = async (): Promise<void> => {
          if (++pages === 1) while (!(await retained.purgeExpired()).done);
        };
        for (const live of [false, true]) {
          pages = 0;
          const read = await outcome(lastValueFrom(retained.read$(runId, { live, ready }).pipe(toArray())));
          const error = errorOf(read);
          if (live) {
            // purged before this read began: the run answers 410 at once
            expect(RunNotFoundError.isInstance(error) && error.reason).toBe('expired');
          } else {
            expect(RunNotFoundError.isInstance(error) && error.reason, JSON.stringify('value' in read ? read.value.length : String(error))).toBe('expired');
          }
        }
      });
    });
  });
}

describe('PostgreSQL rows edited with SQL', () => {
  const rowsSchema = `${schema}_rows`;
  let journal: PostgresRunJournal;
  const rowsSql = (text: string, values: unknown[] = []) => db.query(text.replaceAll('S.', `"${rowsSchema}".`), values);

  beforeAll(() => {
    journal = new PostgresRunJournal({ connectionString: server.connectionString, schema: rowsSchema, pageSize: 2 });
    opened.push(journal);
  });
  afterAll(async () => {
    await db?.query(`DROP SCHEMA IF EXISTS "${rowsSchema}" CASCADE`).catch(() => undefined);
    await db?.query(`DROP SCHEMA IF EXISTS "${schema}_purge" CASCADE`).catch(() => undefined);
  });

  /** A run with `count` chunks, ended (finish) or still open. */
  async function runWith(count: number, ended: boolean): Promise<string> {
    const runId = `rows-${randomUUID()}`;
    await journal.createRun({ runId, agentId: 'support', input: null });
    const { lease } = await journal.claim(runId, 'w');
    await journal.append(lease, [start(runId)], commit('input'));
    await journal.append(lease, Array.from({ length: count - (ended ? 2 : 1) }, (_, index) => delta(runId, `d${index}`)));
    if (ended) await journal.append(lease, [finish(runId)], commit('final', null));
    return runId;
  }

  describe('4. listRuns', () => {
    const edits: Array<[string, string, string]> = [
      ['an unknown status', "UPDATE S.runs SET status = 'paused' WHERE id = $1", 'status'],
      ['a negative epoch', 'UPDATE S.runs SET epoch = -3 WHERE id = $1', 'epoch'],
      ['format 0', 'UPDATE S.runs SET format = 0 WHERE id = $1', 'format'],
      ['a terminal on an open run', "UPDATE S.runs SET terminal = 'finish' WHERE id = $1", 'terminal'],
      ['a terminal of another status', "UPDATE S.runs SET terminal = 'abort' WHERE id = $1 AND status = 'completed'", 'terminal'],
      ['a negative last_seq', 'UPDATE S.runs SET last_seq = -1 WHERE id = $1', 'last_seq'],
    ];
    it.each(edits)('a run row with %s: listRuns is a MalformedJournalEntryError naming row and field, as getRun and the claim are (it was listed as it was)', async (_what, edit, field) => {
      const runId = await runWith(3, edit.includes("'completed'"));
      await rowsSql(edit, [runId]);
      for (const read of [(): Promise<unknown> => journal.listRuns({ limit: 1000 }), (): Promise<unknown> => journal.getRun(runId)]) {
        const error = errorOf(await outcome(read()));
        expect(MalformedJournalEntryError.isInstance(error) && { runId: error.runId, row: error.row, field: error.field }).toEqual({ runId, row: 'runs', field });
      }
      await rowsSql('DELETE FROM S.runs WHERE id = $1', [runId]);
      expect((await journal.listRuns({ limit: 1000 })).some((run) => run.runId === runId)).toBe(false);
    });

    it('a run of a newer format is listed as getRun gives it (its readers answer JournalSchemaError)', async () => {
      const runId = await runWith(3, true);
      await rowsSql('UPDATE S.runs SET format = 99 WHERE id = $1', [runId]);
      const listed = (await journal.listRuns({ limit: 1000 })).find((run) => run.runId === runId);
      expect(listed).toEqual(await journal.getRun(runId));
      expect(listed?.format).toBe(99);
      await rowsSql('DELETE FROM S.runs WHERE id = $1', [runId]);
    });
  });

  describe('5. a bounded read of a run whose last chunk rows are gone', () => {
    it('an ended run: live or not, from any cursor before the gap, the read ends with MalformedJournalEntryError naming the first missing seq (it completed short, silently)', async () => {
      const runId = await runWith(7, true);
      await rowsSql('DELETE FROM S.run_chunks WHERE run_id = $1 AND seq >= 6', [runId]);
      for (const options of [{ live: false }, { live: true }, { live: false, after: 3 }, { live: false, after: 5 }, { live: false, maxPageBytes: 10 }]) {
        const read = await outcome(lastValueFrom(journal.read$(runId, options).pipe(toArray())));
        const error = errorOf(read);
        expect(MalformedJournalEntryError.isInstance(error) && { seq: error.seq, runId: error.runId }, JSON.stringify(options)).toEqual({ seq: 6, runId });
        expect((error as Error).message).toMatch(/missing/);
      }
      const response = await journalStreamResponse(journal, runId, { unsafeNoAuthorization: true });
      expect(await response.text()).toMatch(/event: error[\s\S]*MalformedJournalEntryError/);
    });

    it('an open run read with live: false: the same error (its last rows were removed under its owner)', async () => {
      const runId = await runWith(5, false);
      await rowsSql('DELETE FROM S.run_chunks WHERE run_id = $1 AND seq = 5', [runId]);
      const error = errorOf(await outcome(lastValueFrom(journal.read$(runId, { live: false }).pipe(toArray()))));
      expect(MalformedJournalEntryError.isInstance(error) && error.seq).toBe(5);
    });

    it('all chunk rows of an ended run gone (not expired): the error names seq 1', async () => {
      const runId = await runWith(4, true);
      await rowsSql('DELETE FROM S.run_chunks WHERE run_id = $1', [runId]);
      const error = errorOf(await outcome(lastValueFrom(journal.read$(runId, { live: false }).pipe(toArray()))));
      expect(MalformedJournalEntryError.isInstance(error) && error.seq).toBe(1);
    });
  });
});

describe('6. PostgresRunJournalOptions.retry', () => {
  it('is a TypeError naming it and saying why (the journal does not retry: it was accepted and ignored); undefined is accepted', () => {
    expect(() => new PostgresRunJournal({ connectionString: 'postgres://nobody@127.0.0.1:1/none', retry: { deadlineMs: 30_000 } })).toThrow(
      expect.objectContaining({ name: 'TypeError', message: expect.stringMatching(/PostgresRunJournal: options\.retry/) }),
    );
    expect(() => new PostgresRunJournal({ connectionString: 'postgres://nobody@127.0.0.1:1/none', retry: {} })).toThrow(TypeError);
    const journal = new PostgresRunJournal({ connectionString: 'postgres://nobody@127.0.0.1:1/none', retry: undefined });
    return journal.close();
  });
});
