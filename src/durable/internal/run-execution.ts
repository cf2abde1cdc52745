/**
 * One claimed run, executed as a pipeline: restored from its last commit (the dead owner's tail
 * rolled back with a marker), run by the loop with a commit at each commit point, its chunks
 * written through `journalTo`, its tool calls on the ledger, memory's save fenced; the chunks
 * after the last step held and written with the terminal chunk in one `final` commit. The values
 * are the worker's events, and last the execution's outcome.
 *
 * ```
 * run$:     S--i--s-t-t-M--r--F--s'-t-F*--(d f)      (S start, i input point, M model point, F step point, * the last)
 * journal:  (S i)  s-t-t M  r  F  s'-t F   (d f final)
 *
 * execution$ = merge(
 *   leaseLost$,                                        pg-boss took the job back: `fenced`
 *   failures,                                          a fault point or a ledger write failed outside the stream
 *   plan$ → concat(rollBack$, merge(
 *     stopRequests$,                                   a stop from any instance aborts the run (it ends with `abort`)
 *     run$.pipe(                                       the run's values: chunks, commit points (each holds the demand gate), RunEnd
 *       map(recordOf),                                 a chunk, a commit (the held chunks with it), or nothing
 *       journalTo(journal, lease, { demand }),         chunks batched, commits appended in order
 *       concatMap(acknowledged),                       each commit: its event, its fault point, the gate released: the loop goes on
 *     ))),
 * ).pipe(
 *   catchError(stoppedBy),                             every failure stops it at once, then says how: fenced | retry
 *   takeWhile(isNotOutcome, inclusive),                the first outcome ends it: the run unsubscribed, nothing more written
 * )
 * ```
 */
import { EMPTY, Subject, catchError, concat, concatMap, defer, filter, fromEvent, ignoreElements, lastValueFrom, map, merge, of, retry, take, takeWhile, tap, throwError, timer, toArray, type Observable } from 'rxjs';
import { DemandGate, JsonEncodingError, commitIdIncarnation, encodeJson, isTerminalChunk, terminalChunk, type ChunkType, type JsonValue } from '../../contract/index.js';
import { isChunk, isCommitPoint, runAgent, type Agent, type AgentInput, type DurableRunItem, type RunCommitPoint, type RunSnapshot } from '../../loop/index.js';
import { FencedError, MalformedJournalEntryError, type RunClaim, type RunJournal, type RunStatus } from '../../storage/index.js';
import { runCallOptionsOf, type StoredCall } from '../durable-call-options.js';
import type { FaultPointInfo, RunFaultPoint } from '../fault-point.js';
import type { RunWorkerEvent } from '../run-worker-event.js';
import { infrastructureBackoffMs, isInfrastructureError, isStorageInfrastructureError } from './infrastructure-error.js';
import { journalTo, type JournalAck, type JournalCommit, type JournalRecord } from './journal-to.js';
import { journalLedger } from './journal-ledger.js';
import { checkedEntries, openAt, planTakeover, stepFinish, type TakeoverPlan } from './takeover.js';

/**
 * How an execution ended, for its job: `completed` (the `final` commit written) and `fenced` (the
 * run has another owner) complete it, `released` hands the run on in a new job (a handover spends
 * no attempt), `retry` fails it (pg-boss hands it on, an attempt spent) — unless `infrastructure`:
 * the database or the way to it failed, and the worker claims the run again itself after a
 * backoff (no attempt spent). `malformed`: a journal row the run goes on from cannot be read (a
 * chunk of the open step, a signal of an unknown kind): no attempt can do better, and the worker
 * ends the run `failed` with the error under the same lease.
 */
export type ExecutionOutcome =
  | { readonly kind: 'completed' }
  | { readonly kind: 'released' }
  | { readonly kind: 'fenced' }
  | { readonly kind: 'retry'; readonly error: unknown; readonly infrastructure: boolean }
  | { readonly kind: 'malformed'; readonly error: MalformedJournalEntryError };

/** A value of an execution: one of the worker's events, or (last) its outcome. */
export type ExecutionItem = RunWorkerEvent | ExecutionOutcome;

