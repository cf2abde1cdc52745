/**
 * `journalTo` (src/durable/internal/journal-to.ts) attacked: writers that reject (once, for ever,
 * fenced mid-batch), answer very late or throw synchronously; the source erroring, completing or
 * being unsubscribed while an append is in flight; commits arriving behind an append (the journal
 * keeps the run's order); bursts past the high-water mark; synchronous sources of 100,000 chunks;
 * and a synchronous source that goes on after the operator is over (nothing may be written then,
 * and the source is stopped). Timing on a TestScheduler; a real journal in memory, and once on
 * PostgreSQL (`DATABASE_URL`, or a throwaway cluster).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Observable, Subject, asyncScheduler, lastValueFrom, take, toArray, type Subscription } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { DemandGate } from '../../src/contract/demand-gate.js';
import { journalTo, type JournalAck, type JournalAppender, type JournalCommit, type JournalRecord, type JournalToOptions } from '../../src/durable/internal/journal-to.js';
import { InMemoryRunJournal } from '../../src/storage/journal/in-memory-run-journal.js';
import { FencedError } from '../../src/storage/journal/errors/fenced-error.js';
import type { EncodedChunk, RunCommit, RunJournal, RunLease } from '../../src/storage/journal/types.js';
import { PostgresRunJournal } from '../../src/storage/postgres/postgres-run-journal.js';
import { createTestScheduler } from '../../src/testing/test-scheduler.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { delta, finish } from '../storage/journal-suite.js';
import { later, nameOf } from './fixtures/virtual-appends.js';

const lease: RunLease = { runId: 'r', epoch: 1, owner: 'w' };
const fenced = (): FencedError => new FencedError({ runId: 'r', epoch: 1, currentEpoch: 2, reason: 'epoch' });

/** What one append does, by its index: answer after `latency` frames, or reject, or throw before answering. */
type Behaviour = { latency: number } | { latency: number; reject: unknown } | { throws: unknown };

/** A journal in memory on the test's scheduler, each append scripted; it records every call, and whether it came after `closedAt`. */
class ScriptedJournal implements JournalAppender {
  readonly appends: Array<{ frame: number; chunks: string[]; commit?: RunCommit['kind'] }> = [];
  /** Chunk texts (or types) as written, in order, with a `|kind` mark after each commit. */
  readonly written: string[] = [];

  constructor(readonly script: (index: number) => Behaviour) {}

  appendEncoded(_lease: RunLease, chunks: readonly EncodedChunk[], commit?: RunCommit): PromiseLike<{ lastSeq: number }> {
    const index = this.appends.length;
    this.appends.push({ frame: asyncScheduler.now(), chunks: chunks.map(nameOf), ...(commit === undefined ? {} : { commit: commit.kind }) });
    const behaviour = this.script(index);
    if ('throws' in behaviour) throw behaviour.throws;
    return later(behaviour.latency, () => {
      if ('reject' in behaviour) throw behaviour.reject;
      this.written.push(...chunks.map(nameOf), ...(commit === undefined ? [] : [`|${commit.kind}`]));
      return { lastSeq: this.written.filter((name) => !name.startsWith('|')).length };
    });
  }
}

/** A text delta's text. */
const textOf = (chunk: ChunkType): string | undefined => (chunk.type === 'text-delta' ? chunk.payload.text : undefined);
const commitOf = (kind: RunCommit['kind'], chunks: ChunkType[] = []): JournalCommit => ({ commit: { kind, step: 0, attempt: 0, state: null }, chunks });
const deltas = (names: string): Record<string, ChunkType> => Object.fromEntries([...names].map((name) => [name, delta('r', name)]));
const committed = (record: JournalCommit, lastSeq: number): JournalAck => ({ kind: 'committed', record, lastSeq });
/** A chunk the codec refuses (a bigint). */
const unencodable = (type: 'text-delta' | 'finish'): ChunkType => ({ type, runId: 'r', from: 'AGENT', payload: { id: 't1', text: 'x', size: 1n } }) as unknown as ChunkType;

