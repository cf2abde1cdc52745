/**
 * The batched writer (src/durable/internal/journal-writer.ts) over an InMemoryRunJournal whose
 * appends are recorded and can be held: batching by window (a virtual-time scheduler), by size
 * and at a commit; one flush in flight; backpressure; a FencedError stops it; codec refusals.
 */
import { VirtualTimeScheduler, lastValueFrom, toArray, type SchedulerLike } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { JournalWriter } from '../../src/durable/internal/journal-writer.js';
import { InMemoryRunJournal } from '../../src/storage/journal/in-memory-run-journal.js';
import type { EncodedChunk, RunCommit, RunLease } from '../../src/storage/journal/types.js';
import { commit, delta, finish, rejection } from '../storage/journal-suite.js';

/** An in-memory journal whose appendEncoded calls are recorded and, when `hold` is set, wait. */
class RecordingJournal extends InMemoryRunJournal {
  readonly calls: Array<{ chunks: number; commit?: RunCommit['kind'] }> = [];
  inFlight = 0;
  maxInFlight = 0;
  hold: Promise<void> | undefined;

  /** Holds every append from now on; the returned function lets them (and later ones) through. */
  holdAppends(): () => void {
    let release: () => void = () => undefined;
    this.hold = new Promise((resolve) => (release = resolve));
    return () => {
      release();
      this.hold = undefined;
    };
  }

  override async appendEncoded(lease: RunLease, chunks: readonly EncodedChunk[], checkpoint?: RunCommit): Promise<{ lastSeq: number }> {
    this.calls.push({ chunks: chunks.length, ...(checkpoint === undefined ? {} : { commit: checkpoint.kind }) });
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await this.hold;
      return await super.appendEncoded(lease, chunks, checkpoint);
    } finally {
      this.inFlight -= 1;
    }
  }
}

