import { RxAgentError, hasMarker } from '../../../errors/rxagent-error.js';

const marker = Symbol.for('rxagent.error.MissingAuthorizationError');

/**
 * A run reader or `cancel` was called without saying who may use it: neither an `authorize`
 * function nor `unsafeNoAuthorization: true`. A programming error (the caller's), thrown before
 * anything is read.
 *
 * @example
 * ```ts
 * import { MissingAuthorizationError } from 'rxagent/durable';
 * if (MissingAuthorizationError.isInstance(error)) console.error(error.what);
 * ```
 */
export class MissingAuthorizationError extends RxAgentError {
  private readonly [marker] = true;
  /** The function called without an authorization (`journalStreamResponse`, `RunWorker.cancel`, …). */
  readonly what: string;

  constructor(options: { what: string; problem?: string }) {
    super(
      'MissingAuthorizationError',
      `${options.what}: ${options.problem ?? 'no authorization given'}. Pass { authorize: (run, request) => boolean | Promise<boolean>, request } ` +
        '(e.g. runTokenAuthorization({ secret })), or { unsafeNoAuthorization: true } for a reader no client reaches.',
    );
    this.what = options.what;
  }

  static override isInstance(error: unknown): error is MissingAuthorizationError {
    return hasMarker(error, marker);
  }
}