function write(source: Observable<JournalRecord>, journal: JournalAppender, options: JournalToOptions = {}): Observable<JournalAck> {
  return source.pipe(journalTo(journal, lease, { flushWindowMs: 3, ...options }));
}

/**
 * A synchronous source as a well-behaved producer writes one: it emits `records(i)` for i = 0, 1, …
 * while its subscriber is open, up to `limit`, then completes; `emitted` counts what it got out.
 */
function firehose(limit: number, records: (index: number) => JournalRecord): { source: Observable<JournalRecord>; emitted: () => number } {
  let emitted = 0;
  const source = new Observable<JournalRecord>((subscriber) => {
    for (let index = 0; index < limit && !subscriber.closed; index++) {
      emitted++;
      subscriber.next(records(index));
    }
    subscriber.complete();
  });
  return { source, emitted: () => emitted };
}

describe('journalTo against a failing writer', () => {
  it('fails at once on a transient rejection and retries nothing (an append of unknown outcome is never written twice)', () => {
    const journal = new ScriptedJournal((index) => (index === 0 ? { latency: 2, reject: new Error('connection reset') } : { latency: 2 }));
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      const source = cold<JournalRecord>('a-C-b-D|', { ...deltas('ab'), C: commitOf('model'), D: commitOf('step') });
      expectObservable(write(source, journal)).toBe('----#', undefined, new Error('connection reset'));
    });
    expect(journal.appends).toEqual([{ frame: 2, chunks: ['a'], commit: 'model' }]);
  });

  it('fails on a writer that rejects for ever, after exactly one append', () => {
    const journal = new ScriptedJournal(() => ({ latency: 1, reject: new Error('down') }));
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(write(cold<JournalRecord>('abcdefg|', deltas('abcdefg')), journal, { maxBatch: 2 })).toBe('--#', undefined, new Error('down'));
    });
    expect(journal.appends).toHaveLength(1);
  });

  it('fails with the FencedError of a batch fenced mid-way, with commits waiting behind it: none acknowledged, none attempted', () => {
    const journal = new ScriptedJournal((index) => (index === 1 ? { latency: 4, reject: fenced() } : { latency: 4 }));
    const demand = new DemandGate();
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      const source = cold<JournalRecord>('abC-cdeD-f|', { ...deltas('abcdef'), C: commitOf('model'), D: commitOf('step') });
      // a b C: one append (2 → 6), acknowledged; c d e wait in the window, go at 7 with D, and that append (7 → 11) is fenced
      expectObservable(write(source, journal, { demand, highWaterMark: 3 })).toBe('------m----#', { m: committed(commitOf('model'), 2) }, fenced());
    });
    expect(journal.appends).toHaveLength(2);
    expect(journal.written).toEqual(['a', 'b', '|model']);
    expect(demand.open).toBe(true);
  });

  it('fails with a synchronous throw of the writer, releasing the gate', () => {
    const journal = new ScriptedJournal(() => ({ throws: new TypeError('pool is closed') }));
    const demand = new DemandGate();
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(write(cold<JournalRecord>('ab-C|', { ...deltas('ab'), C: commitOf('step') }), journal, { demand, highWaterMark: 2 })).toBe('---#', undefined, new TypeError('pool is closed'));
    });
    expect(journal.appends).toHaveLength(1);
    expect(demand.open).toBe(true);
  });

  it('ignores a writer that settles twice (a misbehaving thenable): one acknowledgement per commit', () => {
    const journal: JournalAppender = {
      appendEncoded: () =>
        ({
          then(onFulfilled?: (value: { lastSeq: number }) => unknown, onRejected?: (error: unknown) => unknown) {
            asyncScheduler.schedule(() => {
              onFulfilled?.({ lastSeq: 1 });
              onFulfilled?.({ lastSeq: 2 });
              onRejected?.(new Error('late'));
            }, 1);
            return { then: () => undefined };
          },
        }) as unknown as PromiseLike<{ lastSeq: number }>,
    };
    const step = commitOf('step');
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(write(cold<JournalRecord>('S|', { S: step }), journal)).toBe('-(s|)', { s: committed(step, 1) });
    });
  });
});

