/**
 * Where a run is: the one value the step loop carries. The run starts at `input` (or where its
 * snapshot stands), the steps' subject emits the position of each step, a step's end carries the
 * next one, a retry hands the rejected attempt's closing chunks on inside it, and a snapshot
 * stores it as JSON (`RunPosition`: the attempt of a `tools` position as its snapshot).
 */
import type { ChunkType } from '../../contract/chunk-types.js';
import type { StepResult } from '../../contract/processor-types.js';
import type { AgentToolSet } from '../../contract/tool-types.js';
import type { AttemptState } from './attempt-state.js';
import { snapshotAttempt } from './attempt-snapshot.js';
import type { RunPosition } from './run-snapshot-types.js';

/** The next attempt of step `stepNumber`. */
export interface StepPosition {
  /** Marks a step's position. */
  readonly kind: 'step';
  /** The step's number (a tripwire retry takes the next one, an API-error retry the same). */
  readonly stepNumber: number;
  /**
   * Set when a retry rejected the attempt before: its closing chunks (`text-end` / `reasoning-end`
   * of its open parts, `step-finish` reason `retry`; none when it never opened), which lead the
   * next attempt, followed by the `rejected` commit point.
   */
  readonly rejected?: readonly ChunkType[];
}

/** The tool phase of an attempt whose model output was accepted (restored at a `model` commit). */
export interface ToolsPosition {
  readonly kind: 'tools';
  readonly stepNumber: number;
  readonly attempt: AttemptState;
  /** The attempt's tools (its step input's, after `processInputStep`). */
  readonly tools: AgentToolSet | undefined;
}

/** The run's commit: its steps are over (`processOutputResult`, `finish`). */
export interface CommitPosition {
  /** Marks the commit's position. */
  readonly kind: 'commit';
}

/** Where a run is: `processInput` next, a step, an attempt's tools, or the commit. */
export type Position = { readonly kind: 'input' } | StepPosition | ToolsPosition | CommitPosition;

/** The first attempt of step `stepNumber`. */
export function stepAt(stepNumber: number): StepPosition {
  return { kind: 'step', stepNumber };
}

/** The run's commit: its steps are over. */
export const COMMIT: CommitPosition = { kind: 'commit' };

/**
 * `position` as a snapshot stores it. A snapshot is taken at a commit point, never before
 * `processInput`; a rejected attempt's closers went out before its `rejected` commit point, so a
 * snapshot does not keep them.
 */
export function positionJson(position: Position, steps: readonly StepResult[]): RunPosition {
  switch (position.kind) {
    case 'input':
      throw new TypeError('a run is snapshotted at a commit point, after processInput');
    case 'step':
      return { kind: 'step', stepNumber: position.stepNumber };
    case 'tools':
      return { kind: 'tools', stepNumber: position.stepNumber, attempt: snapshotAttempt(position.attempt, position.tools, steps) };
    case 'commit':
      return { kind: 'commit' };
  }
}
