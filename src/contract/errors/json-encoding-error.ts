import { RxAgentError, hasMarker } from '../../errors/rxagent-error.js';

const marker = Symbol.for('rxagent.error.JsonEncodingError');

/**
 * A value could not be written as JSON without losing part of it: a `BigInt`, a function or
 * symbol value, a `Map`/`Set`, a cycle, or (in the strict check) anything that does not read
 * back as itself. `path` names where (`$.payload.result.items[3]`), `type` what was found.
 *
 * @example
 * ```ts
 * import { JsonEncodingError } from 'rxagent';
 * if (JsonEncodingError.isInstance(error)) console.error(error.path, error.type);
 * ```
 */
export class JsonEncodingError extends RxAgentError {
  private readonly [marker] = true;
  /** Where the value stops being JSON, as a JSONPath (`$` is the value itself). */
  readonly path: string;
  /** What was found there (`bigint`, `function`, `Map`, `cycle`, `NaN`, …). */
  readonly type: string;

  constructor(options: { path: string; type: string; what?: string }) {
    super('JsonEncodingError', `${options.what ?? 'value'} is not JSON at ${options.path}: ${options.type}`);
    this.path = options.path;
    this.type = options.type;
  }

  static override isInstance(error: unknown): error is JsonEncodingError {
    return hasMarker(error, marker);
  }
}
