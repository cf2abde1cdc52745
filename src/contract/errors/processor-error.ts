import { RxAgentError, hasMarker } from '../../errors/rxagent-error.js';
import { thrownMessage } from '../../errors/thrown-message.js';

const marker = Symbol.for('rxagent.error.ProcessorError');

/** The hooks a processor can implement. */
export type ProcessorHookName =
  | 'processInput'
  | 'processInputStep'
  | 'processLLMRequest'
  | 'processLLMResponse'
  | 'processAPIError'
  | 'processOutputStream'
  | 'processOutputStep'
  | 'processToolResult'
  | 'processOutputResult';

/**
 * A processor hook failed (threw something other than a `TripWire`, or returned something the
 * contract does not allow). The run fails closed: it ends with an `error` chunk carrying this.
 *
 * @example
 * ```ts
 * import { ProcessorError } from 'rxagent';
 * if (ProcessorError.isInstance(error)) console.error(error.processorId, error.hook, error.cause);
 * ```
 */
export class ProcessorError extends RxAgentError {
  private readonly [marker] = true;
  /** The id of the processor concerned. */
  readonly processorId: string;
  /** The hook's name. */
  readonly hook: ProcessorHookName;

  constructor(processorId: string, hook: ProcessorHookName, message: string, options?: {
    /** The underlying error (kept as `cause`). */
    cause?: unknown;
  }) {
    super('ProcessorError', `Processor "${processorId}" failed in ${hook}: ${message}`, options);
    this.processorId = processorId;
    this.hook = hook;
  }

  /**
   * Wraps whatever a hook threw (keeps it as `cause`). Never throws: a value that cannot be read (a
   * revoked Proxy, a throwing `message` getter or `Symbol.toPrimitive`, a null-prototype object)
   * gives the message "a value that cannot be read".
   */
  static fromThrown(processorId: string, hook: ProcessorHookName, thrown: unknown): ProcessorError {
    const text = thrownMessage(thrown) ?? 'a value that cannot be read';
    return newProcessorError(processorId, hook, text, { cause: thrown });
  }

  static override isInstance(error: unknown): error is ProcessorError {
    return hasMarker(error, marker);
  }
}

/**
 * `new ProcessorError(…)` from outside the class body: a class that names itself inside its own
 * body is emitted as `var ProcessorError = class _ProcessorError` by esbuild, so the built class
 * would be called `_ProcessorError` (checked by smoke/export-names.mjs).
 */
function newProcessorError(...args: ConstructorParameters<typeof ProcessorError>): ProcessorError {
  return new ProcessorError(...args);
}
