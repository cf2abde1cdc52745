/**
 * Ending a run its queue gave up on (its job failed for the last time and pg-boss copied it to the
 * dead-letter queue): a fresh claim fences any owner still running it, then one `final` commit
 * closes what the journal left open (the parts and the step of the last attempt) and ends the run
 * with an `error` chunk carrying {@link RunAttemptsExhaustedError}: status `failed`, and every
 * reader of the run sees it end. A run that already ended is left as it is.
 *
 * ```
 * journal:  S i s-t-t-t            (the last attempt died mid-step)
 * give up:  S i s-t-t-t (te sf e)  (te text-end, sf step-finish { reason: 'error' }, e error: one final commit)
 * ```
 */
import { makeChunk, terminalChunk, type ChunkType } from '../../contract/index.js';
import { FencedError, RunNotFoundError, type RunJournal } from '../../storage/index.js';
import type { StoredCall } from '../durable-call-options.js';
import type { RunAttemptsExhaustedError } from '../errors/run-attempts-exhausted-error.js';
import { openAt, stepFinish } from './takeover.js';

/**
 * What giving up did: the run ended `failed` here (at `epoch`); it had ended already; it does not
 * exist; or another claim came between this one and its write (another worker giving up on it too,
 * or a worker of a live job of the run): that owner has the run now.
 */
export type GiveUpOutcome =
  | { readonly kind: 'failed'; readonly epoch: number; readonly lastSeq: number }
  | { readonly kind: 'ended' }
  | { readonly kind: 'missing' }
  | { readonly kind: 'superseded' };

const ended = (error: unknown): boolean => FencedError.isInstance(error) && error.reason === 'ended';

/**
 * Ends run `runId` with `error` under a new claim by `owner`. Idempotent: a run that ended (by its
 * own terminal chunk, a cancel, or another worker giving up on it first) is not written to, and of
 * two workers giving up on one run at once the later claim writes.
 */
export async function giveUpRun(journal: RunJournal, runId: string, owner: string, error: RunAttemptsExhaustedError): Promise<GiveUpOutcome> {
  let claim;
  try {
    claim = await journal.claim(runId, owner);
  } catch (caught) {
    if (ended(caught)) return { kind: 'ended' };
    if (RunNotFoundError.isInstance(caught)) return { kind: 'missing' };
    throw caught;
  }
  const { lease, run } = claim;
  const chunks: ChunkType[] = [];
  if (run.lastSeq === 0) {
    // nothing journaled yet: the run's start, with the message id every reader would have got
    const given = (claim.input as unknown as Partial<StoredCall>).options?.['messageId'];
    chunks.push(makeChunk(runId, 'start', { messageId: typeof given === 'string' ? given : `msg-${runId}` }));
  } else {
    const stepStart = await journal.findLastSeq(runId, 'step-start', run.lastSeq);
    if (stepStart > 0) {
      // the open step's structure (no deltas): what it opened, at a cost independent of its length
      const open = openAt(await journal.readStructure(runId, { after: stepStart - 1, until: run.lastSeq }), stepStart - 1);
      chunks.push(...open.closers);
      if (open.step !== undefined) chunks.push(stepFinish(runId, open.step, { reason: 'error', isContinued: false }));
    }
  }
  chunks.push(terminalChunk(runId, { error }));
  const last = claim.commits.at(-1);
  try {
    const { lastSeq } = await journal.append(lease, chunks, { kind: 'final', step: last?.step ?? 0, attempt: last?.attempt ?? 0, state: null });
    return { kind: 'failed', epoch: lease.epoch, lastSeq };
  } catch (caught) {
    if (!FencedError.isInstance(caught)) throw caught;
    const now = await journal.getRun(runId);
    return now !== null && now.status !== 'queued' && now.status !== 'running' ? { kind: 'ended' } : { kind: 'superseded' };
  }
}
