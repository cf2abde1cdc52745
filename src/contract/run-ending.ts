/**
 * How a run's signal (the `abortSignal` hooks and tools get) says the run ended well: it is
 * aborted when the run is over however it ends, with {@link RUN_FINISHED} as its reason only when
 * the run ended with its `finish` (a `processorsMiddleware` call: when its step passed every
 * processor). A run that ended any other way — an error, a tripwire, the consumer leaving — gives
 * {@link RUN_UNFINISHED}, the caller's abort its own reason. A processor that must know the run
 * ended well before it keeps something of it (`ResponseCache` accepting the last step) asks
 * {@link endedWithFinish}: any other reason is not known to be a good end.
 */

/** The reason of a run's signal when the run ended with its `finish` (one shared error: no stack per run). */
export const RUN_FINISHED = new DOMException('The run is over.', 'AbortError');

/** The reason of a run's signal when the run ended without its `finish` (an error, a tripwire, the consumer left). */
export const RUN_UNFINISHED = new DOMException('The run is over without its finish.', 'AbortError');

/**
 * Whether `signal` (a run's, or a `processorsMiddleware` call's) says its run ended with its
 * `finish`: aborted with {@link RUN_FINISHED}. A signal not aborted yet, or aborted for any other
 * reason, says no.
 *
 * @example
 * ```ts
 * abortSignal.addEventListener('abort', () => (endedWithFinish(abortSignal) ? keep() : drop()), { once: true });
 * ```
 */
export function endedWithFinish(signal: AbortSignal): boolean {
  return signal.aborted && signal.reason === RUN_FINISHED;
}
