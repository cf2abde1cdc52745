/**
 * The batched writer a run's owner appends through: each chunk encoded once into a buffer, a
 * flush 20 ms after the first buffered chunk, at 512 chunks, or at a commit; one flush in flight,
 * and the next takes everything buffered meanwhile (up to 4,096 chunks or 8 Mi characters: a group
 * commit, so a slow database gets fewer, larger statements); past 4,096 chunks not yet written it
 * reports backpressure. A failed flush stops it for good (a `FencedError` above all: the run has
 * another owner), and nothing is retried: a flush whose outcome is unknown must not be written twice.
 */
import { BehaviorSubject, asyncScheduler, distinctUntilChanged, filter, firstValueFrom, type Observable, type SchedulerLike, type Subscription } from 'rxjs';
import { encodeJson, type ChunkType } from '../../contract/index.js';
import type { EncodedChunk, RunCommit, RunJournal, RunLease } from '../../storage/index.js';

/** Options of `JournalWriter`. */
export interface JournalWriterOptions {
  journal: RunJournal;
  lease: RunLease;
  /** How long the first buffered chunk waits for company, in ms. Default 20. */
  flushWindowMs?: number;
  /** Flush at once when this many chunks are buffered. Default 512. */
  maxBatch?: number;
  /**
   * Chunks not yet written (buffered or in flight) at which `isFull` turns true, and the most one
   * flush takes without a commit (one behind a slow flush takes all that waited, up to this). Default 4096.
   */
  highWaterMark?: number;
  /**
   * The most JSON text one flush without a commit takes, in UTF-16 code units (at least one chunk
   * goes, whatever its size). Default 8 Mi: a batch of large chunks stays far below PostgreSQL's
   * 1 GB limit on a statement's parameter.
   */
  maxBatchChars?: number;
  /** Runs the flush window's timer. Default `asyncScheduler`. */
  scheduler?: SchedulerLike;
  /** Called after each successful write (the worker's `chunks-flushed` fault point). */
  onFlushed?: (info: { lastSeq: number; chunks: number; commit?: RunCommit['kind'] }) => void | Promise<void>;
}

/** What a commit waits for and writes: the buffered chunks, its own chunks and the checkpoint. */
interface PendingCommit {
  commit: RunCommit;
  chunks: EncodedChunk[];
  resolve: (result: { lastSeq: number }) => void;
  reject: (error: unknown) => void;
}

/** The backpressure a writer reports, for the run's demand gate. */
export interface WriterBackpressure {
  /** True while the writer holds `highWaterMark` or more unwritten chunks. */
  readonly isFull: boolean;
  /** `true` when it can take more, `false` when full (distinct values, current one first). */
  readonly ready$: Observable<boolean>;
  /** Resolves when the writer can take more (at once when it can now; rejects once stopped). */
  whenReady(): Promise<void>;
}

/**
 * Batches one run's chunks into journal appends under one lease.
 *
 * @example
 * ```ts
 * const writer = new JournalWriter({ journal, lease });
 * writer.write(chunk);                                  // encoded now; JsonEncodingError if it cannot be
 * if (writer.isFull) await writer.whenReady();          // a slow database pauses the run
 * await writer.commit({ kind: 'step', step: 0, attempt: 0, state });
 * ```
 */
export class JournalWriter implements WriterBackpressure {
  readonly #journal: RunJournal;
  readonly #lease: RunLease;
  readonly #windowMs: number;
  readonly #maxBatch: number;
  readonly #highWaterMark: number;
  readonly #maxBatchChars: number;
  readonly #scheduler: SchedulerLike;
  readonly #onFlushed: JournalWriterOptions['onFlushed'];
  readonly #ready = new BehaviorSubject(true);
  #buffer: EncodedChunk[] = [];
  #inFlight = 0;
  #flushing: Promise<void> | undefined;
  #timer: Subscription | undefined;
  #commits: PendingCommit[] = [];
  #lastSeq = 0;
  #stopped: { error: unknown } | undefined;
  #full = false;

