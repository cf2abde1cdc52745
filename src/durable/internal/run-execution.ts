/**
 * One claimed run, executed: restored from its last commit (the dead owner's tail rolled back with
 * a marker), run by the loop with a checkpoint at each commit point, its chunks batched into the
 * journal, its tool calls on the ledger, memory's save fenced; the chunks after the last step
 * held and written with the terminal chunk in one `final` commit.
 *
 * ```
 * run$:     S--i--s-t-t-M--r--F--s'-t-F*--(d f)      (S start, i input point, M model point, F step point, * the last)
 * journal:  (S i)  s-t-t M  r  F  s'-t F   (d f final)
 * ```
 */
import { Subscription, defer, lastValueFrom, retry, throwError, timer, toArray } from 'rxjs';
import { DemandGate, JsonEncodingError, RequestContext, encodeJson, isTerminalChunk, terminalChunk, type ChunkType, type JsonValue } from '../../contract/index.js';
import { isRunEnd, runAgent, type Agent, type AgentCallOptions, type AgentInput, type RunCommitPoint, type RunSnapshot } from '../../loop/index.js';
import { FencedError, type RunClaim, type RunCommitKind, type RunJournal, type RunStatus } from '../../storage/index.js';
import type { StoredCall } from '../durable-call-options.js';
import type { FaultPointInfo, RunFaultPoint } from '../fault-point.js';
import type { RunWorkerEvent } from '../run-worker-event.js';
import { infrastructureBackoffMs, isInfrastructureError, isStorageInfrastructureError } from './infrastructure-error.js';
import { JournalWriter } from './journal-writer.js';
import { journalLedger } from './journal-ledger.js';
import { openAt, planTakeover, stepFinish } from './takeover.js';

/**
 * How an execution ended, for its job: `done` completes it, `released` hands the run on in a new
 * job (a handover spends no attempt), `retry` fails it (pg-boss hands it on, an attempt spent) —
 * unless `infrastructure`: the database or the way to it failed, and the worker claims the run
 * again itself after a backoff (no attempt spent).
 */
export type ExecutionOutcome =
  | { readonly kind: 'done' }
  | { readonly kind: 'released' }
  | { readonly kind: 'retry'; readonly error: unknown; readonly infrastructure: boolean };

/** Consecutive failed reads of the signal channel retried before the attempt fails (its next owner reads the stop). */
const SIGNAL_READ_RETRIES = 5;

/** What an execution needs from its worker. */
export interface ExecutionContext {
  readonly journal: RunJournal;
  readonly agent: Agent;
  readonly faultPoint: ((point: RunFaultPoint, info: FaultPointInfo) => void | Promise<void>) | undefined;
  readonly emit: (event: RunWorkerEvent) => void;
  /** True once the worker hands its runs over (each is released at its next step commit). */
  readonly handingOver: () => boolean;
}

/** Why a run stopped before its end (nothing is written after it). */
class Stop {
  constructor(
    readonly kind: 'fenced' | 'released' | 'failed',
    readonly error?: unknown,
  ) {}
}

