import { RxAgentError, hasMarker } from '../../errors/rxagent-error.js';

const marker = Symbol.for('rxagent.error.InvalidIdError');

/**
 * The longest thread, resource or message id every store accepts, in UTF-16 code units.
 *
 * @example
 * ```ts
 * import { MAX_STORAGE_ID_LENGTH } from 'rxagent/memory';
 * const threadId = `support:${ticketId}`.slice(0, MAX_STORAGE_ID_LENGTH);
 * ```
 */
export const MAX_STORAGE_ID_LENGTH = 256;

/**
 * Which id was rejected.
 *
 * @example
 * ```ts
 * import type { InvalidIdField } from 'rxagent/memory';
 * const field: InvalidIdField = 'threadId';
 * ```
 */
export type InvalidIdField = 'threadId' | 'resourceId';

/**
 * Why an id was rejected: not a string, empty, longer than `MAX_STORAGE_ID_LENGTH` UTF-16 code
 * units, holding a NUL character, or not well-formed UTF-16 (a lone surrogate, which the SQL
 * stores would turn into U+FFFD and so merge with another id).
 *
 * @example
 * ```ts
 * import { InvalidIdError, type InvalidIdReason } from 'rxagent/memory';
 * const reason: InvalidIdReason | undefined = InvalidIdError.isInstance(error) ? error.reason : undefined;
 * ```
 */
export type InvalidIdReason = 'not-a-string' | 'empty' | 'too-long' | 'nul' | 'lone-surrogate';

/**
 * A thread or resource id that no store accepts. Every store (in-memory, libSQL, PostgreSQL)
 * checks ids the same way before touching anything, so an id works everywhere or nowhere.
 *
 * @example
 * ```ts
 * import { InvalidIdError } from 'rxagent/memory';
 * try { await storage.getThread('bad\u0000id'); }
 * catch (error) { if (InvalidIdError.isInstance(error)) console.error(error.field, error.reason); }
 * ```
 */
export class InvalidIdError extends RxAgentError {
  private readonly [marker] = true;
  /** The id that was rejected (`threadId` or `resourceId`). */
  readonly field: InvalidIdField;
  /** Why it was rejected. */
  readonly reason: InvalidIdReason;

  constructor(options: {
    /** The field that was wrong. */
    field: InvalidIdField;
    /** Why (a human-readable reason). */
    reason: InvalidIdReason;
    /** The error message. */
    message: string;
  }) {
    super('InvalidIdError', `Invalid ${options.field}: ${options.message}`);
    this.field = options.field;
    this.reason = options.reason;
  }

  static override isInstance(error: unknown): error is InvalidIdError {
    return hasMarker(error, marker);
  }
}