/** Whether `item` is the execution's outcome (its last value). */
export function isExecutionOutcome(item: ExecutionItem): item is ExecutionOutcome {
  return (item as Partial<ExecutionOutcome>).kind !== undefined;
}

/** Consecutive failed reads of the signal channel retried before the attempt fails (its next owner reads the stop). */
const SIGNAL_READ_RETRIES = 5;

/** What an execution needs from its worker. */
export interface ExecutionContext {
  readonly journal: RunJournal;
  readonly agent: Agent;
  readonly faultPoint: ((point: RunFaultPoint, info: FaultPointInfo) => void | Promise<void>) | undefined;
  /** True once the worker hands its runs over (each is released at its next step commit). */
  readonly handingOver: () => boolean;
}

/** A commit of the run as `journalTo` writes it; `last`: a `step` commit after which no step runs (no handover there). */
interface ExecutionCommit extends JournalCommit {
  readonly last: boolean;
}

/** The run's `start` with its message id (given at submit, else made from the run id). */
function startWithMessageId(chunk: ChunkType & { type: 'start' }, stored: StoredCall, runId: string): ChunkType {
  const given = stored.options['messageId'];
  const messageId = chunk.payload.messageId ?? (typeof given === 'string' ? given : `msg-${runId}`);
  return { ...chunk, payload: { ...chunk.payload, messageId } };
}

/** `chunks` as far as the codec takes them; a refused one ends them with an `error` naming type and path. */
function encodable(chunks: ChunkType[], runId: string): ChunkType[] {
  for (const [index, chunk] of chunks.entries()) {
    try {
      encodeJson(chunk, `chunk ${chunk.type}`);
    } catch (error) {
      if (!JsonEncodingError.isInstance(error)) throw error;
      return [...chunks.slice(0, index), terminalChunk(runId, { error })];
    }
  }
  return chunks;
}

/** The run's status after its terminal chunk. */
function statusOf(terminal: ChunkType | undefined): RunStatus {
  return terminal?.type === 'error' ? 'failed' : terminal?.type === 'abort' ? 'cancelled' : 'completed';
}

/**
 * A claimed run executed to its end, or until it stops (fenced, released, failed): cold, one
 * subscription one execution. Emits the worker's events for the run, then the outcome its job
 * acts on, and completes; never errors.
 *
 * @example
 * ```ts
 * const outcome = await lastValueFrom(executeRun(context, claim, job.signal).pipe(filter(isExecutionOutcome)));
 * ```
 */
