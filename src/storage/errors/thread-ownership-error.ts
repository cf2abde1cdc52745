import { RxAgentError, hasMarker } from '../../errors/rxagent-error.js';

const marker = Symbol.for('rxagent.error.ThreadOwnershipError');

/**
 * A thread was used with a resource it does not belong to: threads never change resource.
 * `resourceId` is the resource that asked; the owner is not revealed.
 *
 * @example
 * ```ts
 * import { ThreadOwnershipError } from 'rxagent/memory';
 * try { await storage.createThread({ id: 't1', resourceId: 'someone-else' }); }
 * catch (error) { if (ThreadOwnershipError.isInstance(error)) console.error(error.threadId, error.resourceId); }
 * ```
 */
export class ThreadOwnershipError extends RxAgentError {
  private readonly [marker] = true;
  /** The id of the conversation thread. */
  readonly threadId: string;
  /** The resource that tried to use the thread. */
  readonly resourceId: string;

  constructor(options: {
    /** The id of the conversation thread. */
    threadId: string;
    /** The id of the resource (user, tenant) that owns the thread. */
    resourceId: string;
    /** The underlying error (kept as `cause`). */
    cause?: unknown;
  }) {
    super(
      'ThreadOwnershipError',
      `Thread ${JSON.stringify(options.threadId)} belongs to another resource than ${JSON.stringify(options.resourceId)}`,
      { cause: options.cause },
    );
    this.threadId = options.threadId;
    this.resourceId = options.resourceId;
  }

  static override isInstance(error: unknown): error is ThreadOwnershipError {
    return hasMarker(error, marker);
  }
}
