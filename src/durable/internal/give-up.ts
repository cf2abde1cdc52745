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
import { FencedError, JournalSchemaError, MalformedJournalEntryError, RunNotFoundError, type RunClaim, type RunJournal } from '../../storage/index.js';
import { checkedEntries, openAt, stepFinish } from './takeover.js';
import { messageIdProblem } from '../durable-call-options.js';

/**
 * What giving up did: the run ended `failed` here (at `epoch`); it had ended already; it does not
 * exist; another claim came between this one and its write (another worker giving up on it too,
 * or a worker of a live job of the run): that owner has the run now; or its row cannot be claimed
 * by this build (`unreadable`: a newer format, a malformed row), and it is left as it was.
 */
export type GiveUpOutcome =
  | { readonly kind: 'failed'; readonly epoch: number; readonly lastSeq: number }
  | { readonly kind: 'ended' }
  | { readonly kind: 'missing' }
  | { readonly kind: 'superseded' }
  | { readonly kind: 'unreadable'; readonly error: JournalSchemaError | MalformedJournalEntryError };

const ended = (error: unknown): boolean => FencedError.isInstance(error) && error.reason === 'ended';

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/**
 * Ends run `runId` (of `incarnation`, when given: the run its job was for) with `error` under a new
 * claim by `owner`. Idempotent: a run that ended (by its own terminal chunk, a cancel, or another
 * worker giving up on it first) is not written to, and of two workers giving up on one run at once
 * the later claim writes. A run whose row this build cannot claim (a newer format, a malformed row)
 * is left as it was; another run under the id (created again) is `missing`, left alone.
 */
export async function giveUpRun(journal: RunJournal, { runId, incarnation }: { readonly runId: string; readonly incarnation?: string }, owner: string, error: Error): Promise<GiveUpOutcome> {
  let claim;
  try {
    claim = await journal.claim(runId, owner, incarnation === undefined ? {} : { incarnation });
  } catch (caught) {
    if (ended(caught)) return { kind: 'ended' };
    if (RunNotFoundError.isInstance(caught)) return { kind: 'missing' };
    if (JournalSchemaError.isInstance(caught) || MalformedJournalEntryError.isInstance(caught)) return { kind: 'unreadable', error: caught };
    throw caught;
  }
  return endRun(journal, claim, error);
}

/**
 * Ends the claimed run with `error` in one `final` commit under the claim's lease: the run's
 * `start` when nothing was journaled yet, else the closers of what the last attempt left open in
 * its step (none when a chunk there cannot be read), then the `error` chunk. What it reads of the
 * run is read now (an execution may have written since the claim); what it takes from the claim
 * (the message id, the last commit's step and attempt) only when well formed.
 *
 * @example
 * ```ts
 * const outcome = await endRun(journal, claim, problem); // { kind: 'failed', epoch, lastSeq }
 * ```
 */
export async function endRun(journal: RunJournal, claim: Pick<RunClaim, 'lease' | 'input' | 'commits'>, error: Error): Promise<GiveUpOutcome> {
  const { lease } = claim;
  const { runId } = lease;
  const run = await journal.getRun(runId);
  if (run === null) return { kind: 'missing' };
  if (run.status !== 'queued' && run.status !== 'running') return { kind: 'ended' };
  const chunks: ChunkType[] = [];
  if (run.lastSeq === 0) {
    // nothing journaled yet: the run's start, with the message id every reader would have got
    const options = (claim.input as { options?: unknown } | null)?.options;
    const given = typeof options === 'object' && options !== null ? (options as Record<string, unknown>)['messageId'] : undefined;
    // (one submit would refuse — an older build's row, an edit — is not written: the run's own is)
    chunks.push(makeChunk(runId, 'start', { messageId: typeof given === 'string' && messageIdProblem(given) === undefined ? given : `msg-${runId}` }));
  } else {
    try {
      const stepStart = await journal.findLastSeq(runId, 'step-start', run.lastSeq);
      if (stepStart > 0) {
        // the open step's structure (no deltas): what it opened, at a cost independent of its length
        const structure = checkedEntries(runId, await journal.readStructure(runId, { after: stepStart - 1, until: run.lastSeq }));
        const open = openAt(structure, stepStart - 1);
        chunks.push(...open.closers);
        if (open.step !== undefined) chunks.push(stepFinish(runId, open.step, { reason: 'error', isContinued: false }));
      }
    } catch (caught) {
      // a chunk of the open step this build cannot read: what it opened cannot be told, the error alone ends the run
      if (!MalformedJournalEntryError.isInstance(caught)) throw caught;
    }
  }
  chunks.push(terminalChunk(runId, { error }));
  const last = claim.commits.at(-1);
  const step = isCount(last?.step) ? last.step : 0;
  const attempt = isCount(last?.attempt) ? last.attempt : 0;
  try {
    const { lastSeq } = await journal.append(lease, chunks, { kind: 'final', step, attempt, state: null });
    return { kind: 'failed', epoch: lease.epoch, lastSeq };
  } catch (caught) {
    if (!FencedError.isInstance(caught)) throw caught;
    const now = await journal.getRun(runId);
    return now !== null && now.status !== 'queued' && now.status !== 'running' ? { kind: 'ended' } : { kind: 'superseded' };
  }
}

