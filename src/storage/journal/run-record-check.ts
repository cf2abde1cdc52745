/**
 * A run's record as a journal read it back from its store, checked before anyone uses it: a row of
 * another build or one edited in the database (a status, terminal or format this build does not
 * know, an epoch or `last_seq` that is no count) is a `MalformedJournalEntryError` naming the field,
 * never a record that silently says something else (a reader ending a `paused` run without its
 * terminal chunk, a claim bumping a negative epoch towards 1).
 */
import { RUN_FORMAT, listLimit } from '../internal/journal-rules.js';
import { MalformedJournalEntryError } from './errors/malformed-journal-entry-error.js';
import type { ListRunsOptions, ListedRun, RunRecord } from './types.js';

const STATUSES: ReadonlySet<string> = new Set(['queued', 'running', 'completed', 'failed', 'cancelled']);
const TERMINALS: ReadonlyMap<string, string> = new Map([
  ['finish', 'completed'],
  ['tripwire', 'completed'],
  ['error', 'failed'],
  ['abort', 'cancelled'],
]);

const isCount = (value: unknown, minimum: number): boolean => typeof value === 'number' && Number.isSafeInteger(value) && value >= minimum;
const shown = (value: unknown): string => (typeof value === 'string' ? JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value) : String(value));

/**
 * The first field of `run` this build cannot use, and why; `undefined` when it can use the record,
 * or when a newer build wrote it (its format above this build's: what else it holds is that
 * build's, and callers answer it with `JournalSchemaError`).
 *
 * @example
 * ```ts
 * runRecordProblem({ ...run, status: 'paused' as RunStatus }); // { field: 'status', problem: '"paused" is not a status this build knows (…)' }
 * ```
 */
export function runRecordProblem(run: RunRecord): { field: string; problem: string } | undefined {
  if (isCount(run.format, 1) && run.format > RUN_FORMAT) return undefined;
  if (!STATUSES.has(run.status)) return { field: 'status', problem: `${shown(run.status)} is not a status this build knows (${[...STATUSES].join(', ')})` };
  if (!isCount(run.epoch, 0)) return { field: 'epoch', problem: `${shown(run.epoch)} is not a whole number ≥ 0` };
  if (!isCount(run.lastSeq, 0)) return { field: 'last_seq', problem: `${shown(run.lastSeq)} is not a whole number ≥ 0` };
  // newer formats are the caller's (JournalSchemaError); below 1 no build ever wrote
  if (!isCount(run.format, 1)) return { field: 'format', problem: `${shown(run.format)} is not a run format any build writes (1 or more)` };
  const open = run.status === 'queued' || run.status === 'running';
  if (open && run.terminal !== undefined) return { field: 'terminal', problem: `a ${run.status} run has no terminal chunk yet (found ${shown(run.terminal)})` };
  if (!open && run.terminal !== undefined && TERMINALS.get(run.terminal) !== run.status) {
    return { field: 'terminal', problem: `${shown(run.terminal)} is not the terminal of a ${run.status} run` };
  }
  if (open && run.epoch === 0 && run.status === 'running') return { field: 'epoch', problem: 'a running run has been claimed: its epoch is 1 or more' };
  return undefined;
}

/**
 * `run` as read, or a `MalformedJournalEntryError` (row `runs`) naming the first field this build
 * cannot use.
 *
 * @example
 * ```ts
 * const run = checkedRunRecord(runFromRow(row)); // throws for status 'paused', epoch -3, format 0…
 * ```
 */
export function checkedRunRecord(run: RunRecord): RunRecord {
  return listedRunRecord(run, 'refuse') as RunRecord;
}

/**
 * `run` as `listRuns` lists it — the one check `getRun` and the claim make
 * ({@link checkedRunRecord} is its `'refuse'`): the record when this build can use it; else its
 * `MalformedJournalEntryError` (row `runs`, the first field it cannot use), thrown (`'refuse'`) or
 * as an `UnusableRun` in the record's place (`'report'`).
 *
 * @example
 * ```ts
 * const entries = rows.map((row) => listedRunRecord(runFromRow(row), 'report')); // { unusable: true, runId, error } for status 'paused'
 * ```
 */
export function listedRunRecord(run: RunRecord, unusable: 'refuse' | 'report'): ListedRun {
  const found = runRecordProblem(run);
  if (found === undefined) return run;
  const error = new MalformedJournalEntryError({ runId: run.runId, seq: 0, row: 'runs', ...found });
  if (unusable === 'report') return { unusable: true, runId: run.runId, error };
  throw error;
}

/**
 * `listRuns`' options, read once: the limit (`RangeError` naming it) and what an unusable row does
 * (`'refuse'` by default; any value but `'refuse'` and `'report'` is a `RangeError` naming it, never
 * read as the default).
 *
 * @example
 * ```ts
 * const { limit, unusable } = listRunsOptions('PostgresRunJournal', { limit: 10, unusable: 'report' });
 * ```
 */
export function listRunsOptions(journal: string, options: ListRunsOptions): { limit: number; unusable: 'refuse' | 'report' } {
  const { limit, unusable } = options;
  if (unusable !== undefined && unusable !== 'refuse' && unusable !== 'report') {
    const got = typeof unusable === 'string' ? JSON.stringify(unusable) : typeof unusable === 'object' ? (unusable === null ? 'null' : 'an object') : String(unusable);
    throw new RangeError(`${journal}.listRuns: unusable must be 'refuse' or 'report' (got ${got})`);
  }
  return { limit: listLimit(journal, limit), unusable: unusable ?? 'refuse' };
}
