/**
 * The loop's name for a failed model call: {@link ModelCallError} (one class for errors thrown by
 * `doStream`, by its stream, and sent as `error` parts).
 */
import { ModelCallError } from './model/errors/model-call-error.js';

export { ModelCallError as ModelCallFailure } from './model/errors/model-call-error.js';

/** The provider error inside a `ModelCallError`, or `error` itself. */
export function providerError(error: unknown): unknown {
  return ModelCallError.unwrap(error);
}
