/**
 * The run's demand gate, for the loop (model pacing, web-stream backpressure): a field of the run
 * context's private machinery (see `internal/run-machinery.ts`), read through {@link demandOf}.
 */
import type { DemandGate } from '../contract/demand-gate.js';
import { runMachineryOf } from './internal/run-machinery.js';
import type { RunContext } from './run-context.js';

/** The demand gate of the run `context` belongs to (made with the context: two runs never share one). */
export function demandOf(context: RunContext): DemandGate {
  return runMachineryOf(context).demand;
}
