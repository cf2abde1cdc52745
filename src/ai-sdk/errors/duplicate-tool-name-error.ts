import { RxAgentError, hasMarker } from '../../contract/index.js';

const marker = Symbol.for('rxagent.error.DuplicateToolNameError');

/**
 * A model call handed to `processorsMiddleware` offers two tools of one name. The call is refused
 * before any processor runs: the processors would see one of the definitions and the provider
 * both (providers refuse such a request too).
 *
 * @example
 * ```ts
 * import { DuplicateToolNameError } from 'rxagent/ai-sdk';
 * if (DuplicateToolNameError.isInstance(error)) console.error(`tool ${error.toolName} is defined twice`);
 * ```
 */
export class DuplicateToolNameError extends RxAgentError {
  private readonly [marker] = true;
  /** The name two of the call's tools share. */
  readonly toolName: string;

  constructor(toolName: string) {
    super('DuplicateToolNameError', `processorsMiddleware: the call offers two tools named ${JSON.stringify(toolName)}; tool names must be unique.`);
    this.toolName = toolName;
  }

  static override isInstance(error: unknown): error is DuplicateToolNameError {
    return hasMarker(error, marker);
  }
}
