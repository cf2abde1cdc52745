/**
 * One LISTEN connection per journal: notifications carry ids only (`<schema>/<runId>/<lastSeq>`),
 * so a reader learns "run X has rows up to N" and reads them itself. A lost connection is opened
 * again (readers poll meanwhile: the backstop).
 */
import type { Notification, PoolClient } from 'pg';
import { Subject, type Observable } from 'rxjs';
import type { GuardedPool } from './guarded-pool.js';

/** The channel every rxagent journal notifies on; the payload names the schema. */
export const JOURNAL_CHANNEL = 'rxagent_journal';

/**
 * A notification: which run has news, and which (`chunks`: new rows; `signal`: a request for its
 * owner; `erased`: the run is gone — erased, or its row found missing by the poll).
 */
export interface RunNotice {
  runId: string;
  kind: 'chunks' | 'signal' | 'erased';
}

/** The shared LISTEN connection of one journal (started by its first live reader). */
export class JournalListener {
  readonly #db: GuardedPool;
  readonly #prefix: string;
  readonly #notices = new Subject<RunNotice>();
  #client: PoolClient | undefined;
  #connecting: Promise<void> | undefined;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(db: GuardedPool, schemaName: string) {
    this.#db = db;
    this.#prefix = `${schemaName}/`;
  }

  /** Notices of this schema's runs. */
  get notices$(): Observable<RunNotice> {
    return this.#notices;
  }

  /**
   * Resolves once LISTEN is in place (readers LISTEN before they read, so no row written in
   * between is missed). A failure to connect resolves too: readers fall back to polling and the
   * connection is tried again.
   */
  ready(): Promise<void> {
    if (this.#closed || this.#client !== undefined) return Promise.resolve();
    this.#connecting ??= this.#connect().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  async #connect(): Promise<void> {
    let client: PoolClient | undefined;
    try {
      client = await this.#db.connect();
      client.on('notification', this.#onNotification);
      client.on('error', this.#onLost);
      await client.query(`LISTEN ${JOURNAL_CHANNEL}`);
      if (this.#closed) {
        this.#drop(client);
        return;
      }
      this.#client = client;
    } catch {
      if (client !== undefined) this.#drop(client);
      this.#scheduleRetry();
    }
  }

  readonly #onNotification = (message: Notification): void => {
    if (message.channel !== JOURNAL_CHANNEL || message.payload === undefined || !message.payload.startsWith(this.#prefix)) return;
    const rest = message.payload.slice(this.#prefix.length);
    const slash = rest.lastIndexOf('/');
    if (slash <= 0) return;
    const kind = rest.slice(slash + 1);
    this.#notices.next({ runId: rest.slice(0, slash), kind: kind === 'signal' || kind === 'erased' ? kind : 'chunks' });
  };

  readonly #onLost = (): void => {
    const client = this.#client;
    this.#client = undefined;
    if (client !== undefined) this.#drop(client);
    this.#scheduleRetry();
  };

  #scheduleRetry(): void {
    if (this.#closed || this.#retry !== undefined) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      void this.ready();
    }, 1000);
    this.#retry.unref?.();
  }

  #drop(client: PoolClient): void {
    client.removeListener('notification', this.#onNotification);
    client.removeListener('error', this.#onLost);
    // An error-free client would go back to the pool still LISTENing: destroy it instead.
    client.on('error', () => undefined);
    client.release(new Error('journal listener closed'));
  }

  /** Stops listening and releases the connection. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#retry);
    const client = this.#client;
    this.#client = undefined;
    if (client !== undefined) this.#drop(client);
    this.#notices.complete();
  }
}
