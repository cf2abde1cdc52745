/**
 * Infrastructure failures fail the attempt, not the run (issue 32 §1): a storage error of the
 * ledger, of memory's fenced save, of a checkpoint, of the claim or of a signal read — each one a
 * `StorageError` around the driver error the real database gives for that blip — stops the
 * attempt without a terminal chunk; the same worker claims the run again after a short backoff and
 * it continues from its last commit. `retryLimit: 0`: an attempt spent on a blip would give the run
 * up (`failed`), so each case also shows that outages do not burn attempts.
 *
 * The faults are injected by wrapping the real `PostgresRunJournal` and `PostgresStorage` (on the
 * test PostgreSQL); connections really cut are in outage.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { defer, filter, firstValueFrom, throwError, timer, mergeMap, type Observable } from 'rxjs';
import { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRunWorker, type RunWorker, type RunWorkerEvent } from 'rxagent/durable';
import { StorageError, type MemoryStorage, type StorageOperation } from 'rxagent/memory';
import { PostgresRunJournal, PostgresStorage } from 'rxagent/storage/postgres';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { waitFor } from '../support/wait-for.js';
import { effectiveChunks, journalEntries, memoryShape, normalise } from './fixtures/matrix-checks.js';
import { effects, lookAgent, perRunIds } from './fixtures/look-agent.js';

const suffix = randomUUID().slice(0, 6);
const schema = `rxagent_infra_${suffix}`;
const bossSchema = `pgboss_infra_${suffix}`;
let server: TestPostgres;
let journal: PostgresRunJournal;
let storage: PostgresStorage;
let boss: PgBoss;
const workers: RunWorker[] = [];

/** What the next matching call fails with (each fault fires once, for the run it names). */
interface Armed {
  runId?: string;
  claim?: number;
  toolCall?: 'pending' | 'started' | 'completed' | 'failed';
  commit?: 'input' | 'model' | 'step' | 'rejected' | 'final';
  save?: boolean;
  signals?: number;
  fired: string[];
}
let armed: Armed = { fired: [] };

/** The error the real store throws for a blip: a `StorageError` around the driver's error. */
const blip = (operation: StorageOperation, code: string, message: string): StorageError =>
  new StorageError({ operation, cause: Object.assign(new Error(message), { code }) });

/** `target` with some methods replaced (the others bound to it: the real classes keep private fields). */
function wrap<T extends object>(target: T, overrides: Partial<Record<keyof T, unknown>>): T {
  return new Proxy(target, {
    get(object, key) {
      if (Object.hasOwn(overrides, key)) return overrides[key as keyof T];
      const value: unknown = Reflect.get(object, key, object);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(object) : value;
    },
  });
}

function faultyJournal(real: PostgresRunJournal): PostgresRunJournal {
  return wrap(real, {
    claim: (runId: string, owner: string) => {
      if (armed.runId === runId && (armed.claim ?? 0) > 0) {
        armed.claim! -= 1;
        armed.fired.push('claim');
        return Promise.reject(blip('claim', '57P03', 'the database system is starting up'));
      }
      return real.claim(runId, owner);
    },
    toolCall: (...args: Parameters<PostgresRunJournal['toolCall']>) => {
      const [lease, transition] = args;
      if (armed.runId === lease.runId && armed.toolCall === transition.status) {
        armed.toolCall = undefined;
        armed.fired.push(`toolCall ${transition.status}`);
        return Promise.reject(blip('toolCall', '55P03', 'canceling statement due to lock timeout'));
      }
      return real.toolCall(...args);
    },
    appendEncoded: (...args: Parameters<PostgresRunJournal['appendEncoded']>) => {
      const [lease, , commit] = args;
      if (armed.runId === lease.runId && commit !== undefined && armed.commit === commit.kind) {
        armed.commit = undefined;
        armed.fired.push(`append ${commit.kind}`);
        return Promise.reject(blip('append', 'ECONNRESET', 'read ECONNRESET'));
      }
      return real.appendEncoded(...args);
    },
    // each subscription reads the channel again (as the real journal's does): the first ones fail
    signals$: (runId: string) =>
      defer(() => {
        if (armed.runId === runId && (armed.signals ?? 0) > 0) {
          armed.signals! -= 1;
          armed.fired.push('signals');
          return timer(20).pipe(mergeMap(() => throwError(() => blip('read', '57P01', 'terminating connection due to administrator command'))));
        }
        return real.signals$(runId);
      }),
  });
}

function faultyStorage(real: PostgresStorage): MemoryStorage {
  return wrap(real, {
    saveMessages: (...args: Parameters<PostgresStorage['saveMessages']>) => {
      const fence = args[0].fence;
      if (armed.save === true && fence !== undefined && fence.runId === armed.runId) {
        armed.save = false;
        armed.fired.push('save');
        return Promise.reject(blip('saveMessages', '25P03', 'terminating connection due to idle-in-transaction timeout'));
      }
      return real.saveMessages(...args);
    },
  });
}

const until = <T extends RunWorkerEvent['type']>(events$: Observable<RunWorkerEvent>, type: T, runId: string) =>
  firstValueFrom(events$.pipe(filter((event): event is Extract<RunWorkerEvent, { type: T }> => event.type === type && event.runId === runId)));

