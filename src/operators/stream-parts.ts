/**
 * The `streamParts` of a run's output processors, out of the run and back in: what a run snapshot
 * keeps so that a processor restored in another process sees every chunk it saw before.
 */
import type { ChunkType } from '../contract/chunk-types.js';
import type { Processor } from '../contract/processor-types.js';
import { sharedStreamChain } from './internal/shared-stream-chain.js';
import type { StreamPartsLogs } from './internal/stream-chain-types.js';
import type { RunContext } from './run-context.js';

/** The `streamParts` of a run's output processors (see `StreamPartsLogs`). */
export type StreamPartsSnapshot = StreamPartsLogs;

/**
 * What the output processors of the run of `context` have seen so far, or `undefined` when none of
 * them has `processOutputStream`.
 *
 * @example
 * ```ts
 * const saved = JSON.stringify(streamPartsOf(outputProcessors, ctx));
 * ```
 */
export function streamPartsOf(processors: readonly Processor[], context: RunContext): StreamPartsSnapshot | undefined {
  const { chain } = sharedStreamChain(processors, context);
  return chain.length === 0 ? undefined : chain.exportLogs();
}

/**
 * Gives the output processors of a fresh run the `streamParts` of a snapshot (chunks read back
 * through `revive`). Throws when the processors differ from the snapshot's.
 */
export function restoreStreamParts(
  processors: readonly Processor[],
  context: RunContext,
  snapshot: StreamPartsSnapshot,
  revive: (json: never) => ChunkType = (json) => json,
): void {
  const { chain } = sharedStreamChain(processors, context);
  chain.importLogs({
    processors: snapshot.processors,
    entered: snapshot.entered.map((chunk) => revive(chunk as never)),
    own: snapshot.own.map((log) => (log === null ? null : log.map((chunk) => revive(chunk as never)))),
  });
}
