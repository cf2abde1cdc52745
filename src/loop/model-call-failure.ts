import { unwrapStreamError } from './model-part-to-chunk.js';

/**
 * Wraps an error of the model call (thrown by `doStream` or sent as an `error` part) so the loop
 * can tell provider errors — which `processAPIError` may recover — from processor and tool errors.
 */
export class ModelCallFailure extends Error {
  readonly error: unknown;
  constructor(error: unknown) {
    const unwrapped = unwrapStreamError(error);
    super(unwrapped instanceof Error ? unwrapped.message : String(unwrapped));
    this.name = 'ModelCallFailure';
    this.error = unwrapped;
  }
}

/** The provider error inside a `ModelCallFailure`, or `error` itself. */
export function providerError(error: unknown): unknown {
  return error instanceof ModelCallFailure ? error.error : error;
}
