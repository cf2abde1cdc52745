/**
 * What durable execution plugs into a run (`src/durable`): a checkpoint told at each commit point
 * (the run goes on once its demand gate is open: the commit holds it until written), a snapshot to
 * go on from, a tool ledger asked around each client tool call, and the fence memory's save
 * carries. A run without them is the plain run: nothing here costs it anything.
 */
import { EMPTY, defer, from, ignoreElements, type Observable } from 'rxjs';
import type { DemandGate } from '../../contract/demand-gate.js';
import type { MemoryFence } from '../../contract/memory-types.js';
import type { RunSnapshot } from './run-snapshot-types.js';

/** A point where a durable run commits. */
export interface RunCommitPoint {
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
  /** The run's state as JSON at this point (taken when called). */
  snapshot(): RunSnapshot;
  /** `model`: the client tool calls the step runs (what a ledger pins). */
  readonly toolCalls?: ReadonlyArray<{ readonly toolCallId: string; readonly toolName: string; readonly args: unknown }>;
  /** `step`: the steps are over (the commit — `processOutputResult`, memory's save, `finish` — is next). */
  readonly last?: boolean;
}

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
   * Told at each commit point; the run goes on once its demand gate is open, so a checkpoint that
   * writes the commit holds the gate until it is written (a throw ends the run with its error).
   */
  readonly checkpoint?: (point: RunCommitPoint) => void;
  /** A snapshot to go on from (`processInput` does not run again). */
  readonly restore?: RunSnapshot;
  /** The tool ledger. */
  readonly tools?: ToolLedger;
  /** Memory's save carries this fence. */
  readonly memoryFence?: MemoryFence;
}

/**
 * The run at a commit point (nothing without a checkpoint): the checkpoint told, then the run waits
 * until `demand` is open — the commit's acknowledgement is the gate's release.
 */
export function commitAt(durability: RunDurability | undefined, demand: DemandGate, point: () => RunCommitPoint): Observable<never> {
  const checkpoint = durability?.checkpoint;
  if (checkpoint === undefined) return EMPTY;
  return defer(() => {
    checkpoint(point());
    return demand.open ? EMPTY : from(demand.whenOpen()).pipe(ignoreElements());
  });
}
