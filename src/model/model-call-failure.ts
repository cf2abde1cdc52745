/**
 * The loop's name for a failed model call: {@link ModelCallError} (one class for errors thrown by
 * `doStream`, by its stream, and sent as `error` parts).
 */
import { ModelCallError } from './errors/model-call-error.js';

export { ModelCallError as ModelCallFailure } from './errors/model-call-error.js';

/** The provider error inside a `ModelCallError`, or `error` itself. */
export function providerError(error: unknown): unknown {
  return ModelCallError.unwrap(error);
}