const isRecord = (value: unknown): value is Record<string, JsonValue> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The call options a worker runs a stored call with. */
function callOptionsOf(runId: string, stored: StoredCall, abortSignal: AbortSignal): AgentCallOptions {
  const { requestContext, messageId: _messageId, ...options } = stored.options;
  const values = isRecord(requestContext) ? Object.entries(requestContext) : [];
  return { ...(options as AgentCallOptions), runId, requestContext: new RequestContext(values), abortSignal };
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
function statusOf(terminal: ChunkType): RunStatus {
  return terminal.type === 'error' ? 'failed' : terminal.type === 'abort' ? 'cancelled' : 'completed';
}

/**
 * Runs a claimed run to its end, or until it stops (fenced, released, failed), and resolves with
 * what its job should do. Never rejects.
 */
export function executeRun(context: ExecutionContext, claim: RunClaim, jobSignal: AbortSignal): Promise<ExecutionOutcome> {
  const { journal, emit } = context;
  const { lease } = claim;
  const { runId, epoch } = lease;
  const stored = claim.input as unknown as StoredCall;
  return new Promise<ExecutionOutcome>((resolve) => {
    const subscriptions = new Subscription();
    const abort = new AbortController();
    let writer: JournalWriter | undefined;
    let ended = false;
    let settled = false;

    /** Stops the run where it is: unsubscribed, the writer closed; nothing more is written. */
    const halt = (): void => {
      if (ended) return;
      ended = true;
      subscriptions.unsubscribe();
      writer?.close();
    };

    /** Ends the execution once: halted, the event out, the job told. */
    const end = (outcome: ExecutionOutcome | Stop): void => {
      if (settled) return;
      settled = true;
      halt();
      if (!(outcome instanceof Stop)) {
        resolve(outcome);
        return;
      }
      if (outcome.kind === 'fenced') emit({ type: 'fenced', runId, epoch, ...(outcome.error === undefined ? {} : { error: outcome.error }) });
      else if (outcome.kind === 'released') emit({ type: 'released', runId, epoch });
      else emit({ type: 'failed', runId, epoch, error: outcome.error });
      resolve(
        outcome.kind === 'fenced'
          ? { kind: 'done' }
          : outcome.kind === 'released'
            ? { kind: 'released' }
            : { kind: 'retry', error: outcome.error, infrastructure: isInfrastructureError(outcome.error) },
      );
    };

    /**
     * A failure while the run goes on: `fenced` when the lease is gone (never the run's error), else
     * `failed`. An infrastructure failure ends the attempt at once (the run unsubscribed before it
     * can turn the error into a terminal chunk): the run goes on from its last commit.
     */
    const stopOn = (error: unknown): void => {
      if (ended) return;
      if (FencedError.isInstance(error) || jobSignal.aborted) {
        end(new Stop('fenced', error));
        return;
      }
      if (isInfrastructureError(error)) {
        // halted at once (the run cannot turn the error into a terminal chunk); `fenced` when the
        // failure was the lease's (a paused owner's transaction cut off after a takeover), else `failed`
        halt();
        journal.getRun(runId).then(
          (run) => end(new Stop(run !== null && run.epoch !== epoch ? 'fenced' : 'failed', error)),
          () => end(new Stop('failed', error)),
        );
        return;
      }
      journal.getRun(runId).then(
        (run) => end(new Stop(run !== null && run.epoch !== epoch ? 'fenced' : 'failed', error)),
        () => end(new Stop('failed', error)),
      );
    };

    /** A fault point; one that throws stops the run there, as a crash would (the job comes back). */
    const fault = async (point: RunFaultPoint, info: Omit<FaultPointInfo, 'runId' | 'epoch'> = {}): Promise<void> => {
      if (context.faultPoint === undefined) return;
      try {
        await context.faultPoint(point, { runId, epoch, ...info });
      } catch (error) {
        end(new Stop('failed', error));
        throw error;
      }
    };

    // pg-boss aborts the job's signal when this worker's claim on it is gone (heartbeat lost, expired)
    if (jobSignal.aborted) return end(new Stop('fenced', jobSignal.reason));
    const onJobAbort = (): void => end(new Stop('fenced', jobSignal.reason));
    jobSignal.addEventListener('abort', onJobAbort, { once: true });
    subscriptions.add(() => jobSignal.removeEventListener('abort', onJobAbort));
    go().catch(stopOn);

    async function go(): Promise<void> {
      const plan = await planTakeover(journal, claim);
      if (ended) return;
      let flushes = 0;
      /** The step the run is in: the last commit's, then each `step-start` written (fault points report it). */
      let stepNumber = plan.commit?.step ?? 0;
      let attempt = plan.commit?.attempt ?? 0;
      const activeWriter = new JournalWriter({
        journal,
        lease,
        onFlushed: ({ commit }) => (commit === undefined ? fault('chunks-flushed', { stepNumber, flush: ++flushes }) : undefined),
      });
      writer = activeWriter;
      if (plan.marker.length > 0 || plan.replay.length > 0) {
        // one fenced write: the dead attempt rolled back, the model commit's step written again
        const encodedMarker = plan.marker.map((chunk) => ({ type: chunk.type, json: encodeJson(chunk, `chunk ${chunk.type}`) }));
        await journal.appendEncoded(lease, [...encodedMarker, ...plan.replay]);
        if (ended) return;
      }
      const committed = (commit: RunCommitKind, lastSeq: number): void => emit({ type: 'committed', runId, epoch, commit, lastSeq });

      // the writer's backpressure holds the run's demand gate: a slow database pauses the model
      const demand = new DemandGate();
      subscriptions.add(activeWriter.ready$.subscribe({ next: (ready) => (ready ? demand.release(activeWriter) : demand.hold(activeWriter)), error: () => undefined }));
      // a stop from any instance (recorded: one sent before this claim counts too). A failed read of
      // the channel is read again (all of it) after a backoff; past the retries, or on a failure that
      // is not the infrastructure's, the attempt fails, so that the next owner reads the stop.
      subscriptions.add(
        defer(() => journal.signals$(runId))
          .pipe(
            retry({
              count: SIGNAL_READ_RETRIES,
              resetOnSuccess: true,
              delay: (error: unknown, retryCount: number) => (isInfrastructureError(error) ? timer(infrastructureBackoffMs(retryCount - 1)) : throwError(() => error)),
            }),
          )
          .subscribe({
            next: (signal) => {
              if (signal.kind === 'stop') abort.abort(signal.reason ?? 'stopped');
            },
            error: (error: unknown) => stopOn(error),
          }),
      );

      /** Chunks held back: those before the `input` commit, and those after the last step. */
      let held: ChunkType[] | undefined = plan.commit === undefined ? [] : undefined;
      let finishing = false;

      const checkpoint = async (point: RunCommitPoint): Promise<void> => {
        stepNumber = point.stepNumber;
        attempt = point.attempt;
        const state = point.snapshot() as unknown as JsonValue;
        const toolCalls = point.toolCalls?.map((call) => ({ toolCallId: call.toolCallId, toolName: call.toolName, args: (call.args ?? null) as JsonValue }));
        const chunks = point.kind === 'input' ? (held ?? []) : [];
        if (point.kind === 'input') held = undefined;
        const commit = { kind: point.kind, step: point.stepNumber, attempt: point.attempt, state, ...(toolCalls === undefined ? {} : { toolCalls }) };
        const { lastSeq } = await activeWriter.commit(commit, chunks).catch((error: unknown) => {
          stopOn(error);
          throw error;
        });
        committed(point.kind, lastSeq);
        if (point.kind === 'model') await fault('model-committed', { stepNumber });
        else if (point.kind === 'rejected') await fault('retry-committed', { stepNumber });
        else if (point.kind === 'step') {
          await fault('step-committed', { stepNumber });
          if (point.last === true) held = [];
          else if (context.handingOver()) end(new Stop('released'));
        }
      };

      const finalize = async (chunks: ChunkType[]): Promise<void> => {
        finishing = true;
        await fault('finalizing', { stepNumber });
        if (ended) return;
        const written = encodable(chunks, runId);
        const { lastSeq } = await activeWriter.commit({ kind: 'final', step: stepNumber, attempt, state: null }, written);
        committed('final', lastSeq);
        emit({ type: 'completed', runId, epoch, status: statusOf(written[written.length - 1]!) });
        await fault('completed', { stepNumber });
        end({ kind: 'done' });
      };

      /** A streamed chunk the codec refuses ends the run: what the step opened closed, then `error` naming type and path. */
      const refuse = async (error: unknown): Promise<void> => {
        finishing = true;
        run$?.unsubscribe();
        await activeWriter.flush();
        const stepStart = await journal.findLastSeq(runId, 'step-start', activeWriter.lastSeq);
        const entries = stepStart === 0 ? [] : await lastValueFrom(journal.read$(runId, { after: stepStart - 1, live: false }).pipe(toArray()));
        const open = openAt(entries, stepStart - 1);
        const closers = open.step === undefined ? open.closers : [...open.closers, stepFinish(runId, open.step, { reason: 'error', isContinued: false })];
        await finalize([...closers, terminalChunk(runId, { error })]);
      };

      const journaled = journalLedger(journal, lease, claim.toolCalls, {
        started: (toolCallId) => fault('tool-started', { stepNumber, toolCallId }),
        returned: (toolCallId) => fault('tool-returned', { stepNumber, toolCallId }),
      });
      /** A ledger write the infrastructure failed ends the attempt before the loop sees the error. */
      const guarded = <T>(pending: Promise<T>): Promise<T> =>
        pending.catch((error: unknown) => {
          if (isInfrastructureError(error)) stopOn(error);
          throw error;
        });
      const ledger: typeof journaled = {
        begin: (call, tool) => guarded(Promise.resolve(journaled.begin(call, tool))),
        end: (call, outcome) => guarded(Promise.resolve(journaled.end(call, outcome))),
      };
      const restore = plan.commit?.state as unknown as RunSnapshot | undefined;
      let run$: Subscription | undefined;
      run$ = runAgent(context.agent, stored.input as unknown as AgentInput, callOptionsOf(runId, stored, abort.signal), {
        demand,
        checkpoint,
        ...(restore === undefined ? {} : { restore }),
        tools: ledger,
        memoryFence: { runId, epoch, beforeCommit: () => fault('memory-save', { stepNumber }) },
      }).subscribe({
        next: (item) => {
          if (ended || finishing || isRunEnd(item)) return;
          const chunk = item;
          if (chunk.type === 'start') {
            // the journal holds the run's start already (a takeover); else it goes with the input commit
            if (!plan.started) (held ??= []).push(startWithMessageId(chunk, stored, runId));
          } else if (chunk.type === 'error' && isStorageInfrastructureError(chunk.payload.error)) {
            // the run's storage failed inside the run (memory's save in the commit phase): not the
            // run's end, the attempt's (what it held is dropped; the next attempt does it again)
            stopOn(chunk.payload.error);
          } else if (isTerminalChunk(chunk)) {
            finalize([...(held ?? []), chunk]).catch(stopOn);
          } else if (held !== undefined) {
            held.push(chunk);
          } else {
            if (chunk.type === 'step-start') stepNumber = chunk.payload.stepNumber;
            try {
              activeWriter.write(chunk);
            } catch (error) {
              if (JsonEncodingError.isInstance(error)) refuse(error).catch(stopOn);
              else stopOn(error);
            }
          }
        },
        error: (error: unknown) => stopOn(error),
        complete: () => {
          if (!finishing) stopOn(new Error(`Run ${runId} ended without a terminal chunk`));
        },
      });
      subscriptions.add(run$);
    }
  });
}
