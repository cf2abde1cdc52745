import { RxAgentError, hasMarker } from '../../errors/rxagent-error.js';

const marker = Symbol.for('rxagent.error.RunSnapshotError');

/**
 * A run snapshot cannot be restored here: written by a newer build (its `format`), malformed (the
 * message names the path, `$.steps[0].usage`), or taken of a run whose output processors differ
 * from this one's. Nothing of the run was started.
 *
 * @example
 * ```ts
 * import { RunSnapshotError } from 'rxagent';
 * if (RunSnapshotError.isInstance(error)) console.error(error.message);
 * ```
 */
export class RunSnapshotError extends RxAgentError {
  private readonly [marker] = true;

  constructor(options: { message: string; cause?: unknown }) {
    super('RunSnapshotError', options.message, options.cause === undefined ? undefined : { cause: options.cause });
  }

  static override isInstance(error: unknown): error is RunSnapshotError {
    return hasMarker(error, marker);
  }
}
