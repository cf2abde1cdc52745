/**
 * The one test suite every `RunJournal` passes (like storage-suite.ts for `MemoryStorage`). Each
 * test uses fresh random run ids, so a journal may be shared (a database lives for the file).
 */
import { randomUUID } from 'node:crypto';
import { firstValueFrom, lastValueFrom, take, toArray } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { JsonEncodingError } from '../../src/contract/errors/json-encoding-error.js';
import { FencedError } from '../../src/storage/journal/errors/fenced-error.js';
import { JournalCursorError } from '../../src/storage/journal/errors/journal-cursor-error.js';
import { JournalSchemaError } from '../../src/storage/journal/errors/journal-schema-error.js';
import { RunConflictError } from '../../src/storage/journal/errors/run-conflict-error.js';
import { RunNotFoundError } from '../../src/storage/journal/errors/run-not-found-error.js';
import { RunOpenError } from '../../src/storage/journal/errors/run-open-error.js';
import type { JournalEntry, RunCommit, RunJournal, RunLease, RunRetentionOptions } from '../../src/storage/journal/types.js';

export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

export const delta = (runId: string, text: string, id = 't1'): ChunkType => ({ type: 'text-delta', runId, from: 'AGENT', payload: { id, text } });
export const start = (runId: string, messageId = 'm1'): ChunkType => ({ type: 'start', runId, from: 'AGENT', payload: { messageId } });
export const finish = (runId: string): ChunkType => ({
  type: 'finish',
  runId,
  from: 'AGENT',
  payload: { stepResult: { reason: 'stop' }, output: { usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 } as never, text: 'hi' } },
});
export const terminal = (runId: string, type: 'error' | 'abort' | 'tripwire'): ChunkType =>
  type === 'error'
    ? { type, runId, from: 'AGENT', payload: { error: { name: 'Error', message: 'boom' } } }
    : type === 'abort'
      ? { type, runId, from: 'AGENT', payload: { reason: 'stopped' } }
      : { type, runId, from: 'AGENT', payload: { reason: 'blocked', processorId: 'guard' } };
export const commit = (kind: RunCommit['kind'], state: RunCommit['state'] = { n: 1 }, step = 0): RunCommit => ({ kind, step, attempt: 0, state });

/** A live reader that collects entries until it completes or errors. */
export function collect(journal: RunJournal, runId: string, options?: Parameters<RunJournal['read$']>[1]) {
  const entries: JournalEntry[] = [];
  let completed = false;
  let error: unknown;
  const done = new Promise<void>((resolve) => {
    journal.read$(runId, options).subscribe({
      next: (entry) => entries.push(entry),
      error: (caught: unknown) => {
        error = caught;
        resolve();
      },
      complete: () => {
        completed = true;
        resolve();
      },
    });
  });
  return { entries, done, get completed() { return completed; }, get error() { return error; } };
}