describe('journalTo with an append in flight', () => {
  it('holds the gate behind a very late append, writes one append at a time, then what waited in order (at most highWaterMark chunks before the commit)', () => {
    const journal = new ScriptedJournal((index) => ({ latency: index === 0 ? 50 : 1 }));
    const demand = new DemandGate();
    const open: Array<[number, boolean]> = [];
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      for (const frame of [1, 10, 53]) asyncScheduler.schedule(() => open.push([frame, demand.open]), frame);
      const source = cold<JournalRecord>('aC-bcdeD|', { ...deltas('abcde'), C: commitOf('model'), D: commitOf('step') });
      const expected = '-'.repeat(51) + 'm-(d|)';
      expectObservable(write(source, journal, { demand, highWaterMark: 3 })).toBe(expected, { m: committed(commitOf('model'), 1), d: committed(commitOf('step'), 5) });
    });
    expect(journal.appends.map(({ frame, chunks, commit }) => [frame, chunks.join(''), commit])).toEqual([
      [1, 'a', 'model'],
      [51, 'bcd', undefined],
      [52, 'e', 'step'],
    ]);
    expect(open).toEqual([
      [1, true],
      [10, false],
      [53, true],
    ]);
  });

  it('on completion of the source mid-append: waits for it, writes what is left at once, then completes', () => {
    const journal = new ScriptedJournal(() => ({ latency: 5 }));
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(write(cold<JournalRecord>('aC-b|', { ...deltas('ab'), C: commitOf('model') }), journal)).toBe('------c----|', { c: committed(commitOf('model'), 1) });
    });
    expect(journal.appends.map(({ frame, chunks }) => [frame, chunks.join('')])).toEqual([
      [1, 'a'],
      [6, 'b'],
    ]);
  });

  it("on the source's error mid-append: errors at once, ignores the append's outcome, appends nothing more (documented: the outcome is unknown)", () => {
    const journal = new ScriptedJournal(() => ({ latency: 5 }));
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(write(cold<JournalRecord>('aC-bD#', { ...deltas('ab'), C: commitOf('model'), D: commitOf('step') }), journal)).toBe('-----#');
    });
    expect(journal.appends).toHaveLength(1);
  });

  it('on unsubscription mid-append: nothing is appended after it, though the append answers, a commit waits and the window fires', () => {
    const journal = new ScriptedJournal(() => ({ latency: 5 }));
    const demand = new DemandGate();
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<JournalRecord>('aCbcD---', { ...deltas('abc'), C: commitOf('model'), D: commitOf('step') });
      expectObservable(write(source, journal, { demand, highWaterMark: 2 }), '^---!').toBe('-----');
      expectSubscriptions(source.subscriptions).toBe('^---!');
    });
    expect(journal.appends).toHaveLength(1);
    expect(demand.open).toBe(true);
  });

  it('on unsubscription by the consumer of an acknowledgement (take(1)): nothing more is appended, the gate is open', () => {
    const journal = new ScriptedJournal(() => ({ latency: 2 }));
    const demand = new DemandGate();
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      const source = cold<JournalRecord>('CabD-e', { ...deltas('abe'), C: commitOf('model'), D: commitOf('step') });
      expectObservable(write(source, journal, { demand, highWaterMark: 2, maxBatch: 1 }).pipe(take(1))).toBe('--(m|)', { m: committed(commitOf('model'), 0) });
    });
    expect(journal.appends).toHaveLength(1);
    expect(demand.open).toBe(true);
  });

  it("keeps the run's order of chunks and commits, however the appends are timed (many schedules)", () => {
    let seed = 7;
    const random = (): number => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    for (let round = 0; round < 200; round++) {
      const latencies = Array.from({ length: 400 }, () => Math.floor(random() * 6));
      const journal = new ScriptedJournal((index) => ({ latency: latencies[index % latencies.length] as number }));
      const records: Array<[number, JournalRecord]> = [];
      const expected: string[] = [];
      /** The seq each commit's append ends at: the chunks before it in the run's order, its own included. */
      const seqs: number[] = [];
      let frame = 0;
      for (let index = 0; index < 60; index++) {
        frame += Math.floor(random() * 3);
        if (random() < 0.25) {
          const kind = (['model', 'step', 'rejected'] as const)[Math.floor(random() * 3)] as RunCommit['kind'];
          const own = random() < 0.5 ? [delta('r', `own${index}`)] : [];
          records.push([frame, commitOf(kind, own)]);
          expected.push(...own.map((chunk) => textOf(chunk) ?? chunk.type), `|${kind}`);
          seqs.push(expected.filter((name) => !name.startsWith('|')).length);
        } else {
          records.push([frame, delta('r', `c${index}`)]);
          expected.push(`c${index}`);
        }
      }
      const options: JournalToOptions = { maxBatch: 1 + Math.floor(random() * 4), highWaterMark: 1 + Math.floor(random() * 6), flushWindowMs: Math.floor(random() * 4) };
      const acks: JournalAck[] = [];
      let completed = false;
      createTestScheduler(expect).run(() => {
        const source = new Subject<JournalRecord>();
        for (const [at, record] of records) asyncScheduler.schedule(() => source.next(record), at);
        asyncScheduler.schedule(() => source.complete(), frame + 1);
        source.pipe(journalTo(journal, lease, options)).subscribe({ next: (ack) => acks.push(ack), complete: () => (completed = true) });
      });
      expect(completed).toBe(true);
      expect(journal.written).toEqual(expected);
      // each commit acknowledged once, in order, with the seq its append ended at
      const commits = records.filter((entry): entry is [number, JournalCommit] => 'commit' in entry[1]).map(([, record]) => record);
      expect(acks).toEqual(commits.map((record, index) => committed(record, seqs[index] as number)));
    }
  });
});

