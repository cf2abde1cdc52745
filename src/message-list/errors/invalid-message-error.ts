import { RxAgentError, hasMarker } from '../../errors/rxagent-error.js';

const marker = Symbol.for('rxagent.error.InvalidMessageError');

/** One problem found in an inbound message: where (`path`) and what. */
export interface MessageIssue {
  /** Where in the input the problem is (a zod path). */
  path: ReadonlyArray<string | number>;
  /** The error message. */
  message: string;
}

/**
 * An inbound message (or message list) failed validation. `path` names the offending field,
 * e.g. `[0, 'content', 'parts', 2, 'text']`; `issues` lists every problem found.
 *
 * @example
 * ```ts
 * import { InvalidMessageError, MessageList } from 'rxagent';
 * try { new MessageList().add({ role: 'user', content: 42 } as never, 'input'); }
 * catch (error) { if (InvalidMessageError.isInstance(error)) console.log(error.path); }
 * ```
 */
export class InvalidMessageError extends RxAgentError {
  private readonly [marker] = true;
  /** Where in the input the problem is (a zod path). */
  readonly path: ReadonlyArray<string | number>;
  /** The validation issues (zod). */
  readonly issues: ReadonlyArray<MessageIssue>;

  constructor(issues: ReadonlyArray<MessageIssue>, options?: {
    /** The underlying error (kept as `cause`). */
    cause?: unknown;
  }) {
    const first = issues[0] ?? { path: [], message: 'invalid message' };
    const where = first.path.length ? first.path.join('.') : '(root)';
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more issue${issues.length > 2 ? 's' : ''})` : '';
    super('InvalidMessageError', `Invalid message at ${where}: ${first.message}${more}`, options);
    this.path = first.path;
    this.issues = issues;
  }

  static override isInstance(error: unknown): error is InvalidMessageError {
    return hasMarker(error, marker);
  }
}
