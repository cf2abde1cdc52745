/**
 * Retention and erasure of the PostgreSQL run journal (migration 3): the statements of one purge
 * round, each touching at most `batchSize` rows, and `deleteRun`'s one atomic statement. Expiry
 * is on the database's clock (`now()` against `ended_at`, which the ending flush sets from it).
 */
import type { PurgeResult } from '../journal/types.js';
import type { Retention } from '../internal/retention.js';
import type { GuardedPool } from './guarded-pool.js';
import { JOURNAL_CHANNEL } from './journal-listener.js';

/** The tables that hold a run's data besides its row, purged in this order. */
const RUN_TABLES = ['run_chunks', 'run_commits', 'run_tool_calls', 'run_signals'] as const;

/**
 * One purge round: (1) marks runs ended `chunkSeconds` ago as expired (readers answer 410 from
 * then on, before any row goes); (2) removes the expired runs' rows, `batchSize` at a time, then
 * marks each `purged`; (3) removes rows of purged runs ended `runSeconds` ago. Stops after
 * `maxStatements` deletes with `done: false`. Two instances purging at once skip each other's
 * marked rows (`SKIP LOCKED`) or delete nothing twice.
 */
export async function purgeRound(
  db: GuardedPool,
  schema: string,
  retention: Retention,
  limits: { batchSize: number; maxStatements: number },
): Promise<PurgeResult> {
  const result: PurgeResult = { expired: 0, removed: 0, runsRemoved: 0, done: true };
  let statements = 0;
  const more = (): boolean => {
    if (statements < limits.maxStatements) return true;
    result.done = false;
    return false;
  };
  // (1) mark
  while (more()) {
    statements += 1;
    const marked = await db.query(
      `UPDATE ${schema}.runs SET expired_at = now() WHERE id IN (
         SELECT id FROM ${schema}.runs WHERE ended_at IS NOT NULL AND NOT purged AND expired_at IS NULL
           AND ended_at <= now() - make_interval(secs => $1) ORDER BY ended_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
      [retention.chunkSeconds, limits.batchSize],
    );
    result.expired += marked.rowCount ?? 0;
    if ((marked.rowCount ?? 0) < limits.batchSize) break;
  }
  // (2) remove the expired runs' rows, run by run
  while (more()) {
    const next = await db.query<{ id: string }>(
      `SELECT id FROM ${schema}.runs WHERE ended_at IS NOT NULL AND NOT purged AND expired_at IS NOT NULL ORDER BY ended_at LIMIT 1`,
    );
    const runId = next.rows[0]?.id;
    if (runId === undefined) break;
    for (const table of RUN_TABLES) {
      while (more()) {
        statements += 1;
        const removed = await db.query(
          `DELETE FROM ${schema}.${table} WHERE run_id = $1 AND ctid = ANY (ARRAY (SELECT ctid FROM ${schema}.${table} WHERE run_id = $1 LIMIT $2))`,
          [runId, limits.batchSize],
        );
        result.removed += removed.rowCount ?? 0;
        if ((removed.rowCount ?? 0) < limits.batchSize) break;
      }
    }
    if (!result.done) break;
    await db.query(`UPDATE ${schema}.runs SET purged = true WHERE id = $1`, [runId]);
  }
  // (3) remove the rows of runs past their row retention
  while (more()) {
    statements += 1;
    // the removed runs' messages stop being theirs (a run created again under an id is another run)
    const removed = await db.query<{ removed: number }>(
      `WITH gone AS (DELETE FROM ${schema}.runs WHERE id IN (
         SELECT id FROM ${schema}.runs WHERE purged AND ended_at <= now() - make_interval(secs => $1) ORDER BY ended_at LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING id),
       m AS (UPDATE ${schema}.messages SET run_id = NULL WHERE run_id IN (SELECT id FROM gone))
       SELECT count(*)::int4 AS removed FROM gone`,
      [retention.runSeconds, limits.batchSize],
    );
    const count = Number(removed.rows[0]?.removed ?? 0);
    result.runsRemoved += count;
    result.removed += count;
    if (count < limits.batchSize) break;
  }
  return result;
}

/**
 * Erases a run and everything of it in one statement (all or nothing). `undefined`: no such run;
 * `{ erased: false, status }`: the run is open and `force` was not given (nothing erased).
 * `notifyPrefix` given (`<schema>/`): the erase is notified (`<schema>/<runId>/erased`), so live
 * readers of the run on other instances end at once instead of waiting for rows that never come.
 * The run's messages in memory stop being the run's (`run_id` cleared): a run created again under
 * its id is another run, and neither replaces nor drops them (its commit ids share the prefix).
 */
export async function eraseRun(db: GuardedPool, schema: string, runId: string, force: boolean, notifyPrefix?: string): Promise<{ erased: boolean; status: string } | undefined> {
  const notify = notifyPrefix === undefined ? '' : `, (SELECT pg_notify('${JOURNAL_CHANNEL}', $3 || id || '/erased') FROM gone) AS notified`;
  const result = await db.query<{ status: string; erased: boolean }>(
    `WITH gone AS (DELETE FROM ${schema}.runs WHERE id = $1 AND ($2 OR status NOT IN ('queued', 'running')) RETURNING id),
          c AS (DELETE FROM ${schema}.run_chunks WHERE run_id IN (SELECT id FROM gone)),
          k AS (DELETE FROM ${schema}.run_commits WHERE run_id IN (SELECT id FROM gone)),
          t AS (DELETE FROM ${schema}.run_tool_calls WHERE run_id IN (SELECT id FROM gone)),
          s AS (DELETE FROM ${schema}.run_signals WHERE run_id IN (SELECT id FROM gone)),
          m AS (UPDATE ${schema}.messages SET run_id = NULL WHERE run_id IN (SELECT id FROM gone))
     SELECT r.status, EXISTS (SELECT 1 FROM gone) AS erased${notify} FROM ${schema}.runs r WHERE r.id = $1`,
    notifyPrefix === undefined ? [runId, force] : [runId, force, notifyPrefix],
  );
  const row = result.rows[0];
  return row === undefined ? undefined : { erased: row.erased, status: row.status };
}
