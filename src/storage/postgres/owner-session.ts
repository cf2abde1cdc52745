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
 * writes. A connection that stops answering is lost too (a half-open connection — the server ended
 * the session, the client never heard — looked held for ever): a heartbeat query every
 * 1.5 × `reconnectWithinMs`, and one answer late by half of it is checked from the journal's pool —
 * is the lock still held by this session's backend? Not held: the session is lost. Held: the
 * database is slow, the session alive, and nothing is torn down (ending the connection released the
 * lock: a database slower than the heartbeat made the lock flap and live owners' runs move). No
 * answer to the check either: the lock is told lost (`lock$`: the worker counts the moments its
 * owner may have looked dead) while the connection is kept and its answer awaited, and the lock is
 * tried from a new connection alongside (taken: that one is the session now). `lock$` tells each
 * moment the lock is lost or taken again, as it happens.
 */
import type { ClientConfig, Pool, QueryConfig } from 'pg';
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
  /** The lock's query answers `locked` and the backend's `pid` (a fake may leave it out: a late heartbeat is then a lost session). */
  query(text: string, values: unknown[]): Promise<{ rows: ReadonlyArray<{ locked?: unknown; pid?: unknown }> }>;
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

/** What a check of the lock from the pool found: held by the session's backend, not, or no answer in time. */
type LockCheck = 'ours' | 'not ours' | 'unknown';

/** The held session of one owner (see the file's comment). */
export class PostgresOwnerSession implements OwnerSession {
  readonly #pool: Pool;
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
  /** The backend holding the lock for this session (its `pg_backend_pid()`), when the connection told it. */
  #pid: number | undefined;
  /** A check of the lock from the pool is under way: never two at once. */
  #checking = false;
  #waiters: Array<() => void> = [];

  /** Each change of {@link held} as it happens (`at`: the clock's `now()` then); the current state first to a new subscriber; completes once closed. */
  readonly lock$: Observable<OwnerLockState>;

  constructor(pool: Pool, schemaName: string, owner: string, connectionTimeoutMs: number, settings: OwnerSessionSettings = { reconnectWithinMs: DEFAULT_RECONNECT_WITHIN_MS }) {
    // the pool's own settings (connection string, credentials, TLS) for one connection of our own
    const options = (pool as unknown as { options?: ClientConfig }).options ?? {};
    this.#pool = pool;
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
      const taken = await this.#tryLock(client);
      if (this.#closed || this.#client !== client) return;
      this.#pid = taken.pid;
      if (!taken.locked) {
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
   * Connects `client` and tries the lock on it — try, not wait: a session of ours the server has not
   * yet seen die may still hold it — with the backend's pid (a number, or its text through a pool
   * with custom type parsers; `undefined` when the connection does not say it).
   */
  async #tryLock(client: SessionConnection): Promise<{ locked: boolean; pid: number | undefined }> {
    await client.connect();
    const result = await client.query(
      `SELECT pg_try_advisory_lock(hashtextextended(${ownerLockText(this.#schemaName)}$1::text, 0)) AS locked, pg_backend_pid() AS pid`,
      [this.#key],
    );
    const pid = Number(result.rows[0]?.pid);
    return { locked: result.rows[0]?.locked === true, pid: Number.isSafeInteger(pid) && pid > 0 ? pid : undefined };
  }

  /**
   * While `client` holds the lock: a query every 1.5 × `reconnectWithinMs` (one at a time: the next is
   * asked once the last is answered), and an answer late by half of it is {@link #late}. A half-open
   * connection — the server ended the session (and released the lock) while the client heard
   * nothing: a network that drops packets without resetting — otherwise looked held for ever, and
   * other workers' sweeps took the owner's runs over while it went on. Noticed within twice
   * `reconnectWithinMs` and a check from the pool (a worker's: half its sweeps' grace), and taken
   * again within one more, so the owner is back before the sweeps' grace runs out.
   */
  #heartbeat(client: SessionConnection): void {
    this.#beat = this.#clock.setTimeout(() => {
      if (this.#closed || this.#client !== client) return;
      this.#beat = this.#clock.setTimeout(() => this.#late(client), this.#reconnectWithinMs / 2);
      client.query('SELECT 1 AS alive', []).then(
        () => {
          if (this.#client !== client) return;
          this.#clock.clearTimeout(this.#beat);
          // answered: the session is alive, and a session-level lock lives as long as its session
          this.#setHeld(true);
          this.#heartbeat(client);
        },
        () => this.#lost(client),
      );
    }, this.#reconnectWithinMs * 1.5);
  }

  /**
   * `client`'s heartbeat is not answered yet: is the lock still held by its backend? Asked from the
   * journal's pool (another connection), again every half `reconnectWithinMs` while the answer is
   * awaited, one check at a time. Not held (the server ended the session; a backend that did not
   * say its pid): the session is lost, its connection ended and the lock taken again. Held: the
   * database is slow, not gone — nothing changes (ending the connection would release the lock).
   * No answer to the check either: the lock is told lost, since the owner may look dead to other
   * workers, but the connection is kept (an answer on it tells the lock held again) and the lock is
   * tried {@link #alongside} it.
   */
  #late(client: SessionConnection): void {
    if (this.#closed || this.#client !== client) return;
    this.#beat = this.#clock.setTimeout(() => this.#late(client), this.#reconnectWithinMs / 2);
    if (this.#checking) return;
    const pid = this.#pid;
    if (pid === undefined) return this.#lost(client);
    this.#checking = true;
    void this.#check(pid).then((found) => {
      this.#checking = false;
      if (this.#closed || this.#client !== client) return;
      if (found === 'ours') this.#setHeld(true);
      else if (found === 'not ours') this.#lost(client);
      else {
        this.#setHeld(false);
        this.#alongside(client);
      }
    });
  }

  /**
   * Neither `client` nor the pool answers: the lock is tried from a new connection of its own (the
   * pool's may be stuck as the session's is), `client` kept meanwhile, one try at a time. Taken: the
   * server had ended the old session — the new connection is the session now, the old one ended.
   * Refused (held: by the old session, slow), failed or unanswered within `reconnectWithinMs`: the
   * new connection is ended (releasing what it took late), and the old one still awaited.
   */
  #alongside(client: SessionConnection): void {
    this.#checking = true;
    const fresh = this.#connection(this.#config);
    fresh.on('error', () => this.#lost(fresh));
    fresh.on('end', () => this.#lost(fresh));
    let deadline: unknown;
    const late = new Promise<undefined>((resolve) => (deadline = this.#clock.setTimeout(() => resolve(undefined), this.#reconnectWithinMs)));
    const tried = this.#tryLock(fresh).catch(() => undefined);
    void Promise.race([tried, late]).then((taken) => {
      this.#clock.clearTimeout(deadline);
      this.#checking = false;
      if (taken?.locked !== true || this.#closed || this.#client !== client) {
        void endWithin(fresh, this.#endWithinMs, this.#clock);
        return;
      }
      this.#clock.clearTimeout(this.#beat);
      this.#client = fresh;
      this.#pid = taken.pid;
      this.#failures = 0;
      this.#setHeld(true);
      this.#heartbeat(fresh);
      void endWithin(client, this.#endWithinMs, this.#clock);
    });
  }

  /** Whether backend `pid` holds this owner's lock, asked on a pooled connection, answered within `reconnectWithinMs` or `'unknown'`. */
  async #check(pid: number): Promise<LockCheck> {
    let deadline: unknown;
    const late = new Promise<LockCheck>((resolve) => (deadline = this.#clock.setTimeout(() => resolve('unknown'), this.#reconnectWithinMs)));
    // query_timeout (a per-statement option @types/pg omits): a pooled connection that does not answer is dropped by the pool, not kept busy
    const config: QueryConfig & { query_timeout: number } = {
      text: `SELECT l.pid FROM pg_locks l
             WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
               AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
               AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended(${ownerLockText(this.#schemaName)}$1::text, 0)`,
      values: [this.#key],
      query_timeout: this.#endWithinMs,
    };
    const asked = Promise.resolve()
      .then(() => this.#pool.query<{ pid: number }>(config))
      .then(
        (result): LockCheck => (result.rows.some((row) => Number(row.pid) === pid) ? 'ours' : 'not ours'),
        (): LockCheck => 'unknown',
      );
    try {
      return await Promise.race([asked, late]);
    } finally {
      this.#clock.clearTimeout(deadline);
    }
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
