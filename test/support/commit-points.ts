/** Test support: a durable run's commit points told to a function, in the frame each is emitted (as the worker gets them). */
import { filter, type OperatorFunction } from 'rxjs';
import { isCommitPoint, type RunCommitPoint, type RunSnapshot } from '../../src/loop/index.js';

/** The run's values without its commit points, each told to `tell` first (it may hold the run's demand gate). */
export function tellCommitPoints<T extends object>(tell: (point: RunCommitPoint) => void): OperatorFunction<T | RunCommitPoint, T> {
  return filter((item): item is T => {
    if (!isCommitPoint(item)) return true;
    tell(item);
    return false;
  });
}

/** The point's snapshot; throws the error it could not be taken with. */
export function snapshotOf(point: RunCommitPoint): RunSnapshot {
  if (point.failed !== undefined) throw point.failed.error;
  return point.snapshot;
}