let worker: RunWorker;
const events: RunWorkerEvent[] = [];
let baseline: { chunks: unknown; memory: unknown };

/** Runs 'Please look' as `runId` on its own thread; the client view and memory, normalised. */
async function lookRun(runId: string): Promise<{ status: string; chunks: unknown; memory: unknown; types: string[] }> {
  const thread = `t-${runId}`;
  const completed = until(worker.events$, 'completed', runId);
  await worker.submit('looker', 'Please look', { runId, memory: { thread, resource: 'u1' }, messageId: 'm-1' });
  const { status } = await completed;
  const entries = await journalEntries(journal, runId);
  return {
    status,
    chunks: perRunIds(normalise(effectiveChunks(entries), runId)),
    memory: perRunIds(memoryShape(await storage.getMessages({ threadId: thread }), runId)),
    types: entries.map((entry) => entry.chunk.type),
  };
}

beforeAll(async () => {
  server = await startTestPostgres();
  journal = new PostgresRunJournal({ connectionString: server.connectionString, schema });
  storage = new PostgresStorage({ connectionString: server.connectionString, schema });
  boss = new PgBoss({ connectionString: server.connectionString, schema: bossSchema, superviseIntervalSeconds: 1, monitorIntervalSeconds: 1 });
  boss.on('error', () => undefined);
  await boss.start();
  const memoryStorage = faultyStorage(storage);
  worker = createRunWorker({
    journal: faultyJournal(journal),
    boss,
    agents: [lookAgent('looker', memoryStorage), lookAgent('talker', memoryStorage, 60)],
    concurrency: 2,
    queue: { pollingIntervalSeconds: 0.5, retryLimit: 0 },
  });
  workers.push(worker);
  worker.events$.subscribe((event) => events.push(event));
  await worker.start();
  const crashFree = await lookRun(`base-${suffix}`);
  expect(crashFree.status).toBe('completed');
  baseline = { chunks: crashFree.chunks, memory: crashFree.memory };
}, 60_000);

afterAll(async () => {
  for (const each of workers) await each.close().catch(() => undefined);
  await boss?.stop({ graceful: false });
  await journal?.close();
  await storage?.close();
  await server?.stop();
}, 60_000);

const cases: Array<[string, Omit<Armed, 'runId' | 'fired'>, string]> = [
  ['the claim (57P03 cannot connect now)', { claim: 1 }, 'claim'],
  ['the ledger\'s `started` (55P03 lock timeout)', { toolCall: 'started' }, 'toolCall started'],
  ['the ledger\'s `completed`, after the tool ran (55P03)', { toolCall: 'completed' }, 'toolCall completed'],
  ['the input checkpoint (ECONNRESET)', { commit: 'input' }, 'append input'],
  ['the model checkpoint, tool calls pinned (ECONNRESET)', { commit: 'model' }, 'append model'],
  ['a step checkpoint (ECONNRESET)', { commit: 'step' }, 'append step'],
  ['memory\'s fenced save (25P03 idle-in-transaction timeout)', { save: true }, 'save'],
  ['the final commit (ECONNRESET)', { commit: 'final' }, 'append final'],
];

describe('an infrastructure failure fails the attempt, not the run', () => {
  it.each(cases)('%s: no terminal chunk from the blip, the run completes from its last commit with the crash-free client view and memory, no attempt spent', async (_name, faults, fired) => {
    const runId = `infra-${randomUUID().slice(0, 8)}`;
    armed = { runId, ...faults, fired: [] };
    const result = await lookRun(runId);
    expect(armed.fired).toEqual([fired]);
    expect(result.status).toBe('completed');
    expect(result.types.filter((type) => type === 'error' || type === 'abort' || type === 'tripwire')).toEqual([]);
    expect(result.types.filter((type) => type === 'finish')).toEqual(['finish']);
    expect(result.chunks).toEqual(baseline.chunks);
    expect(result.memory).toEqual(baseline.memory);
    const ofRun = events.filter((event) => event.runId === runId);
    expect(ofRun.filter((event) => event.type === 'failed')).toHaveLength(fired === 'claim' ? 0 : 1);
    expect(ofRun.filter((event) => event.type === 'completed')).toHaveLength(1);
    // the tool ran once, or once more only when its outcome was not in the ledger yet (its ledger rule: idempotent)
    expect(effects.filter((key) => key.startsWith(`${runId}:`))).toHaveLength(fired === 'toolCall completed' ? 2 : 1);
    expect(await journal.getRun(runId)).toMatchObject({ status: 'completed', terminal: 'finish' });
  });
});

describe('stop is never lost', () => {
  it('the owner keeps hearing cancel() after its signal reads failed (57P01), twice', async () => {
    const runId = `stop-${randomUUID().slice(0, 8)}`;
    armed = { runId, signals: 2, fired: [] };
    const completed = until(worker.events$, 'completed', runId);
    await worker.submit('talker', 'Talk', { runId });
    await until(worker.events$, 'committed', runId);
    await waitFor(() => armed.fired.length >= 1, 'a signal read failed');
    await worker.cancel(runId, { unsafeNoAuthorization: true, reason: 'user pressed stop' });
    expect((await completed).status).toBe('cancelled');
    expect(await journal.getRun(runId)).toMatchObject({ status: 'cancelled', terminal: 'abort', epoch: 1 });
  });
});
