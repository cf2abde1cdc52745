/** The shapes of a run's `processOutputStream` chain (types only: `run-machinery.ts` holds chains, `stream-chain.ts` builds them). */
import type { ChunkType } from '../../contract/chunk-types.js';
import type { Observable } from 'rxjs';

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
   * {@link SuspendedPass} when a hook returned a promise (the caller awaits it and calls
   * {@link resume}), an Observable (one value, or an error) when a hook returned an Observable that
   * did not settle at once; else the result itself.
   */
  run(chunk: ChunkType, from?: number): PassResult;
  /** Goes on with a pass once the promise it stopped at resolved with `resolved`: the rest of the chain, as {@link run}. */
  resume(suspended: SuspendedPass, resolved: unknown): PassResult;
  /** The error a pass ends with when the promise it stopped at rejected with `thrown`. */
  rejected(suspended: SuspendedPass, thrown: unknown): Error;
}

/** Where a pass of the chain stopped: at a hook's promise (`pending`). */
export interface SuspendedPass {
  readonly pending: PromiseLike<unknown>;
}

/** What a pass of the chain gives for a chunk (see {@link StreamChain.run}). */
export type PassResult = ChunkType | null | Observable<ChunkType | null> | SuspendedPass;

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
