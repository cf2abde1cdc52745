/** The shapes of a run's `processOutputStream` chain (types only: `run-machinery.ts` holds chains, `stream-chain.ts` builds them). */
import type { ChunkType } from '../../contract/chunk-types.js';
import type { MaybeAsync } from '../../contract/maybe-async.js';

/** A chunk written with `writer.custom()` (or queued as a follow-up) inside the chain, and where it re-enters it. */
export interface InjectedChunk {
  chunk: ChunkType;
  from: number;
}

/** One run's `processOutputStream` chain. */
export interface StreamChain {
  readonly length: number;
  /**
   * Runs `chunk` through the processors from index `from`; `null` when a processor dropped it. A
   * promise when a hook returned one, an Observable (one value, or an error) when a hook returned an
   * Observable that did not settle at once; else the result itself.
   */
  run(chunk: ChunkType, from?: number): MaybeAsync<ChunkType | null>;
}

/** Where chunks written with `writer.custom()` inside the chain go. */
export interface ChunkInjector {
  inject(item: InjectedChunk): void;
}

/**
 * A chain shared by every subscription of `processOutputStream` to the same processor array in one
 * run (the loop subscribes once per step): it is the chain's injector, and passes what is injected
 * to `target`, the current subscription's queue (nothing before the first subscription).
 */
export interface SharedStreamChain extends ChunkInjector {
  readonly chain: StreamChain;
  target: ChunkInjector | undefined;
}
