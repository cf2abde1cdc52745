/**
 * The value a run emits besides its chunks. Internally a run is one Observable of
 * `ChunkType | RunEnd`: the chunks, then `RunEnd` after the terminal chunk (a durable run's also
 * carries its commit points, `RunCommitPoint`, where they fall). `agent.stream$()` asks for the
 * chunks only (`createRun(…, { results: false })`: no `RunEnd` is made);
 * `generate()` folds all of it (`foldRun`); `agent.stream()` derives its promises from the same
 * values. Nothing about a run leaves through a callback or a mutable environment.
 */
import type { LanguageModelUsage } from 'ai';
import type { ChunkType } from '../../contract/chunk-types.js';
import type { StepResult } from '../../contract/processor-types.js';
import type { RunCommitPoint } from '../data/run-durability.js';
import { RUN_EVENT } from '../data/run-event-mark.js';

/** The run is over (after its terminal chunk): what `generate()` folds besides the chunks. */
export interface RunEnd {
  readonly [RUN_EVENT]: 'end';
  readonly runId: string;
  /** Every step, rejected attempts included (their content blanked). */
  readonly steps: StepResult[];
  /** The usage of every model call of the run. */
  readonly usage: LanguageModelUsage;
}

/** One value of a run. */
export type RunItem = ChunkType | RunEnd;

/** One value of a durable run (`RunWiring.commitPoints`): its chunks, its commit points, its `RunEnd`. */
export type DurableRunItem = RunItem | RunCommitPoint;

/** A `RunEnd` value. */
export function runEnd(runId: string, steps: StepResult[], usage: LanguageModelUsage): RunEnd {
  return { [RUN_EVENT]: 'end', runId, steps, usage };
}

/** Whether `item` is the run's `RunEnd`. */
export function isRunEnd(item: DurableRunItem): item is RunEnd {
  return (item as Partial<RunEnd>)[RUN_EVENT] === 'end';
}

/** Whether `item` is a chunk (not one of the run's own values). */
export function isChunk(item: DurableRunItem): item is ChunkType {
  return (item as Partial<RunEnd>)[RUN_EVENT] === undefined;
}

