import { RxAgentError, hasMarker } from '../../errors/rxagent-error.js';

const marker = Symbol.for('rxagent.error.RunAbortedError');

/**
 * Options of {@link RunAbortedError}.
 *
 * @example
 * ```ts
 * import type { RunAbortedErrorOptions } from 'rxagent';
 * const options: RunAbortedErrorOptions = { reason: 'user left' };
 * ```
 */
export interface RunAbortedErrorOptions {
  /** The abort reason (the `abortSignal`'s `reason`, as in the run's `abort` chunk). */
  reason?: unknown;
}

/**
 * `generate()` (and `stream()`'s promises) reject with this when the run was aborted through its
 * `abortSignal` (the run ended with an `abort` chunk); `stream()`'s promises and its streams still
 * open also end with it when the consumer stopped the run (`output.cancel()`, cancelling
 * `fullStream`, a `break` out of `for await`: `reason` is the cancel's reason). Its `name` is `'AbortError'`, as for
 * aborted `fetch` calls, so code that checks `error.name === 'AbortError'` keeps working; the
 * signal's reason is `reason` (and `cause`).
 *
 * @example
 * ```ts
 * import { RunAbortedError } from 'rxagent';
 * const controller = new AbortController();
 * const pending = agent.generate('Hello', { abortSignal: controller.signal });
 * controller.abort('user left');
 * await pending.catch((error) => RunAbortedError.isInstance(error) && console.log(error.reason)); // 'user left'
 * ```
 */
export class RunAbortedError extends RxAgentError {
  private readonly [marker] = true;
  /** Why (a human-readable reason). */
  readonly reason: unknown;

  constructor({ reason }: RunAbortedErrorOptions = {}) {
    super('AbortError', 'The run was aborted.', { cause: reason });
    this.reason = reason;
  }

  static override isInstance(error: unknown): error is RunAbortedError {
    return hasMarker(error, marker);
  }
}
