/** The provider's own error out of a failed model call. */
import { ModelCallError } from './errors/model-call-error.js';

/**
 * The provider error inside a `ModelCallError` (however deep), or `error` itself.
 *
 * @example
 * ```ts
 * providerError(new ModelCallError({ cause: apiCallError })) === apiCallError; // true
 * ```
 */
export function providerError(error: unknown): unknown {
  return ModelCallError.unwrap(error);
}
