/**
 * `journalTo`: a run's journal records written under one lease, the batching engine behind an
 * operator. Each chunk is encoded once into a buffer; a flush goes 20 ms (of the scheduler) after
 * the first buffered chunk, at 512 chunks, or at a commit; one append is in flight at a time
 * (`concatMap`), and the next takes everything buffered meanwhile (up to 4,096 chunks or 8 Mi
 * characters: a group commit, so a slow database gets fewer, larger statements). A failed append
 * is the operator's error (a `FencedError` above all: the run has another owner), and nothing is
 * retried: an append whose outcome is unknown must not be written twice.
 */
import { Observable, Subject, Subscription, asyncScheduler, concatMap, defer, from, map, takeUntil, type OperatorFunction, type SchedulerLike } from 'rxjs';
import { JsonEncodingError, encodeJson, type ChunkType, type DemandGate } from '../../contract/index.js';
import type { EncodedChunk, RunCommit, RunLease } from '../../storage/index.js';

/** A commit to write: everything buffered before it, then its own chunks and the checkpoint, in one append. */
export interface JournalCommit {
  readonly commit: RunCommit;
  readonly chunks: readonly ChunkType[];
}

/** What `journalTo` writes: a chunk (buffered), or a commit (written with what was buffered before it). */
export type JournalRecord<C extends JournalCommit = JournalCommit> = ChunkType | C;

/**
 * What `journalTo` emits: a commit record once written (`lastSeq`: the run's last seq after its
 * append), or, last, the refusal of a chunk the codec could not encode (everything before it written).
 */
export type JournalAck<C extends JournalCommit = JournalCommit> =
  | { readonly kind: 'committed'; readonly record: C; readonly lastSeq: number }
  | { readonly kind: 'refused'; readonly error: JsonEncodingError; readonly lastSeq: number };

/** What `journalTo` uses of a `RunJournal`: one fenced append of encoded chunks, maybe with a commit. */
export interface JournalAppender {
  appendEncoded(lease: RunLease, chunks: readonly EncodedChunk[], commit?: RunCommit): PromiseLike<{ readonly lastSeq: number }>;
}

/** Options of `journalTo`. */
export interface JournalToOptions {
  /** How long the first buffered chunk waits for company, in ms. Default 20. */
  flushWindowMs?: number;
  /** Append at once when this many chunks are buffered. Default 512. */
  maxBatch?: number;
  /**
   * Chunks not yet written (buffered or in flight) at which `demand` is held, and the most one
   * append takes without a commit (one behind a slow append takes all that waited, up to this). Default 4096.
   */
  highWaterMark?: number;
  /**
   * The most JSON text one append without a commit takes, in UTF-16 code units (at least one chunk
   * goes, whatever its size). Default 8 Mi: a batch of large chunks stays far below PostgreSQL's
   * 1 GB limit on a statement's parameter.
   */
  maxBatchChars?: number;
  /** Held while `highWaterMark` or more chunks are unwritten: a slow database pauses the run. */
  demand?: DemandGate;
  /** Runs the flush window's timer. Default `asyncScheduler`. */
  scheduler?: SchedulerLike;
  /** Awaited after each append, before its commit is acknowledged and the next append starts (the worker's fault points). */
  onAppended?: (info: { lastSeq: number; chunks: number; commit?: RunCommit['kind'] }) => void | PromiseLike<void>;
}

/** One append: a batch of encoded chunks and, with the last of them, maybe a commit. */
interface Append<C extends JournalCommit> {
  readonly chunks: EncodedChunk[];
  readonly record: C | undefined;
}

const isCommit = <C extends JournalCommit>(record: JournalRecord<C>): record is C => (record as Partial<JournalCommit>).commit !== undefined;

const encode = (chunk: ChunkType): EncodedChunk => ({ type: chunk.type, json: encodeJson(chunk, `chunk ${chunk.type}`) });

