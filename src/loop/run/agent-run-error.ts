import { RxAgentError, hasMarker } from '../../errors/rxagent-error.js';
import { jsonOrString, thrownMessage } from '../../errors/thrown-message.js';

const marker = Symbol.for('rxagent.error.AgentRunError');

/**
 * `generate()` (and `stream()`'s promises) reject with this when a run ended with an `error`
 * chunk whose error is not rxagent's own: typically the provider's `APICallError`, kept as `cause`
 * (the `error` chunk itself carries the provider's error unchanged).
 *
 * @example
 * ```ts
 * import { APICallError } from '@ai-sdk/provider';
 * import { AgentRunError } from 'rxagent';
 * try { await agent.generate('hi'); } catch (error) {
 *   if (AgentRunError.isInstance(error) && APICallError.isInstance(error.cause)) console.log(error.cause.statusCode);
 * }
 * ```
 */
export class AgentRunError extends RxAgentError {
  private readonly [marker] = true;

  constructor(cause: unknown) {
    // read without trusting it: a BigInt, a cycle, a Proxy that throws, a throwing `message` getter
    const text = thrownMessage(cause, jsonOrString) ?? 'a value that cannot be read';
    super('AgentRunError', `The run failed: ${text}`, { cause });
  }

  static override isInstance(error: unknown): error is AgentRunError {
    return hasMarker(error, marker);
  }
}
