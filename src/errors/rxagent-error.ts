const baseMarker = Symbol.for('rxagent.error');

/**
 * Base class of every error rxagent throws. Each subclass has a stable `name`, a
 * `Symbol.for` marker and a static `isInstance` that works across duplicated copies of the
 * package (where `instanceof` does not).
 *
 * @example
 * ```ts
 * import { RxAgentError } from 'rxagent';
 * try { await agent.generate('hi'); } catch (error) {
 *   if (RxAgentError.isInstance(error)) console.error(error.name, error.message);
 * }
 * ```
 */
export class RxAgentError extends Error {
  private readonly [baseMarker] = true;

  constructor(name: string, message: string, options?: {
    /** The underlying error (kept as `cause`). */
    cause?: unknown;
  }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = name;
  }

  /** True for any rxagent error, from any copy of the package. */
  static isInstance(error: unknown): error is RxAgentError {
    return hasMarker(error, baseMarker);
  }
}

/**
 * True when `error` is an object carrying the `Symbol.for(...)` marker `marker`. Never throws: a
 * value that cannot be read (a revoked Proxy, a Proxy whose `get` throws) carries no marker.
 */
export function hasMarker(error: unknown, marker: symbol): boolean {
  if (typeof error !== 'object' || error === null) return false;
  try {
    return (error as Record<symbol, unknown>)[marker] === true;
  } catch {
    return false;
  }
}
