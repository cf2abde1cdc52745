/**
 * The abort signal of one model call, tied to the caller's: what `doStream` and `doGenerate`
 * calls receive.
 */
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';

/**
 * A per-call controller that follows the caller's signal with one listener (not `AbortSignal.any`):
 * the provider's signal aborts with the caller's reason when the caller's does, or when the call
 * is cut ({@link CallAbort.cut}, which also drops the listener). A call that ended drops the
 * listener ({@link CallAbort.release}): a run's signal does not collect one per finished step.
 *
 * @example
 * ```ts
 * const abort = new CallAbort(options);
 * const result = await model.doGenerate(abort.callOptions);
 * abort.release();
 * ```
 */
export class CallAbort implements EventListenerObject {
  readonly controller = new AbortController();
  /** The options the provider gets: the caller's, with this call's signal. */
  readonly callOptions: LanguageModelV4CallOptions;
  #caller: AbortSignal | undefined;

  constructor(options: LanguageModelV4CallOptions) {
    const caller = options.abortSignal;
    if (caller !== undefined) {
      if (caller.aborted) this.controller.abort(caller.reason);
      else {
        this.#caller = caller;
        caller.addEventListener('abort', this, { once: true });
      }
    }
    this.callOptions = { ...options, abortSignal: this.controller.signal };
  }

  /** The caller's signal aborted (the listener is gone: `once`). */
  handleEvent(): void {
    this.controller.abort((this.#caller as AbortSignal).reason);
  }

  /** The call was cut before its end: the listener is dropped and the call's signal aborted. */
  cut(): void {
    this.release();
    this.controller.abort();
  }

  /** The call ended (completed or failed): the caller's signal no longer concerns it. */
  release(): void {
    this.#caller?.removeEventListener('abort', this);
    this.#caller = undefined;
  }
}
