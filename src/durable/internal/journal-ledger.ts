/**
 * The tool ledger of a claimed run (DURABLE.md §7), on the journal: `started` is written (fenced)
 * before `execute`; `completed`/`failed` after, with the JSON result or error. What a dead owner
 * left decides what happens now: a `completed` or `failed` call is answered from the ledger and
 * never run again; a `started` one runs again only when the tool is `idempotent` (same
 * `idempotencyKey`), else it is answered with `ToolOutcomeUnknownError` (recorded as failed, so a
 * later owner answers the same).
 */
import type { JsonValue } from '../../contract/index.js';
import { storedJson } from './stored-json.js';
import type { ToolBegin, ToolLedger } from '../../loop/index.js';
import { MalformedJournalEntryError, type RunJournal, type RunLease, type ToolCallRecord } from '../../storage/index.js';
import { ToolOutcomeUnknownError } from '../errors/tool-outcome-unknown-error.js';

/** A tool call as the loop names it. */
interface LedgerCall {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly args: unknown;
}

/** An error read back from the ledger: an `Error` with the stored name, message and fields. */
export function reviveError(json: JsonValue | undefined): Error {
  const fields = (typeof json === 'object' && json !== null && !Array.isArray(json) ? json : { message: String(json) }) as Record<string, JsonValue>;
  const error = new Error(typeof fields['message'] === 'string' ? fields['message'] : 'tool failed');
  for (const [key, value] of Object.entries(fields)) {
    if (key === 'message' || key === 'stack') continue;
    Object.defineProperty(error, key, { value, enumerable: key !== 'name', writable: true, configurable: true });
  }
  return error;
}

/** The ledger's hooks around each tool call (the worker's `tool-started` / `tool-returned` fault points). */
export interface LedgerFaults {
  started(toolCallId: string): Promise<void>;
  returned(toolCallId: string): Promise<void>;
}

/**
 * A `ToolLedger` for one claim: `rows` is the ledger as claimed (`RunClaim.toolCalls`, checked by
 * `claimProblem`), kept up to date with this owner's transitions; `pinned`, the calls this owner's
 * own `model` commits pinned so far. Every call a run executes was pinned by its step's `model`
 * commit before it runs: a call neither in the claimed ledger nor pinned here lost its row (the
 * ledger edited or cut short), and a row of another tool is not this call's. Both fail closed
 * (`MalformedJournalEntryError`: the run's error), never run the tool again or answer the call
 * with another's outcome.
 */
export function journalLedger(journal: RunJournal, lease: RunLease, rows: readonly ToolCallRecord[], faults: LedgerFaults, pinned: ReadonlySet<string>): ToolLedger {
  const ledger = new Map(rows.map((row) => [row.toolCallId, row]));
  const malformed = (call: LedgerCall, field: string, problem: string): MalformedJournalEntryError =>
    new MalformedJournalEntryError({ runId: lease.runId, seq: 0, row: `run_tool_calls[${call.toolCallId}]`, field, problem });
  const transition = async (...args: Parameters<RunJournal['toolCall']>): Promise<void> => {
    const row = await journal.toolCall(...args);
    ledger.set(row.toolCallId, row);
  };
  return {
    async begin(call: LedgerCall, tool: { idempotent: boolean }): Promise<ToolBegin> {
      const row = ledger.get(call.toolCallId);
      if (row === undefined && !pinned.has(call.toolCallId)) {
        throw malformed(call, 'tool_call_id', 'no row: the commit the run goes on from pinned this call, and its row is gone (whether it ran cannot be told)');
      }
      if (row !== undefined && row.toolName !== call.toolName) {
        throw malformed(call, 'tool_name', `the row is of ${JSON.stringify(row.toolName)}, the call of ${JSON.stringify(call.toolName)}`);
      }
      if (row?.status === 'completed') return { kind: 'result', result: row.output };
      if (row?.status === 'failed') return { kind: 'error', error: reviveError(row.error) };
      if (row?.status === 'started' && !tool.idempotent) {
        // its owner died inside execute: it may or may not have taken effect
        const error = new ToolOutcomeUnknownError({ toolName: call.toolName, toolCallId: call.toolCallId });
        await transition(lease, { toolCallId: call.toolCallId, status: 'failed', error: storedJson(error) });
        return { kind: 'error', error };
      }
      if (row === undefined) {
        await transition(lease, { toolCallId: call.toolCallId, status: 'pending', toolName: call.toolName, args: storedJson(call.args ?? null, 'tool call args') });
      }
      await transition(lease, { toolCallId: call.toolCallId, status: 'started' });
      await faults.started(call.toolCallId);
      return { kind: 'execute' };
    },
    async end(call: LedgerCall, outcome: { result: unknown } | { error: Error }): Promise<void> {
      await faults.returned(call.toolCallId);
      if ('error' in outcome) await transition(lease, { toolCallId: call.toolCallId, status: 'failed', error: storedJson(outcome.error) });
      else await transition(lease, { toolCallId: call.toolCallId, status: 'completed', output: storedJson(outcome.result ?? null, 'tool result') });
    },
  };
}
