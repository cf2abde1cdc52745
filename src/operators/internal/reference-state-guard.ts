/**
 * The reference's `StructuredOutputProcessor` (id `'structured-output'`) hands its object to the
 * reference runtime through a stream controller the runtime puts in its state (`state.controller`,
 * refreshed per step, enqueuing `object`/`object-result` chunks while `finish` is processed). rxagent
 * has no such controller — its `finish` ends the run after `processOutputStep` — so that processor
 * would silently produce no object and lose its `'strict'` errors. Reading `state.controller` in a
 * `'structured-output'` state therefore throws this error (the run ends with a `ProcessorError`);
 * writing it first (a processor keeping its own controller there) works as a plain property.
 */
export const REFERENCE_CONTROLLER_MESSAGE =
  "state.controller is the reference runtime's stream controller, which rxagent does not provide: " +
  "the reference's StructuredOutputProcessor cannot hand its object over in rxagent. " +
  "Use StructuredOutputProcessor from 'rxagent/processors' (same options: schema, model, errorStrategy, fallbackValue) " +
  'or the structuredOutput option of stream()/generate().';

/** Installs the `controller` guard on a fresh `'structured-output'` state; other states are returned as they are. */
export function guardReferenceState<TState extends Record<string, unknown>>(processorId: string, state: TState): TState {
  if (processorId !== 'structured-output') return state;
  Object.defineProperty(state, 'controller', {
    configurable: true,
    enumerable: false,
    get(): never {
      throw new Error(REFERENCE_CONTROLLER_MESSAGE);
    },
    set(value: unknown) {
      Object.defineProperty(state, 'controller', { configurable: true, enumerable: true, writable: true, value });
    },
  });
  return state;
}
