/** A run's commit points: where durable execution checkpoints it (nothing for a plain run). */
import type { Observable } from 'rxjs';
import { demandOf } from '../../operators/demand.js';
import type { RunContext } from '../../operators/run-context.js';
import type { Processor } from '../../contract/processor-types.js';
import { commitAt, type RunCommitPoint, type RunDurability } from './run-durability.js';
import type { Position } from './run-position.js';
import { snapshotRun } from './run-snapshot.js';
import type { RunState } from './run-state.js';

/** What a commit point adds to its kind: where a restored run goes on, the tool calls, the last step. */
export interface CommitPointDetails {
  readonly stepNumber: number;
  /** Where a restored run goes on (made when the snapshot is taken). */
  readonly position: () => Position;
  readonly toolCalls?: RunCommitPoint['toolCalls'];
  readonly last?: boolean;
}

/** What a commit point needs of the run's environment: its demand gate (on the context), durability, the processors' `durableState`. */
export interface CommitSources {
  readonly ctx: RunContext;
  /** Input, output and error processors (their `durableState` declarations). */
  readonly apiErrorProcessors: readonly Processor[];
  readonly durability?: RunDurability | undefined;
}

/**
 * The run at commit point `kind` (nothing without durability): the point as a value of the run,
 * carrying its snapshot, then the run waits for its demand gate to open (the consumer's
 * acknowledgement).
 */
export function commitPoint(env: CommitSources, state: RunState, kind: RunCommitPoint['kind'], details: CommitPointDetails): Observable<RunCommitPoint> {
  return commitAt(
    env.durability,
    demandOf(env.ctx),
    () => ({
      kind,
      runId: state.runId,
      stepNumber: details.stepNumber,
      rejectedAttempts: state.retryCount + state.apiErrorRetryCount,
      ...(details.toolCalls === undefined ? {} : { toolCalls: details.toolCalls }),
      ...(details.last === undefined ? {} : { last: details.last }),
    }),
    () => snapshotRun(state, details.position(), env.apiErrorProcessors),
  );
}

/**
 * The values of a run set up without durability: `commitAt` makes no commit point there, so the
 * type leaves them out (no value is looked at).
 */
export function withoutCommitPoints<T>(items: Observable<T | RunCommitPoint>): Observable<T> {
  return items as Observable<T>;
}
