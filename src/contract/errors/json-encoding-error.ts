import { RxAgentError, hasMarker } from '../../errors/rxagent-error.js';

const marker = Symbol.for('rxagent.error.JsonEncodingError');

/** Paths longer than this are shortened (a value nested 1,000 deep has a 2,000-character path). */
const MAX_PATH_LENGTH = 160;

/** `path` as it goes into the error: its start and end around an ellipsis when longer than {@link MAX_PATH_LENGTH}. */
function boundedPath(path: string): string {
  return path.length <= MAX_PATH_LENGTH ? path : `${path.slice(0, 100)}…${path.slice(-(MAX_PATH_LENGTH - 101))}`;
}

/**
 * A value could not be written as JSON without losing part of it: a `BigInt`, a function or
 * symbol value, a `Map`/`Set`, a cycle, or (in the strict check) anything that does not read
 * back as itself. `path` names where (`$.payload.result.items[3]`), `type` what was found.
 *
 * @example
 * ```ts
 * import { JsonEncodingError } from 'rxagent/durable';
 * if (JsonEncodingError.isInstance(error)) console.error(error.path, error.type);
 * ```
 */
export class JsonEncodingError extends RxAgentError {
  private readonly [marker] = true;
  /**
   * Where the value stops being JSON, as a JSONPath (`$` is the value itself); a path longer than
   * 160 characters keeps its start and end around `…`, so an error a client may see stays small.
   */
  readonly path: string;
  /** What was found there (`bigint`, `function`, `Map`, `cycle`, `NaN`, …). */
  readonly type: string;

  constructor(options: { path: string; type: string; what?: string }) {
    const path = boundedPath(options.path);
    super('JsonEncodingError', `${options.what ?? 'value'} is not JSON at ${path}: ${options.type}`);
    this.path = path;
    this.type = options.type;
  }

  static override isInstance(error: unknown): error is JsonEncodingError {
    return hasMarker(error, marker);
  }
}
