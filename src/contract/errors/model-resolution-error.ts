import { RxAgentError, hasMarker } from '../../errors/rxagent-error.js';

const marker = Symbol.for('rxagent.error.ModelResolutionError');

/**
 * A model could not be resolved: an unknown `'provider/model'` id, no registry to resolve a
 * string id with, or an object that is not a `LanguageModelV2`/`V3`/`V4`.
 *
 * @example
 * ```ts
 * import { ModelResolutionError } from 'rxagent';
 * if (ModelResolutionError.isInstance(error)) console.error(error.modelId, error.message);
 * ```
 */
export class ModelResolutionError extends RxAgentError {
  private readonly [marker] = true;
  /** The id or a short description of what was given. */
  readonly modelId: string;

  constructor(modelId: string, message: string, options?: {
    /** The underlying error (kept as `cause`). */
    cause?: unknown;
  }) {
    super('ModelResolutionError', message, options);
    this.modelId = modelId;
  }

  static override isInstance(error: unknown): error is ModelResolutionError {
    return hasMarker(error, marker);
  }
}
