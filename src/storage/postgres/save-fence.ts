/** The fence of PostgreSQL's fenced transactions (a durable run's memory save and tool ledger). */
import { FencedError } from '../journal/errors/fenced-error.js';
import { RunNotFoundError } from '../journal/errors/run-not-found-error.js';
import type { SaveFence } from '../types.js';
import type { Query } from './query.js';

/**
 * `SET LOCAL` settings of a fenced transaction: a transaction left idle (its owner paused) is
 * ended by the server after `timeoutMs`, and a lock is waited for at most as long.
 */
export function fenceSettings(timeoutMs: number): string[] {
  return [`idle_in_transaction_session_timeout = ${timeoutMs}`, `lock_timeout = ${timeoutMs}`];
}

/**
 * Reads the run's row `FOR SHARE` (held until the transaction ends, so a claim — an `UPDATE` of
 * that row — waits for it) and checks that `epoch` still owns the open run — the run of
 * `incarnation`, when given (a run created again under the id starts at epoch 0 again). Throws
 * `FencedError` (`'epoch'` or `'ended'`) or `RunNotFoundError` (no run, or another under the id).
 */
export async function checkEpoch(query: Query, schema: string, runId: string, epoch: number, what: string, owner?: string, incarnation?: string): Promise<void> {
  const result = await query<{ epoch: number; owner: string | null; status: string; incarnation: string | null }>(
    `SELECT epoch, owner, status, incarnation::text AS incarnation FROM ${schema}.runs WHERE id = $1 FOR SHARE`,
    [runId],
  );
  const row = result.rows[0];
  if (row === undefined || (incarnation !== undefined && row.incarnation !== incarnation)) throw new RunNotFoundError({ runId });
  const currentEpoch = Number(row.epoch);
  if (currentEpoch !== epoch || (owner !== undefined && row.owner !== owner)) {
    throw new FencedError({ runId, epoch, currentEpoch, reason: 'epoch', what });
  }
  if (row.status !== 'running') throw new FencedError({ runId, epoch, currentEpoch, reason: 'ended', what });
}

/** The fence of a memory save (see `SaveMessagesOptions.fence`). */
export async function checkSaveFence(query: Query, schema: string, fence: SaveFence): Promise<void> {
  if (typeof fence.runId !== 'string' || !Number.isSafeInteger(fence.epoch) || (fence.incarnation !== undefined && typeof fence.incarnation !== 'string')) {
    throw new TypeError('saveMessages: fence must be { runId: string, epoch: integer, incarnation?: string, beforeCommit? }');
  }
  await checkEpoch(query, schema, fence.runId, fence.epoch, 'memory save', undefined, fence.incarnation);
}