export function executeRun(context: ExecutionContext, claim: RunClaim, jobSignal: AbortSignal): Observable<ExecutionItem> {
  const { journal } = context;
  const { lease } = claim;
  const { runId, epoch } = lease;
  const stored = claim.input as unknown as StoredCall;
  // which run under its id this is, for its commit ids: the same for every owner, another for a run
  // created again under a removed run's id (its commit would hand out the old run's message ids)
  const incarnation = commitIdIncarnation(claim.run);
  return defer(() => {
    /** Failures met outside the stream (fault points, ledger writes): each stops the execution at once. */
    const failures = new Subject<never>();
    /** Errors thrown by fault points: a crash, the attempt failed whoever owns the run now. */
    const crashes = new Set<unknown>();
    const abort = new AbortController();
    // held by the journal's backpressure (a slow database pauses the model) and by each commit until acknowledged
    const demand = new DemandGate();
    /** The step the run is in: the last commit's, then each `step-start` written (fault points report it). */
    let stepNumber = 0;

    const crash = (error: unknown): never => {
      crashes.add(error);
      failures.error(error);
      throw error;
    };
    /** A fault point (called at once); one that throws stops the run there, as a crash would (the job comes back). */
    const fault = (point: RunFaultPoint, info: Omit<FaultPointInfo, 'runId' | 'epoch'> = {}): Promise<void> | undefined => {
      const faultPoint = context.faultPoint;
      if (faultPoint === undefined) return undefined;
      return (async () => faultPoint(point, { runId, epoch, ...info }))().catch(crash);
    };
    const fault$ = (point: RunFaultPoint, info: Omit<FaultPointInfo, 'runId' | 'epoch'>): Observable<never> => defer(() => fault(point, info) ?? EMPTY).pipe(ignoreElements());

    const fenced = (error: unknown): Observable<ExecutionItem> => of<ExecutionItem[]>({ type: 'fenced', runId, epoch, ...(error === undefined ? {} : { error }) }, { kind: 'fenced' });
    const failed = (error: unknown): Observable<ExecutionItem> => of<ExecutionItem[]>({ type: 'failed', runId, epoch, error }, { kind: 'retry', error, infrastructure: isInfrastructureError(error) });
    /**
     * How a failure stopped the run (it is unsubscribed already: nothing more is written): `fenced`
     * when the lease is gone (never the run's error; also a paused owner's write cut off after a
     * takeover), else `failed` — the attempt's failure, not the run's: it goes on from its last commit.
     */
    const stoppedBy = (error: unknown): Observable<ExecutionItem> => {
      if (crashes.has(error)) return failed(error);
      if (FencedError.isInstance(error) || jobSignal.aborted) return fenced(error);
      if (MalformedJournalEntryError.isInstance(error)) return of<ExecutionItem[]>({ type: 'failed', runId, epoch, error }, { kind: 'malformed', error });
      return defer(() => journal.getRun(runId)).pipe(
        // another owner now, or another run under the id (created again, from epoch 0 again): fenced
        map((run) => run !== null && (run.epoch !== epoch || run.incarnation !== claim.run.incarnation)),
        catchError(() => of(false)),
        concatMap((moved) => (moved ? fenced(error) : failed(error))),
      );
    };

    // pg-boss aborts the job's signal when this worker's claim on it is gone (heartbeat lost, expired)
    const leaseLost$ = defer(() => (jobSignal.aborted ? of(undefined) : fromEvent(jobSignal, 'abort').pipe(take(1)))).pipe(concatMap(() => fenced(jobSignal.reason)));

    // a stop from any instance (recorded: one sent before this claim counts too). A failed read of
    // the channel is read again (all of it) after a backoff; past the retries, or on a failure that
    // is not the infrastructure's, the attempt fails, so that the next owner reads the stop.
    const stopRequests$ = defer(() => journal.signals$(runId)).pipe(
      retry({
        count: SIGNAL_READ_RETRIES,
        resetOnSuccess: true,
        delay: (error: unknown, retryCount: number) => (isInfrastructureError(error) ? timer(infrastructureBackoffMs(retryCount - 1)) : throwError(() => error)),
      }),
      tap((signal) => {
        if (signal.kind === 'stop') abort.abort(signal.reason ?? 'stopped');
        // a kind this build does not know (another build's, an edited row): what was asked cannot be told, the run fails closed
        else throw new MalformedJournalEntryError({ runId, seq: 0, row: `run_signals[${String(signal.id)}]`, field: 'kind', problem: `${JSON.stringify(String(signal.kind).slice(0, 60))} is not a signal kind this build knows (stop)` });
      }),
      ignoreElements(),
    );

    /** One fenced write: the dead attempt rolled back, the model commit's step written again. */
    const rollBack$ = (plan: TakeoverPlan): Observable<never> => {
      if (plan.marker.length === 0 && plan.replay.length === 0) return EMPTY;
      return defer(() => {
        const marker = plan.marker.map((chunk) => ({ type: chunk.type, json: encodeJson(chunk, `chunk ${chunk.type}`) }));
        return journal.appendEncoded(lease, [...marker, ...plan.replay]);
      }).pipe(ignoreElements());
    };

    /** The run, its records written, each commit acknowledged. */
    const journaled$ = (plan: TakeoverPlan): Observable<ExecutionItem> =>
      defer(() => {
        stepNumber = plan.commit?.step ?? 0;
        /** The run's rejected attempts so far (tripwire and API-error retries), as its last commit point said. */
        let rejectedAttempts = plan.commit?.attempt ?? 0;
        let flushes = 0;
        /** Chunks held back: those before the `input` commit, and those after the last step. */
        let held: ChunkType[] | undefined = plan.commit === undefined ? [] : undefined;
        /** The tool calls this owner's `model` commits pinned (the ledger's rows of them are not in the claim's). */
        const pinned = new Set<string>();

        /**
         * The run's commit point: its commit, to the journal after the chunks before it. It holds the
         * demand gate (here, in the frame the point is emitted: the loop waits behind it) until acknowledged.
         */
        const commitOf = (point: RunCommitPoint & { readonly failed?: undefined }): ExecutionCommit => {
          stepNumber = point.stepNumber;
          rejectedAttempts = point.rejectedAttempts;
          const state = point.snapshot as unknown as JsonValue;
          const toolCalls = point.toolCalls?.map((call) => ({ toolCallId: call.toolCallId, toolName: call.toolName, args: (call.args ?? null) as JsonValue }));
          for (const call of toolCalls ?? []) pinned.add(call.toolCallId);
          const chunks = point.kind === 'input' ? (held ?? []) : [];
          if (point.kind === 'input') held = undefined;
          if (point.last === true) held = [];
          const commit = { kind: point.kind, step: point.stepNumber, attempt: point.rejectedAttempts, state, ...(toolCalls === undefined ? {} : { toolCalls }) };
          demand.hold(commit);
          return { commit, chunks, last: point.last === true };
        };

        /** The `final` commit: the held chunks and the terminal chunk, after the `finalizing` fault point. */
        const finalCommit$ = (chunks: ChunkType[]): Observable<ExecutionCommit> =>
          concat(
            fault$('finalizing', { stepNumber }),
            defer(() => of({ commit: { kind: 'final' as const, step: stepNumber, attempt: rejectedAttempts, state: null }, chunks: encodable(chunks, runId), last: true })),
          );

        /** The run's terminal chunk, once it came (the `final` commit is made from it after the values). */
        let terminal: ChunkType | undefined;

        /**
         * What one value of the run writes: the chunk itself, a commit point's commit, or nothing
         * (the run's end value; a chunk held for the input or the final commit; the terminal chunk,
         * kept for the final commit). Synchronous, so the common chunk costs no inner subscription
         * (`concatMap` over `[chunk]` cost one each), and one property read tells it from the run's
         * own values.
         */
        const recordOf = (item: DurableRunItem): JournalRecord<ExecutionCommit> | undefined => {
          // a point whose snapshot failed commits nothing: the run's error (its terminal chunk) follows
          if (!isChunk(item)) return isCommitPoint(item) && item.failed === undefined ? commitOf(item) : undefined;
          const chunk = item;
          if (chunk.type === 'start') {
            // the journal holds the run's start already (a takeover); else it goes with the input commit
            if (!plan.started) (held ??= []).push(startWithMessageId(chunk, stored, runId));
            return undefined;
          }
          if (isTerminalChunk(chunk)) {
            terminal = chunk;
            return undefined;
          }
          if (held !== undefined) {
            held.push(chunk);
            return undefined;
          }
          if (chunk.type === 'step-start') stepNumber = chunk.payload.stepNumber;
          return chunk;
        };

        /**
         * What the run's terminal chunk writes: the `final` commit with what was held — unless the
         * run's storage failed inside the run (memory's save in the commit phase): not the run's
         * end then, the attempt's (what it held is dropped; the next attempt does it again).
         */
        const final$ = defer(() => {
          if (terminal === undefined) return throwError(() => new Error(`Run ${runId} ended without a terminal chunk`));
          const { payload } = terminal as ChunkType & { type: 'error' };
          if (terminal.type === 'error' && isStorageInfrastructureError(payload.error)) return throwError(() => payload.error);
          return finalCommit$([...(held ?? []), terminal]);
        });

        /** A commit written: its event, its fault point, then the loop goes on (or, handing over, the run is released). */
        const acknowledged = (ack: JournalAck<ExecutionCommit>): Observable<ExecutionItem> => {
          if (ack.kind === 'refused') return refusal$(ack.error, ack.lastSeq);
          const { record, lastSeq } = ack;
          const kind = record.commit.kind;
          const committed = of<ExecutionItem[]>({ type: 'committed', runId, epoch, commit: kind, lastSeq });
          if (kind === 'final') {
            return concat(committed, of<ExecutionItem[]>({ type: 'completed', runId, epoch, status: statusOf(record.chunks[record.chunks.length - 1]) }), fault$('completed', { stepNumber }), of<ExecutionItem[]>({ kind: 'completed' }));
          }
          const point = kind === 'model' ? 'model-committed' : kind === 'rejected' ? 'retry-committed' : kind === 'step' ? 'step-committed' : undefined;
          return concat(
            committed,
            point === undefined ? EMPTY : fault$(point, { stepNumber }),
            defer(() => {
              if (kind === 'step' && !record.last && context.handingOver()) return of<ExecutionItem[]>({ type: 'released', runId, epoch }, { kind: 'released' });
              demand.release(record.commit);
              return EMPTY;
            }),
          );
        };

        /** A streamed chunk the codec refused ends the run: what the step opened closed, then `error` naming type and path. */
        const refusal$ = (error: JsonEncodingError, lastSeq: number): Observable<ExecutionItem> =>
          defer(async () => {
            const stepStart = await journal.findLastSeq(runId, 'step-start', lastSeq);
            const entries = stepStart === 0 ? [] : checkedEntries(runId, await lastValueFrom(journal.read$(runId, { after: stepStart - 1, live: false }).pipe(toArray())));
            const open = openAt(entries, stepStart - 1);
            return open.step === undefined ? open.closers : [...open.closers, stepFinish(runId, open.step, { reason: 'error', isContinued: false })];
          }).pipe(
            concatMap((closers) => finalCommit$([...closers, terminalChunk(runId, { error })])),
            journalTo(journal, lease),
            concatMap(acknowledged),
          );

        const journaledLedger = journalLedger(journal, lease, claim.toolCalls, {
          started: (toolCallId) => fault('tool-started', { stepNumber, toolCallId }) ?? Promise.resolve(),
          returned: (toolCallId) => fault('tool-returned', { stepNumber, toolCallId }) ?? Promise.resolve(),
        }, pinned);
        /** A ledger write the infrastructure failed stops the execution before the loop sees the error. */
        const guarded = <T>(pending: T | PromiseLike<T>): Promise<T> =>
          Promise.resolve(pending).catch((error: unknown) => {
            if (isInfrastructureError(error)) failures.error(error);
            throw error;
          });
        const restore = plan.commit?.state as unknown as RunSnapshot | undefined;
        const run$ = runAgent(context.agent, stored.input as unknown as AgentInput, runCallOptionsOf(runId, stored, abort.signal), {
          demand,
          commitPoints: true,
          ...(restore === undefined ? {} : { restore }),
          tools: { begin: (call, tool) => guarded(journaledLedger.begin(call, tool)), end: (call, outcome) => guarded(journaledLedger.end(call, outcome)) },
          memoryFence: { runId, epoch, beforeCommit: () => fault('memory-save', { stepNumber }) ?? Promise.resolve(), ...(incarnation === undefined ? {} : { incarnation }) },
          ...(incarnation === undefined ? {} : { incarnation }),
        });
        // the run's values, one by one (chunks and commits; the run completes after its terminal
        // chunk and RunEnd), then the final commit made from the terminal chunk
        const runRecords$ = concat(
          run$.pipe(
            map(recordOf),
            filter((record): record is JournalRecord<ExecutionCommit> => record !== undefined),
          ),
          final$,
        );
        return runRecords$.pipe(
          journalTo<ExecutionCommit>(journal, lease, {
            demand,
            onAppended: ({ commit }) => (commit === undefined ? fault('chunks-flushed', { stepNumber, flush: ++flushes }) : undefined),
          }),
          concatMap(acknowledged),
        );
      });

    const execution$ = defer(() => planTakeover(journal, claim)).pipe(concatMap((plan) => concat(rollBack$(plan), merge(stopRequests$, journaled$(plan)))));
    return merge(leaseLost$, failures, execution$).pipe(
      catchError(stoppedBy),
      takeWhile((item) => !isExecutionOutcome(item), true),
    );
  });
}
