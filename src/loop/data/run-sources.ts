/**
 * What the run's data needs of its environment to be written as JSON and read back: the
 * processors (each one's `durableState` says how its `state` is saved), the operators' context,
 * the custom chunks waiting, the id and clock sources, the step defaults (a restored attempt's
 * tools are the agent's). A step's environment (`StepEnvironment`) is one.
 */
import type { StepInput } from '../../operators/process-input-step.js';
import type { RunContext } from '../../operators/run-context.js';
import type { Processor } from '../../contract/processor-types.js';
import type { CustomOutlet } from './custom-outlet.js';
import type { RunDurability } from './run-durability.js';

/** The environment a snapshot is taken in and restored into (see the module comment). */
export interface RunSources {
  readonly ctx: RunContext;
  readonly inputProcessors: readonly Processor[];
  readonly outputProcessors: readonly Processor[];
  readonly apiErrorProcessors: readonly Processor[];
  readonly outlet: CustomOutlet;
  readonly generateId: () => string;
  readonly now: () => Date;
  readonly stepDefaults: Omit<StepInput, 'stepNumber'>;
  /** Durable execution's hooks: the commit points are emitted (and wait for the demand gate) only with it. */
  readonly durability?: RunDurability | undefined;
}
