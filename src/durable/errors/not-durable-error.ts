import { RxAgentError, hasMarker } from '../../contract/index.js';

const marker = Symbol.for('rxagent.error.NotDurableError');

/**
 * A run that cannot be made durable, refused before anything is stored: a call option or request
 * context value that is not JSON (a function, a `Date`, an `AbortSignal`, a zod schema…), a call
 * option a durable run cannot carry (`prepareStep`, `stopWhen`, per-call processors: another
 * process could not rebuild them — put them in the agent's configuration), a processor with
 * `durableState: false` or `{ notDurable: 'why' }` or a `durableState` of no documented form (e.g.
 * `PIIDetector` hashing without a `hashKey`), or (from `start()`) an agent whose memory cannot
 * fence a stale owner's save. `what` names the option, the path or the processor.
 *
 * @example
 * ```ts
 * import { NotDurableError } from 'rxagent/durable';
 * try { await worker.submit('support', 'Hi', { requestContext: { user } }); }
 * catch (error) { if (NotDurableError.isInstance(error)) console.error(`not durable: ${error.what}`); }
 * ```
 */
export class NotDurableError extends RxAgentError {
  private readonly [marker] = true;
  /** What cannot be made durable: an option path (`options.requestContext.user`), a processor id, an agent's memory. */
  readonly what: string;

  constructor(options: { what: string; message: string; cause?: unknown }) {
    super('NotDurableError', `${options.what}: ${options.message}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.what = options.what;
  }

  static override isInstance(error: unknown): error is NotDurableError {
    return hasMarker(error, marker);
  }
}
