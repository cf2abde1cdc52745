/**
 * An owner's database session: one dedicated connection (not a pooled one: a session-level lock
 * lives as long as its connection) holding `pg_advisory_lock` on a key made from the schema and
 * the owner id. When the owner's process dies its connection closes, the server ends the session
 * and the lock is gone: `runsOfLostOwnersStatement` finds its runs at once, with no heartbeat to
 * wait for. A frozen process (SIGSTOP) keeps its connection: its runs still look alive, and the
 * queue's heartbeat takes them over. A lost connection is opened again and the lock taken again
 * (jittered backoff, at most 200 ms: back within the sweeps' grace once the database answers);
 * meanwhile the owner's runs look dead and may be taken over: the journal's epoch fences the
 * owner's later writes.
 */
import type { Client, ClientConfig, Pool } from 'pg';
import { pg } from '../internal/load-driver.js';
import type { OwnerSession } from '../journal/types.js';

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
 * The longest pause between two reconnects (ms). Other workers' sweeps take an owner's runs over
 * once they have seen it without its lock for their grace (`lostOwnerSweep.graceMs`, default
 * 750 ms) — counted from when the database answers them again after an outage, so the session must
 * be back well within it then: a backoff grown past the grace (it grew to 2 s) had live owners'
 * runs taken over after any outage longer than about a second.
 */
const RECONNECT_CAP_MS = 200;

/** Backoff of the reconnects: 100 ms × 2ⁿ, at most {@link RECONNECT_CAP_MS}, jittered (half to all of it). */
function backoffMs(failures: number): number {
  const ceiling = Math.min(RECONNECT_CAP_MS, 100 * 2 ** failures);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** The held session of one owner (see the file's comment). */
export class PostgresOwnerSession implements OwnerSession {
  readonly #config: ClientConfig;
  readonly #key: string;
  readonly #schemaName: string;
  #client: Client | undefined;
  #held = false;
  #closed = false;
  #failures = 0;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #waiters: Array<() => void> = [];

  constructor(pool: Pool, schemaName: string, owner: string, connectionTimeoutMs: number) {
    // the pool's own settings (connection string, credentials, TLS) for one connection of our own
    const options = (pool as unknown as { options?: ClientConfig }).options ?? {};
    this.#config = { ...options, connectionTimeoutMillis: connectionTimeoutMs, application_name: 'rxagent owner session', keepAlive: true };
    this.#schemaName = schemaName;
    this.#key = owner;
    void this.#open();
  }

  get held(): boolean {
    return this.#held;
  }

  /** Resolves once the owner looks alive: the lock held by this session (or, meanwhile, by another session of the owner's). */
  ready(): Promise<void> {
    if (this.#held || this.#closed) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    this.#held = false;
    const client = this.#client;
    this.#client = undefined;
    for (const resolve of this.#waiters.splice(0)) resolve();
    // ending the connection ends the session, and the lock with it
    if (client !== undefined) await client.end().catch(() => undefined);
  }

  async #open(): Promise<void> {
    if (this.#closed) return;
    const client = new pg.Client(this.#config);
    client.on('error', () => this.#lost(client));
    client.on('end', () => this.#lost(client));
    this.#client = client;
    try {
      await client.connect();
      // try, not wait: a session of ours the server has not yet seen die may still hold it
      const result = await client.query<{ locked: boolean }>(
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
      this.#held = true;
      this.#failures = 0;
      for (const resolve of this.#waiters.splice(0)) resolve();
    } catch {
      this.#lost(client);
    }
  }

  #lost(client: Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    this.#held = false;
    client.end().catch(() => undefined);
    if (this.#closed) return;
    clearTimeout(this.#retry);
    this.#retry = setTimeout(() => void this.#open(), backoffMs(this.#failures++));
    this.#retry.unref?.();
  }
}
