import { RxAgentError, hasMarker } from '../../../errors/rxagent-error.js';

const marker = Symbol.for('rxagent.error.RunConflictError');

/**
 * `createRun` with a `runId` the journal already holds for another agent, thread, resource or
 * input. (The same run submitted again is not an error: `{ created: false }`.) Nothing changes.
 *
 * @example
 * ```ts
 * import { RunConflictError } from 'rxagent/durable';
 * try { await journal.createRun({ runId, agentId: 'support', input }); }
 * catch (error) { if (RunConflictError.isInstance(error)) console.error('run id reused:', error.runId); }
 * ```
 */
export class RunConflictError extends RxAgentError {
  private readonly [marker] = true;
  /** The run id given to `createRun`, already held for another run. */
  readonly runId: string;
  /** The first field that differs from the stored run. */
  readonly field: string;

  constructor(options: { runId: string; field: string }) {
    super('RunConflictError', `Run ${JSON.stringify(options.runId)} already exists with another ${options.field}: a run id names one run`);
    this.runId = options.runId;
    this.field = options.field;
  }

  static override isInstance(error: unknown): error is RunConflictError {
    return hasMarker(error, marker);
  }
}
