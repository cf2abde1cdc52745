import type { Pool, PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import type { Query } from './query.js';

/** How long after the server-side `statement_timeout` the client gives up on a silent server. */
const clientGraceMs = 1000;

/** Timeouts of a `GuardedPool`, in ms. */
export interface GuardedPoolTimeouts {
  statementTimeoutMs: number;
  connectionTimeoutMs: number;
}

/**
 * Statements on a `pg` pool, guarded: a connection taken from the pool (bounded by
 * `connectionTimeoutMs`) has its 'error' event recorded instead of ending the process, every
 * statement a client-side timeout, and a connection that failed or timed out is dropped, never
 * reused. Transactions bound their statements server-side too (`SET LOCAL statement_timeout`),
 * plus whatever settings the caller adds (the fenced ones: idle and lock timeouts).
 */
export class GuardedPool {
  readonly pool: Pool;
  readonly #timeouts: GuardedPoolTimeouts;

  constructor(pool: Pool, timeouts: GuardedPoolTimeouts) {
    this.pool = pool;
    this.#timeouts = timeouts;
  }

  /** One statement on a guarded pooled connection. */
  query<R extends QueryResultRow>(text: string, values?: ReadonlyArray<unknown>): Promise<QueryResult<R>> {
    return this.withClient((query) => query<R>(text, values));
  }

  /**
   * `BEGIN … COMMIT` on one guarded pooled connection; `ROLLBACK` on any error. `settings` are
   * `SET LOCAL` assignments (`name = value`, values from this code only, never user input).
   */
  transaction<T>(task: (query: Query) => Promise<T>, settings: ReadonlyArray<string> = []): Promise<T> {
    return this.withClient(task, { transaction: true, settings });
  }

  /** Runs `task` with a guarded connection (see the class). */
  async withClient<T>(task: (query: Query) => Promise<T>, { transaction = false, settings = [] as ReadonlyArray<string> } = {}): Promise<T> {
    const client = await this.connect();
    let broken: Error | undefined;
    const markBroken = (error: unknown): void => {
      broken ??= error instanceof Error ? error : new Error(String(error));
    };
    client.on('error', markBroken);
    const queryTimeout = this.#timeouts.statementTimeoutMs + clientGraceMs;
    const query: Query = async <R extends QueryResultRow>(text: string, values?: ReadonlyArray<unknown>) => {
      try {
        // query_timeout is a per-statement option of pg's Client#query that @types/pg omits.
        const config: QueryConfig & { query_timeout: number } = { text, query_timeout: queryTimeout };
        if (values !== undefined) config.values = [...values];
        return await client.query<R>(config);
      } catch (error) {
        if (connectionFailed(error)) markBroken(error);
        throw error;
      }
    };
    try {
      if (!transaction) return await task(query);
      const local = [`statement_timeout = ${this.#timeouts.statementTimeoutMs}`, ...settings].map((setting) => `SET LOCAL ${setting}`);
      await query(`BEGIN; ${local.join('; ')}`);
      try {
        const result = await task(query);
        await query('COMMIT');
        return result;
      } catch (error) {
        if (broken === undefined) await query('ROLLBACK').catch(markBroken);
        throw error;
      }
    } finally {
      client.release(broken);
      client.removeListener('error', markBroken);
    }
  }

  /** `pool.connect()`, given up after `connectionTimeoutMs` (a late connection goes straight back). */
  async connect(): Promise<PoolClient> {
    const pending = this.pool.connect();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no connection from the pool within ${this.#timeouts.connectionTimeoutMs} ms`)),
        this.#timeouts.connectionTimeoutMs,
      );
    });
    try {
      return await Promise.race([pending, timedOut]);
    } catch (error) {
      pending.then(
        (late) => late.release(),
        () => undefined,
      );
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * True when the connection itself failed rather than one statement: no SQLSTATE (terminated,
 * read timeout, not queryable), class 08 (connection exception) or 57P (the server shut the
 * backend down, e.g. `pg_terminate_backend`).
 */
export function connectionFailed(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return true;
  return code.startsWith('08') || code.startsWith('57P');
}

/** A whole number of milliseconds > 0 (`RangeError` naming the class and option otherwise). */
export function positiveMs(owner: string, name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0) {
    throw new RangeError(`${owner}: ${name} must be a whole number of milliseconds > 0 (got ${String(value)})`);
  }
  return value;
}
