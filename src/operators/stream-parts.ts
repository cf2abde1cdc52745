/**
 * The `streamParts` of a run's `processOutputStream` chains as part of the run's state: the state
 * holds each chain's logs (`StreamPartsState`), the chain reads and appends to them. As JSON
 * (`StreamPartsLogs`) they are what a run snapshot keeps, so that a processor restored in another
 * process sees every chunk it saw before.
 */
import type { ChunkType } from '../contract/chunk-types.js';
import { ChunkLog } from '../contract/chunk-log.js';

/**
 * What the processors of one `processOutputStream` chain have seen (their `streamParts`), as the
 * run's state holds it: the log of the chunks that entered the chain, shared by every processor in
 * step with it, and each processor's own log once it saw something else.
 */
export interface StreamPartsState {
  /** The ids of the chain's processors (those with `processOutputStream`), in order. */
  readonly processors: readonly string[];
  /** The chunks that entered the chain: the `streamParts` of every processor whose own log is `undefined`. */
  readonly entered: ChunkLog;
  /** Each processor's own `streamParts`, once it saw something other than `entered`. */
  readonly own: Array<ChunkLog | undefined>;
}

/**
 * A run state that holds its chains' `streamParts` (the loop's `RunState`): one entry per chain
 * with a `processOutputStream` hook, in the order the run made them. A state without the field gets
 * it with its first chain.
 */
export interface StreamPartsHolder {
  streamParts?: StreamPartsState[];
}

/** A chain's `StreamPartsState` as chunks (the JSON a run snapshot keeps). */
export interface StreamPartsLogs {
  /** The ids of the chain's processors, in order. */
  readonly processors: readonly string[];
  /** The chunks that entered the chain: the `streamParts` of every processor whose own log is `null`. */
  readonly entered: readonly ChunkType[];
  /** Each processor's own `streamParts`, once it saw something other than `entered`. */
  readonly own: ReadonlyArray<readonly ChunkType[] | null>;
}

/** Fresh logs for a chain of `processors` (their ids). */
export function newStreamParts(processors: readonly string[]): StreamPartsState {
  return { processors, entered: new ChunkLog(), own: processors.map(() => undefined) };
}

/** A log's chunks as an array, without turning the log into one. */
function chunksOf(log: ChunkLog): ChunkType[] {
  const chunks: ChunkType[] = [];
  log.forEach((chunk) => chunks.push(chunk));
  return chunks;
}

/** A log holding `chunks`. */
function logOf(chunks: readonly ChunkType[]): ChunkLog {
  const log = new ChunkLog();
  for (const chunk of chunks) log.push(chunk);
  return log;
}

/**
 * A chain's logs as chunks.
 *
 * @example
 * ```ts
 * const saved = JSON.stringify(streamPartsLogs(state.streamParts[0]));
 * ```
 */
export function streamPartsLogs(parts: StreamPartsState): StreamPartsLogs {
  return {
    processors: parts.processors,
    entered: chunksOf(parts.entered),
    own: parts.own.map((log) => (log === undefined ? null : chunksOf(log))),
  };
}

/** The logs of `logs` read back (chunks through `revive`): a state value a chain adopts. */
export function streamPartsFrom(logs: StreamPartsLogs, revive: (json: never) => ChunkType = (json) => json): StreamPartsState {
  return {
    processors: [...logs.processors],
    entered: logOf(logs.entered.map((chunk) => revive(chunk as never))),
    own: logs.processors.map((_, index) => {
      const own = logs.own[index];
      return own === null || own === undefined ? undefined : logOf(own.map((chunk) => revive(chunk as never)));
    }),
  };
}

/** The message of a chain whose processors are not those of the logs it was given. */
export function streamPartsMismatch(logs: readonly string[], chain: readonly string[]): string {
  return `streamParts of processors [${logs.join(', ')}] cannot be restored into a chain of [${chain.join(', ')}].`;
}