describe('journalTo under load', () => {
  it('bounds what is unwritten by the high-water mark for a source that waits on the gate (a burst past it is paced)', async () => {
    const run = new InMemoryRunJournal();
    await run.createRun({ runId: 'burst', agentId: 'a', input: null });
    const { lease: owned } = await run.claim('burst', 'w');
    const demand = new DemandGate();
    let emitted = 0;
    let written = 0;
    let peak = 0;
    const slow: JournalAppender = {
      appendEncoded: async (held, chunks, commit) => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        const appended = await run.appendEncoded(held, chunks, commit);
        written = appended.lastSeq;
        return appended;
      },
    };
    const source = new Observable<JournalRecord>((subscriber) => {
      void (async () => {
        for (let index = 0; index < 5_000 && !subscriber.closed; index++) {
          await demand.whenOpen();
          emitted++;
          peak = Math.max(peak, emitted - written);
          subscriber.next(delta('burst', `d${index}`));
        }
        subscriber.complete();
      })();
    });
    await lastValueFrom(source.pipe(journalTo(slow, owned, { demand, highWaterMark: 256, maxBatch: 64, flushWindowMs: 1 })), { defaultValue: undefined });
    expect(written).toBe(5_000);
    expect(peak).toBeLessThanOrEqual(256);
  });

  it('writes a synchronous source of 100,000 chunks in order, in few appends, without blowing the stack', async () => {
    const run = new InMemoryRunJournal();
    await run.createRun({ runId: 'big', agentId: 'a', input: null });
    const { lease: owned } = await run.claim('big', 'w');
    let appends = 0;
    const counting: JournalAppender = { appendEncoded: (held, chunks, commit) => (appends++, run.appendEncoded(held, chunks, commit)) };
    const { source } = firehose(100_000, (index) => (index === 99_999 ? commitOf('final', [finish('big')]) : delta('big', `${index}`)));
    const acks = await lastValueFrom(source.pipe(journalTo(counting, owned), toArray()));
    expect(acks).toHaveLength(1);
    expect(appends).toBeLessThanOrEqual(1 + Math.ceil(100_000 / 4096) + 1);
    const entries = await lastValueFrom(run.read$('big', { live: false }).pipe(toArray()));
    expect(entries).toHaveLength(100_000);
    expect(entries.every((entry, index) => entry.seq === index + 1 && (index === 99_999 || textOf(entry.chunk) === `${index}`))).toBe(true);
  });

  it('writes a synchronous source of 100,000 records, one in two a commit, without quadratic work', async () => {
    const written: string[] = [];
    const fast: JournalAppender = {
      appendEncoded: async (_held, chunks, commit) => {
        written.push(...chunks.map(nameOf), ...(commit === undefined ? [] : ['|']));
        return { lastSeq: written.length };
      },
    };
    const { source } = firehose(100_000, (index) => (index % 2 === 1 ? commitOf('step') : delta('r', `${index}`)));
    const acks = await lastValueFrom(source.pipe(journalTo(fast, lease), toArray()));
    expect(acks).toHaveLength(50_000);
    expect(written).toHaveLength(100_000);
  }, 30_000); // no timed assertion: the quadratic version took 7–9 s here, the linear one ≈ 0.5 s; the limit is the test's timeout

  it('writes 200,000 commits piled up behind one append (a source that ignores the gate) without quadratic work', async () => {
    let appends = 0;
    const fast: JournalAppender = { appendEncoded: async () => ({ lastSeq: 0 * appends++ }) };
    const { source } = firehose(200_000, () => commitOf('step'));
    const acks = await lastValueFrom(source.pipe(journalTo(fast, lease), toArray()));
    expect(acks).toHaveLength(200_000);
    expect(appends).toBe(200_000);
  }, 30_000); // the quadratic version took ≈ 155 s, the linear one ≈ 0.5 s: it cannot pass within the timeout

  it('writes synchronously answered appends of a synchronous source without recursion (a sync writer, 100,000 commits)', () => {
    const syncWriter: JournalAppender = {
      appendEncoded: (_held, chunks) => ({ then: (onFulfilled: (value: { lastSeq: number }) => unknown) => onFulfilled({ lastSeq: chunks.length }) }) as PromiseLike<{ lastSeq: number }>,
    };
    const { source } = firehose(100_000, () => commitOf('step'));
    let acks = 0;
    let done = false;
    source.pipe(journalTo(syncWriter, lease)).subscribe({ next: () => acks++, complete: () => (done = true) });
    expect([acks, done]).toEqual([100_000, true]);
  });
});

