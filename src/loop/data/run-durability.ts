/**
 * What durable execution plugs into a run (`src/durable`): the run's commit points as values of
 * its stream (each acknowledged through the run's demand gate: the consumer holds it until the
 * commit is written), a snapshot to go on from, a tool ledger asked around each client tool call,
 * and the fence memory's save carries. A run without them is the plain run: nothing here costs it
 * anything (no commit point is made, no value added).
 */
import { EMPTY, Observable, concat, defer, of, throwError } from 'rxjs';
import type { DemandGate } from '../../contract/demand-gate.js';
import type { MemoryFence } from '../../contract/memory-types.js';
import { RUN_EVENT } from './run-event-mark.js';
import type { RunSnapshot } from './run-snapshot-types.js';

/** What a commit point says besides its snapshot. */
export interface CommitPointFacts {
  /**
   * `input`: after `processInput`; `model`: after the post-model hooks accepted a step that has
   * client tool calls, before any runs; `step`: after a step's `step-finish`; `rejected`: after a
   * retried attempt's closing chunks, before the next attempt's request.
   */
  readonly kind: 'input' | 'model' | 'step' | 'rejected';
  readonly runId: string;
  /** The step (attempt) the point belongs to (0 for `input`). */
  readonly stepNumber: number;
  /** How many of the run's attempts were rejected so far (tripwire and API-error retries). */
  readonly rejectedAttempts: number;
  /** `model`: the client tool calls the step runs (what a ledger pins). */
  readonly toolCalls?: ReadonlyArray<{ readonly toolCallId: string; readonly toolName: string; readonly args: unknown }>;
  /** `step`: the steps are over (the commit — `processOutputResult`, memory's save, `finish` — is next). */
  readonly last?: boolean;
}

/**
 * A point where a durable run commits: a value of the run's stream (not a chunk), emitted where the
 * point falls, with the run's snapshot taken there. The run goes on once its demand gate is open:
 * a consumer that writes the commit holds the gate when it gets the point (in the same frame) and
 * releases it once the commit is written. A point whose snapshot could not be taken carries the
 * error instead (`failed`), and the run then ends with that error: it cannot commit there.
 */
export type RunCommitPoint = CommitPointFacts & {
  /** Marks the value (a run's own value, not a chunk). */
  readonly [RUN_EVENT]: 'commit';
} & (
    | {
        /** The run's state as JSON at this point. */
        readonly snapshot: RunSnapshot;
        readonly failed?: undefined;
      }
    | {
        readonly snapshot?: undefined;
        /** Why the snapshot could not be taken (a `DurableStateError`, say): the run's error next. */
        readonly failed: { readonly error: unknown };
      }
  );

/** A client tool call as the ledger sees it. */
export interface LedgerToolCall {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly args: unknown;
}

/** What a tool ledger says before a call: run it, or answer it without running it. */
export type ToolBegin = { readonly kind: 'execute' } | { readonly kind: 'result'; readonly result: unknown } | { readonly kind: 'error'; readonly error: Error };

/** Asked before each client tool call's `execute`, told its outcome after (durable runs: the journal's tool ledger). */
export interface ToolLedger {
  begin(call: LedgerToolCall, tool: { readonly idempotent: boolean }): ToolBegin | PromiseLike<ToolBegin>;
  end(call: LedgerToolCall, outcome: { readonly result: unknown } | { readonly error: Error }): void | PromiseLike<void>;
}

/** What durable execution gives a run (see the module comment). */
export interface RunDurability {
  /**
   * The run emits a {@link RunCommitPoint} at each commit point and goes on once its demand gate is
   * open, so a consumer that writes the commit holds the gate until it is written. A snapshot that
   * cannot be taken ends the run with its error (after the point that says so).
   */
  readonly commitPoints?: boolean;
  /** A snapshot to go on from (`processInput` does not run again). */
  readonly restore?: RunSnapshot;
  /** The tool ledger. */
  readonly tools?: ToolLedger;
  /** Memory's save carries this fence. */
  readonly memoryFence?: MemoryFence;
  /**
   * What the commit's ids are made from besides the run id (`commitMessageIds`): the run's
   * incarnation, the same for every owner, another for a run created again under its id. Absent:
   * the run id alone (a run an earlier build stored).
   */
  readonly incarnation?: string;
}

/** Whether `item`, a value of a durable run, is one of its commit points. */
export function isCommitPoint(item: object): item is RunCommitPoint {
  return (item as Partial<RunCommitPoint>)[RUN_EVENT] === 'commit';
}

/**
 * Completes when `demand` opens; unsubscribing gives the wait up, so a run dropped while its
 * consumer holds the gate is not kept alive by the gate.
 */
function released(demand: DemandGate): Observable<never> {
  return new Observable<never>((subscriber) => {
    const leave = new AbortController();
    demand.whenOpen(leave.signal).then(
      () => subscriber.complete(),
      () => undefined, // given up: the subscriber has left
    );
    return () => leave.abort();
  });
}

/**
 * The run at a commit point (nothing without `commitPoints`): the point as a value with its
 * snapshot, then the run waits until `demand` is open — the commit's acknowledgement is the
 * gate's release. A snapshot that cannot be taken: the point carries its error, then the run errors.
 *
 * ```
 * point:   (P)             the point, made on subscribe (its snapshot taken then)
 * demand:  -held---open
 * result:  P-----------|   (the consumer held the gate when P reached it)
 * failed:  (P#)            (# the snapshot's error)
 * ```
 */
export function commitAt(durability: RunDurability | undefined, demand: DemandGate, facts: () => CommitPointFacts, snapshot: () => RunSnapshot): Observable<RunCommitPoint> {
  if (durability?.commitPoints !== true) return EMPTY;
  return defer(() => {
    const point = facts();
    let taken: RunSnapshot;
    try {
      taken = snapshot();
    } catch (error) {
      return concat(of<RunCommitPoint>({ [RUN_EVENT]: 'commit', ...point, failed: { error } }), throwError(() => error));
    }
    // the consumer holds the gate when it gets the point: the run waits here until it is released
    const acknowledged = defer(() => (demand.open ? EMPTY : released(demand)));
    return concat(of<RunCommitPoint>({ [RUN_EVENT]: 'commit', ...point, snapshot: taken }), acknowledged);
  });
}
