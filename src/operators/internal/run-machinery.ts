/**
 * The per-run machinery a run context carries besides its public fields: the run's demand gate, its
 * `processOutputStream` chains, and the run's state they keep their `streamParts` in. `createRunContext` attaches it under a private symbol, as a
 * non-enumerable property, so it stays off the public `RunContext` type and out of spreads and
 * `JSON.stringify`; it lives and dies with the context (no module-level registry).
 */
import type { DemandGate } from '../../contract/demand-gate.js';
import type { Processor } from '../../contract/processor-types.js';
import type { StreamPartsHolder } from '../stream-parts.js';
import type { SharedStreamChain } from './stream-chain-types.js';

/** What one run keeps for its operators. */
export interface RunMachinery {
  /** The run's demand gate (see `contract/demand-gate.ts`). */
  readonly demand: DemandGate;
  /** The run's `processOutputStream` chains, one per processor array (processor `state` and `streamParts` live across steps). */
  readonly streamChains: WeakMap<readonly Processor[], SharedStreamChain>;
  /** The run's state (`RunContextState`): the chains' `streamParts` live in it. */
  readonly state: StreamPartsHolder;
  /** How many chains with a `processOutputStream` hook the run made: the next one's entry in the state's `streamParts`. */
  loggedChains: number;
}

const MACHINERY = Symbol('rxagent.runMachinery');

/** Gives `context` (a run context being made) its own machinery around `demand` and the run's `state`. */
export function attachRunMachinery(context: object, demand: DemandGate, state: StreamPartsHolder): void {
  const machinery: RunMachinery = { demand, streamChains: new WeakMap(), state, loggedChains: 0 };
  Object.defineProperty(context, MACHINERY, { value: machinery, enumerable: false, writable: false, configurable: false });
}

/** The machinery of a run context made by `createRunContext`. */
export function runMachineryOf(context: object): RunMachinery {
  const machinery = (context as { [MACHINERY]?: RunMachinery })[MACHINERY];
  if (machinery === undefined) {
    throw new TypeError('This run context was not made by createRunContext(): make run contexts with createRunContext() from rxagent/operators.');
  }
  return machinery;
}