/** The options with their defaults, checked once. */
function settingsOf(options: JournalToOptions) {
  const settings = {
    flushWindowMs: options.flushWindowMs ?? 20,
    maxBatch: options.maxBatch ?? 512,
    highWaterMark: options.highWaterMark ?? 4096,
    maxBatchChars: options.maxBatchChars ?? 8 * 1024 * 1024,
  };
  for (const [name, value, minimum] of [['flushWindowMs', settings.flushWindowMs, 0], ['maxBatch', settings.maxBatch, 1], ['highWaterMark', settings.highWaterMark, 1], ['maxBatchChars', settings.maxBatchChars, 1]] as const) {
    if (!Number.isSafeInteger(value) || value < minimum) throw new RangeError(`journalTo: ${name} must be an integer ≥ ${minimum} (got ${String(value)})`);
  }
  return settings;
}

/**
 * Writes a run's records to `journal` under `lease`, batched, and emits each commit record once
 * written. Completes when the source has and everything is written. A streamed chunk the codec
 * refuses ends the records there: what came before it is written, then `refused` is the last value
 * (the source unsubscribed). Errors with an append's failure (at once: nothing more is written) or
 * with the source's error. Unsubscribing drops what is buffered (an append in flight is not
 * awaited: the database may still take it) and appends nothing more; so does an error.
 *
 * ```
 * source:   a-b----C---c--|          (C a commit; window 3 frames, appends take 2)
 * appends:  ---[ab]-[C]-----[c]      (one append in flight, a commit after what was buffered)
 * result:   ----------C-------|
 * ```
 *
 * @example
 * ```ts
 * const acks$ = records$.pipe(journalTo(journal, lease, { demand }));
 * acks$.subscribe((ack) => ack.kind === 'committed' && console.log(ack.record.commit.kind, ack.lastSeq));
 * ```
 */
