import { RxAgentError, hasMarker } from '../../errors/rxagent-error.js';

const marker = Symbol.for('rxagent.error.StorageError');

/**
 * The storage operation that failed: a `MemoryStorage` or `RunJournal` method, or `migrate`
 * (opening the database and bringing its schema up to date on first use).
 *
 * @example
 * ```ts
 * import { StorageError, type StorageOperation } from 'rxagent/memory';
 * const failedAt: StorageOperation | undefined = StorageError.isInstance(error) ? error.operation : undefined;
 * ```
 */
export type StorageOperation =
  | 'migrate'
  | 'getThread'
  | 'createThread'
  | 'listThreads'
  | 'deleteThread'
  | 'getMessages'
  | 'saveMessages'
  | 'getResource'
  | 'saveResource'
  | 'createRun'
  | 'getRun'
  | 'activeRun'
  | 'claim'
  | 'append'
  | 'toolCall'
  | 'signal'
  | 'infrastructureLoss'
  | 'read'
  | 'deleteRun'
  | 'purge'
  | 'close';

/**
 * The storage backend failed: the server is unreachable, the file cannot be opened, a query
 * failed. `operation` names what was being done; `cause` keeps the driver's error. A failed
 * `saveMessages` wrote nothing.
 *
 * @example
 * ```ts
 * import { StorageError } from 'rxagent/memory';
 * try { await storage.getThread('t1'); }
 * catch (error) { if (StorageError.isInstance(error)) console.error(error.operation, error.cause); }
 * ```
 */
export class StorageError extends RxAgentError {
  private readonly [marker] = true;
  /** What the store was doing when it failed. */
  readonly operation: StorageOperation;

  constructor(options: {
    /** What the store was doing. */
    operation: StorageOperation;
    /** The error message. */
    message?: string;
    /** The underlying error (kept as `cause`). */
    cause?: unknown;
  }) {
    const reason = options.message ?? describeCause(options.cause);
    super('StorageError', `Storage ${options.operation} failed: ${reason}`, { cause: options.cause });
    this.operation = options.operation;
  }

  static override isInstance(error: unknown): error is StorageError {
    return hasMarker(error, marker);
  }
}

function describeCause(cause: unknown): string {
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    const text = cause.message || cause.name;
    return typeof code === 'string' && !text.includes(code) ? `${text} (${code})` : text;
  }
  return cause === undefined ? 'unknown error' : String(cause);
}