describe('journalTo after it is over, on a synchronous source', () => {
  it("writes nothing after its error at a commit's refused chunk, though the source goes on synchronously", () => {
    const journal = new ScriptedJournal(() => ({ latency: 0 }));
    const { source, emitted } = firehose(1_000, (index) => (index === 0 ? commitOf('final', [unencodable('finish')]) : delta('r', `${index}`)));
    let error: unknown;
    let subscription: Subscription | undefined;
    createTestScheduler(expect).run(() => {
      subscription = write(source, journal, { maxBatch: 1 }).subscribe({ error: (caught: unknown) => (error = caught) });
    });
    expect(error).toMatchObject({ name: 'JsonEncodingError' });
    expect(subscription?.closed).toBe(true);
    expect(journal.appends).toEqual([]);
    expect(emitted()).toBe(1);
  });

  it('stops a synchronous source at a writer that throws (nothing more read)', () => {
    const journal = new ScriptedJournal(() => ({ throws: new Error('pool is closed') }));
    const demand = new DemandGate();
    const { source, emitted } = firehose(100_000, (index) => delta('r', `${index}`));
    let error: unknown;
    createTestScheduler(expect).run(() => {
      write(source, journal, { maxBatch: 4, highWaterMark: 8, demand }).subscribe({ error: (caught: unknown) => (error = caught) });
    });
    expect(error).toEqual(new Error('pool is closed'));
    expect(journal.appends).toHaveLength(1);
    expect(emitted()).toBe(4);
    expect(demand.open).toBe(true);
  });

  it('appends nothing after its consumer unsubscribes inside a synchronous source (a writer that answers synchronously, take(3))', () => {
    let appends = 0;
    const syncWriter: JournalAppender = {
      appendEncoded: () => ({ then: (onFulfilled: (value: { lastSeq: number }) => unknown) => onFulfilled({ lastSeq: ++appends }) }) as PromiseLike<{ lastSeq: number }>,
    };
    const { source, emitted } = firehose(100_000, () => commitOf('step'));
    const acks: JournalAck[] = [];
    source.pipe(journalTo(syncWriter, lease), take(3)).subscribe((ack) => acks.push(ack));
    expect(acks).toHaveLength(3);
    expect(appends).toBe(3);
    expect(emitted()).toBe(3);
  });

  it('unsubscribes a synchronous source at a refused chunk, as documented, then writes what came before', () => {
    const journal = new ScriptedJournal(() => ({ latency: 1 }));
    const { source, emitted } = firehose(100_000, (index) => (index === 3 ? unencodable('text-delta') : delta('r', `${index}`)));
    createTestScheduler(expect).run(({ expectObservable }) => {
      expectObservable(write(source, journal)).toBe('-(r|)', { r: { kind: 'refused', error: { name: 'JsonEncodingError', message: expect.any(String) as never }, lastSeq: 3 } });
    });
    expect(emitted()).toBe(4);
    expect(journal.written).toEqual(['0', '1', '2']);
  });
});