export function journalTo<C extends JournalCommit = JournalCommit>(
  journal: JournalAppender,
  lease: RunLease,
  options: JournalToOptions = {},
): OperatorFunction<JournalRecord<C>, JournalAck<C>> {
  const { flushWindowMs, maxBatch, highWaterMark, maxBatchChars } = settingsOf(options);
  const { demand, onAppended } = options;
  const scheduler = options.scheduler ?? asyncScheduler;
  return (source) =>
    new Observable<JournalAck<C>>((subscriber) => {
      /** Chunks before the first commit waiting; each waiting commit holds the chunks that came after it. */
      let buffer: EncodedChunk[] = [];
      const commits: Array<{ record: C; chunks: EncodedChunk[]; following: EncodedChunk[] }> = [];
      /** Commits at the head of `commits` already taken, fewer than 1,024 (`commits` is emptied once all are: non-empty, one waits). */
      let taken = 0;
      /** The chunks of all `following` arrays (counted, not summed: commits can pile up behind a slow append). */
      let followingCount = 0;
      /** Chunks of the append in flight (`undefined`: none in flight). */
      let inFlight: number | undefined;
      let window: Subscription | undefined;
      let lastSeq = 0;
      /** The source is over: it completed, or a chunk was refused (then the refusal, once all is written). */
      let sourceDone = false;
      let refused: JsonEncodingError | undefined;
      let full = false;
      const holder = {};

      /** Holds the demand gate while `highWaterMark` chunks or more are unwritten. */
      const pressure = (): void => {
        const isFull = buffer.length + (inFlight ?? 0) + followingCount >= highWaterMark;
        if (isFull === full) return;
        full = isFull;
        if (isFull) demand?.hold(holder);
        else demand?.release(holder);
      };

      /** What waited, oldest first, up to highWaterMark chunks and maxBatchChars of text. */
      const takeBatch = (): EncodedChunk[] => {
        const limit = Math.min(buffer.length, highWaterMark);
        let count = 0;
        let chars = 0;
        while (count < limit) {
          chars += (buffer[count] as EncodedChunk).json.length;
          if (count > 0 && chars > maxBatchChars) break;
          count++;
        }
        return buffer.splice(0, count);
      };

      const appends = new Subject<Append<C>>();

      /** The oldest waiting commit, off the queue (not `shift`, which copies a long array: commits can pile up behind a slow append). */
      const takeCommit = () => {
        if (commits.length === 0) return undefined;
        const pending = commits[taken++];
        if (taken === commits.length || taken === 1024) {
          commits.splice(0, taken);
          taken = 0;
        }
        return pending;
      };

      /** Starts an append unless one is in flight (whose end starts the next). */
      const kick = (): void => {
        if (inFlight !== undefined || (buffer.length === 0 && commits.length === 0)) return;
        window?.unsubscribe();
        window = undefined;
        // a commit goes in the append that takes the last buffered chunk, its own chunks after them
        const chunks = takeBatch();
        const pending = buffer.length === 0 ? takeCommit() : undefined;
        if (pending !== undefined) {
          chunks.push(...pending.chunks);
          buffer = pending.following;
          followingCount -= buffer.length;
        }
        inFlight = chunks.length;
        appends.next({ chunks, record: pending?.record });
      };

      const openWindow = (): void => {
        window ??= scheduler.schedule(() => {
          window = undefined;
          kick();
        }, flushWindowMs);
      };

      /** Nothing left to write after the source is over: the refusal, if any, then complete. */
      const end = (): void => {
        if (refused !== undefined) subscriber.next({ kind: 'refused', error: refused, lastSeq });
        subscriber.complete();
      };

      /** An append ended: a commit, a full batch or what a finished source left goes now, a few chunks get a new window. */
      const appended = (): void => {
        inFlight = undefined;
        pressure();
        if (commits.length > 0 || buffer.length >= maxBatch || (sourceDone && buffer.length > 0)) kick();
        else if (buffer.length > 0) openWindow();
        else if (sourceDone) end();
      };

      const writes = appends
        .pipe(
          concatMap(({ chunks, record }) =>
            defer(() => journal.appendEncoded(lease, chunks, record?.commit)).pipe(
              concatMap((appendedTo) => {
                lastSeq = appendedTo.lastSeq;
                inFlight = 0;
                pressure();
                const after = onAppended?.({ lastSeq, chunks: chunks.length, ...(record === undefined ? {} : { commit: record.commit.kind }) });
                return after === undefined ? [record] : from(after).pipe(map(() => record));
              }),
            ),
          ),
        )
        .subscribe({
          next: (record) => {
            if (record !== undefined) subscriber.next({ kind: 'committed', record, lastSeq });
            appended();
          },
          error: (error: unknown) => subscriber.error(error),
        });

      const sourceOver = (): void => {
        sourceDone = true;
        if (inFlight === undefined && buffer.length === 0 && commits.length === 0) end();
        else kick();
      };

      /** Stops reading the source (a refused chunk, or the operator over), even a synchronous source still inside `subscribe`. */
      const stopReading = new Subject<void>();
      // added before the source is read, so an error while a synchronous source emits stops it there (nothing read or written after)
      subscriber.add(() => stopReading.next());

      source.pipe(takeUntil(stopReading)).subscribe({
        next: (record) => {
          if (sourceDone) return;
          if (isCommit(record)) {
            let chunks: EncodedChunk[];
            try {
              chunks = record.chunks.map(encode);
            } catch (error) {
              subscriber.error(error);
              return;
            }
            commits.push({ record, chunks, following: [] });
            kick();
            return;
          }
          try {
            const encoded = encode(record);
            if (commits.length === 0) buffer.push(encoded);
            else {
              (commits[commits.length - 1] as { following: EncodedChunk[] }).following.push(encoded);
              followingCount++;
            }
          } catch (error) {
            if (!JsonEncodingError.isInstance(error)) {
              subscriber.error(error);
              return;
            }
            // the records end here: what came before is written, then the refusal
            refused = error;
            sourceOver();
            stopReading.next();
            return;
          }
          pressure();
          if (buffer.length >= maxBatch) kick();
          else openWindow();
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => {
          if (!sourceDone && !subscriber.closed) sourceOver();
        },
      });

      return () => {
        writes.unsubscribe();
        window?.unsubscribe();
        buffer = [];
        if (full) demand?.release(holder);
      };
    });
}
