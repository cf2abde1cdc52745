/** Rows of the run journal's tables and their conversion to the contract's records. */
import type { JsonValue } from '../../contract/json-codec.js';
import type { RunCommitKind, RunCommitRecord, RunRecord, RunSignalRecord, RunStatus, RunTerminal, ToolCallRecord, ToolCallStatus } from '../journal/types.js';
import type { GuardedPool } from './guarded-pool.js';
import { epochMs } from './memory-rows.js';

export interface RunRow {
  id: string;
  agent_id: string;
  thread_id: string | null;
  resource_id: string | null;
  status: string;
  epoch: number;
  owner: string | null;
  last_seq: string | number;
  format: number;
  terminal: string | null;
  incarnation: string | null;
  created_ms: number;
  updated_ms: number;
  expired_ms: number | null;
}

export interface CommitRow {
  no: number;
  kind: string;
  step: number;
  attempt: number;
  epoch: number;
  seq_end: string | number;
  state: string;
}

export interface ToolCallRow {
  tool_call_id: string;
  tool_name: string;
  args: string;
  status: string;
  epoch: number;
  output: string | null;
  error: string | null;
}

// Numbers and JSON read as float8 / text, so a pool with custom type parsers reads the same.
export const runColumns = `id, agent_id, thread_id, resource_id, status, epoch, owner, last_seq::float8 AS last_seq, format, terminal, incarnation::text AS incarnation,
  ${epochMs('created_at')} AS created_ms, ${epochMs('updated_at')} AS updated_ms, ${epochMs('expired_at')} AS expired_ms`;
export const commitColumns = 'no, kind, step, attempt, epoch, seq_end::float8 AS seq_end, state::text AS state';
export const toolCallColumns = 'tool_call_id, tool_name, args::text AS args, status, epoch, output::text AS output, error::text AS error';

const parse = (text: string): JsonValue => JSON.parse(text) as JsonValue;

export function runFromRow(row: RunRow): RunRecord {
  return {
    runId: row.id,
    agentId: row.agent_id,
    ...(row.thread_id === null ? {} : { threadId: row.thread_id }),
    ...(row.resource_id === null ? {} : { resourceId: row.resource_id }),
    status: row.status as RunStatus,
    epoch: Number(row.epoch),
    ...(row.owner === null ? {} : { owner: row.owner }),
    lastSeq: Number(row.last_seq),
    format: Number(row.format),
    ...(row.terminal === null ? {} : { terminal: row.terminal as RunTerminal }),
    ...(row.incarnation === null ? {} : { incarnation: row.incarnation }),
    createdAt: new Date(Math.round(Number(row.created_ms))),
    updatedAt: new Date(Math.round(Number(row.updated_ms))),
    ...(row.expired_ms === null ? {} : { expiredAt: new Date(Math.round(Number(row.expired_ms))) }),
  };
}

export function commitFromRow(row: CommitRow): RunCommitRecord {
  return {
    no: Number(row.no),
    kind: row.kind as RunCommitKind,
    step: Number(row.step),
    attempt: Number(row.attempt),
    epoch: Number(row.epoch),
    seqEnd: Number(row.seq_end),
    state: parse(row.state),
  };
}

export function toolCallFromRow(row: ToolCallRow): ToolCallRecord {
  return {
    toolCallId: row.tool_call_id,
    toolName: row.tool_name,
    args: parse(row.args),
    status: row.status as ToolCallStatus,
    epoch: Number(row.epoch),
    ...(row.output === null ? {} : { output: parse(row.output) }),
    ...(row.error === null ? {} : { error: parse(row.error) }),
  };
}

/** The run's signals after signal id `after`, oldest first. */
export async function readSignals(db: GuardedPool, schema: string, runId: string, after: number): Promise<RunSignalRecord[]> {
  const result = await db.query<{ id: string; kind: 'stop'; reason: string | null; created_ms: number }>(
    `SELECT id::text AS id, kind, reason::text AS reason, ${epochMs('created_at')} AS created_ms
     FROM ${schema}.run_signals WHERE run_id = $1 AND id > $2 ORDER BY run_signals.id`,
    [runId, after],
  );
  return result.rows.map((row) => ({
    id: Number(row.id),
    kind: row.kind,
    ...(row.reason === null ? {} : { reason: parse(row.reason) }),
    createdAt: new Date(Math.round(Number(row.created_ms))),
  }));
}
