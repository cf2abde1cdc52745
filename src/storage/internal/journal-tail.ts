/**
 * How run journals read their chunks. A bounded read pages `seq > cursor` up to its end, a page
 * at a time (the next one requested only once the subscriber took the last). A live read pages
 * its backlog the same way, then follows the run's one shared tail: per run and journal
 * instance, one page query per wake-up (a notification, a write of this instance, a poll) feeds
 * every live reader of the run, each taking the rows past its own cursor — instead of each reader
 * reading `seq > cursor` on every wake-up.
 */
import { Observable, type Subscriber, type Subscription } from 'rxjs';
import type { JournalEntry } from '../journal/types.js';
import { StoredEntry, terminalOf } from './journal-rules.js';

/** A stored chunk row, as a page returns it. */
export interface ChunkRow {
  seq: number;
  epoch: number;
  type: string;
  json: string;
}

/** What a journal gives the read loop. */
export interface TailSource {
  /**
   * Rows with `after < seq ≤ until` (`until` omitted: no upper bound), oldest first, at most
   * `limit`, and (`maxBytes` given) only as many as start below `maxBytes` bytes of chunk text
   * (the first row always).
   */
  page(after: number, limit: number, until: number | undefined, maxBytes: number | undefined): Promise<readonly ChunkRow[]>;
  /** Emits when the run may have new rows (subscribed by the run's shared tail, before its first reader's first page). */
  wake$: Observable<unknown>;
  pageSize: number;
  /**
   * A read found no row at `seq` (≤ `end`, where its rows must go on: seq is dense): why, as the
   * error the read ends with — the run erased or expired (`RunNotFoundError`), or its rows
   * removed from the store (`MalformedJournalEntryError` naming `seq`). Never resolves.
   */
  missing(seq: number, end: number): Promise<never>;
}

/** Options of a read (`RunJournal.read$`'s, with the end of a bounded read). */
export interface TailReadOptions {
  /** A bounded read: stop at this seq. Omitted: live, until the terminal entry. */
  end?: number;
  /** Awaited before each page (or each piece of the shared tail's rows) after the first. */
  ready?: () => Promise<void> | void;
  maxPageBytes?: number | undefined;
}

/** The bytes of chunk text of `rows` (UTF-8). */
export function pageBytes(rows: readonly ChunkRow[]): number {
  let bytes = 0;
  for (const row of rows) bytes += Buffer.byteLength(row.json, 'utf8');
  return bytes;
}

/** The rows of a page that start below `maxBytes` bytes of chunk text (the first always). */
export function cutPage(rows: readonly ChunkRow[], maxBytes: number | undefined): readonly ChunkRow[] {
  if (maxBytes === undefined) return rows;
  let bytes = 0;
  for (let index = 0; index < rows.length; index++) {
    if (index > 0 && bytes >= maxBytes) return rows.slice(0, index);
    bytes += Buffer.byteLength((rows[index] as ChunkRow).json, 'utf8');
  }
  return rows;
}

/** Bytes of chunk text one page of a shared tail holds at most (besides its first row). */
export const SHARED_PAGE_BYTES = 256 * 1024;

/** Rows the shared tail read (dense, right after its previous position), with their sizes counted once. */
interface Batch {
  readonly rows: readonly ChunkRow[];
  readonly sizes: readonly number[];
  readonly bytes: number;
}

/** A live reader, as its run's shared tail sees it. */
interface Member {
  /** Rows the tail read (while the reader follows it). */
  take(batch: Batch): void;
  /** The tail's read failed (readers following it), or its wake-ups did (every reader). */
  fail(error: unknown): void;
}

/**
 * The shared tail of one run: subscribed to its wake-ups while it has readers; while some follow
 * it, reads `seq > position` once per wake-up (wake-ups during a read merge into one more read,
 * a full page is followed by the next at once) and hands the rows to every follower.
 */
class SharedTail {
  readonly #source: TailSource;
  readonly #drop: () => void;
  /** Every live reader of the run (paging or following): the tail lives while there is one. */
  readonly #members = new Set<Member>();
  readonly #followers = new Set<Member>();
  /** The last seq handed to followers. */
  #seq = 0;
  #ended = false;
  #woken = false;
  #reading = false;
  #wakes: Subscription | undefined;

  constructor(source: TailSource, drop: () => void) {
    this.#source = source;
    this.#drop = drop;
  }

  /** Where the tail is: a reader at or past it may follow it. */
  get seq(): number {
    return this.#seq;
  }

  add(member: Member): void {
    this.#members.add(member);
    this.#wakes ??= this.#source.wake$.subscribe({ next: () => this.#wake(), error: (error: unknown) => this.#failAll(error) });
  }

