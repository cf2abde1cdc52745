/**
 * The read loop every run journal shares: page the history (`seq > cursor`, a page at a time,
 * the next one requested only once the subscriber took the last), then wait for a wake-up (a
 * notification or a poll) and read `seq > cursor` again, until the terminal entry.
 */
import { Observable, type Subscription } from 'rxjs';
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
  /** Emits when the run may have new rows (subscribed before the first page is read). */
  wake$: Observable<unknown>;
  pageSize: number;
  /**
   * A bounded read found no row at `seq` (≤ `end`, where its rows must go on: seq is dense): why,
   * as the error the read ends with — the run erased or expired (`RunNotFoundError`), or its rows
   * removed from the store (`MalformedJournalEntryError` naming `seq`). Never resolves.
   */
  missing(seq: number, end: number): Promise<never>;
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

/**
 * Entries after `after`. `end` (not live) stops at that seq; live, the stream completes after
 * the terminal entry. `ready` is awaited before each page after the first.
 */
export function tailEntries(
  source: TailSource,
  after: number,
  options: { end?: number; ready?: () => Promise<void> | void; maxPageBytes?: number | undefined },
): Observable<JournalEntry> {
  const maxBytes = options.maxPageBytes;
  if (maxBytes !== undefined && (!Number.isSafeInteger(maxBytes) || maxBytes < 1)) {
    throw new TypeError(`RunJournal.read$: maxPageBytes must be an integer ≥ 1 (got ${String(maxBytes)})`);
  }
  return new Observable<JournalEntry>((subscriber) => {
    let cursor = after;
    let woken = true;
    let reading = false;
    let first = true;
    const done = (): boolean => subscriber.closed;

    const pump = async (): Promise<void> => {
      if (reading) return;
      reading = true;
      try {
        while (!done()) {
          if (options.end !== undefined && cursor >= options.end) {
            subscriber.complete();
            return;
          }
          if (!woken) return;
          woken = false;
          if (!first && options.ready !== undefined) await options.ready();
          first = false;
          if (done()) return;
          const rows = await source.page(cursor, source.pageSize, options.end, maxBytes);
          for (const row of rows) {
            if (done()) return;
            // Rows are the truth: a repeated or out-of-order row (a poll racing a notification) is skipped.
            if (row.seq !== cursor + 1) continue;
            cursor = row.seq;
            subscriber.next(new StoredEntry(row.seq, row.epoch, row.json));
            if (terminalOf(row.type) !== undefined) {
              subscriber.complete();
              return;
            }
          }
          if (options.end !== undefined) {
            // Bounded read: rows up to `end` exist (seq is dense); none means they were removed,
            // and the read ends with why (it completed short, as if the run ended there)
            if (rows.length === 0) await source.missing(cursor + 1, options.end);
            woken = true;
          } else if (rows.length === source.pageSize || (maxBytes !== undefined && pageBytes(rows) >= maxBytes)) {
            // A full page (by rows or bytes): more may be there already; a short one waits for the next wake-up.
            woken = true;
          }
        }
      } catch (error) {
        subscriber.error(error);
      } finally {
        reading = false;
      }
    };

    let wakes: Subscription | undefined;
    if (options.end === undefined) {
      wakes = source.wake$.subscribe({
        next: () => {
          woken = true;
          void pump();
        },
        error: (error: unknown) => subscriber.error(error),
      });
    }
    void pump();
    return () => wakes?.unsubscribe();
  });
}
