/**
 * What a run's state needs of the run's configuration to come back from JSON: the processors (each
 * one's `durableState` says how its `state` comes back; the output processors' ids check the
 * snapshot's `streamParts`), the id and clock sources (the message list's), the step defaults (a
 * restored attempt's tools are the agent's). Configuration, not state: a step's environment
 * (`StepEnvironment`) is one.
 */
import type { StepInput } from '../../operators/process-input-step.js';
import type { Processor } from '../../contract/processor-types.js';

/** The configuration a snapshot is restored with (see the module comment). */
export interface RunSources {
  readonly inputProcessors: readonly Processor[];
  readonly outputProcessors: readonly Processor[];
  /** Input, output and error processors, in that order. */
  readonly apiErrorProcessors: readonly Processor[];
  readonly generateId: () => string;
  readonly now: () => Date;
  readonly stepDefaults: Omit<StepInput, 'stepNumber'>;
}
