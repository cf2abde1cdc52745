/**
 * Reads of a run's structure (every chunk but the deltas) through the partial index
 * `run_chunks_structure` (migration 3): what a takeover and a UI resume need of a long step,
 * at a cost independent of how many deltas the step holds.
 */
import { DELTA_TYPES, isDeltaType } from '../internal/delta-types.js';
import type { ChunkRow } from '../internal/journal-tail.js';
import type { GuardedPool } from './guarded-pool.js';

/**
 * The index's predicate, written as in migration 3: PostgreSQL uses a partial index only for a
 * query whose conditions imply its predicate, and the same clause word for word always does.
 */
export const STRUCTURE_PREDICATE = `type NOT IN (${DELTA_TYPES.map((type) => `'${type}'`).join(', ')})`;

/** The run's expiry and the seq of its last chunk of `type` at or before `atOrBefore` (null: none); no row: no run. */
export async function lastSeqOfType(
  db: GuardedPool,
  schema: string,
  runId: string,
  type: string,
  atOrBefore: number,
): Promise<{ seq: number | null; expired: boolean } | undefined> {
  // A structural type is found by a backward scan of the index; a delta type by the primary key.
  const structure = isDeltaType(type) ? '' : ` AND c.${STRUCTURE_PREDICATE}`;
  const result = await db.query<{ seq: number | null; expired: boolean }>(
    `SELECT r.expired_at IS NOT NULL AS expired,
            (SELECT c.seq::float8 FROM ${schema}.run_chunks c WHERE c.run_id = r.id AND c.seq <= $2 AND c.type = $3${structure}
             ORDER BY c.seq DESC LIMIT 1) AS seq
     FROM ${schema}.runs r WHERE r.id = $1`,
    [runId, atOrBefore, type],
  );
  const row = result.rows[0];
  return row === undefined ? undefined : { seq: row.seq === null ? null : Number(row.seq), expired: row.expired };
}

/** The run's structural chunks with `after < seq ≤ until`, in order. */
export async function structureRows(db: GuardedPool, schema: string, runId: string, after: number, until: number): Promise<ChunkRow[]> {
  const result = await db.query<{ seq: number; epoch: number; type: string; chunk: string }>(
    `SELECT c.seq::float8 AS seq, c.epoch, c.type, c.chunk FROM ${schema}.run_chunks c
     WHERE c.run_id = $1 AND c.seq > $2 AND c.seq <= $3 AND c.${STRUCTURE_PREDICATE} ORDER BY c.seq`,
    [runId, after, until],
  );
  return result.rows.map((row) => ({ seq: Number(row.seq), epoch: Number(row.epoch), type: row.type, json: row.chunk }));
}
