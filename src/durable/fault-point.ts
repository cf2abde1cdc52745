/** Where a durable run can be stopped on purpose (fault-injection tests, chaos drills). */

/**
 * The points a worker awaits `faultPoint` at, in a run's order:
 *
 * | point | when |
 * |---|---|
 * | `claimed` | the run was claimed (epoch + 1), before anything is read or written |
 * | `chunks-flushed` | a batch of chunks (no commit) was written |
 * | `model-committed` | a `model` commit was written (tool calls pinned), before any tool runs |
 * | `tool-started` | a tool call's ledger row says `started`, before `execute` |
 * | `tool-returned` | `execute` returned, before its outcome is written to the ledger |
 * | `step-committed` | a `step` commit was written |
 * | `retry-committed` | a `rejected` commit (a retried attempt) was written |
 * | `finalizing` | the run's terminal chunk arrived, before the `final` commit is written |
 * | `memory-save` | inside memory's save transaction, right before its `COMMIT` |
 * | `completed` | the `final` commit was written |
 *
 * @example
 * ```ts
 * import type { RunFaultPoint } from 'rxagent/durable';
 * const killAt: RunFaultPoint = 'memory-save';
 * ```
 */
export type RunFaultPoint =
  | 'claimed'
  | 'chunks-flushed'
  | 'model-committed'
  | 'tool-started'
  | 'tool-returned'
  | 'step-committed'
  | 'retry-committed'
  | 'finalizing'
  | 'memory-save'
  | 'completed';

/**
 * What `faultPoint` is told: the run, its owner's epoch, the step (where there is one), the
 * number of the flush in this epoch (`chunks-flushed`, from 1) and the tool call (tool points).
 *
 * @example
 * ```ts
 * import type { FaultPointInfo, RunFaultPoint } from 'rxagent/durable';
 * const faultPoint = (point: RunFaultPoint, info: FaultPointInfo) => {
 *   if (point === 'tool-started' && info.epoch === 1) process.kill(process.pid, 'SIGKILL');
 * };
 * ```
 */
export interface FaultPointInfo {
  /** The run at the point. */
  readonly runId: string;
  /** The epoch of the run's owner (this worker's claim). */
  readonly epoch: number;
  /** The step the point is in, where there is one. */
  readonly stepNumber?: number;
  /** The number of the flush in this epoch, from 1 (`chunks-flushed`). */
  readonly flush?: number;
  /** The tool call (`tool-started`, `tool-returned`). */
  readonly toolCallId?: string;
}
