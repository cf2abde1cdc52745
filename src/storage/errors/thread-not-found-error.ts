import { RxAgentError, hasMarker } from '../../errors/rxagent-error.js';

const marker = Symbol.for('rxagent.error.ThreadNotFoundError');

/**
 * An operation needs a thread that does not exist, e.g. `saveMessages` without
 * `ensureThread: true` into a thread nobody created.
 *
 * @example
 * ```ts
 * import { ThreadNotFoundError } from 'rxagent/memory';
 * try { await storage.saveMessages({ threadId: 't1', resourceId: 'u1', messages }); }
 * catch (error) { if (ThreadNotFoundError.isInstance(error)) console.error(error.threadId); }
 * ```
 */
export class ThreadNotFoundError extends RxAgentError {
  private readonly [marker] = true;
  /** The id of the conversation thread. */
  readonly threadId: string;

  constructor(options: {
    /** The id of the conversation thread. */
    threadId: string;
    /** The underlying error (kept as `cause`). */
    cause?: unknown;
  }) {
    super('ThreadNotFoundError', `Thread ${JSON.stringify(options.threadId)} does not exist`, { cause: options.cause });
    this.threadId = options.threadId;
  }

  static override isInstance(error: unknown): error is ThreadNotFoundError {
    return hasMarker(error, marker);
  }
}