async function setUp(options: { maxBatch?: number; highWaterMark?: number; maxBatchChars?: number; scheduler?: SchedulerLike } = {}) {
  const journal = new RecordingJournal();
  await journal.createRun({ runId: 'r', agentId: 'a', input: null });
  const { lease } = await journal.claim('r', 'w');
  const scheduler = options.scheduler ?? new VirtualTimeScheduler();
  const writer = new JournalWriter({ journal, lease, scheduler, ...(options.maxBatch === undefined ? {} : { maxBatch: options.maxBatch }), ...(options.highWaterMark === undefined ? {} : { highWaterMark: options.highWaterMark }), ...(options.maxBatchChars === undefined ? {} : { maxBatchChars: options.maxBatchChars }) });
  return { journal, lease, writer, scheduler: scheduler as VirtualTimeScheduler };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
const chunks = (count: number, from = 0): ChunkType[] => Array.from({ length: count }, (_, index) => delta('r', `${from + index}`));

describe('JournalWriter', () => {
  it('waits the flush window (20 ms of its scheduler) after the first buffered chunk, then writes all buffered chunks at once', async () => {
    const { journal, writer, scheduler } = await setUp();
    for (const chunk of chunks(3)) writer.write(chunk);
    await settle();
    expect(journal.calls).toEqual([]);
    scheduler.maxFrames = 19;
    scheduler.flush();
    await settle();
    expect(journal.calls).toEqual([]);
    scheduler.maxFrames = Number.POSITIVE_INFINITY;
    scheduler.flush();
    await writer.flush();
    expect(journal.calls).toEqual([{ chunks: 3 }]);
    expect(writer.lastSeq).toBe(3);
  });

  it('flushes at once at maxBatch chunks, one flush in flight, everything buffered meanwhile in the next', async () => {
    const { journal, writer } = await setUp({ maxBatch: 4 });
    const release = journal.holdAppends();
    for (const chunk of chunks(10)) writer.write(chunk);
    await settle();
    expect(journal.calls).toEqual([{ chunks: 4 }]);
    release();
    await writer.flush();
    expect(journal.maxInFlight).toBe(1);
    expect(journal.calls.map((call) => call.chunks)).toEqual([4, 6]);
    expect(writer.lastSeq).toBe(10);
    expect((await lastValueFrom(journal.read$('r', { live: false }).pipe(toArray()))).map((entry) => entry.seq)).toEqual(Array.from({ length: 10 }, (_, index) => index + 1));
  });

  it('a flush behind a slow one takes at most highWaterMark chunks; the rest follow in order', async () => {
    const { journal, writer } = await setUp({ maxBatch: 2, highWaterMark: 5 });
    const release = journal.holdAppends();
    for (const chunk of chunks(13)) writer.write(chunk); // a producer that ignores isFull
    await settle();
    expect(journal.calls).toEqual([{ chunks: 2 }]);
    release();
    await writer.flush();
    expect(journal.calls.map((call) => call.chunks)).toEqual([2, 5, 5, 1]);
    const texts = (await lastValueFrom(journal.read$('r', { live: false }).pipe(toArray()))).map((entry) => (entry.chunk as { payload: { text: string } }).payload.text);
    expect(texts).toEqual(chunks(13).map((chunk) => (chunk as { payload: { text: string } }).payload.text));
  });

  it('a flush behind a slow one stops at maxBatchChars of JSON text, taking a larger chunk alone', async () => {
    const { journal, writer } = await setUp({ maxBatch: 1, maxBatchChars: 500 });
    const release = journal.holdAppends();
    const sizes = [10, 10, 150, 150, 150, 1000, 10];
    for (const [index, size] of sizes.entries()) writer.write(delta('r', `${index}`.padEnd(size, '.')));
    await settle();
    expect(journal.calls).toEqual([{ chunks: 1 }]);
    release();
    await writer.flush();
    // a delta's JSON is its text plus 80 characters: 90 + 230 (a third would pass 500), 230 + 230, the 1,080 alone, 90
    expect(journal.calls.map((call) => call.chunks)).toEqual([1, 2, 2, 1, 1]);
    expect(writer.lastSeq).toBe(sizes.length);
    expect(() => new JournalWriter({ journal, lease: { runId: 'r', epoch: 1, owner: 'w' }, maxBatchChars: 0 })).toThrow(/maxBatchChars/);
  });

  it('a commit writes the buffered chunks, its own chunks and the checkpoint in one append', async () => {
    const { journal, writer } = await setUp();
    for (const chunk of chunks(3)) writer.write(chunk);
    const result = await writer.commit(commit('final'), [finish('r')]);
    expect(result).toEqual({ lastSeq: 4 });
    expect(journal.calls).toEqual([{ chunks: 4, commit: 'final' }]);
    expect((await journal.getRun('r'))?.status).toBe('completed');
  });

  it('a commit during a flush waits for it, then goes with everything buffered meanwhile', async () => {
    const { journal, writer } = await setUp({ maxBatch: 2 });
    const release = journal.holdAppends();
    for (const chunk of chunks(2)) writer.write(chunk);
    writer.write(delta('r', 'late'));
    const committed = writer.commit(commit('step'));
    await settle();
    expect(journal.calls).toEqual([{ chunks: 2 }]);
    release();
    expect(await committed).toEqual({ lastSeq: 3 });
    expect(journal.calls).toEqual([{ chunks: 2 }, { chunks: 1, commit: 'step' }]);
  });

  it('a commit behind more than highWaterMark buffered chunks: they go first in bounded appends, the commit with the last of them', async () => {
    const { journal, writer } = await setUp({ maxBatch: 2, highWaterMark: 3 });
    const release = journal.holdAppends();
    for (const chunk of chunks(7)) writer.write(chunk); // a producer that ignores isFull
    const committed = writer.commit(commit('step'));
    await settle();
    expect(journal.calls).toEqual([{ chunks: 2 }]);
    release();
    expect(await committed).toEqual({ lastSeq: 7 });
    expect(journal.calls).toEqual([{ chunks: 2 }, { chunks: 3 }, { chunks: 2, commit: 'step' }]);
    const committedRun = await journal.claim('r', 'next');
    expect(committedRun.commits.map((entry) => entry.kind)).toEqual(['step']);
  });

  it('reports backpressure past highWaterMark unwritten chunks and clears it when they are written', async () => {
    const { journal, writer } = await setUp({ maxBatch: 4, highWaterMark: 6 });
    const seen: boolean[] = [];
    writer.ready$.subscribe((ready) => seen.push(ready));
    const release = journal.holdAppends();
    for (const chunk of chunks(6)) writer.write(chunk);
    expect(writer.isFull).toBe(true);
    const ready = writer.whenReady();
    release();
    await ready;
    expect(writer.isFull).toBe(false);
    await writer.flush();
    expect(seen).toEqual([true, false, true]);
  });

  it('a FencedError stops it: nothing retried, later writes and commits fail with that error', async () => {
    const { journal, writer, lease } = await setUp({ maxBatch: 2 });
    await journal.claim('r', 'other'); // the run moves on
    for (const chunk of chunks(2)) writer.write(chunk);
    const error = await rejection(writer.flush());
    expect(error).toMatchObject({ name: 'FencedError', epoch: lease.epoch, currentEpoch: 2 });
    expect(journal.calls).toHaveLength(1);
    expect(() => writer.write(delta('r', 'x'))).toThrow(expect.objectContaining({ name: 'FencedError' }));
    expect(await rejection(writer.commit(commit('step')))).toBe(error);
    expect(await rejection(writer.whenReady())).toBe(error);
    expect(writer.error).toBe(error);
    expect(journal.calls).toHaveLength(1);
    expect((await journal.getRun('r'))?.lastSeq).toBe(0);
  });

  it('a chunk the codec refuses throws JsonEncodingError naming type and path; the writer goes on', async () => {
    const { writer } = await setUp();
    writer.write(delta('r', 'a'));
    expect(() => writer.write({ type: 'data-bad', data: { n: 10n } })).toThrow(expect.objectContaining({ name: 'JsonEncodingError', path: '$.data.n', type: 'bigint' }));
    expect(() => writer.write({ type: 'data-bad', data: { n: 10n } })).toThrow(/chunk data-bad/);
    expect(await rejection(writer.commit(commit('step'), [{ type: 'data-cycle', data: (() => { const o: Record<string, unknown> = {}; o['self'] = o; return o; })() }]))).toMatchObject({
      name: 'JsonEncodingError',
      type: 'cycle',
    });
    writer.write(delta('r', 'b'));
    await writer.flush();
    expect(writer.lastSeq).toBe(2);
  });

  it('encodes each chunk once, at write time: later mutation of the chunk object does not change what is written', async () => {
    const { journal, writer } = await setUp();
    const chunk = delta('r', 'before') as ChunkType & { payload: { text: string } };
    writer.write(chunk);
    chunk.payload.text = 'after';
    await writer.flush();
    const entries: string[] = [];
    journal.read$('r', { live: false }).subscribe((entry) => entries.push(entry.json));
    await settle();
    expect(entries[0]).toContain('"before"');
  });

  it('calls onFlushed after each write with the seq reached', async () => {
    const journal = new InMemoryRunJournal();
    await journal.createRun({ runId: 'r', agentId: 'a', input: null });
    const { lease } = await journal.claim('r', 'w');
    const flushed: unknown[] = [];
    const writer = new JournalWriter({ journal, lease, maxBatch: 2, onFlushed: (info) => void flushed.push(info) });
    for (const chunk of chunks(3)) writer.write(chunk);
    await writer.commit(commit('step'));
    expect(flushed).toEqual([{ lastSeq: 2, chunks: 2 }, { lastSeq: 3, chunks: 1, commit: 'step' }]);
    expect(() => new JournalWriter({ journal, lease, maxBatch: 0 })).toThrow(RangeError);
  });
});
