import { RxAgentError } from '../../contract/index.js';

const marker = Symbol.for('rxagent.error.InspectorError');

/**
 * What went wrong in the inspector:
 * - `not-an-agent` — `inspect()` was given something without an agent's `stream$()`;
 * - `invalid-option` — an option of `inspect()` / `createInspector()` is out of range;
 * - `port-in-use` — the port asked for is taken (choose another, or `port: 0` for any free one);
 * - `listen-failed` — the server could not listen for another reason (the `cause` says which);
 * - `unknown-run` — no run with that id is kept (never recorded, or evicted past `maxRuns`: the
 *   message says so, and whether it was still running);
 * - `run-truncated` — the run has more chunks than `maxChunksPerRun`, or recorded more than
 *   `maxBytesPerRun`: its diagram would be incomplete;
 * - `run-in-progress` — the run has not ended yet: a diagram is exported once it has.
 *
 * @example
 * ```ts
 * import type { InspectorErrorReason } from 'rxagent/devtools';
 * const retryable = (reason: InspectorErrorReason) => reason === 'port-in-use';
 * ```
 */
export type InspectorErrorReason =
  | 'not-an-agent'
  | 'invalid-option'
  | 'port-in-use'
  | 'listen-failed'
  | 'unknown-run'
  | 'run-truncated'
  | 'run-in-progress';

/**
 * An error of the run inspector (`rxagent/devtools`), with a `reason` code and a message that
 * names what was wrong and how to fix it.
 *
 * @example
 * ```ts
 * import { inspect, InspectorError } from 'rxagent/devtools';
 * try { await inspect(agent, { port: 3211 }); }
 * catch (error) { if (InspectorError.isInstance(error) && error.reason === 'port-in-use') await inspect(agent, { port: 0 }); }
 * ```
 */
export class InspectorError extends RxAgentError {
  private readonly [marker] = true;
  /** What went wrong. */
  readonly reason: InspectorErrorReason;

  constructor(reason: InspectorErrorReason, message: string, options?: { cause?: unknown }) {
    super('InspectorError', message, options);
    this.reason = reason;
  }

  static override isInstance(error: unknown): error is InspectorError {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[marker] === true;
  }
}
