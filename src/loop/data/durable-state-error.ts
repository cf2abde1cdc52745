import { RxAgentError, hasMarker } from '../../errors/rxagent-error.js';

const marker = Symbol.for('rxagent.error.DurableStateError');

/**
 * A processor's `state` cannot be saved as JSON (a `Map`, a `Set`, a `Date`, a class instance, a
 * cycle…), so the run cannot be snapshotted (a durable run cannot commit). Names the processor and
 * the path inside its state. Keep state as plain JSON data (`[...set]`, `date.toISOString()`).
 *
 * @example
 * ```ts
 * import { DurableStateError } from 'rxagent';
 * if (DurableStateError.isInstance(error)) console.error(error.processorId, error.path);
 * ```
 */
export class DurableStateError extends RxAgentError {
  private readonly [marker] = true;
  /** The processor whose `state` is not JSON. */
  readonly processorId: string;
  /** Where in its state (`$` is the state object itself, `$.seen` its `seen` field). */
  readonly path: string;
  /** What was found there (`Set`, `Date`, `cycle`, …). */
  readonly type: string;

  constructor(options: { processorId: string; path: string; type: string }) {
    super(
      'DurableStateError',
      `The state of processor "${options.processorId}" is not JSON at ${options.path} (${options.type}): ` +
        'a run snapshot keeps processor state as plain JSON data (objects, arrays, strings, finite numbers, booleans, null).',
    );
    this.processorId = options.processorId;
    this.path = options.path;
    this.type = options.type;
  }

  static override isInstance(error: unknown): error is DurableStateError {
    return hasMarker(error, marker);
  }
}
