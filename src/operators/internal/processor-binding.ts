/**
 * One processor bound to one run: its state, its `abort` functions (one per hook, made once) and
 * the record that makes an abort stick even when the processor catches its own `TripWire`.
 */
import { TripWire, type TripWireOptions } from '../../processor/errors/trip-wire.js';
import type { ProcessorHookName } from '../../processor/errors/processor-error.js';
import type { AbortFunction, Processor, ProcessorState } from '../../processor/processor-types.js';

/** A processor's per-run bookkeeping. */
export interface ProcessorBinding {
  readonly processor: Processor;
  readonly state: ProcessorState;
  /** The first TripWire raised by this processor's `abort` during the current hook call. */
  armed: TripWire | undefined;
  /** Parts this processor has seen in `processOutputStream` (made on first use). */
  streamParts: unknown[] | undefined;
  abortFor(hook: ProcessorHookName): AbortFunction;
}

/** Default abort reasons, as the reference implementation words them. */
export function defaultAbortReason(processorId: string, hook: ProcessorHookName): string {
  return hook === 'processOutputStream' ? `Stream part blocked by ${processorId}` : `Tripwire triggered by ${processorId}`;
}

/** Calls `onViolation`, swallowing whatever it throws or rejects with. */
export function notifyViolation(processor: Processor, message: string, detail?: unknown): void {
  const onViolation = processor.onViolation;
  if (onViolation === undefined) return;
  try {
    const returned: unknown = onViolation.call(processor, { processorId: processor.id, message, detail });
    if (returned !== null && typeof returned === 'object' && typeof (returned as Promise<void>).catch === 'function') {
      (returned as Promise<void>).catch(() => undefined);
    }
  } catch {
    // onViolation's failures never interfere with processing (specification).
  }
}

/** Makes the binding of `processor` for a run, sharing `state`. */
export function bindProcessor(processor: Processor, state: ProcessorState): ProcessorBinding {
  const aborts = new Map<ProcessorHookName, AbortFunction>();
  const binding: ProcessorBinding = {
    processor,
    state,
    armed: undefined,
    streamParts: undefined,
    abortFor(hook) {
      let abort = aborts.get(hook);
      if (abort === undefined) {
        abort = (reason?: string, options?: TripWireOptions): never => {
          const tripwire = new TripWire(reason || defaultAbortReason(processor.id, hook), options ?? {}, processor.id);
          binding.armed ??= tripwire;
          notifyViolation(processor, tripwire.reason, options?.metadata);
          throw tripwire;
        };
        aborts.set(hook, abort);
      }
      return abort;
    },
  };
  return binding;
}