  constructor(options: JournalWriterOptions) {
    this.#journal = options.journal;
    this.#lease = options.lease;
    this.#windowMs = options.flushWindowMs ?? 20;
    this.#maxBatch = options.maxBatch ?? 512;
    this.#highWaterMark = options.highWaterMark ?? 4096;
    this.#maxBatchChars = options.maxBatchChars ?? 8 * 1024 * 1024;
    this.#scheduler = options.scheduler ?? asyncScheduler;
    this.#onFlushed = options.onFlushed;
    for (const [name, value, minimum] of [['flushWindowMs', this.#windowMs, 0], ['maxBatch', this.#maxBatch, 1], ['highWaterMark', this.#highWaterMark, 1], ['maxBatchChars', this.#maxBatchChars, 1]] as const) {
      if (!Number.isSafeInteger(value) || value < minimum) throw new RangeError(`JournalWriter: ${name} must be an integer ≥ ${minimum} (got ${String(value)})`);
    }
  }

  /** The seq of the last chunk written (0 before the first write). */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  /** Chunks buffered or in flight. */
  get pending(): number {
    return this.#buffer.length + this.#inFlight;
  }

  get isFull(): boolean {
    return this.#full;
  }

  get ready$(): Observable<boolean> {
    return this.#ready.pipe(distinctUntilChanged());
  }

  /** The error that stopped the writer (a `FencedError`, a storage failure), or `undefined`. */
  get error(): unknown {
    return this.#stopped?.error;
  }

  whenReady(): Promise<void> {
    if (this.#stopped !== undefined) return Promise.reject(this.#stopped.error);
    if (!this.#full) return Promise.resolve();
    return firstValueFrom(this.#ready.pipe(filter(Boolean))).then(() => undefined);
  }

  /**
   * Encodes `chunk` (throws `JsonEncodingError` naming type and path; nothing is buffered) and
   * buffers it. Throws the stopping error once the writer has stopped.
   */
  write(chunk: ChunkType): void {
    if (this.#stopped !== undefined) throw this.#stopped.error;
    const type = chunk.type;
    this.#push({ type, json: encodeJson(chunk, `chunk ${type}`) });
  }

  /** Buffers a chunk already encoded (a takeover writes a step's journaled chunks again, byte for byte). */
  writeEncoded(chunk: EncodedChunk): void {
    if (this.#stopped !== undefined) throw this.#stopped.error;
    this.#push(chunk);
  }

  #push(encoded: EncodedChunk): void {
    this.#buffer.push(encoded);
    this.#pressure();
    if (this.#buffer.length >= this.#maxBatch) this.#kick();
    else this.#timer ??= this.#scheduler.schedule(() => {
      this.#timer = undefined;
      this.#kick();
    }, this.#windowMs);
  }

  /**
   * Writes every buffered chunk, then `chunks` and the commit, after any flush in flight: the
   * commit and its chunks in one append (one transaction) with the last of the buffered chunks
   * (more than `highWaterMark` chunks or `maxBatchChars` waiting go first, in appends of their
   * own). Rejects with the stopping error (and stops the writer on failure).
   */
  commit(commit: RunCommit, chunks: readonly ChunkType[] = []): Promise<{ lastSeq: number }> {
    if (this.#stopped !== undefined) return Promise.reject(this.#stopped.error);
    let encoded: EncodedChunk[];
    try {
      encoded = chunks.map((chunk) => ({ type: chunk.type, json: encodeJson(chunk, `chunk ${chunk.type}`) }));
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      this.#commits.push({ commit, chunks: encoded, resolve, reject });
      this.#kick();
    });
  }

  /** Resolves once everything buffered so far is written (rejects if the writer stops). */
  async flush(): Promise<void> {
    while (this.#stopped === undefined && (this.#buffer.length > 0 || this.#flushing !== undefined || this.#commits.length > 0)) {
      this.#kick();
      await this.#flushing;
    }
    if (this.#stopped !== undefined) throw this.#stopped.error;
  }

  /** Drops what is buffered and stops (the run ended or was handed over). */
  close(): void {
    this.#stop(new Error('JournalWriter closed'));
  }

  /** Starts a flush unless one is in flight (which starts the next when it ends). */
  #kick(): void {
    if (this.#flushing !== undefined || this.#stopped !== undefined) return;
    if (this.#buffer.length === 0 && this.#commits.length === 0) return;
    this.#timer?.unsubscribe();
    this.#timer = undefined;
    this.#flushing = this.#flushOnce().finally(() => {
      this.#flushing = undefined;
      // What arrived meanwhile: a commit or a full batch goes now, a few chunks get a new window.
      if (this.#commits.length > 0 || this.#buffer.length >= this.#maxBatch) this.#kick();
      else if (this.#buffer.length > 0 && this.#stopped === undefined) {
        this.#timer ??= this.#scheduler.schedule(() => {
          this.#timer = undefined;
          this.#kick();
        }, this.#windowMs);
      }
    });
  }

  async #flushOnce(): Promise<void> {
    // a commit goes in the append that takes the last buffered chunk, its own chunks after them
    const batch = this.#takeBatch();
    const pending = this.#buffer.length === 0 ? this.#commits.shift() : undefined;
    if (pending !== undefined) batch.push(...pending.chunks);
    this.#inFlight = batch.length;
    try {
      const { lastSeq } = await this.#journal.appendEncoded(this.#lease, batch, pending?.commit);
      this.#lastSeq = lastSeq;
      this.#inFlight = 0;
      this.#pressure();
      await this.#onFlushed?.({ lastSeq, chunks: batch.length, ...(pending === undefined ? {} : { commit: pending.commit.kind }) });
      pending?.resolve({ lastSeq });
    } catch (error) {
      this.#inFlight = 0;
      pending?.reject(error);
      this.#stop(error);
    }
  }

  /** What waited, oldest first, up to highWaterMark chunks and maxBatchChars of text: under a slow database batches grow instead of queueing. */
  #takeBatch(): EncodedChunk[] {
    const limit = Math.min(this.#buffer.length, this.#highWaterMark);
    let count = 0;
    let chars = 0;
    while (count < limit) {
      chars += (this.#buffer[count] as EncodedChunk).json.length;
      if (count > 0 && chars > this.#maxBatchChars) break;
      count++;
    }
    return this.#buffer.splice(0, count);
  }

  #stop(error: unknown): void {
    if (this.#stopped !== undefined) return;
    this.#stopped = { error };
    this.#timer?.unsubscribe();
    this.#timer = undefined;
    this.#buffer = [];
    for (const pending of this.#commits.splice(0)) pending.reject(error);
    this.#ready.error(error);
  }

  #pressure(): void {
    const full = this.pending >= this.#highWaterMark;
    if (full === this.#full || this.#stopped !== undefined) return;
    this.#full = full;
    this.#ready.next(!full);
  }
}
