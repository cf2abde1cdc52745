/**
 * `journalTo` (src/durable/internal/journal-to.ts) on a TestScheduler, against an in-memory
 * journal whose appends take virtual time: the flush window, group commit behind one append in
 * flight, commits acknowledged in order, the batch bounds (count, high-water mark, characters),
 * backpressure on the demand gate, a refused chunk, a failed append, the source's error, early
 * unsubscription.
 */
import { asyncScheduler, Subject, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { DemandGate } from '../../src/contract/demand-gate.js';
import { encodeJson } from '../../src/contract/json-codec.js';
import { journalTo, type JournalAck, type JournalAppender, type JournalCommit, type JournalRecord, type JournalToOptions } from '../../src/durable/internal/journal-to.js';
import { FencedError } from '../../src/storage/journal/errors/fenced-error.js';
import type { EncodedChunk, RunCommit, RunLease } from '../../src/storage/journal/types.js';
import { createTestScheduler } from '../../src/testing/test-scheduler.js';
import { delta, finish } from '../storage/journal-suite.js';
import { later, nameOf } from './fixtures/virtual-appends.js';

const lease: RunLease = { runId: 'r', epoch: 1, owner: 'w' };

/** A journal in memory whose appends answer `latency` frames later (a thenable settled on the test's scheduler). */
class VirtualJournal implements JournalAppender {
  /** Each append: the frame it started at, its chunks' texts (or types), its commit. */
  readonly appends: Array<{ frame: number; chunks: string[]; commit?: RunCommit['kind'] }> = [];
  readonly entries: EncodedChunk[] = [];
  /** The append (0-based) that fails with a FencedError. */
  failAt: number | undefined;

  constructor(readonly latency: number) {}

  appendEncoded(lease: RunLease, chunks: readonly EncodedChunk[], commit?: RunCommit): PromiseLike<{ lastSeq: number }> {
    const index = this.appends.length;
    this.appends.push({ frame: asyncScheduler.now(), chunks: chunks.map(nameOf), ...(commit === undefined ? {} : { commit: commit.kind }) });
    return later(this.latency, () => {
      if (index === this.failAt) throw new FencedError({ runId: lease.runId, epoch: lease.epoch, currentEpoch: lease.epoch + 1, reason: 'epoch' });
      this.entries.push(...chunks);
      return { lastSeq: this.entries.length };
    });
  }
}

const commitOf = (kind: RunCommit['kind'], chunks: ChunkType[] = []): JournalCommit => ({ commit: { kind, step: 0, attempt: 0, state: null }, chunks });
const deltas = (names: string): Record<string, ChunkType> => Object.fromEntries([...names].map((name) => [name, delta('r', name)]));
const committed = (record: JournalCommit, lastSeq: number): JournalAck => ({ kind: 'committed', record, lastSeq });

/** Runs `source` through journalTo on a fresh journal. */
function write(source: Observable<JournalRecord>, journal: VirtualJournal, options: JournalToOptions = {}): Observable<JournalAck> {
  return source.pipe(journalTo(journal, lease, { flushWindowMs: 3, ...options }));
}

describe('journalTo', () => {
  it('completes on an empty source without appending', () => {
    const journal = new VirtualJournal(2);
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(write(cold<JournalRecord>('|'), journal)).toBe('|');
    });
    expect(journal.appends).toEqual([]);
  });

  it('stays silent on a never source', () => {
    const journal = new VirtualJournal(2);
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(write(cold<JournalRecord>('-'), journal)).toBe('-');
    });
    expect(journal.appends).toEqual([]);
  });

  it('waits the flush window after the first buffered chunk, then appends everything buffered at once', () => {
    const journal = new VirtualJournal(2);
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(write(cold<JournalRecord>('a-b------|', deltas('ab')), journal)).toBe('---------|');
    });
    expect(journal.appends).toEqual([{ frame: 3, chunks: ['a', 'b'] }]);
  });

  it('writes a commit at once with what was buffered before it, its chunks after them, and emits it once written', () => {
    const journal = new VirtualJournal(2);
    const step = commitOf('step', [finish('r')]);
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(write(cold<JournalRecord>('a-C----|', { ...deltas('a'), C: step }), journal)).toBe('----c--|', { c: committed(step, 2) });
    });
    expect(journal.appends).toEqual([{ frame: 2, chunks: ['a', 'finish'], commit: 'step' }]);
  });

  it('keeps one append in flight; the next takes everything that waited (group commit), in the order of the records', () => {
    const journal = new VirtualJournal(5);
    const model = commitOf('model');
    const step = commitOf('step');
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      const source = cold<JournalRecord>('abM-cS|', { ...deltas('abc'), M: model, S: step });
      expectObservable(write(source, journal, { maxBatch: 2 })).toBe('-----------m----(s|)', { m: committed(model, 2), s: committed(step, 3) });
    });
    // a, b fill a batch (frame 1); the model commit waits for it, then goes alone (6 → 11): c came after it, so goes with the step commit
    expect(journal.appends).toEqual([
      { frame: 1, chunks: ['a', 'b'] },
      { frame: 6, chunks: [], commit: 'model' },
      { frame: 11, chunks: ['c'], commit: 'step' },
    ]);
  });

  it('flushes what is left at once when the source completes, then completes', () => {
    const journal = new VirtualJournal(2);
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(write(cold<JournalRecord>('a|', deltas('a')), journal, { flushWindowMs: 20 })).toBe('---|');
    });
    expect(journal.appends).toEqual([{ frame: 1, chunks: ['a'] }]);
  });

  it('takes at most highWaterMark chunks in one append, and holds the demand gate while that many are unwritten', () => {
    const journal = new VirtualJournal(5);
    const demand = new DemandGate();
    const open: Array<[number, boolean]> = [];
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      for (const frame of [0, 2, 7, 9]) asyncScheduler.schedule(() => open.push([frame, demand.open]), frame);
      expectObservable(write(cold<JournalRecord>('abc', deltas('abc')), journal, { highWaterMark: 2, maxBatch: 10, demand })).toBe('-');
    });
    // b makes two unwritten (held); the window's append takes two (3 → 8), c waits for the next window
    expect(journal.appends).toEqual([
      { frame: 3, chunks: ['a', 'b'] },
      { frame: 11, chunks: ['c'] },
    ]);
    expect(open).toEqual([
      [0, true],
      [2, false],
      [7, false],
      [9, true],
    ]);
  });

  it('bounds an append without a commit by maxBatchChars (at least one chunk goes)', () => {
    const journal = new VirtualJournal(2);
    const chunks = deltas('abcde');
    const size = encodeJson(chunks['a'], 'chunk').length;
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(write(cold<JournalRecord>('(abcde|)', chunks), journal, { maxBatchChars: 2 * size + 1 })).toBe('------|');
    });
    expect(journal.appends.map(({ frame, chunks: written }) => [frame, written.join('')])).toEqual([
      [0, 'ab'],
      [2, 'cd'],
      [4, 'e'],
    ]);
    const tiny = new VirtualJournal(1);
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(write(cold<JournalRecord>('(ab|)', chunks), tiny, { maxBatchChars: 1 })).toBe('--|');
    });
    expect(tiny.appends.map(({ chunks: written }) => written)).toEqual([['a'], ['b']]);
  });

  it('ends the records at a chunk the codec refuses: what came before is written, then the refusal, the source unsubscribed', () => {
    const journal = new VirtualJournal(2);
    const refused = { type: 'text-delta', runId: 'r', from: 'AGENT', payload: { id: 't1', text: 'x', size: 1n } } as unknown as ChunkType;
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<JournalRecord>('a-x-b|', { ...deltas('ab'), x: refused });
      expectObservable(write(source, journal)).toBe('----(r|)', { r: { kind: 'refused', error: { name: 'JsonEncodingError', message: expect.any(String) as never }, lastSeq: 1 } });
      expectSubscriptions(source.subscriptions).toBe('^-!');
    });
    expect(journal.appends).toEqual([{ frame: 2, chunks: ['a'] }]);
  });

  it('errors with a failed append (a FencedError) and writes nothing more', () => {
    const journal = new VirtualJournal(2);
    journal.failAt = 0;
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      const source = cold<JournalRecord>('a-C-b-D|', { ...deltas('ab'), C: commitOf('model'), D: commitOf('step') });
      expectObservable(write(source, journal)).toBe('----#', undefined, new FencedError({ runId: 'r', epoch: 1, currentEpoch: 2, reason: 'epoch' }));
    });
    expect(journal.appends).toHaveLength(1);
    expect(journal.entries).toEqual([]);
  });

  it("passes the source's error on at once, dropping what was buffered", () => {
    const journal = new VirtualJournal(2);
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(write(cold<JournalRecord>('a-#', deltas('a'), new Error('model down')), journal)).toBe('--#', undefined, new Error('model down'));
    });
    expect(journal.appends).toEqual([]);
  });

  it('drops what is buffered and releases the demand gate when unsubscribed early', () => {
    const journal = new VirtualJournal(2);
    const demand = new DemandGate();
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<JournalRecord>('ab-----', deltas('ab'));
      expectObservable(write(source, journal, { flushWindowMs: 5, highWaterMark: 2, demand }), '^--!').toBe('---');
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
    expect(journal.appends).toEqual([]);
    expect(demand.open).toBe(true);
  });

  it('waits for onAppended after each append before acknowledging its commit and starting the next', () => {
    const journal = new VirtualJournal(1);
    const seen: Array<{ lastSeq: number; chunks: number; commit?: string }> = [];
    const step = commitOf('step');
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      const onAppended = (info: { lastSeq: number; chunks: number; commit?: RunCommit['kind'] }) => {
        seen.push(info);
        return later(3, () => undefined);
      };
      expectObservable(write(cold<JournalRecord>('aS|', { ...deltas('a'), S: step }), journal, { onAppended })).toBe('-----(s|)', { s: committed(step, 1) });
    });
    expect(seen).toEqual([{ lastSeq: 1, chunks: 1, commit: 'step' }]);
  });

  it('errors when onAppended throws (a fault point: the writes stop there)', () => {
    const journal = new VirtualJournal(1);
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      const onAppended = () => {
        throw new Error('crash');
      };
      expectObservable(write(cold<JournalRecord>('a-S-b|', { ...deltas('ab'), S: commitOf('step') }), journal, { onAppended })).toBe('---#', undefined, new Error('crash'));
    });
    expect(journal.appends).toHaveLength(1);
  });

  it("errors at once with the codec's refusal of a commit's own chunk (nothing of the commit is written)", () => {
    const journal = new VirtualJournal(1);
    const refused = { type: 'finish', runId: 'r', from: 'AGENT', payload: { size: 1n } } as unknown as ChunkType;
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(write(cold<JournalRecord>('a-F|', { ...deltas('a'), F: commitOf('final', [refused]) }), journal)).toBe('--#', undefined, { name: 'JsonEncodingError', message: expect.any(String) as never });
    });
    expect(journal.appends).toEqual([]);
  });

  it('starts clean on each subscription (a resubscription writes again from an empty buffer)', () => {
    const journal = new VirtualJournal(1);
    const records = new Subject<JournalRecord>();
    const written = records.pipe(journalTo(journal, lease, { flushWindowMs: 0 }));
    const first = written.subscribe();
    first.unsubscribe();
    expect(() => records.next(delta('r', 'a'))).not.toThrow();
    expect(journal.appends).toEqual([]);
  });

  it('refuses options out of range', () => {
    const journal = new VirtualJournal(1);
    expect(() => journalTo(journal, lease, { maxBatch: 0 })).toThrow(RangeError);
    expect(() => journalTo(journal, lease, { maxBatchChars: 0 })).toThrow(/maxBatchChars/);
    expect(() => journalTo(journal, lease, { flushWindowMs: 1.5 })).toThrow(/flushWindowMs/);
  });
});
