/**
 * The ids a durable run's commit hands out: the same for every owner of the run (made from the run
 * id, the run's incarnation and the commit's own counter), so a takeover that runs the commit again
 * saves its messages under the ids the first owner used, while a run created again under a removed
 * run's id (another incarnation) hands out others. The loop hands them out (`run-commit.ts`);
 * memory's fenced save names their prefix so the store drops what only an earlier owner's commit made.
 */
import { createHash } from 'node:crypto';

/**
 * The first run format whose commit ids carry the run's incarnation (`RunRecord.format`): a run
 * stored by an earlier build (format 1) keeps the ids its first owner gave, made from the run id alone.
 */
export const INCARNATION_COMMIT_IDS_FORMAT = 2;

/**
 * What a run's commit ids are made from besides its id: its incarnation, for a run of format 2 on
 * that has one; `undefined` (the run id alone, as before) for a run an earlier build stored, or a
 * journal that keeps no incarnation.
 *
 * @example
 * ```ts
 * commitIdIncarnation({ format: 2, incarnation: '17' }); // '17'
 * commitIdIncarnation({ format: 1, incarnation: '17' }); // undefined
 * ```
 */
export function commitIdIncarnation(run: { readonly format: number; readonly incarnation?: string | undefined }): string | undefined {
  return run.format >= INCARNATION_COMMIT_IDS_FORMAT ? run.incarnation : undefined;
}

/** The largest counter a commit id holds (its last group: 48 bits). */
const MAX_COMMIT_COUNTER = 0xffff_ffff_ffff;

/**
 * What every id a durable run's commit hands out starts with: the first 80 bits of a name-based
 * UUID (SHA-256 of the run id and its `incarnation`, version 8 layout), written as a UUID's first
 * four groups and their dashes. The run id is unique in the journal and the incarnation tells a run
 * from one removed before it under the same id, so no other run's commit ids share it; memory's
 * save knows its commit's messages by it (`supersedesIdPrefix`). Without an incarnation (a run an
 * earlier build stored: {@link commitIdIncarnation}), the run id's alone, as that build made it.
 *
 * @example
 * ```ts
 * commitMessageId('run-1', 7, '3').startsWith(commitMessageIdPrefix('run-1', '3')); // true
 * ```
 */
export function commitMessageIdPrefix(runId: string, incarnation?: string): string {
  // the incarnation first, with its length: no run id and incarnation spell another pair's name
  const name = incarnation === undefined ? `rxagent.commit:${runId}` : `rxagent.commit.2:${incarnation.length}:${incarnation}:${runId}`;
  const bytes = createHash('sha256').update(name).digest().subarray(0, 10);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-`;
}

/**
 * The `index`-th id a durable run's commit hands out (from 0, in the order its hooks and its kept
 * data chunks ask for them): the same for every owner of the run, so a takeover after memory's save
 * (the commit runs again) saves its messages again under their ids — replaced, not stored twice.
 * A UUID (version 8 layout): the run's prefix ({@link commitMessageIdPrefix}), then the counter as
 * the last group, as long as any id whatever the run id's length.
 *
 * @example
 * ```ts
 * commitMessageId('run-1', 0, '3'); // the run's prefix, then '000000000000'
 * ```
 */
export function commitMessageId(runId: string, index: number, incarnation?: string): string {
  return commitMessageIdPrefix(runId, incarnation) + counterGroup(index);
}

function counterGroup(index: number): string {
  if (!Number.isSafeInteger(index) || index < 0 || index > MAX_COMMIT_COUNTER) {
    throw new RangeError(`commitMessageId: the counter must be an integer from 0 to ${MAX_COMMIT_COUNTER}, got ${String(index)}`);
  }
  return index.toString(16).padStart(12, '0');
}

/**
 * The ids a durable run's commit hands out, one after another (`commitMessageId(runId, 0, incarnation)`, `1`, …).
 *
 * @example
 * ```ts
 * const next = commitMessageIds('run-1', '3');
 * next() === commitMessageId('run-1', 0, '3'); // true
 * ```
 */
export function commitMessageIds(runId: string, incarnation?: string): () => string {
  const prefix = commitMessageIdPrefix(runId, incarnation);
  let next = 0;
  return () => prefix + counterGroup(next++);
}
