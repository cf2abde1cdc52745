/**
 * What a claim gave a worker, checked before anything runs from it (the rows may be another
 * build's, or edited in the database): the run's agent and stored call, its last commit and its
 * tool ledger. A row this build cannot go on from is a `MalformedJournalEntryError` naming the row
 * and field; the worker then fails the run closed (one `error` chunk) instead of running a tool
 * again, answering a call with nothing, or failing every attempt on the same row.
 */
import { MalformedJournalEntryError, type RunClaim } from '../../storage/index.js';
import { messageIdProblem } from '../durable-call-options.js';

const COMMIT_KINDS: ReadonlySet<string> = new Set(['input', 'model', 'step', 'rejected', 'final']);
const LEDGER_STATUSES: ReadonlySet<string> = new Set(['pending', 'started', 'completed', 'failed']);

const isCount = (value: unknown, minimum: number, maximum = Number.MAX_SAFE_INTEGER): boolean =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= minimum && value <= maximum;
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const shown = (value: unknown): string => {
  if (value === undefined) return 'nothing';
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
};

/**
 * The first row of `claim` this build cannot go on from, as the error naming it; `undefined` when
 * every row is usable. `runsAgent`: whether this worker runs the agent the run's row names.
 *
 * @example
 * ```ts
 * const problem = claimProblem(claim, (agentId) => agents.has(agentId));
 * if (problem !== undefined) await endRun(journal, claim, problem); // one error chunk, no tool run again
 * ```
 */
export function claimProblem(claim: RunClaim, runsAgent: (agentId: string) => boolean): MalformedJournalEntryError | undefined {
  const { runId, epoch } = claim.lease;
  const malformed = (row: string, field: string, problem: string): MalformedJournalEntryError => new MalformedJournalEntryError({ runId, seq: 0, row, field, problem });

  if (!runsAgent(claim.run.agentId)) return malformed('runs', 'agent_id', `${shown(claim.run.agentId)} is not an agent of this worker, whose queue the run's job came from`);
  const input = claim.input as unknown;
  if (!isRecord(input) || !('input' in input) || !isRecord(input['options']) || Object.getPrototypeOf(input['options']) !== Object.prototype) {
    return malformed('runs', 'input', 'not a stored call ({ input, options: { … } }) as RunWorker.submit stores it');
  }
  // a message id submit would refuse (an older build's, an edit): it would reach the run's start chunk
  const messageId = input['options']['messageId'];
  const messageIdWrong = messageId === undefined ? undefined : messageIdProblem(messageId);
  if (messageIdWrong !== undefined) return malformed('runs', 'input', `options.messageId is not a valid id: ${messageIdWrong}`);

  const commit = claim.commits.at(-1);
  if (commit !== undefined) {
    const row = `run_commits[${shown(commit.no)}]`;
    if (!COMMIT_KINDS.has(commit.kind)) return malformed(row, 'kind', `${shown(commit.kind)} is not a commit kind this build knows`);
    if (!isCount(commit.no, 1)) return malformed(row, 'no', `${shown(commit.no)} is not a whole number ≥ 1`);
    if (!isCount(commit.step, 0)) return malformed(row, 'step', `${shown(commit.step)} is not a whole number ≥ 0`);
    if (!isCount(commit.attempt, 0)) return malformed(row, 'attempt', `${shown(commit.attempt)} is not a whole number ≥ 0`);
    if (!isCount(commit.seqEnd, 0, claim.run.lastSeq)) return malformed(row, 'seq_end', `${shown(commit.seqEnd)} is not a seq of the run (0 to its last_seq ${claim.run.lastSeq})`);
    if (!isCount(commit.epoch, 1, epoch - 1)) return malformed(row, 'epoch', `${shown(commit.epoch)} is not the epoch of an owner before this claim (1 to ${epoch - 1})`);
  }

  const seen = new Set<string>();
  for (const call of claim.toolCalls) {
    const id = call.toolCallId;
    if (typeof id !== 'string' || id === '') return malformed('run_tool_calls', 'tool_call_id', `${shown(id)} is not a tool call id`);
    const row = `run_tool_calls[${id}]`;
    if (seen.has(id)) return malformed(row, 'tool_call_id', 'the ledger holds two rows of this call: which one is its outcome cannot be told');
    seen.add(id);
    if (typeof call.toolName !== 'string' || call.toolName === '') return malformed(row, 'tool_name', `${shown(call.toolName)} is not a tool name`);
    if (!LEDGER_STATUSES.has(call.status)) return malformed(row, 'status', `${shown(call.status)} is not a ledger status this build knows (${[...LEDGER_STATUSES].join(', ')})`);
    if (!isCount(call.epoch, 1, epoch - 1)) return malformed(row, 'epoch', `${shown(call.epoch)} is not the epoch of an owner before this claim (1 to ${epoch - 1})`);
    if (call.args === undefined) return malformed(row, 'args', 'the call has no arguments');
    if (call.status === 'completed' && call.output === undefined) return malformed(row, 'output', 'a completed call has no output: what the tool returned cannot be told');
    if (call.status === 'failed' && call.error === undefined) return malformed(row, 'error', 'a failed call has no error: why it failed cannot be told');
  }
  return undefined;
}
