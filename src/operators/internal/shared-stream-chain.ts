/** A run's `processOutputStream` chains: one per run context and processor array, kept by the context. */
import type { Processor } from '../../contract/processor-types.js';
import type { RunContext } from '../run-context.js';
import { runMachineryOf } from './run-machinery.js';
import { createStreamChain } from './stream-chain.js';
import type { ChunkInjector, InjectedChunk, SharedStreamChain, StreamChain } from './stream-chain-types.js';

/**
 * One chain per run context and processor array — kept by the context — so `state` args,
 * `streamParts` and the reusable args objects live for the whole run even when the loop subscribes
 * once per step, and two runs never share one.
 */
export function sharedStreamChain(processors: readonly Processor[], context: RunContext): SharedStreamChain {
  const chains = runMachineryOf(context).streamChains;
  let shared = chains.get(processors);
  if (shared === undefined) {
    shared = new SharedChain(processors, context);
    chains.set(processors, shared);
  }
  return shared;
}

/** A run's chain and its injector, which hands injected chunks to the current subscription's pass. */
class SharedChain implements SharedStreamChain {
  readonly chain: StreamChain;
  target: ChunkInjector | undefined;

  constructor(processors: readonly Processor[], context: RunContext) {
    this.chain = createStreamChain(processors, context, this);
  }

  inject(item: InjectedChunk): void {
    this.target?.inject(item);
  }
}