/** Resolves once `check` holds (polled on the event loop). */
export async function until(check: () => boolean, what: string, limitMs = 10_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export interface JournalSuiteOptions {
  /** Page size the journal under test was built with (readers page at this size). */
  pageSize: number;
  /** A journal of the same store with these retention options (for the purge tests). */
  withRetention: (retention: RunRetentionOptions) => RunJournal | Promise<RunJournal>;
  /** Writes a run format newer than the build into the store (for the schema checks). */
  forceFormat?: (journal: RunJournal, runId: string, format: number) => Promise<void>;
}

/** Registers the shared journal suite under `name`; `make` runs before every test, the journal is closed after it. */
export function describeRunJournal(name: string, make: () => RunJournal | Promise<RunJournal>, options: JournalSuiteOptions): void {
  describe(name, () => {
    let journal: RunJournal;
    let runId: string;
    const newRun = (id = runId, input: unknown = { prompt: 'hi' }, extra: { threadId?: string; resourceId?: string } = {}) =>
      journal.createRun({ runId: id, agentId: 'support', input: input as never, ...extra });
    const claimed = async (id = runId): Promise<RunLease> => {
      await newRun(id);
      return (await journal.claim(id, 'worker-a')).lease;
    };

    beforeEach(async () => {
      runId = `run-${randomUUID()}`;
      journal = await make();
    });
    afterEach(async () => {
      await journal.close();
    });

    describe('createRun and getRun', () => {
      it('creates a queued run at epoch 0 with no chunks, in the current format', async () => {
        expect(await journal.getRun(runId)).toBeNull();
        const { run, created } = await newRun(runId, { prompt: 'hi' }, { threadId: 'thread-1', resourceId: 'user-1' });
        expect(created).toBe(true);
        expect(run).toMatchObject({ runId, agentId: 'support', threadId: 'thread-1', resourceId: 'user-1', status: 'queued', epoch: 0, lastSeq: 0, format: journal.format });
        expect(run.createdAt).toBeInstanceOf(Date);
        expect(run.owner).toBeUndefined();
        expect(run.terminal).toBeUndefined();
        expect(await journal.getRun(runId)).toEqual(run);
      });

      it('is idempotent by runId: the same run again → created: false, nothing changes', async () => {
        await newRun();
        const lease = (await journal.claim(runId, 'worker-a')).lease;
        await journal.append(lease, [start(runId)]);
        const again = await newRun();
        expect(again.created).toBe(false);
        expect(again.run).toMatchObject({ status: 'running', epoch: 1, lastSeq: 1 });
      });

      it('another agent, thread or input under the same runId → RunConflictError naming the field, nothing stored changes', async () => {
        await newRun(runId, { prompt: 'hi' }, { threadId: 'thread-1' });
        const before = await journal.getRun(runId);
        const other = await rejection(newRun(runId, { prompt: 'other' }, { threadId: 'thread-1' }));
        expect(RunConflictError.isInstance(other)).toBe(true);
        expect(other).toMatchObject({ runId, field: 'input' });
        const thread = await rejection(newRun(runId, { prompt: 'hi' }, { threadId: 'thread-2' }));
        expect(thread).toMatchObject({ name: 'RunConflictError', field: 'threadId' });
        const agent = await rejection(journal.createRun({ runId, agentId: 'sales', input: { prompt: 'hi' }, threadId: 'thread-1' }));
        expect(agent).toMatchObject({ name: 'RunConflictError', field: 'agentId' });
        expect(await journal.getRun(runId)).toEqual(before);
      });

      it('bad ids and non-JSON input are refused before anything is stored', async () => {
        expect(await rejection(journal.createRun({ runId: '', agentId: 'a', input: null }))).toBeInstanceOf(TypeError);
        expect(await rejection(journal.createRun({ runId: 'x\u0000y', agentId: 'a', input: null }))).toBeInstanceOf(TypeError);
        const bigint = await rejection(journal.createRun({ runId, agentId: 'a', input: { n: 1n } as never }));
        expect(JsonEncodingError.isInstance(bigint)).toBe(true);
        expect(await journal.getRun(runId)).toBeNull();
      });

      it('activeRun is the newest queued or running run of the thread, never an ended one', async () => {
        const thread = `thread-${randomUUID()}`;
        expect(await journal.activeRun(thread)).toBeNull();
        await newRun(`${runId}-a`, 1, { threadId: thread });
        await new Promise((resolve) => setTimeout(resolve, 5));
        await newRun(`${runId}-b`, 2, { threadId: thread });
        await newRun(`${runId}-other`, 3, { threadId: `${thread}-x` });
        expect((await journal.activeRun(thread))?.runId).toBe(`${runId}-b`);
        const { lease } = await journal.claim(`${runId}-b`, 'w');
        expect((await journal.activeRun(thread))?.runId).toBe(`${runId}-b`);
        await journal.append(lease, [finish(`${runId}-b`)], commit('final'));
        expect((await journal.activeRun(thread))?.runId).toBe(`${runId}-a`);
      });
    });

    describe('claim', () => {
      it('bumps the epoch, records the owner and returns the last commit and the ledger', async () => {
        await newRun();
        const first = await journal.claim(runId, 'worker-a');
        const { incarnation } = first.run;
        expect(incarnation).toEqual(expect.any(String));
        // the lease carries which run under the id it is: its writes go to that run only
        expect(first.lease).toEqual({ runId, epoch: 1, owner: 'worker-a', incarnation });
        expect(first.run).toMatchObject({ status: 'running', epoch: 1, owner: 'worker-a' });
        expect(first.commits).toEqual([]);
        await journal.append(first.lease, [start(runId)], commit('input', { list: ['a'] }));
        await journal.append(first.lease, [delta(runId, 'x')], { ...commit('model', { n: 2 }), toolCalls: [{ toolCallId: 'c1', toolName: 'search', args: { q: 'x' } }] });
        await journal.toolCall(first.lease, { toolCallId: 'c1', status: 'started' });
        const second = await journal.claim(runId, 'worker-b');
        expect(second.lease).toEqual({ runId, epoch: 2, owner: 'worker-b', incarnation });
        expect(second.input).toEqual({ prompt: 'hi' });
        expect(first.input).toEqual({ prompt: 'hi' });
        // only the last commit: the one a new owner goes on from (older snapshots are superseded)
        expect(second.commits).toEqual([{ no: 2, kind: 'model', step: 0, attempt: 0, epoch: 1, seqEnd: 2, state: { n: 2 } }]);
        expect(second.toolCalls).toEqual([{ toolCallId: 'c1', toolName: 'search', args: { q: 'x' }, status: 'started', epoch: 1 }]);
      });

      it('an unknown run → RunNotFoundError; an ended run → FencedError ended, epoch unchanged', async () => {
        expect(RunNotFoundError.isInstance(await rejection(journal.claim(runId, 'w')))).toBe(true);
        const lease = await claimed();
        await journal.append(lease, [finish(runId)], commit('final'));
        const error = await rejection(journal.claim(runId, 'worker-b'));
        expect(FencedError.isInstance(error)).toBe(true);
        expect(error).toMatchObject({ reason: 'ended', runId });
        expect((await journal.getRun(runId))?.epoch).toBe(1);
      });

      it('a run created again under an erased run’s id: a claim of the old incarnation is RunNotFoundError (nothing changed); the old lease, at the same epoch and owner, writes nothing into it', async () => {
        await newRun();
        const old = await journal.claim(runId, 'worker-a');
        await journal.append(old.lease, [start(runId)], commit('input', { list: ['a'] }));
        expect(await journal.deleteRun(runId, { force: true })).toBe(true);
        const { run } = await newRun();
        expect(run.incarnation).toEqual(expect.any(String));
        expect(run.incarnation).not.toBe(old.run.incarnation);
        const refused = await rejection(journal.claim(runId, 'worker-a', { incarnation: old.run.incarnation! }));
        expect(RunNotFoundError.isInstance(refused)).toBe(true);
        expect(await journal.getRun(runId)).toEqual(run);
        const claim = await journal.claim(runId, 'worker-a', { incarnation: run.incarnation! });
        expect(claim.lease).toEqual({ runId, epoch: 1, owner: 'worker-a', incarnation: run.incarnation });
        // the old owner's lease: same run id, epoch and owner, another run
        for (const write of [
          () => journal.append(old.lease, [delta(runId, 'old')]),
          () => journal.append(old.lease, [delta(runId, 'old')], { ...commit('model', { n: 2 }), toolCalls: [{ toolCallId: 'c1', toolName: 'search', args: {} }] }),
          () => journal.toolCall(old.lease, { toolCallId: 'c1', status: 'pending', toolName: 'search', args: {} }),
        ]) {
          expect(RunNotFoundError.isInstance(await rejection(write()))).toBe(true);
        }
        expect(await journal.getRun(runId)).toMatchObject({ epoch: 1, lastSeq: 0, status: 'running', incarnation: run.incarnation });
        await journal.append(claim.lease, [start(runId)]);
        expect((await journal.getRun(runId))?.lastSeq).toBe(1);
        expect(RunNotFoundError.isInstance(await rejection(journal.claim(runId, 'w', { incarnation: 'no-such-run' })))).toBe(true);
        expect(await rejection(journal.claim(runId, 'w', { incarnation: '' }))).toBeInstanceOf(TypeError);
      });

      if (options.forceFormat !== undefined) {
        it('a run of a newer format is never claimed (JournalSchemaError, epoch unchanged) nor read', async () => {
          await newRun();
          await options.forceFormat?.(journal, runId, journal.format + 1);
          const error = await rejection(journal.claim(runId, 'w'));
          expect(JournalSchemaError.isInstance(error)).toBe(true);
          expect(error).toMatchObject({ found: journal.format + 1, known: journal.format });
          expect((await journal.getRun(runId))?.epoch).toBe(0);
          const read = collect(journal, runId);
          await read.done;
          expect(JournalSchemaError.isInstance(read.error)).toBe(true);
        });
      }
    });

    describe('append and fencing', () => {
      it('numbers chunks densely from 1 and keeps their JSON text', async () => {
        const lease = await claimed();
        expect(await journal.append(lease, [start(runId), delta(runId, 'a')])).toEqual({ lastSeq: 2 });
        expect(await journal.append(lease, [])).toEqual({ lastSeq: 2 });
        expect(await journal.append(lease, [delta(runId, 'b'), delta(runId, 'c')])).toEqual({ lastSeq: 4 });
        const entries = await lastValueFrom(journal.read$(runId, { live: false }).pipe(toArray()));
        expect(entries.map((entry) => entry.seq)).toEqual([1, 2, 3, 4]);
        expect(entries.map((entry) => entry.epoch)).toEqual([1, 1, 1, 1]);
        expect(entries[1]?.json).toBe(JSON.stringify(delta(runId, 'a')));
        expect(entries[3]?.chunk).toEqual(delta(runId, 'c'));
        expect((await journal.getRun(runId))?.lastSeq).toBe(4);
      });

      it('stores encoded chunks byte for byte: quotes, backslashes, escapes, astral and odd characters, spacing, one chunk or many', async () => {
        const lease = await claimed();
        const texts = ['"', '\\', '\\"', '{"a":"b"}', 'x\u001ey', '\u0000', 'line\nbreak', '👩‍💻 é \ud800', ',', '}', 'NULL', ''];
        const encoded = texts.map((text, index) => ({ type: index % 2 === 0 ? 'text-delta' : 'data-odd "type" \\', json: JSON.stringify(delta(runId, text)) }));
        encoded.push({ type: 'data-spaced', json: ' { "type" : "data-spaced" ,\t"data": [ 1 , 2 ] }\n' });
        expect(await journal.appendEncoded(lease, encoded.slice(0, 1))).toEqual({ lastSeq: 1 });
        expect(await journal.appendEncoded(lease, encoded.slice(1))).toEqual({ lastSeq: encoded.length });
        const entries = await lastValueFrom(journal.read$(runId, { live: false }).pipe(toArray()));
        expect(entries.map((entry) => entry.json)).toEqual(encoded.map((chunk) => chunk.json));
        expect(entries.map((entry) => entry.seq)).toEqual(encoded.map((_, index) => index + 1));
        expect(entries.map((entry) => entry.chunk)).toEqual(encoded.map((chunk) => JSON.parse(chunk.json)));
        expect(await journal.findLastSeq(runId, 'data-odd "type" \\', encoded.length)).toBe(encoded.length - 1);
        expect(await journal.findLastSeq(runId, 'data-spaced', encoded.length)).toBe(encoded.length);
      });

      it('an encoded chunk holding a raw U+001E (never in JSON text) is a TypeError, nothing written', async () => {
        const lease = await claimed();
        await journal.append(lease, [start(runId)]);
        for (const bad of [{ type: 'text-delta', json: '{"type":"text-delta","x":"\x1e"}' }, { type: 'text\x1edelta', json: '{}' }]) {
          const error = await rejection(journal.appendEncoded(lease, [{ type: 'text-delta', json: '{}' }, bad]));
          expect(error).toBeInstanceOf(TypeError);
          expect((error as Error).message).toContain('U+001E');
        }
        expect((await journal.getRun(runId))?.lastSeq).toBe(1);
      });

      it('encodes chunks with the codec: a Date becomes ISO text, an Error plain data; a BigInt is refused with its path, nothing written', async () => {
        const lease = await claimed();
        const at = new Date('2026-01-02T03:04:05.000Z');
        await journal.append(lease, [{ type: 'response-metadata', runId, from: 'AGENT', payload: { timestamp: at } }]);
        const [entry] = await lastValueFrom(journal.read$(runId, { live: false }).pipe(toArray()));
        expect(entry?.json).toContain('"timestamp":"2026-01-02T03:04:05.000Z"');
        const error = await rejection(journal.append(lease, [delta(runId, 'ok'), { type: 'data-x', data: { big: 1n } }]));
        expect(JsonEncodingError.isInstance(error)).toBe(true);
        expect(error).toMatchObject({ path: '$.data.big', type: 'bigint' });
        expect((error as Error).message).toContain('chunk data-x');
        expect((await journal.getRun(runId))?.lastSeq).toBe(1);
      });

      it('a stale lease (another owner claimed) is fenced: FencedError epoch, nothing written', async () => {
        const old = await claimed();
        await journal.append(old, [start(runId)]);
        const { lease } = await journal.claim(runId, 'worker-b');
        const error = await rejection(journal.append(old, [delta(runId, 'late')], commit('step')));
        expect(FencedError.isInstance(error)).toBe(true);
        expect(error).toMatchObject({ runId, epoch: 1, currentEpoch: 2, reason: 'epoch' });
        expect((await journal.getRun(runId))?.lastSeq).toBe(1);
        expect((await journal.claim(runId, 'worker-c')).commits).toEqual([]);
        expect(await rejection(journal.append(lease, [delta(runId, 'x')]))).toMatchObject({ name: 'FencedError', currentEpoch: 3 });
      });

      it('a forged lease (an epoch or owner the journal never issued) is fenced', async () => {
        const lease = await claimed();
        expect(await rejection(journal.append({ ...lease, epoch: 7 }, [start(runId)]))).toMatchObject({ name: 'FencedError', reason: 'epoch', currentEpoch: 1 });
        expect(await rejection(journal.append({ ...lease, owner: 'intruder' }, [start(runId)]))).toMatchObject({ name: 'FencedError', reason: 'epoch' });
        expect(await rejection(journal.append({ ...lease, runId: `${runId}-missing` }, [start(runId)]))).toMatchObject({ name: 'RunNotFoundError' });
        expect(await rejection(journal.append({ ...lease, epoch: 0 }, [start(runId)]))).toBeInstanceOf(TypeError);
        expect((await journal.getRun(runId))?.lastSeq).toBe(0);
      });

      it.each([
        ['finish', 'completed'],
        ['tripwire', 'completed'],
        ['error', 'failed'],
        ['abort', 'cancelled'],
      ] as const)('a final commit ending with %s sets status %s; any later write is FencedError ended', async (type, status) => {
        const lease = await claimed();
        await journal.append(lease, [start(runId)], commit('input'));
        const chunk = type === 'finish' ? finish(runId) : terminal(runId, type);
        expect(await journal.append(lease, [delta(runId, 'x'), chunk], commit('final'))).toEqual({ lastSeq: 3 });
        expect(await journal.getRun(runId)).toMatchObject({ status, terminal: type, lastSeq: 3 });
        const late = await rejection(journal.append(lease, [delta(runId, 'late')]));
        expect(late).toMatchObject({ name: 'FencedError', reason: 'ended', epoch: 1, currentEpoch: 1 });
        expect(await rejection(journal.toolCall(lease, { toolCallId: 'c', status: 'pending', toolName: 't', args: {} }))).toMatchObject({ reason: 'ended' });
        expect((await journal.getRun(runId))?.lastSeq).toBe(3);
      });

      it('terminal chunks stand only last in a final commit, which needs one; bad commits are TypeErrors, nothing written', async () => {
        const lease = await claimed();
        expect(await rejection(journal.append(lease, [finish(runId)]))).toBeInstanceOf(TypeError);
        expect(await rejection(journal.append(lease, [finish(runId), delta(runId, 'x')], commit('final')))).toBeInstanceOf(TypeError);
        expect(await rejection(journal.append(lease, [delta(runId, 'x')], commit('final')))).toBeInstanceOf(TypeError);
        expect(await rejection(journal.append(lease, [], { kind: 'bogus' as never, step: 0, attempt: 0, state: null }))).toBeInstanceOf(TypeError);
        expect(await rejection(journal.append(lease, [], { kind: 'step', step: -1, attempt: 0, state: null }))).toBeInstanceOf(TypeError);
        expect(await rejection(journal.append(lease, [], { kind: 'step', step: 0, attempt: 0, state: { at: new Map() } as never }))).toMatchObject({
          name: 'JsonEncodingError',
          path: '$.at',
        });
        expect(await journal.getRun(runId)).toMatchObject({ lastSeq: 0, status: 'running' });
        expect((await journal.claim(runId, 'w2')).commits).toEqual([]);
      });

      it('commits record the seq they cover and are numbered on; a commit without chunks is allowed; a claim gets the last', async () => {
        const lease = await claimed();
        await journal.append(lease, [start(runId)], commit('input'));
        await journal.append(lease, [delta(runId, 'a'), delta(runId, 'b')]);
        await journal.append(lease, [], commit('step', { s: 1 }, 0));
        await journal.append(lease, [delta(runId, 'c')], commit('rejected', { r: 1 }, 1));
        const claimedAgain = await journal.claim(runId, 'w2');
        expect(claimedAgain.commits.map((entry) => [entry.no, entry.kind, entry.step, entry.seqEnd])).toEqual([[3, 'rejected', 1, 4]]);
        await journal.append(claimedAgain.lease, [], commit('step', { s: 2 }, 1));
        expect((await journal.claim(runId, 'w3')).commits.map((entry) => [entry.no, entry.kind, entry.seqEnd])).toEqual([[4, 'step', 4]]);
      });

      it('concurrent appends with one lease get dense, distinct seqs', async () => {
        const lease = await claimed();
        await Promise.all(Array.from({ length: 20 }, (_, index) => journal.append(lease, [delta(runId, `${index}`), delta(runId, `${index}'`)])));
        const entries = await lastValueFrom(journal.read$(runId, { live: false }).pipe(toArray()));
        expect(entries.map((entry) => entry.seq)).toEqual(Array.from({ length: 40 }, (_, index) => index + 1));
      });
    });

    describe('tool ledger', () => {
      it('pending → started → completed, with JSON args and output, fenced', async () => {
        const lease = await claimed();
        expect(await journal.toolCall(lease, { toolCallId: 'c1', status: 'pending', toolName: 'search', args: { q: 'x' } })).toEqual({
          toolCallId: 'c1', toolName: 'search', args: { q: 'x' }, status: 'pending', epoch: 1,
        });
        expect(await journal.toolCall(lease, { toolCallId: 'c1', status: 'started' })).toMatchObject({ status: 'started' });
        expect(await journal.toolCall(lease, { toolCallId: 'c1', status: 'completed', output: { hits: [1, 2] } })).toMatchObject({
          status: 'completed',
          output: { hits: [1, 2] },
        });
        await journal.toolCall(lease, { toolCallId: 'c2', status: 'pending', toolName: 'send', args: {} });
        await journal.toolCall(lease, { toolCallId: 'c2', status: 'failed', error: { name: 'TypeError', message: 'bad input' } });
        const { toolCalls } = await journal.claim(runId, 'w2');
        expect(toolCalls.map((call) => [call.toolCallId, call.status])).toEqual([
          ['c1', 'completed'],
          ['c2', 'failed'],
        ]);
        expect(toolCalls[1]?.error).toEqual({ name: 'TypeError', message: 'bad input' });
      });

      it('refuses transitions the ledger does not allow (TypeError naming both states), and a stale owner (FencedError)', async () => {
        const lease = await claimed();
        expect((await rejection(journal.toolCall(lease, { toolCallId: 'c1', status: 'started' })) as Error).message).toContain('from nothing to started');
        await journal.toolCall(lease, { toolCallId: 'c1', status: 'pending', toolName: 'search', args: {} });
        await journal.toolCall(lease, { toolCallId: 'c1', status: 'started' });
        // the same owner starting it twice would run it twice
        expect(await rejection(journal.toolCall(lease, { toolCallId: 'c1', status: 'started' }))).toBeInstanceOf(TypeError);
        const { lease: next } = await journal.claim(runId, 'worker-b');
        const stale = await rejection(journal.toolCall(lease, { toolCallId: 'c1', status: 'completed', output: 1 }));
        expect(stale).toMatchObject({ name: 'FencedError', reason: 'epoch', currentEpoch: 2 });
        // a later owner may start a dead owner's call again (an idempotent tool), then record it
        expect(await journal.toolCall(next, { toolCallId: 'c1', status: 'started' })).toMatchObject({ status: 'started', epoch: 2 });
        await journal.toolCall(next, { toolCallId: 'c1', status: 'completed', output: 'done' });
        expect((await rejection(journal.toolCall(next, { toolCallId: 'c1', status: 'failed', error: 'x' })) as Error).message).toContain('from completed to failed');
        expect(await rejection(journal.toolCall(next, { toolCallId: 'c1', status: 'weird' } as never))).toBeInstanceOf(TypeError);
      });

      it('a model commit pins its tool calls as pending rows; pinning again keeps the first row', async () => {
        const lease = await claimed();
        const pins = [
          { toolCallId: 'c1', toolName: 'a', args: { n: 1 } },
          { toolCallId: 'c2', toolName: 'b', args: [] },
        ];
        await journal.append(lease, [delta(runId, 'x')], { ...commit('model'), toolCalls: pins });
        await journal.toolCall(lease, { toolCallId: 'c1', status: 'started' });
        await journal.append(lease, [], { ...commit('model'), toolCalls: [{ toolCallId: 'c1', toolName: 'a', args: { n: 9 } }] });
        const { toolCalls } = await journal.claim(runId, 'w2');
        expect(toolCalls.map((call) => [call.toolCallId, call.status, call.args])).toEqual([
          ['c1', 'started', { n: 1 }],
          ['c2', 'pending', []],
        ]);
        expect(await rejection(journal.append((await journal.claim(runId, 'w3')).lease, [], { ...commit('step'), toolCalls: pins }))).toBeInstanceOf(TypeError);
      });
    });

    describe('read$', () => {
      it('replays from a cursor and, with live: false, completes at the current end', async () => {
        const lease = await claimed();
        await journal.append(lease, [start(runId), delta(runId, 'a'), delta(runId, 'b')]);
        const from1 = await lastValueFrom(journal.read$(runId, { after: 1, live: false }).pipe(toArray()));
        expect(from1.map((entry) => entry.seq)).toEqual([2, 3]);
        expect(await lastValueFrom(journal.read$(runId, { after: 3, live: false }).pipe(toArray()))).toEqual([]);
        const empty = await newRun(`${runId}-empty`);
        expect(empty.created).toBe(true);
        expect(await lastValueFrom(journal.read$(`${runId}-empty`, { live: false }).pipe(toArray()))).toEqual([]);
      });

      it('live: follows new entries and completes after the terminal one', async () => {
        const lease = await claimed();
        await journal.append(lease, [start(runId)]);
        const reader = collect(journal, runId);
        await until(() => reader.entries.length === 1, 'the history');
        await journal.append(lease, [delta(runId, 'a')]);
        await until(() => reader.entries.length === 2, 'a live entry');
        expect(reader.completed).toBe(false);
        await journal.append(lease, [delta(runId, 'b'), finish(runId)], commit('final'));
        await reader.done;
        expect(reader.completed).toBe(true);
        expect(reader.entries.map((entry) => entry.chunk.type)).toEqual(['start', 'text-delta', 'text-delta', 'finish']);
      });

      it('a reader of an ended run gets everything and completes; one at the end completes at once', async () => {
        const lease = await claimed();
        await journal.append(lease, [start(runId), finish(runId)], commit('final'));
        expect((await lastValueFrom(journal.read$(runId).pipe(toArray()))).map((entry) => entry.seq)).toEqual([1, 2]);
        expect(await lastValueFrom(journal.read$(runId, { after: 2 }).pipe(toArray()))).toEqual([]);
      });

      it(`pages: a history longer than a page (${options.pageSize}) arrives whole and in order`, async () => {
        const lease = await claimed();
        const total = options.pageSize * 2 + 7;
        const chunks = Array.from({ length: total }, (_, index) => delta(runId, `${index}`));
        await journal.append(lease, chunks.slice(0, total - 1));
        await journal.append(lease, [...chunks.slice(total - 1), finish(runId)], commit('final'));
        const entries = await lastValueFrom(journal.read$(runId).pipe(toArray()));
        expect(entries.map((entry) => entry.seq)).toEqual(Array.from({ length: total + 1 }, (_, index) => index + 1));
      });

      it('asks for the next page only once the last one was taken (ready is awaited between pages)', async () => {
        const lease = await claimed();
        await journal.append(lease, Array.from({ length: options.pageSize * 3 }, (_, index) => delta(runId, `${index}`)));
        let release: () => void = () => undefined;
        let waits = 0;
        const ready = () => {
          waits += 1;
          return new Promise<void>((resolve) => {
            release = resolve;
          });
        };
        const reader = collect(journal, runId, { live: false, ready });
        await until(() => reader.entries.length === options.pageSize && waits === 1, 'the first page');
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(reader.entries.length).toBe(options.pageSize);
        release();
        await until(() => waits === 2, 'the second page');
        expect(reader.entries.length).toBe(options.pageSize * 2);
        release();
        await reader.done;
        // the third page ends the bounded read: no fourth request, no wait
        expect(waits).toBe(2);
        expect(reader.entries.length).toBe(options.pageSize * 3);
      });

      it('taking only a few entries unsubscribes cleanly', async () => {
        const lease = await claimed();
        await journal.append(lease, Array.from({ length: 10 }, (_, index) => delta(runId, `${index}`)));
        const two = await lastValueFrom(journal.read$(runId).pipe(take(2), toArray()));
        expect(two.map((entry) => entry.seq)).toEqual([1, 2]);
      });

      it('bad cursors → JournalCursorError { after, lastSeq }; an unknown run → RunNotFoundError', async () => {
        const lease = await claimed();
        await journal.append(lease, [start(runId), delta(runId, 'a')]);
        for (const after of [-1, 1.5, 3, Number.NaN, '1' as never]) {
          const error = await firstValueFrom(journal.read$(runId, { after }), { defaultValue: undefined }).catch((caught: unknown) => caught);
          expect(JournalCursorError.isInstance(error)).toBe(true);
          expect(error).toMatchObject({ runId, lastSeq: 2 });
          expect((error as JournalCursorError).after).toBe(after);
        }
        const missing = await firstValueFrom(journal.read$(`${runId}-missing`)).catch((caught: unknown) => caught);
        expect(RunNotFoundError.isInstance(missing)).toBe(true);
      });

      it('concurrent readers during writes each see the same dense sequence', async () => {
        const lease = await claimed();
        const readers = Array.from({ length: 4 }, () => collect(journal, runId));
        for (let batch = 0; batch < 20; batch++) {
          await journal.append(lease, Array.from({ length: 5 }, (_, index) => delta(runId, `${batch}.${index}`)));
        }
        const late = collect(journal, runId, { after: 50 });
        await journal.append(lease, [finish(runId)], commit('final'));
        await Promise.all([...readers, late].map((reader) => reader.done));
        const expected = Array.from({ length: 101 }, (_, index) => index + 1);
        for (const reader of readers) expect(reader.entries.map((entry) => entry.seq)).toEqual(expected);
        expect(late.entries.map((entry) => entry.seq)).toEqual(expected.slice(50));
        expect(new Set(readers.map((reader) => reader.entries.map((entry) => entry.json).join('\n'))).size).toBe(1);
      });
    });

    describe('findLastSeq', () => {
      it('finds the last chunk of a type at or before a seq (0: none), for an unknown run RunNotFoundError', async () => {
        const lease = await claimed();
        const stepStart = (stepNumber: number): ChunkType => ({ type: 'step-start', runId, from: 'AGENT', payload: { stepNumber } });
        await journal.append(lease, [start(runId), stepStart(0), delta(runId, 'a'), stepStart(1), delta(runId, 'b')]);
        expect(await journal.findLastSeq(runId, 'step-start', 5)).toBe(4);
        expect(await journal.findLastSeq(runId, 'step-start', 3)).toBe(2);
        expect(await journal.findLastSeq(runId, 'step-start', 1)).toBe(0);
        expect(await journal.findLastSeq(runId, 'step-start', 99)).toBe(4);
        expect(await journal.findLastSeq(runId, 'finish', 5)).toBe(0);
        expect(RunNotFoundError.isInstance(await rejection(journal.findLastSeq(`${runId}-x`, 'start', 1)))).toBe(true);
      });
    });

    describe('readStructure', () => {
      it('gives every entry but the deltas, in a range, byte for byte; an unknown run → RunNotFoundError', async () => {
        const lease = await claimed();
        const stepStart: ChunkType = { type: 'step-start', runId, from: 'AGENT', payload: { stepNumber: 0 } };
        const textStart: ChunkType = { type: 'text-start', runId, from: 'AGENT', payload: { id: 't1' } };
        const reasoning: ChunkType = { type: 'reasoning-delta', runId, from: 'AGENT', payload: { id: 'r1', text: 'hm' } };
        const toolDelta: ChunkType = { type: 'tool-call-delta', runId, from: 'AGENT', payload: { toolCallId: 'c1', argsTextDelta: '{' } };
        const textEnd: ChunkType = { type: 'text-end', runId, from: 'AGENT', payload: { id: 't1' } };
        await journal.append(lease, [start(runId), stepStart, textStart, delta(runId, 'a'), reasoning, toolDelta, delta(runId, 'b'), textEnd]);
        const all = await journal.readStructure(runId, { after: 0, until: 8 });
        expect(all.map((entry) => [entry.seq, entry.chunk.type])).toEqual([
          [1, 'start'],
          [2, 'step-start'],
          [3, 'text-start'],
          [8, 'text-end'],
        ]);
        expect(all[2]?.json).toBe(JSON.stringify(textStart));
        expect((await journal.readStructure(runId, { after: 2, until: 7 })).map((entry) => entry.seq)).toEqual([3]);
        expect(RunNotFoundError.isInstance(await rejection(journal.readStructure(`${runId}-x`, { after: 0, until: 1 })))).toBe(true);
      });
    });

    describe('deleteRun (erasure)', () => {
      it('erases an ended run with its chunks, commits, ledger and signals: unknown afterwards, other runs untouched', async () => {
        const lease = await claimed();
        const other = `${runId}-other`;
        const otherLease = await claimed(other);
        await journal.append(otherLease, [start(other)], commit('input'));
        await journal.append(lease, [start(runId)], { ...commit('model'), toolCalls: [{ toolCallId: 'c1', toolName: 'search', args: { q: 'x' } }] });
        await journal.signal(runId, { kind: 'stop' });
        await journal.append(lease, [terminal(runId, 'abort')], commit('final'));
        expect(await journal.deleteRun(runId)).toBe(true);
        expect(await journal.getRun(runId)).toBeNull();
        const read = await rejection(lastValueFrom(journal.read$(runId, { live: false }).pipe(toArray())));
        expect(RunNotFoundError.isInstance(read) && read.reason === undefined).toBe(true);
        expect(RunNotFoundError.isInstance(await rejection(journal.claim(runId, 'w2')))).toBe(true);
        expect(await journal.deleteRun(runId)).toBe(false);
        // nothing of it is left: the same id makes a new, empty run (no commits, no ledger, no signals)
        expect((await newRun()).created).toBe(true);
        const fresh = await journal.claim(runId, 'w3');
        expect([fresh.commits, fresh.toolCalls, fresh.run.lastSeq]).toEqual([[], [], 0]);
        expect((await journal.getRun(other))?.lastSeq).toBe(1);
        expect((await journal.claim(other, 'w2')).commits).toHaveLength(1);
      });

      it('refuses an open run with RunOpenError naming its status (nothing erased); force erases it and fences its owner', async () => {
        await newRun();
        const queued = await rejection(journal.deleteRun(runId));
        expect(RunOpenError.isInstance(queued) && queued.status === 'queued' && queued.runId === runId).toBe(true);
        const { lease } = await journal.claim(runId, 'worker-a');
        await journal.append(lease, [start(runId)]);
        const running = await rejection(journal.deleteRun(runId));
        expect(RunOpenError.isInstance(running) && running.status === 'running').toBe(true);
        expect((await journal.getRun(runId))?.lastSeq).toBe(1);
        expect(await journal.deleteRun(runId, { force: true })).toBe(true);
        expect(await journal.getRun(runId)).toBeNull();
        expect(RunNotFoundError.isInstance(await rejection(journal.append(lease, [delta(runId, 'late')])))).toBe(true);
        expect(await rejection(journal.deleteRun(''))).toBeInstanceOf(TypeError);
      });
    });

    describe('retention (purgeExpired)', () => {
      const ended = async (target: RunJournal, id: string, extra: { threadId?: string } = {}): Promise<void> => {
        await target.createRun({ runId: id, agentId: 'support', input: { prompt: 'hi' }, ...extra });
        const { lease } = await target.claim(id, 'worker-a');
        await target.append(lease, [start(id), delta(id, 'x')], { ...commit('model'), toolCalls: [{ toolCallId: 'c1', toolName: 'search', args: {} }] });
        await target.signal(id, { kind: 'stop' });
        await target.append(lease, [finish(id)], commit('final'));
      };

      it('past chunkRetentionSeconds an ended run expires: its row says so, readers get RunNotFoundError expired; open runs are kept', async () => {
        const purging = await options.withRetention({ chunkRetentionSeconds: 0, runRetentionSeconds: 3600 });
        try {
          await ended(purging, runId);
          const open = `${runId}-open`;
          await purging.createRun({ runId: open, agentId: 'support', input: null });
          const { lease } = await purging.claim(open, 'worker-a');
          await purging.append(lease, [start(open)], commit('input'));
          const result = await purging.purgeExpired();
          expect(result.done).toBe(true);
          expect(result.expired).toBeGreaterThanOrEqual(1);
          const run = await purging.getRun(runId);
          expect(run).toMatchObject({ status: 'completed', lastSeq: 3, terminal: 'finish' });
          expect(run?.expiredAt).toBeInstanceOf(Date);
          const read = await rejection(lastValueFrom(purging.read$(runId, { live: false }).pipe(toArray())));
          expect(RunNotFoundError.isInstance(read) && read.reason === 'expired').toBe(true);
          const found = await rejection(purging.findLastSeq(runId, 'start', 3));
          expect(RunNotFoundError.isInstance(found) && found.reason === 'expired').toBe(true);
          const structure = await rejection(purging.readStructure(runId, { after: 0, until: 3 }));
          expect(RunNotFoundError.isInstance(structure) && structure.reason === 'expired').toBe(true);
          // the open run keeps everything
          expect((await purging.getRun(open))?.expiredAt).toBeUndefined();
          expect(await lastValueFrom(purging.read$(open, { live: false }).pipe(toArray()))).toHaveLength(1);
          // nothing left to do: a second round expires nothing more of ours
          await purging.purgeExpired();
          expect((await purging.getRun(runId))?.expiredAt?.getTime()).toBe(run?.expiredAt?.getTime());
        } finally {
          await purging.close();
        }
      });

      it('past runRetentionSeconds the row goes too (unknown: RunNotFoundError without reason); default retention keeps a run that just ended', async () => {
        const keeping = await options.withRetention({});
        const purging = await options.withRetention({ chunkRetentionSeconds: 0, runRetentionSeconds: 0 });
        try {
          await ended(keeping, runId);
          await keeping.purgeExpired();
          expect((await keeping.getRun(runId))?.expiredAt).toBeUndefined();
          expect(await lastValueFrom(keeping.read$(runId, { live: false }).pipe(toArray()))).toHaveLength(3);
          const target = `${runId}-2`;
          await ended(purging, target);
          // retention 0 expires every ended run of the schema (the earlier cases' too): a round does
          // at most maxStatements deletes, oldest first, so rounds go on until the work is done
          let result = await purging.purgeExpired();
          let runsRemoved = result.runsRemoved;
          for (let rounds = 0; !result.done && rounds < 100; rounds++) {
            result = await purging.purgeExpired();
            runsRemoved += result.runsRemoved;
          }
          expect(result.done).toBe(true);
          expect(runsRemoved).toBeGreaterThanOrEqual(1);
          expect(await purging.getRun(target)).toBeNull();
          const read = await rejection(lastValueFrom(purging.read$(target, { live: false }).pipe(toArray())));
          expect(RunNotFoundError.isInstance(read) && read.reason === undefined).toBe(true);
        } finally {
          await purging.close();
          await keeping.close();
        }
      });

      it('retention 0 expires a run the moment it ends, every time (the end is never stamped later than the clock a purge reads)', async () => {
        const purging = await options.withRetention({ chunkRetentionSeconds: 0, runRetentionSeconds: 3600 });
        try {
          // a millisecond column rounding the end up would leave about half of these for a later round
          for (let index = 0; index < 20; index++) {
            const id = `${runId}-now-${index}`;
            await ended(purging, id);
            let result = await purging.purgeExpired();
            for (let rounds = 0; !result.done && rounds < 100; rounds++) result = await purging.purgeExpired();
            expect((await purging.getRun(id))?.expiredAt, id).toBeInstanceOf(Date);
          }
        } finally {
          await purging.close();
        }
      });

      it('works in bounded batches: a round stops at maxStatements with done: false, and rounds finish the work', async () => {
        const purging = await options.withRetention({ chunkRetentionSeconds: 0, runRetentionSeconds: 3600 });
        try {
          const ids = [0, 1, 2].map((index) => `${runId}-${index}`);
          for (const id of ids) await ended(purging, id);
          let rounds = 0; // each run costs more than 2 statements: the first round cannot finish
          let result = await purging.purgeExpired({ batchSize: 1, maxStatements: 2 });
          while (!result.done && rounds++ < 200) result = await purging.purgeExpired({ batchSize: 1, maxStatements: 2 });
          expect(rounds).toBeGreaterThan(0);
          for (const id of ids) expect((await purging.getRun(id))?.expiredAt).toBeInstanceOf(Date);
        } finally {
          await purging.close();
        }
      });

      it('bad options are RangeErrors naming the field', async () => {
        expect(() => options.withRetention({ chunkRetentionSeconds: -1 })).toThrow(/chunkRetentionSeconds/);
        expect(() => options.withRetention({ chunkRetentionSeconds: 10, runRetentionSeconds: 5 })).toThrow(/runRetentionSeconds/);
        expect(await rejection(journal.purgeExpired({ batchSize: 0 }))).toBeInstanceOf(RangeError);
      });
    });

    describe('signals', () => {
      it('records stop signals for the owner and ends the stream when the run ends', async () => {
        const lease = await claimed();
        const seen: unknown[] = [];
        let ended = false;
        journal.signals$(runId).subscribe({ next: (signal) => seen.push(signal), complete: () => (ended = true) });
        await journal.signal(runId, { kind: 'stop', reason: 'user pressed stop' });
        await until(() => seen.length === 1, 'the signal');
        expect(seen[0]).toMatchObject({ kind: 'stop', reason: 'user pressed stop' });
        await journal.append(lease, [terminal(runId, 'abort')], commit('final'));
        await until(() => ended, 'the end of signals');
        await journal.signal(runId, { kind: 'stop' });
        expect(RunNotFoundError.isInstance(await rejection(journal.signal(`${runId}-missing`, { kind: 'stop' })))).toBe(true);
        expect(await rejection(journal.signal(runId, { kind: 'pause' } as never))).toBeInstanceOf(TypeError);
      });

      it('a signal sent before the owner listens is still delivered', async () => {
        await claimed();
        await journal.signal(runId, { kind: 'stop' });
        const first = await firstValueFrom(journal.signals$(runId));
        expect(first.kind).toBe('stop');
      });
    });

    describe('infrastructure losses (refunded attempts)', () => {
      it('notes each attempt once, in order, at most 64 per run; an unknown run is left alone', async () => {
        await claimed();
        expect(await journal.infrastructureLosses!(runId)).toEqual([]);
        await journal.noteInfrastructureLoss!(runId, '0:0');
        await journal.noteInfrastructureLoss!(runId, '0:0'); // a retried note (its reply was lost): once
        await journal.noteInfrastructureLoss!(runId, '1:2');
        expect(await journal.infrastructureLosses!(runId)).toEqual(['0:0', '1:2']);
        for (let retry = 0; retry < 70; retry++) await journal.noteInfrastructureLoss!(runId, `2:${retry}`);
        const losses = await journal.infrastructureLosses!(runId);
        expect(losses).toHaveLength(64); // a misjudged error cannot keep a run alive for ever
        expect(losses.slice(0, 3)).toEqual(['0:0', '1:2', '2:0']);
        await journal.noteInfrastructureLoss!(`${runId}-missing`, '0:0');
        expect(await journal.infrastructureLosses!(`${runId}-missing`)).toEqual([]);
        expect(await rejection(journal.noteInfrastructureLoss!(runId, ''))).toBeInstanceOf(TypeError);
      });

      it('a note of an erased run’s incarnation is left alone in the run created again under its id (it refunded the new run’s attempt); its own and an unnamed one are kept', async () => {
        await newRun();
        const old = await journal.claim(runId, 'worker-a');
        await journal.noteInfrastructureLoss!(runId, '0:0', { incarnation: old.run.incarnation! });
        expect(await journal.infrastructureLosses!(runId, { incarnation: old.run.incarnation! })).toEqual(['0:0']);
        expect(await journal.deleteRun(runId, { force: true })).toBe(true);
        const { run } = await newRun();
        // the old run's still-live owner notes a loss of its attempt
        await journal.noteInfrastructureLoss!(runId, '0:1', { incarnation: old.run.incarnation! });
        expect(await journal.infrastructureLosses!(runId)).toEqual([]);
        expect(await journal.infrastructureLosses!(runId, { incarnation: old.run.incarnation! })).toEqual([]);
        await journal.noteInfrastructureLoss!(runId, '0:0', { incarnation: run.incarnation! });
        await journal.noteInfrastructureLoss!(runId, '1:0'); // a worker of an earlier build: whichever run holds the id
        expect(await journal.infrastructureLosses!(runId, { incarnation: run.incarnation! })).toEqual(['0:0', '1:0']);
        expect(await rejection(journal.noteInfrastructureLoss!(runId, '0:2', { incarnation: '' }))).toBeInstanceOf(TypeError);
        expect(await rejection(journal.infrastructureLosses!(runId, null as never))).toBeInstanceOf(TypeError);
      });
    });

    describe('close', () => {
      it('ends live readers with a StorageError and refuses further calls; close is idempotent', async () => {
        const lease = await claimed();
        await journal.append(lease, [start(runId)]);
        const reader = collect(journal, runId);
        await until(() => reader.entries.length === 1, 'the history');
        await journal.close();
        await journal.close();
        await reader.done;
        expect(reader.error).toMatchObject({ name: 'StorageError' });
        expect(await rejection(journal.getRun(runId))).toMatchObject({ name: 'StorageError' });
      });
    });
  });
}
