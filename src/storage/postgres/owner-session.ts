/**
 * An owner's database session: one dedicated connection (not a pooled one: a session-level lock
 * lives as long as its connection) holding `pg_advisory_lock` on a key made from the schema and
 * the owner id. When the owner's process dies its connection closes, the server ends the session
 * and the lock is gone: `runsOfLostOwnersStatement` finds its runs at once, with no heartbeat to
 * wait for. A frozen process (SIGSTOP) keeps its connection: its runs still look alive, and the
 * queue's heartbeat takes them over. A lost connection is opened again and the lock taken again
 * (jittered backoff, at most `reconnectWithinMs` apart — default 200 ms; a worker asks for a
 * quarter of its sweeps' grace: back within the grace once the database answers); meanwhile the
 * owner's runs look dead and may be taken over: the journal's epoch fences the owner's later
 * writes. A connection that stops answering is lost too: a heartbeat query every
 * `reconnectWithinMs` must be answered within as long (a half-open connection — the server ended
 * the session, the client never heard — looked held for ever). `lock$` tells each moment the lock
 * is lost or taken again, as it happens.
 */
import type { ClientConfig, Pool } from 'pg';
import { BehaviorSubject, type Observable } from 'rxjs';
import { optionError } from '../../contract/option-error.js';
import { MAX_TIMER_MS, isTimerDelay } from '../../contract/timer-delay.js';
import { pg } from '../internal/load-driver.js';
import type { OwnerLockState, OwnerSession } from '../journal/types.js';

/** The text every owner-lock key is hashed from (`hashtextextended(…, 0)`), in SQL and here alike. */
export function ownerLockText(schemaName: string): string {
  return `'rxagent.owner/' || ${literal(schemaName)} || '/' || `;
}

function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** The statement of `runsOfLostOwners`: `running` runs of the agents ($1) whose owner's lock no session of this database holds. */
export function runsOfLostOwnersStatement(schema: string, schemaName: string): string {
  return `WITH held AS (
      SELECT (l.classid::bigint << 32) | l.objid::bigint AS key FROM pg_locks l
      WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))
    SELECT r.id, r.agent_id, r.owner, r.epoch, r.updated_at FROM ${schema}.runs r
    WHERE r.status = 'running' AND r.owner IS NOT NULL AND r.agent_id = ANY($1::text[])
      AND NOT EXISTS (SELECT 1 FROM held WHERE held.key = hashtextextended(${ownerLockText(schemaName)}r.owner, 0))
    ORDER BY r.updated_at LIMIT $2`;
}

/**
 * The longest pause between two reconnects when the holder names none (ms). Other workers' sweeps
 * take an owner's runs over once they have seen it without its lock for their grace
 * (`lostOwnerSweep.graceMs`, default 750 ms) — counted from when the database answers them again
 * after an outage, so the session must be back well within it then: a backoff grown past the grace
 * (it grew to 2 s) had live owners' runs taken over after any outage longer than about a second.
 * A worker passes its own (`reconnectWithinMs`, from its grace).
 */
export const DEFAULT_RECONNECT_WITHIN_MS = 200;

/**
 * `holdOwnerSession`'s `options.reconnectWithinMs`, checked: a number of milliseconds above 0 and
 * at most 2^31 − 1 (a timer's longest), or {@link DEFAULT_RECONNECT_WITHIN_MS} when absent; a
 * `TypeError` naming it otherwise (`NaN` would retry at once for ever, a delay past a timer's
 * longest fires at once).
 *
 * @example
 * ```ts
 * reconnectWithinOf('PostgresRunJournal.holdOwnerSession', { reconnectWithinMs: 100 }); // 100
 * reconnectWithinOf('PostgresRunJournal.holdOwnerSession', { reconnectWithinMs: -1 }); // TypeError
 * ```
 */
export function reconnectWithinOf(where: string, options: unknown): number {
  if (options === undefined) return DEFAULT_RECONNECT_WITHIN_MS;
  if (typeof options !== 'object' || options === null) throw optionError(`${where}: options must be an object ({ reconnectWithinMs? }), got ${options === null ? 'null' : typeof options}.`);
  const value: unknown = (options as { reconnectWithinMs?: unknown }).reconnectWithinMs;
  if (value === undefined) return DEFAULT_RECONNECT_WITHIN_MS;
  if (!isTimerDelay(value)) {
    throw optionError(`${where}: options.reconnectWithinMs must be a number of milliseconds above 0 and at most ${MAX_TIMER_MS} (got ${typeof value === 'number' ? String(value) : typeof value}).`);
  }
  return value;
}

