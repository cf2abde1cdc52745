/**
 * A journaled run as UI message chunks with stable ids (`<seq>:<k>`: the k-th UI chunk of entry
 * seq), resumable after any id: the encoder is fed silently from the last `step-start` at or
 * before the cursor (at a step boundary it holds nothing but "started") — in a long step only the
 * structure (every entry but the deltas, `RunJournal.readStructure`): a delta of a part its start
 * opened changes nothing the encoder keeps, so a resume near the end of a long step reads no deltas
 * before its cursor — the cursor entry's first k + 1 UI chunks are dropped, and the rest goes out
 * as it did the first time.
 */
import type { UIMessageChunk } from 'ai';
import { Observable, type Subscription } from 'rxjs';
import {
  JournalCursorError,
  JournalSchemaError,
  MalformedJournalEntryError,
  authorizedRun,
  clientEntry,
  type JournalEntry,
  type RunAccess,
  type RunJournal,
} from '../../storage/index.js';
import { UIChunkEncoder, type UIChunkEncoderOptions } from './ui-chunk-encoder.js';

/** One UI chunk and its SSE id. */
export interface UIEvent {
  id: string;
  chunk: UIMessageChunk;
}

/** Where a resume starts: the entries read silently, the cursor entry and how many of its UI chunks were sent. */
export interface ResumePlan {
  /** Read entries after this seq. */
  readAfter: number;
  /** Entries fed to the encoder silently before those read (the cursor's step structure before it). */
  silent?: readonly JournalEntry[];
  /** The silent entries start past the run's `start` (at a step boundary): the encoder is told it went out. */
  started?: boolean;
  /** Entries up to `seq` are encoded silently; entry `seq`'s first `skip` UI chunks too. */
  cursor?: { seq: number; skip: number };
}

/**
 * Up to this many entries between a step's start and the cursor are read whole; past it only the
 * structure. The two agree on every journal a run writes (its brackets are repaired by
 * `closeBrackets`, so no delta opens a part); read whole, a journal written by hand whose deltas
 * open parts without a start also resumes exactly.
 */
const FULL_READ_ENTRIES = 2000;

/**
 * Checks the run, the caller's access (a refused caller gets `RunNotFoundError`, as for an
 * unknown run), the format and the cursor (`JournalSchemaError`, `JournalCursorError`) and finds
 * where to start reading. Cursor forms: `<seq>:<k>` (after UI chunk k of entry seq), `<seq>`
 * (after entry seq), empty or `0` (the whole run).
 */
export async function planResume(journal: RunJournal, runId: string, after: string | number | null | undefined, access: RunAccess): Promise<ResumePlan> {
  const run = await authorizedRun(journal, runId, access);
  if (run.format > journal.format) throw new JournalSchemaError({ found: run.format, known: journal.format, runId });
  if (after === null || after === undefined || after === '' || after === 0 || after === '0') return { readAfter: 0 };
  const match = typeof after === 'string' ? /^(\d{1,15})(?::(\d{1,6}))?$/.exec(after) : null;
  const seq = typeof after === 'number' ? after : Number(match?.[1] ?? Number.NaN);
  const k = match?.[2] === undefined ? undefined : Number(match[2]);
  if (!Number.isSafeInteger(seq) || seq < 1 || seq > run.lastSeq) {
    throw new JournalCursorError({ runId, after, lastSeq: run.lastSeq, problem: 'must be <seq>:<k> or <seq> with seq from 1 to lastSeq' });
  }
  const cursor = { seq, skip: k === undefined ? Number.POSITIVE_INFINITY : k + 1 };
  const stepStart = await journal.findLastSeq(runId, 'step-start', seq);
  const from = stepStart > 0 ? stepStart - 1 : 0;
  if (seq - 1 - from <= FULL_READ_ENTRIES) return { readAfter: from, cursor };
  const silent = await journal.readStructure(runId, { after: from, until: seq - 1 });
  return { readAfter: seq - 1, cursor, silent, started: from > 0 };
}

/** How many bytes of journal rows one page of a UI reader holds at most. */
const PAGE_BYTES = 256 * 1024;

/**
 * The UI events of a run from a plan: live until the terminal chunk. `ready` is the consumer's
 * backpressure (awaited before each page of at most 256 KiB of rows). Each entry is checked and
 * served in its client-safe form (`clientEntry`); one the encoder cannot take errors the
 * stream with `MalformedJournalEntryError` (never a throw out of the subscriber).
 */
