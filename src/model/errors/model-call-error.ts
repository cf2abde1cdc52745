import { RxAgentError, hasMarker } from '../../errors/rxagent-error.js';
import { jsonOrString, thrownMessage } from '../../errors/thrown-message.js';

const marker = Symbol.for('rxagent.error.ModelCallError');

/** Where a {@link ModelCallError}'s provider error came from. */
export type ModelCallErrorSource = 'call' | 'stream-part';

/**
 * Options of {@link ModelCallError}.
 *
 * @example
 * ```ts
 * import type { ModelCallErrorOptions } from 'rxagent';
 * const options: ModelCallErrorOptions = { cause: new Error('429'), source: 'call' };
 * ```
 */
export interface ModelCallErrorOptions {
  /** The provider's error (an `APICallError`, a thrown value, or an `error` part's `error`). */
  cause: unknown;
  /** `'call'` (thrown by `doStream` or its stream; default) or `'stream-part'` (an `error` part). */
  source?: ModelCallErrorSource;
  /** Whether content of this attempt had already streamed when it failed. Default false. */
  contentSeen?: boolean;
}

/** The error inside any number of `ModelCallError` wrappers. */
function unwrap(error: unknown): unknown {
  let inner = error;
  while (ModelCallError.isInstance(inner)) inner = inner.error;
  return inner;
}

/** The provider error's text: its message, or the value as JSON or `String`; never throws. */
function describe(error: unknown): string {
  return thrownMessage(error, jsonOrString) ?? 'a value that cannot be read';
}

/**
 * A model call failed: `doStream` threw or rejected, its stream errored, or the provider sent an
 * `error` part. The loop wraps every such failure in this one class, so it can tell provider
 * errors — which `processAPIError` may recover — from processor and tool errors. The provider's
 * own error is `cause` (and `error`); the `error` chunk of a run carries that provider error
 * unwrapped, so users usually see an `APICallError`, not this wrapper.
 *
 * @example
 * ```ts
 * import { ModelCallError } from 'rxagent';
 * const failure = new ModelCallError({ cause: new Error('overloaded'), source: 'stream-part' });
 * ModelCallError.isInstance(failure); // true
 * failure.error; // the Error('overloaded')
 * ```
 */
export class ModelCallError extends RxAgentError {
  private readonly [marker] = true;
  /** The provider's error, unwrapped (same as `cause`). */
  readonly error: unknown;
  /** Where it came from. */
  readonly source: ModelCallErrorSource;
  /** True when the model had already streamed content before it failed. */
  readonly contentSeen: boolean;

  constructor({ cause, source = 'call', contentSeen = false }: ModelCallErrorOptions) {
    const error = unwrap(cause);
    super('ModelCallError', describe(error), { cause: error });
    this.error = error;
    this.source = source;
    this.contentSeen = contentSeen;
  }

  static override isInstance(error: unknown): error is ModelCallError {
    return hasMarker(error, marker);
  }

  /** The provider error inside `error` when it is a `ModelCallError`, else `error` itself. */
  static unwrap(error: unknown): unknown {
    return unwrap(error);
  }
}
