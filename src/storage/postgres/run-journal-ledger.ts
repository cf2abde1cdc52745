/** One tool-ledger transition inside a fenced transaction (the run row already held FOR SHARE). */
import { assertTransition } from '../internal/journal-rules.js';
import type { RunLease, ToolCallRecord, ToolTransition } from '../journal/types.js';
import type { Query } from './query.js';
import { toolCallColumns, toolCallFromRow, type ToolCallRow } from './run-journal-rows.js';

/**
 * Locks the call's row, checks the transition (a refused one is returned, not thrown: the
 * caller's `TypeError` must pass `guard`, which wraps foreign errors) and writes it.
 */
export async function transitionToolCall(
  query: Query,
  schema: string,
  lease: RunLease,
  transition: ToolTransition,
  payload: string | undefined,
): Promise<ToolCallRecord | { refused: unknown }> {
  const key = [lease.runId, transition.toolCallId];
  const existing = await query<ToolCallRow>(
    `SELECT ${toolCallColumns} FROM ${schema}.run_tool_calls WHERE run_id = $1 AND tool_call_id = $2 FOR UPDATE`,
    key,
  );
  const row = existing.rows[0];
  const stored = row === undefined ? undefined : { status: row.status as ToolCallRecord['status'], epoch: Number(row.epoch), toolName: row.tool_name };
  try {
    assertTransition(stored, transition, lease.epoch);
  } catch (refused) {
    // The caller's TypeError, returned past `guard` (which wraps foreign errors); nothing was written.
    return { refused };
  }
  if (transition.status === 'pending') {
    if (row !== undefined) return toolCallFromRow(row);
    const inserted = await query<ToolCallRow>(
      `INSERT INTO ${schema}.run_tool_calls (run_id, tool_call_id, tool_name, args, status, epoch, updated_at)
       VALUES ($1, $2, $3, $4::json, 'pending', $5, clock_timestamp()) RETURNING ${toolCallColumns}`,
      [...key, transition.toolName, payload, lease.epoch],
    );
    return toolCallFromRow(inserted.rows[0] as ToolCallRow);
  }
  const column = transition.status === 'completed' ? ', output = $5::json' : transition.status === 'failed' ? ', error = $5::json' : '';
  const updated = await query<ToolCallRow>(
    `UPDATE ${schema}.run_tool_calls SET status = $3, epoch = $4, updated_at = clock_timestamp()${column}
     WHERE run_id = $1 AND tool_call_id = $2 RETURNING ${toolCallColumns}`,
    [...key, transition.status, lease.epoch, ...(column === '' ? [] : [payload])],
  );
  return toolCallFromRow(updated.rows[0] as ToolCallRow);
}