export function journalUIEvents(
  journal: RunJournal,
  runId: string,
  plan: ResumePlan,
  options: UIChunkEncoderOptions,
  ready?: () => Promise<void> | void,
): Observable<UIEvent[]> {
  return new Observable<UIEvent[]>((subscriber) => {
    const encoder = new UIChunkEncoder(options);
    // Reading from a step boundary past the run's first chunk: `start` went out long ago.
    if (plan.started ?? plan.readAfter > 0) encoder.markStarted();
    const cursor = plan.cursor;
    for (const entry of plan.silent ?? []) {
      try {
        encoder.encode(clientEntry(runId, entry).chunk);
      } catch (error) {
        subscriber.error(MalformedJournalEntryError.isInstance(error) ? error : new MalformedJournalEntryError({ runId, seq: entry.seq, problem: `the UI encoder refused it (${error instanceof Error ? error.name : 'Error'})` }));
        return undefined;
      }
    }
    return journal
      .read$(runId, { after: plan.readAfter, maxPageBytes: PAGE_BYTES, ...(ready === undefined ? {} : { ready }) })
      .subscribe({
        next: (entry) => {
          if (subscriber.closed) return;
          let encoded: readonly UIMessageChunk[];
          try {
            encoded = encoder.encode(clientEntry(runId, entry).chunk);
          } catch (error) {
            const problem = MalformedJournalEntryError.isInstance(error) ? error : new MalformedJournalEntryError({ runId, seq: entry.seq, problem: `the UI encoder refused it (${error instanceof Error ? error.name : 'Error'})` });
            subscriber.error(problem);
            return;
          }
          if (cursor !== undefined && entry.seq < cursor.seq) return;
          const skip = cursor !== undefined && entry.seq === cursor.seq ? cursor.skip : 0;
          const events: UIEvent[] = [];
          for (let k = skip; k < encoded.length; k++) events.push({ id: `${entry.seq}:${k}`, chunk: encoded[k] as UIMessageChunk });
          if (events.length > 0) subscriber.next(events);
          if (encoder.ended) subscriber.complete();
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
  });
}

/**
 * A `ReadableStream` of `frame(events)` pieces after `plan()` resolved; the next journal page is
 * asked for only when the reader took what was sent. A failing plan or read errors the stream.
 */
export function uiEventStream<T>(
  plan: () => Promise<ResumePlan>,
  events: (plan: ResumePlan, ready: () => Promise<void> | void) => Observable<UIEvent[]>,
  frame: (events: UIEvent[]) => readonly T[],
  finish: {
    onComplete?: () => readonly T[];
    onError?: (error: unknown) => 'close' | 'error' | { pieces: readonly T[]; then: 'close' };
    size?: (piece: T) => number;
    /** The run read (named by the error of a chunk that cannot be framed). */
    runId?: string;
  } = {},
): ReadableStream<T> {
  let subscription: Subscription | undefined;
  let waiting: (() => void) | undefined;
  let cancelled = false;
  return new ReadableStream<T>(
    {
      async start(controller) {
        let resolved: ResumePlan;
        try {
          resolved = await plan();
        } catch (error) {
          controller.error(error);
          return;
        }
        if (cancelled) return;
        const ready = (): Promise<void> | undefined =>
          (controller.desiredSize ?? 1) > 0 ? undefined : new Promise<void>((resolve) => (waiting = resolve));
        let ended = false;
        const fail = (error: unknown): void => {
          if (ended) return;
          ended = true;
          const how = finish.onError?.(error) ?? 'error';
          if (how === 'error') return controller.error(error);
          if (how !== 'close') for (const piece of how.pieces) controller.enqueue(piece);
          controller.close();
        };
        subscription = events(resolved, ready).subscribe({
          next: (batch) => {
            if (ended) return;
            let pieces: readonly T[];
            try {
              pieces = frame(batch);
            } catch (error) {
              // a chunk the framing cannot write (nested past what JSON.stringify takes): that row ends the response, never the process
              const seq = Number(batch[0]?.id.split(':')[0] ?? 0);
              subscription?.unsubscribe();
              fail(new MalformedJournalEntryError({ runId: finish.runId ?? '', seq, problem: `cannot be framed (${error instanceof Error ? error.name : 'Error'})` }));
              return;
            }
            for (const piece of pieces) controller.enqueue(piece);
          },
          error: fail,
          complete: () => {
            if (ended) return;
            ended = true;
            for (const piece of finish.onComplete?.() ?? []) controller.enqueue(piece);
            controller.close();
          },
        });
      },
      pull() {
        const resume = waiting;
        waiting = undefined;
        resume?.();
      },
      cancel() {
        cancelled = true;
        subscription?.unsubscribe();
        waiting?.();
      },
    },
    finish.size === undefined ? { highWaterMark: 64 } : { highWaterMark: 256 * 1024, size: finish.size },
  );
}