  /** A reader is gone: the last one takes the wake-ups down with it. */
  remove(member: Member): void {
    this.#members.delete(member);
    this.#followers.delete(member);
    if (this.#members.size > 0) return;
    this.#wakes?.unsubscribe();
    this.#wakes = undefined;
    this.#drop();
  }

  /**
   * `member`, at `cursor` and caught up with the store, follows the tail — unless the tail read
   * past `cursor` already (false: the reader pages on to it). With no follower, the tail starts
   * over at `cursor` and reads at once (rows may have come since the reader's last page).
   */
  join(member: Member, cursor: number): boolean {
    if (this.#followers.size === 0 && !this.#ended) {
      this.#seq = cursor;
      this.#followers.add(member);
      this.#wake();
      return true;
    }
    if (cursor < this.#seq) return false;
    this.#followers.add(member);
    return true;
  }

  leave(member: Member): void {
    this.#followers.delete(member);
  }

  #wake(): void {
    this.#woken = true;
    void this.#read();
  }

  async #read(): Promise<void> {
    if (this.#reading) return;
    this.#reading = true;
    try {
      while (this.#woken && this.#followers.size > 0 && !this.#ended) {
        this.#woken = false;
        const from = this.#seq;
        const rows = await this.#source.page(from, this.#source.pageSize, undefined, SHARED_PAGE_BYTES);
        // started over meanwhile (every follower left, one joined elsewhere): read from there
        if (this.#seq !== from) {
          this.#woken = true;
          continue;
        }
        const fresh: ChunkRow[] = [];
        const sizes: number[] = [];
        let bytes = 0;
        for (const row of rows) {
          if (row.seq !== from + 1 + fresh.length) break;
          const size = Buffer.byteLength(row.json, 'utf8');
          fresh.push(row);
          sizes.push(size);
          bytes += size;
          if (terminalOf(row.type) !== undefined) {
            this.#ended = true;
            break;
          }
        }
        if (fresh.length > 0) {
          this.#seq = (fresh[fresh.length - 1] as ChunkRow).seq;
          const batch: Batch = { rows: fresh, sizes, bytes };
          for (const follower of this.#followers) follower.take(batch);
        }
        // a full page (by rows or bytes): more may be there already
        if (rows.length === this.#source.pageSize || bytes >= SHARED_PAGE_BYTES) this.#woken = true;
      }
    } catch (error) {
      // every follower ends with the failure, as each met it reading alone
      const failed = [...this.#followers];
      this.#followers.clear();
      for (const member of failed) member.fail(error);
    } finally {
      this.#reading = false;
    }
  }

  /** The wake-ups failed (the journal closed, the run erased): every reader ends with it. */
  #failAll(error: unknown): void {
    this.#drop();
    const members = [...this.#members];
    this.#members.clear();
    this.#followers.clear();
    for (const member of members) member.fail(error);
  }
}

/**
 * The reads of one journal instance: bounded reads page alone; live readers of a run share its
 * tail (created with the first, torn down with the last). `K` names a run: its id, or the stored
 * run itself where a run erased and created again under its id is another run.
 */
export class JournalReads<K = string> {
  readonly #tails = new Map<K, SharedTail>();

  /** Runs that have a shared tail now (each has live readers). */
  get sharedTails(): number {
    return this.#tails.size;
  }

  /**
   * Entries of run `key` after `after`. `end` (bounded) stops at that seq; live, the stream
   * completes after the terminal entry. `ready` is awaited before each page after the first.
   */
  read$(key: K, source: TailSource, after: number, options: TailReadOptions): Observable<JournalEntry> {
    const maxBytes = options.maxPageBytes;
    if (maxBytes !== undefined && (!Number.isSafeInteger(maxBytes) || maxBytes < 1)) {
      throw new TypeError(`RunJournal.read$: maxPageBytes must be an integer ≥ 1 (got ${String(maxBytes)})`);
    }
    if (options.end !== undefined) return boundedEntries(source, after, options.end, options.ready, maxBytes);
    return liveEntries(() => this.#tail(key, source), source, after, options.ready, maxBytes);
  }

  #tail(key: K, source: TailSource): SharedTail {
    const existing = this.#tails.get(key);
    if (existing !== undefined) return existing;
    const tail: SharedTail = new SharedTail(source, () => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    this.#tails.set(key, tail);
    return tail;
  }
}

/** What {@link deliverPage} answers once the read is over (a terminal entry went out, or the subscriber left). */
const ENDED = -1;

/**
 * Hands on the rows of a page that follow `cursor`, in order, each seq once (a row at or before the
 * cursor is skipped); completes the subscriber after a terminal entry. The new cursor, or `ENDED`.
 */
function deliverPage(rows: readonly ChunkRow[], cursor: number, subscriber: Subscriber<JournalEntry>): number {
  for (const row of rows) {
    if (subscriber.closed) return ENDED;
    if (row.seq !== cursor + 1) continue;
    cursor = row.seq;
    subscriber.next(new StoredEntry(row.seq, row.epoch, row.json));
    if (terminalOf(row.type) !== undefined) {
      subscriber.complete();
      return ENDED;
    }
  }
  return cursor;
}

/** A bounded read: pages up to `end` (rows missing before it end the read with why). */
function boundedEntries(source: TailSource, after: number, end: number, ready: TailReadOptions['ready'], maxBytes: number | undefined): Observable<JournalEntry> {
  return new Observable<JournalEntry>((subscriber) => {
    let cursor = after;
    void (async () => {
      try {
        for (let first = true; !subscriber.closed; first = false) {
          if (cursor >= end) {
            subscriber.complete();
            return;
          }
          if (!first && ready !== undefined) await ready();
          if (subscriber.closed) return;
          const rows = await source.page(cursor, source.pageSize, end, maxBytes);
          const next = deliverPage(rows, cursor, subscriber);
          if (next === ENDED) return;
          cursor = next;
          // rows up to `end` exist (seq is dense): none means they were removed, and the read
          // ends with why (it completed short, as if the run ended there)
          if (rows.length === 0) await source.missing(cursor + 1, end);
        }
      } catch (error) {
        subscriber.error(error);
      }
    })();
  });
}

/**
 * A live read: its own pages until it has caught up with the store, then the shared tail's rows
 * past its cursor, delivered a page (`pageSize` rows, `maxBytes`) at a time with `ready` awaited
 * in between. A reader that falls more than a page behind the tail (its client not reading) is
 * detached: it holds none of the tail's rows and pages again from its cursor when it reads on.
 */
function liveEntries(
  tailOf: () => SharedTail,
  source: TailSource,
  after: number,
  ready: TailReadOptions['ready'],
  maxBytes: number | undefined,
): Observable<JournalEntry> {
  return new Observable<JournalEntry>((subscriber) => {
    const tail = tailOf();
    const holdRows = source.pageSize;
    const holdBytes = Math.max(maxBytes ?? 0, SHARED_PAGE_BYTES);
    let cursor = after;
    let first = true;
    let following = false;
    let running = false;
    // the tail's rows not delivered yet (rows at or before the cursor in them are skipped)
    let queue: Batch[] = [];
    let offset = 0;
    let queuedRows = 0;
    let queuedBytes = 0;

    const detach = (): void => {
      tail.leave(member);
      following = false;
      queue = [];
      offset = 0;
      queuedRows = 0;
      queuedBytes = 0;
    };

    const member: Member = {
      take: (batch) => {
        if (queue.length > 0 && (queuedRows + batch.rows.length > holdRows || queuedBytes + batch.bytes > holdBytes)) {
          // more than a page behind: it reads on from its cursor with its own pages
          detach();
        } else {
          queue.push(batch);
          queuedRows += batch.rows.length;
          queuedBytes += batch.bytes;
        }
        void pump();
      },
      fail: (error) => subscriber.error(error),
    };

    /** One page of the queue; true once the read ended (terminal, unsubscribed). */
    const deliver = (): boolean => {
      let rows = 0;
      let bytes = 0;
      while (queue.length > 0) {
        const batch = queue[0] as Batch;
        for (; offset < batch.rows.length; offset++) {
          const row = batch.rows[offset] as ChunkRow;
          if (row.seq <= cursor) continue;
          if (rows >= source.pageSize || (maxBytes !== undefined && rows > 0 && bytes >= maxBytes)) return false;
          if (row.seq !== cursor + 1) {
            // never handed a gap by construction; if it were, its own pages say what is there
            detach();
            return false;
          }
          cursor = row.seq;
          rows += 1;
          bytes += batch.sizes[offset] as number;
          subscriber.next(new StoredEntry(row.seq, row.epoch, row.json));
          if (terminalOf(row.type) !== undefined) {
            subscriber.complete();
            return true;
          }
          if (subscriber.closed) return true;
        }
        queue.shift();
        offset = 0;
        queuedRows -= batch.rows.length;
        queuedBytes -= batch.bytes;
      }
      return false;
    };

    const pump = async (): Promise<void> => {
      if (running) return;
      running = true;
      try {
        while (!subscriber.closed) {
          if (following && queue.length === 0) return;
          if (!first && ready !== undefined) {
            await ready();
            if (subscriber.closed || (following && queue.length === 0)) return;
          }
          first = false;
          if (queue.length > 0) {
            if (deliver()) return;
            continue;
          }
          // its own page: the backlog, or what it fell behind on. Rows up to `known` were read
          // before this query was made: it must find them
          const known = tail.seq;
          const rows = await source.page(cursor, source.pageSize, undefined, maxBytes);
          const next = deliverPage(rows, cursor, subscriber);
          if (next === ENDED) return;
          cursor = next;
          if (subscriber.closed) return;
          // a full page (by rows or bytes): more may be there already
          if (rows.length === source.pageSize || (maxBytes !== undefined && pageBytes(rows) >= maxBytes)) continue;
          // caught up with the store: follow the tail, unless it read past the cursor already
          if (tail.join(member, cursor)) {
            following = true;
            continue;
          }
          // rows read before this query, and it found none of them: they are gone, say why (rows
          // the tail read after it was made are in the next page)
          if (rows.length === 0 && cursor < known) await source.missing(cursor + 1, known);
        }
      } catch (error) {
        subscriber.error(error);
      } finally {
        running = false;
      }
    };

    tail.add(member);
    void pump();
    return () => tail.remove(member);
  });
}
