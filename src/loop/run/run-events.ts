/**
 * The values a run emits besides its chunks. Internally a run is one Observable of
 * `ChunkType | RunOpened | RunEnd`: `RunOpened` first (before `start`), then the chunks, then
 * `RunEnd` after the terminal chunk. `agent.stream$()` filters the two out (`chunksOf`);
 * `generate()` folds all of it (`foldRun`); `agent.stream()` derives its promises from the same
 * values. Nothing about a run leaves through a callback or a mutable environment.
 */
import { filter, type OperatorFunction } from 'rxjs';
import type { LanguageModelUsage } from 'ai';
import type { ChunkType } from '../../contract/chunk-types.js';
import type { StepResult } from '../../contract/processor-types.js';
import type { RunDemand } from './paced-run.js';

/** Marks the run's own values (a symbol: no chunk, whatever a processor made, carries it). */
const RUN_EVENT: unique symbol = Symbol('rxagent.runEvent');

/** The run is set up: a consumer outside the loop may hold its demand gate from here. */
export interface RunOpened {
  readonly [RUN_EVENT]: 'opened';
  readonly demand: RunDemand;
}

/** The run is over (after its terminal chunk): what `generate()` folds besides the chunks. */
export interface RunEnd {
  readonly [RUN_EVENT]: 'end';
  readonly runId: string;
  /** Every step, rejected attempts included (their content blanked). */
  readonly steps: StepResult[];
  /** The usage of every model call of the run. */
  readonly usage: LanguageModelUsage;
}

/**
 * The run's demand as `RunOpened` hands it out before the run is set up: holds and releases made
 * before the run's gate exists are applied to it when it is bound.
 */
export class LateDemand implements RunDemand {
  /** The holders, in order (a few at most): an array made with the first, not a `Set` per run. */
  #held: object[] | undefined;
  #gate: RunDemand | undefined;

  hold(holder: object): void {
    const held = this.#held;
    if (held === undefined || held.length === 0) this.#held = [holder];
    else if (!held.includes(holder)) held.push(holder);
    this.#gate?.hold(holder);
  }

  release(holder: object): void {
    const held = this.#held;
    const index = held === undefined ? -1 : held.indexOf(holder);
    if (index >= 0) (held as object[]).splice(index, 1);
    this.#gate?.release(holder);
  }

  /** The run's gate, once the run is set up. */
  bind(gate: RunDemand): void {
    this.#gate = gate;
    if (this.#held !== undefined) for (const holder of this.#held) gate.hold(holder);
  }
}

/** One value of a run. */
export type RunItem = ChunkType | RunOpened | RunEnd;

/** A `RunOpened` value. */
export function runOpened(demand: RunDemand): RunOpened {
  return { [RUN_EVENT]: 'opened', demand };
}

/** A `RunEnd` value. */
export function runEnd(runId: string, steps: StepResult[], usage: LanguageModelUsage): RunEnd {
  return { [RUN_EVENT]: 'end', runId, steps, usage };
}

/** Whether `item` is the run's `RunOpened`. */
export function isRunOpened(item: RunItem): item is RunOpened {
  return (item as Partial<RunOpened>)[RUN_EVENT] === 'opened';
}

/** Whether `item` is the run's `RunEnd`. */
export function isRunEnd(item: RunItem): item is RunEnd {
  return (item as Partial<RunEnd>)[RUN_EVENT] === 'end';
}

/** Whether `item` is a chunk (not one of the run's own values). */
export function isChunk(item: RunItem): item is ChunkType {
  return (item as Partial<RunEnd>)[RUN_EVENT] === undefined;
}

/** The run's chunks only. */
export const chunksOf: OperatorFunction<RunItem, ChunkType> = filter(isChunk);