/** TCP keepalive of the session's connection: the first probe after this long without traffic (ms). */
const KEEPALIVE_DELAY_MS = 10_000;

/** Backoff of the reconnects: 100 ms × 2ⁿ, at most `capMs`, jittered (half to all of it). */
function backoffMs(failures: number, capMs: number): number {
  const ceiling = Math.min(capMs, 100 * 2 ** failures);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** What the session uses of its connection (a `pg.Client`; tests pass a fake). */
export interface SessionConnection {
  connect(): Promise<unknown>;
  query(text: string, values: unknown[]): Promise<{ rows: ReadonlyArray<{ locked?: unknown }> }>;
  end(): Promise<unknown>;
  on(event: 'error' | 'end', listener: () => void): unknown;
  /** Optional: closes the socket at once, without the server's answer (a `pg.Client` has none: its `connection.stream` is destroyed). */
  destroy?(): void;
}

/**
 * Ends `client` within `ms`: its goodbye (`end()`) waits for the server's answer, which never comes
 * over a half-open connection (a network that drops packets without resetting: `close()` waited
 * for ever, and a worker's `close()` with it); past `ms` its socket is destroyed. Either way the
 * server ends the session, and the lock with it, once it hears the connection is gone.
 */
async function endWithin(client: SessionConnection, ms: number, clock: SessionClock): Promise<void> {
  let deadline: unknown;
  const timedOut = new Promise<'timeout'>((resolve) => (deadline = clock.setTimeout(() => resolve('timeout'), ms)));
  const ended = client.end().then(
    () => 'ended' as const,
    () => 'ended' as const,
  );
  const first = await Promise.race([ended, timedOut]);
  clock.clearTimeout(deadline);
  if (first === 'timeout') destroyConnection(client);
}

/** Closes `client`'s socket at once (its own `destroy`, else a `pg.Client`'s `connection.stream`). */
function destroyConnection(client: SessionConnection): void {
  if (client.destroy !== undefined) return client.destroy();
  const stream = (client as { connection?: { stream?: { destroy?: () => void } } }).connection?.stream;
  stream?.destroy?.();
}

/** The clock of a session's `lock$` moments and reconnect pauses (tests pass a virtual one). */
export interface SessionClock {
  now(): number;
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** This process's clock; a pause does not keep the process alive. */
const REAL_CLOCK: SessionClock = {
  now: () => Date.now(),
  setTimeout: (run, ms) => setTimeout(run, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout> | undefined),
};

/** The session's settings besides the pool's. */
export interface OwnerSessionSettings {
  /** Longest pause between two reconnects (checked by {@link reconnectWithinOf}). */
  reconnectWithinMs: number;
  /** Opens a connection (default: a `pg.Client` of `config`). */
  connection?: (config: ClientConfig) => SessionConnection;
  /** Default: this process's (`Date.now`, `setTimeout` unref'd). */
  clock?: SessionClock;
}

/** The held session of one owner (see the file's comment). */
export class PostgresOwnerSession implements OwnerSession {
  readonly #config: ClientConfig;
  readonly #key: string;
  readonly #schemaName: string;
  readonly #connection: (config: ClientConfig) => SessionConnection;
  readonly #lock: BehaviorSubject<OwnerLockState>;
  readonly #clock: SessionClock;
  #reconnectWithinMs: number;
  /** How long ending a connection may wait for the server's answer before its socket is destroyed (the connection timeout). */
  readonly #endWithinMs: number;
  #client: SessionConnection | undefined;
  #closed = false;
  #failures = 0;
  #retry: unknown;
  /** The next heartbeat of the held connection, or its answer's deadline. */
  #beat: unknown;
  #waiters: Array<() => void> = [];

  /** Each change of {@link held} as it happens (`at`: the clock's `now()` then); the current state first to a new subscriber; completes once closed. */
  readonly lock$: Observable<OwnerLockState>;

  constructor(pool: Pool, schemaName: string, owner: string, connectionTimeoutMs: number, settings: OwnerSessionSettings = { reconnectWithinMs: DEFAULT_RECONNECT_WITHIN_MS }) {
    // the pool's own settings (connection string, credentials, TLS) for one connection of our own
    const options = (pool as unknown as { options?: ClientConfig }).options ?? {};
    // TCP keepalive from 10 s of silence: the kernel's probes end a connection whose peer is gone
    // (the heartbeat below notices a session the server ended much sooner)
    this.#config = { ...options, connectionTimeoutMillis: connectionTimeoutMs, application_name: 'rxagent owner session', keepAlive: true, keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS };
    this.#schemaName = schemaName;
    this.#key = owner;
    this.#reconnectWithinMs = settings.reconnectWithinMs;
    this.#endWithinMs = connectionTimeoutMs;
    this.#connection = settings.connection ?? ((config) => new pg.Client(config));
    this.#clock = settings.clock ?? REAL_CLOCK;
    this.#lock = new BehaviorSubject<OwnerLockState>({ held: false, at: this.#clock.now() });
    this.lock$ = this.#lock.asObservable();
    void this.#open();
  }

  get held(): boolean {
    return this.#lock.value.held;
  }

  /** Another holder of this session asks for `ms` (checked): the shortest asked for applies, from the next pause on. */
  reconnectWithin(ms: number): void {
    this.#reconnectWithinMs = Math.min(this.#reconnectWithinMs, ms);
  }

  /** Resolves once the owner looks alive: the lock held by this session (or, meanwhile, by another session of the owner's). */
  ready(): Promise<void> {
    if (this.held || this.#closed) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#clock.clearTimeout(this.#retry);
    this.#clock.clearTimeout(this.#beat);
    this.#setHeld(false);
    this.#lock.complete();
    const client = this.#client;
    this.#client = undefined;
    for (const resolve of this.#waiters.splice(0)) resolve();
    // ending the connection ends the session, and the lock with it: within the connection timeout,
    // then its socket is destroyed (a half-open connection never answers the goodbye)
    if (client !== undefined) await endWithin(client, this.#endWithinMs, this.#clock);
  }

  /** Tells a change of the lock (nothing when it did not change). */
  #setHeld(held: boolean): void {
    if (this.#lock.value.held === held) return; // after close() the subject is complete: `next` is a no-op
    this.#lock.next({ held, at: this.#clock.now() });
  }

  async #open(): Promise<void> {
    if (this.#closed) return;
    const client = this.#connection(this.#config);
    client.on('error', () => this.#lost(client));
    client.on('end', () => this.#lost(client));
    this.#client = client;
    try {
      await client.connect();
      // try, not wait: a session of ours the server has not yet seen die may still hold it
      const result = await client.query(
        `SELECT pg_try_advisory_lock(hashtextextended(${ownerLockText(this.#schemaName)}$1::text, 0)) AS locked`,
        [this.#key],
      );
      if (this.#closed || this.#client !== client) return;
      if (result.rows[0]?.locked !== true) {
        // another session holds it (one of ours the server has not seen die yet, or another pool
        // of this owner's): the owner looks alive meanwhile, so waiting callers go on; we retry
        for (const resolve of this.#waiters.splice(0)) resolve();
        throw new Error('owner lock held by another session');
      }
      this.#failures = 0;
      this.#setHeld(true);
      for (const resolve of this.#waiters.splice(0)) resolve();
      this.#heartbeat(client);
    } catch {
      this.#lost(client);
    }
  }

  /**
   * While `client` holds the lock: a query every `reconnectWithinMs`, answered within as long, or the
   * session is lost. A half-open connection — the server ended the session (and released the lock)
   * while the client heard nothing: a network that drops packets without resetting — otherwise
   * looked held for ever, and other workers' sweeps took the owner's runs over while it went on.
   * Noticed within twice `reconnectWithinMs` (a worker's: half its sweeps' grace) and taken again
   * within one more, so the owner is back before the sweeps' grace runs out.
   */
  #heartbeat(client: SessionConnection): void {
    this.#beat = this.#clock.setTimeout(() => {
      if (this.#closed || this.#client !== client) return;
      this.#beat = this.#clock.setTimeout(() => this.#lost(client), this.#reconnectWithinMs);
      client.query('SELECT 1 AS alive', []).then(
        () => {
          if (this.#client !== client) return;
          this.#clock.clearTimeout(this.#beat);
          this.#heartbeat(client);
        },
        () => this.#lost(client),
      );
    }, this.#reconnectWithinMs);
  }

  #lost(client: SessionConnection): void {
    if (this.#client !== client) return;
    this.#clock.clearTimeout(this.#beat);
    this.#client = undefined;
    this.#setHeld(false);
    void endWithin(client, this.#endWithinMs, this.#clock);
    if (this.#closed) return;
    this.#clock.clearTimeout(this.#retry);
    this.#retry = this.#clock.setTimeout(() => void this.#open(), backoffMs(this.#failures++, this.#reconnectWithinMs));
  }
}
