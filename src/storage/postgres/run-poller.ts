/**
 * The polling backstop of one journal: one statement per interval for every run its live readers
 * and signal listeners watch, however many there are, instead of one timer and one read per
 * reader. A run whose row moved (`last_seq`, `status`) or that got a signal since the last poll
 * wakes its watchers; a run seen for the first time wakes them once (a write between their first
 * read and the first poll is not missed); a run whose row is gone is erased (`erased`); a failed poll wakes every watcher, which then reads and
 * meets the failure itself (as a reader polling on its own did).
 */
import { Observable, Subject } from 'rxjs';
import type { GuardedPool } from './guarded-pool.js';
import type { RunNotice } from './journal-listener.js';

/** One watched run: its watchers' wake-ups, how many watch it, and what the last poll saw. */
interface Watched {
  readonly notices: Subject<RunNotice>;
  count: number;
  rows?: string;
  signals?: string;
}

/** The shared poll of one journal (see the file's comment). */
export class RunPoller {
  readonly #db: GuardedPool;
  readonly #schema: string;
  readonly #intervalMs: number;
  readonly #watched = new Map<string, Watched>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(db: GuardedPool, schema: string, intervalMs: number) {
    this.#db = db;
    this.#schema = schema;
    this.#intervalMs = intervalMs;
  }

  /**
   * Wake-ups of `runId` from the shared poll while subscribed (`chunks`: its row moved, `signal`:
   * a signal arrived or the run ended).
   */
  watch$(runId: string): Observable<RunNotice> {
    return new Observable<RunNotice>((subscriber) => {
      let watched = this.#watched.get(runId);
      if (watched === undefined) {
        watched = { notices: new Subject<RunNotice>(), count: 0 };
        this.#watched.set(runId, watched);
      }
      watched.count++;
      const subscription = watched.notices.subscribe(subscriber);
      this.#schedule();
      const entry = watched;
      return () => {
        subscription.unsubscribe();
        if (--entry.count === 0 && this.#watched.get(runId) === entry) this.#watched.delete(runId);
      };
    });
  }

  /** Stops polling (watchers end through the journal's own close). */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(): void {
    if (this.#closed || this.#timer !== undefined || this.#watched.size === 0) return;
    this.#timer = setTimeout(() => void this.#poll(), this.#intervalMs);
  }

  async #poll(): Promise<void> {
    const ids = [...this.#watched.keys()];
    try {
      const result = await this.#db.query<{ id: string; rows: string; signals: string }>(
        `SELECT r.id, r.last_seq || '/' || r.status AS rows,
                (SELECT count(*) FROM ${this.#schema}.run_signals s WHERE s.run_id = r.id)::text || '/' || r.status AS signals
         FROM ${this.#schema}.runs r WHERE r.id = ANY($1::text[])`,
        [ids],
      );
      const found = new Map(result.rows.map((row) => [row.id, row]));
      for (const runId of ids) {
        const watched = this.#watched.get(runId);
        if (watched === undefined) continue;
        const row = found.get(runId);
        // a watched run is one that was found: its row gone, it was erased (a live reader waited
        // for rows that never came), and its watchers learn it (readers end, signal listeners complete)
        if (row === undefined) {
          if (watched.rows !== 'gone') watched.notices.next({ runId, kind: 'erased' });
          watched.rows = 'gone';
          watched.signals = 'gone';
          continue;
        }
        const rows = row.rows;
        const signals = row.signals;
        const movedRows = watched.rows !== rows;
        const movedSignals = watched.signals !== signals;
        watched.rows = rows;
        watched.signals = signals;
        if (movedRows) watched.notices.next({ runId, kind: 'chunks' });
        if (movedSignals) watched.notices.next({ runId, kind: 'signal' });
      }
    } catch {
      // the backstop failed: every watcher reads for itself and meets the failure (or finds its rows)
      for (const [runId, watched] of [...this.#watched]) {
        watched.rows = undefined;
        watched.signals = undefined;
        watched.notices.next({ runId, kind: 'chunks' });
        watched.notices.next({ runId, kind: 'signal' });
      }
    } finally {
      this.#timer = undefined;
      this.#schedule();
    }
  }
}
