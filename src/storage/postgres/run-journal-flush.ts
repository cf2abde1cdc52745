/** The one statement of a journal flush: chunks, commit and pinned tool calls behind the fenced run-row update. */
import type { RunCommit, EncodedChunk, RunLease, RunTerminal } from '../journal/types.js';
import { statusOf } from '../internal/journal-rules.js';
import { JOURNAL_CHANNEL } from './journal-listener.js';

/** Where and how a journal writes. */
export interface FlushTarget {
  /** The quoted schema. */
  schema: string;
  schemaName: string;
  notify: boolean;
}

/**
 * Strings joined for `string_to_array(…, E'\x1e')`, each followed by the separator (so an empty
 * string survives, and the array's last element, empty, is not a row). U+001E never stands
 * unescaped in JSON text, and `checkAppend` refuses a chunk whose type or text holds it. One text
 * parameter instead of a `text[]`: the driver would quote and escape each element in JavaScript.
 */
const ROW_SEPARATOR = '\x1e';

function joined(chunks: readonly EncodedChunk[], field: 'type' | 'json'): string {
  const parts = new Array<string>(chunks.length + 1);
  for (let index = 0; index < chunks.length; index++) parts[index] = (chunks[index] as EncodedChunk)[field];
  parts[chunks.length] = '';
  return parts.join(ROW_SEPARATOR);
}

/**
 * `WITH f AS (UPDATE runs … WHERE id AND epoch AND owner AND status = 'running' [AND incarnation] RETURNING …)`
 * feeding the `INSERT`s of chunks (seq `last_seq - n + ordinal`), the commit and its pinned tool
 * calls, and at most one `pg_notify` of `<schema>/<runId>/<lastSeq>`. No row back: fenced. The
 * chunks' types and texts travel as two texts ({@link ROW_SEPARATOR}), split by PostgreSQL.
 */
export function flushStatement(
  where: FlushTarget,
  lease: RunLease,
  chunks: readonly EncodedChunk[],
  commit: RunCommit | undefined,
  checked: { state: string | undefined; terminal: RunTerminal | undefined; toolCalls: string[] },
): { text: string; values: unknown[] } {
  const values: unknown[] = [lease.runId, lease.epoch, lease.owner, chunks.length];
  const param = (value: unknown): string => `$${values.push(value)}`;
  // the database's clock, never the instance's: rows of every instance order by one clock
  const set = ['last_seq = last_seq + $4', 'updated_at = clock_timestamp()'];
  if (commit !== undefined) set.push('last_commit = last_commit + 1');
  if (checked.terminal !== undefined) {
    set.push(`status = ${param(statusOf(checked.terminal))}`, `terminal = ${param(checked.terminal)}`, 'terminal_seq = last_seq + $4', "ended_at = date_trunc('milliseconds', clock_timestamp())");
    // truncated, not rounded by the millisecond column: a run's end is never later than the clock
    // a purge reads right after it (retention 0 expires a run that has just ended)
  }
  // the lease's run only: one created again under its id starts at epoch 0 again
  const incarnation = lease.incarnation === undefined ? '' : ` AND incarnation::text = ${param(lease.incarnation)}`;
  const parts = [
    `f AS (UPDATE ${where.schema}.runs SET ${set.join(', ')}
       WHERE id = $1 AND epoch = $2 AND owner = $3 AND status = 'running'${incarnation} RETURNING id, last_seq, last_commit)`,
    `c AS (INSERT INTO ${where.schema}.run_chunks (run_id, seq, epoch, type, chunk)
       SELECT f.id, f.last_seq - $4 + u.o, $2, u.t, u.c FROM f,
         unnest(string_to_array(${param(joined(chunks, 'type'))}::text, E'\\x1e'),
                string_to_array(${param(joined(chunks, 'json'))}::text, E'\\x1e')) WITH ORDINALITY AS u(t, c, o)
       WHERE u.o <= $4)`,
  ];
  if (commit !== undefined) {
    parts.push(`k AS (INSERT INTO ${where.schema}.run_commits (run_id, no, kind, step, attempt, epoch, seq_end, state, created_at)
       SELECT f.id, f.last_commit, ${param(commit.kind)}, ${param(commit.step)}, ${param(commit.attempt)}, $2, f.last_seq, ${param(checked.state)}::json, clock_timestamp() FROM f)`);
    // the snapshots before it are superseded (a claim goes on from the last commit): kept, they would make a run's commits grow with steps × history
    parts.push(`d AS (DELETE FROM ${where.schema}.run_commits WHERE run_id = $1 AND no < (SELECT f.last_commit FROM f))`);
  }
  const pins = commit?.toolCalls ?? [];
  if (pins.length > 0) {
    parts.push(`p AS (INSERT INTO ${where.schema}.run_tool_calls (run_id, tool_call_id, tool_name, args, status, epoch, updated_at)
       SELECT f.id, u.i, u.n, u.a::json, 'pending', $2, clock_timestamp() FROM f,
         unnest(${param(pins.map((pin) => pin.toolCallId))}::text[], ${param(pins.map((pin) => pin.toolName))}::text[], ${param(checked.toolCalls)}::text[])
         WITH ORDINALITY AS u(i, n, a, o) ORDER BY u.o ON CONFLICT (run_id, tool_call_id) DO NOTHING)`);
  }
  const notify =
    where.notify && (chunks.length > 0 || checked.terminal !== undefined)
      ? `, pg_notify('${JOURNAL_CHANNEL}', ${param(`${where.schemaName}/`)} || f.id || '/' || f.last_seq)`
      : '';
  return { text: `WITH ${parts.join(',\n')} SELECT f.last_seq::float8 AS last_seq${notify} FROM f`, values };
}
