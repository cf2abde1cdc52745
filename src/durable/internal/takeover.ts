/**
 * What a new owner does with what the dead one left (DURABLE.md §6): go on from the last commit;
 * roll back the chunks past it with a marker (the parts they opened closed, then `step-finish`
 * with reason `retry` and `takeover: { epoch }`, which readers turn into a reset of the step); and
 * after a `model` commit, only when a marker was written, the step's journaled chunks from its
 * `step-start` through the commit again, verbatim, since the marker reset them for every reader.
 */
import { lastValueFrom, takeWhile, toArray } from 'rxjs';
import { makeChunk, type ChunkType } from '../../contract/index.js';
import { MalformedJournalEntryError, checkedEntryChunk, type EncodedChunk, type JournalEntry, type RunClaim, type RunCommitRecord, type RunJournal } from '../../storage/index.js';

/** How a claimed run goes on. */
export interface TakeoverPlan {
  /** The commit the run goes on from (`undefined`: the run starts from its input). */
  readonly commit: RunCommitRecord | undefined;
  /** Chunks that roll back what was written past the commit (empty when nothing was). */
  readonly marker: ChunkType[];
  /** Chunks written again after the marker, as journaled (a `model` commit's step, when marked). */
  readonly replay: EncodedChunk[];
  /** True when the journal already holds the run's `start`. */
  readonly started: boolean;
}

/** A usage with nothing counted (the marker's step-finish reports none). */
const noUsage = {
  inputTokens: undefined,
  inputTokenDetails: { noCacheTokens: undefined, cacheReadTokens: undefined, cacheWriteTokens: undefined },
  outputTokens: undefined,
  outputTokenDetails: { textTokens: undefined, reasoningTokens: undefined },
  totalTokens: undefined,
};

/** A `step-finish` closing `step` with nothing in it (a marker's, or a refused chunk's step). */
export function stepFinish(
  runId: string,
  step: { stepNumber: number; messageId?: string },
  result: { reason: 'retry' | 'error'; isContinued: boolean; takeover?: { epoch: number } },
): ChunkType {
  return makeChunk(runId, 'step-finish', { ...step, stepResult: result, output: { text: '', toolCalls: [], usage: noUsage } });
}

/**
 * `entries` as read, each checked before a takeover or a give-up builds on it: JSON, a chunk with
 * the fields its kind needs, of a type this build knows (a `step-start` with its step number). One
 * it cannot read is a `MalformedJournalEntryError` naming its seq: what the entry opened or closed
 * cannot be told, so the run cannot go on from it.
 *
 * @example
 * ```ts
 * const open = openAt(checkedEntries(runId, await journal.readStructure(runId, { after, until })), after);
 * ```
 */
export function checkedEntries(runId: string, entries: readonly JournalEntry[]): readonly JournalEntry[] {
  for (const entry of entries) {
    const { type, payload } = checkedEntryChunk(runId, entry) as { type: string; payload: Record<string, unknown> };
    if (type === 'step-start' && !(typeof payload['stepNumber'] === 'number' && Number.isSafeInteger(payload['stepNumber']) && payload['stepNumber'] >= 0)) {
      throw new MalformedJournalEntryError({ runId, seq: entry.seq, problem: 'step-start chunk without a whole `payload.stepNumber`' });
    }
  }
  return entries;
}

/**
 * The step still open at the end of `entries` and the closers of the parts opened after `after`
 * and not closed (text, reasoning, tool input, in that order).
 */
export function openAt(entries: readonly JournalEntry[], after: number): { step: { stepNumber: number; messageId?: string } | undefined; closers: ChunkType[]; runId: string } {
  let step: { stepNumber: number; messageId?: string } | undefined;
  const texts = new Set<string>();
  const reasoning = new Set<string>();
  const toolInputs = new Set<string>();
  let runId = '';
  for (const { seq, chunk } of entries) {
    runId = chunk.runId ?? runId;
    if (chunk.type === 'step-start') step = { stepNumber: chunk.payload.stepNumber, ...(chunk.payload.messageId ? { messageId: chunk.payload.messageId } : {}) };
    else if (chunk.type === 'step-finish') step = undefined;
    if (seq <= after) continue;
    switch (chunk.type) {
      case 'text-start':
        texts.add(chunk.payload.id);
        break;
      case 'text-end':
        texts.delete(chunk.payload.id);
        break;
      case 'reasoning-start':
        reasoning.add(chunk.payload.id);
        break;
      case 'reasoning-end':
        reasoning.delete(chunk.payload.id);
        break;
      case 'tool-call-input-streaming-start':
        toolInputs.add(chunk.payload.toolCallId);
        break;
      case 'tool-call-input-streaming-end':
        toolInputs.delete(chunk.payload.toolCallId);
        break;
      default:
        break;
    }
  }
  const closers: ChunkType[] = [
    ...[...texts].map((id) => makeChunk(runId, 'text-end', { id })),
    ...[...reasoning].map((id) => makeChunk(runId, 'reasoning-end', { id })),
    ...[...toolInputs].map((toolCallId) => makeChunk(runId, 'tool-call-input-streaming-end', { toolCallId })),
  ];
  return { step, closers, runId };
}

/**
 * Plans the takeover of a claimed run from its journal. What it reads does not grow with the open
 * step's length: the structure (no deltas) from the open step's start, and, for a marked `model`
 * commit, the committed step's entries through the commit (what it writes again).
 */
export async function planTakeover(journal: RunJournal, claim: RunClaim): Promise<TakeoverPlan> {
  const { run, lease } = claim;
  const commit = claim.commits.at(-1);
  const committedTo = commit?.seqEnd ?? 0;
  const started = run.lastSeq > 0;
  if (run.lastSeq <= committedTo) return { commit, marker: [], replay: [], started };
  // from the last step-start (the open step, if any), so the marker can name it; after a `model`
  // commit also from the commit's own step-start, which a takeover before this one may have
  // written again past the commit (its replay): the replay is always the commit's step as committed
  const stepStart = await journal.findLastSeq(run.runId, 'step-start', run.lastSeq);
  const committedStepStart = commit?.kind !== 'model' ? 0 : stepStart > 0 && stepStart <= committedTo ? stepStart : await journal.findLastSeq(run.runId, 'step-start', committedTo);
  const from = Math.min(committedTo, ...[stepStart, committedStepStart].filter((seq) => seq > 0).map((seq) => seq - 1));
  // the open parts and the open step: every chunk but the deltas (which open and close nothing in a run's journal)
  const structure = checkedEntries(run.runId, await journal.readStructure(run.runId, { after: from, until: run.lastSeq }));
  const { step, closers, runId } = openAt(structure, committedTo);
  const marker = [...closers];
  if (step !== undefined) {
    marker.push(stepFinish(runId || run.runId, step, { reason: 'retry', isContinued: true, takeover: { epoch: lease.epoch } }));
  }
  const replay =
    commit?.kind === 'model' && step !== undefined && committedStepStart > 0
      ? checkedEntries(
          run.runId,
          await lastValueFrom(
            journal.read$(run.runId, { after: committedStepStart - 1, live: false }).pipe(
              takeWhile((entry) => entry.seq <= committedTo),
              toArray(),
            ),
          ),
        ).map((entry) => ({ type: entry.chunk.type, json: entry.json }))
      : [];
  return { commit, marker, replay, started };
}
