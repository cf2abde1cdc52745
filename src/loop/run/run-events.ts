/**
 * The value a run emits besides its chunks. Internally a run is one Observable of
 * `ChunkType | RunEnd`: the chunks, then `RunEnd` after the terminal chunk. `agent.stream$()` asks for the
 * chunks only (`createRun(…, { results: false })`: no `RunEnd` is made);
 * `generate()` folds all of it (`foldRun`); `agent.stream()` derives its promises from the same
 * values. Nothing about a run leaves through a callback or a mutable environment.
 */
import type { LanguageModelUsage } from 'ai';
import type { ChunkType } from '../../contract/chunk-types.js';
import type { StepResult } from '../../contract/processor-types.js';

/** Marks the run's own values (a symbol: no chunk, whatever a processor made, carries it). */
const RUN_EVENT: unique symbol = Symbol('rxagent.runEvent');

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

/** A `RunEnd` value. */
export function runEnd(runId: string, steps: StepResult[], usage: LanguageModelUsage): RunEnd {
  return { [RUN_EVENT]: 'end', runId, steps, usage };
}

/** Whether `item` is the run's `RunEnd`. */
export function isRunEnd(item: RunItem): item is RunEnd {
  return (item as Partial<RunEnd>)[RUN_EVENT] === 'end';
}

/** Whether `item` is a chunk (not one of the run's own values). */
export function isChunk(item: RunItem): item is ChunkType {
  return (item as Partial<RunEnd>)[RUN_EVENT] === undefined;
}