describe('journalTo on PostgreSQL', () => {
  const schema = `rxagent_journal_to_${randomUUID().slice(0, 6)}`;
  let server: TestPostgres;
  let journal: PostgresRunJournal;

  beforeAll(async () => {
    server = await startTestPostgres();
    journal = new PostgresRunJournal({ connectionString: server.connectionString, schema });
    await journal.getRun('warm-up');
  }, 60_000);

  afterAll(async () => {
    await journal?.close();
    const db = new pg.Pool({ connectionString: server.connectionString, max: 1 });
    await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await db.end();
    await server?.stop();
  }, 60_000);

  const entriesOf = async (store: RunJournal, runId: string) => lastValueFrom(store.read$(runId, { live: false }).pipe(toArray()));

  it('writes 20,000 synchronous chunks and a final commit in order', async () => {
    const runId = `jt-${randomUUID()}`;
    await journal.createRun({ runId, agentId: 'a', input: null });
    const { lease: first } = await journal.claim(runId, 'w1');
    const { source } = firehose(20_001, (index) => (index === 20_000 ? commitOf('final', [finish(runId)]) : delta(runId, `${index}`)));
    const acks = await lastValueFrom(source.pipe(journalTo(journal, first), toArray()));
    expect(acks).toEqual([{ kind: 'committed', record: expect.anything() as never, lastSeq: 20_001 }]);
    const entries = await entriesOf(journal, runId);
    expect(entries.map((entry) => entry.seq)).toEqual(Array.from({ length: 20_001 }, (_, index) => index + 1));
    expect(entries.slice(0, 20_000).every((entry, index) => textOf(entry.chunk) === `${index}`)).toBe(true);

  }, 60_000);

  it('fences the old owner mid-batch at a takeover: its error is the FencedError, whole appends only, nothing written after the claim', async () => {
    const runId = `jt-${randomUUID()}`;
    await journal.createRun({ runId, agentId: 'a', input: null });
    const { lease: first } = await journal.claim(runId, 'w1');
    const records = new Subject<JournalRecord>();
    const failed = lastValueFrom(records.pipe(journalTo(journal, first, { flushWindowMs: 50 }))).then(
      () => undefined,
      (error: unknown) => error,
    );
    for (let index = 0; index < 600; index++) records.next(delta(runId, `${index}`)); // 512 go at once, 88 wait
    const { lease: second } = await journal.claim(runId, 'w2');
    records.next(commitOf('step'));
    expect(FencedError.isInstance(await failed)).toBe(true);
    const entries = await entriesOf(journal, runId);
    expect([0, 512]).toContain(entries.length);
    expect(entries.every((entry) => entry.epoch === first.epoch)).toBe(true);
    await journal.appendEncoded(second, [{ type: 'text-delta', json: JSON.stringify(delta(runId, 'new owner')) }]);
    expect((await entriesOf(journal, runId)).map((entry) => entry.epoch).slice(-1)).toEqual([second.epoch]);
  }, 60_000);
});