/** The key of one attempt of a run's job, as its worker notes it (`RunJournal.noteInfrastructureLoss`): the job's generation and retry count. */
export const attemptKeyOf = (generation: number, retryCount: number): string => `${generation}:${retryCount}`;

/** How many times the dead-letter job waits (pg-boss retries it with backoff: 7–14 s in all) for the last owner's note before giving up. */
export const NOTE_WAIT_RETRIES = 3;

/**
 * What to do with a run whose job failed for the last time: go on in a job of the next generation
 * with the attempts left (`requeue`: the infrastructure failed enough of them), wait for the last
 * attempt's owner to note whether the infrastructure failed it (`wait`), or give the run up.
 * `spent`: the attempts that count against the run.
 */
export type AfterLastAttempt =
  | { readonly kind: 'requeue'; readonly failedBefore: number; readonly spent: number; readonly retryLimit: number }
  | { readonly kind: 'wait' }
  | { readonly kind: 'give-up'; readonly spent: number };

/**
 * The dead-letter decision. A run's attempts that the infrastructure failed are refunded: only
 * attempts spent for reasons of the run (its worker died, hung, or failed it) count against
 * `retryLimit`, across the generations of its job since its budget began (`since`: its submission
 * or its last handover). A note that comes late still refunds its attempt at the next decision.
 *
 * ```
 * attempts of gen 0:  0:0 ✗   0:1 ✗ (noted: the database was away)   0:2 ✗
 * retryLimit 2        spent = 2 of 3  → requeue: gen 1 with retryLimit 0 (one attempt left)
 * ```
 *
 * @example
 * ```ts
 * const facts = { generation: 0, since: 0, failedBefore: 0, failedAttempts: 1, retryLimit: 0 };
 * afterLastAttempt({ ...facts, losses: ['0:0'], waited: 0 }); // requeue: gen 1, retryLimit 0
 * afterLastAttempt({ ...facts, losses: [], waited: 0 });      // wait for the owner's note
 * afterLastAttempt({ ...facts, losses: [], waited: 3 });      // give-up
 * ```
 */
export function afterLastAttempt(facts: {
  /** The failed job's generation. */
  generation: number;
  /** The generation the run's budget of attempts began with (0, or its last handover's). */
  since: number;
  /** Attempts of generations `since … generation - 1`, all failed (the job's `data.failedBefore`). */
  failedBefore: number;
  /** The failed job's attempts (its retry count + 1), all failed. */
  failedAttempts: number;
  /** The attempts noted as the infrastructure's (`RunJournal.infrastructureLosses`). */
  losses: readonly string[];
  /** The worker's `queue.retryLimit`. */
  retryLimit: number;
  /** How many times the dead-letter job waited already (its own retry count). */
  waited: number;
}): AfterLastAttempt {
  let refunded = 0;
  let lastNoted = false;
  for (const key of new Set(facts.losses)) {
    const [generation, retry] = key.split(':').map(Number) as [number, number];
    if (generation === facts.generation && retry === facts.failedAttempts - 1) lastNoted = true;
    if ((generation >= facts.since && generation < facts.generation) || (generation === facts.generation && retry >= 0 && retry < facts.failedAttempts)) refunded++;
  }
  const failed = facts.failedBefore + facts.failedAttempts;
  const spent = Math.max(0, failed - refunded);
  if (spent <= facts.retryLimit) return { kind: 'requeue', failedBefore: failed, spent, retryLimit: facts.retryLimit - spent };
  // the last attempt's owner notes an outage once it reaches the database again: give it the time
  if (!lastNoted && facts.waited < NOTE_WAIT_RETRIES) return { kind: 'wait' };
  return { kind: 'give-up', spent };
}
