import { RxAgentError, hasMarker } from '../../../errors/rxagent-error.js';

const marker = Symbol.for('rxagent.error.JournalSchemaError');

/**
 * The database or a run was written by a newer rxagent than this one: a `schema_version` or a run
 * `format` above what this build knows. Nothing is migrated, written or claimed; readers of such a
 * run get this error (HTTP 409). Upgrade this process, or let a newer one handle the run.
 *
 * @example
 * ```ts
 * import { JournalSchemaError } from 'rxagent/durable';
 * if (JournalSchemaError.isInstance(error)) console.error(`written by format ${error.found}, this build knows ${error.known}`);
 * ```
 */
export class JournalSchemaError extends RxAgentError {
  private readonly [marker] = true;
  /** The version found (schema version, or the run's format). */
  readonly found: number;
  /** The newest version this build knows. */
  readonly known: number;
  /** What carries the version: the database schema or one run's rows. */
  readonly subject: 'schema' | 'run';

  constructor(options: { found: number; known: number; subject?: 'schema' | 'run'; runId?: string }) {
    const subject = options.subject ?? 'run';
    const what = subject === 'schema' ? 'The database schema' : `Run ${JSON.stringify(options.runId ?? '?')}`;
    const noun = subject === 'schema' ? 'schema_version' : 'format';
    super(
      'JournalSchemaError',
      `${what} has ${noun} ${options.found}, newer than the ${options.known} this build of rxagent knows: nothing was read, migrated or written`,
    );
    this.found = options.found;
    this.known = options.known;
    this.subject = subject;
  }

  static override isInstance(error: unknown): error is JournalSchemaError {
    return hasMarker(error, marker);
  }
}
