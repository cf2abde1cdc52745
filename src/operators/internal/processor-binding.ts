/**
 * One processor bound to one run: its state, its `abort` functions (one per hook, made once), its
 * position in the run, and the record that makes the first abort stick whatever the hook does after.
 */
import type { SchedulerLike } from 'rxjs';
import { TripWire, type TripWireOptions } from '../../contract/errors/trip-wire.js';
import type { ProcessorError, ProcessorHookName } from '../../contract/errors/processor-error.js';
import { unreadableHookValue } from '../../contract/processor-checks.js';
import type { AbortFunction, Processor, ProcessorState } from '../../contract/processor-types.js';
import { defaultAbortReason, notifyViolation } from '../../contract/violation.js';

/** How many calls of each hook of one processor are in progress (a plain counter object, made once per run). */
export type ActiveCalls = Record<ProcessorHookName, number>;

/** Run-wide limits a binding applies to its hook calls. */
export interface HookLimits {
  /** A hook whose promise has not settled after this many ms fails closed (`undefined`: no limit). */
  readonly processorTimeoutMs: number | undefined;
  /** The scheduler that times `processorTimeoutMs` (default `asyncScheduler`). */
  readonly scheduler: SchedulerLike | undefined;
}

/** A processor's per-run bookkeeping. */
export interface ProcessorBinding {
  readonly processor: Processor;
  readonly state: ProcessorState;
  /** The processor's position for this run (what hooks receive as `processorIndex`). */
  readonly index: number;
  readonly limits: HookLimits;
  /** The first TripWire raised by this processor's `abort` during the current hook call. */
  armed: TripWire | undefined;
  /** Calls in progress per hook: an `abort()` made while none is, is late (ignored, reported). */
  readonly active: ActiveCalls;
  abortFor(hook: ProcessorHookName): AbortFunction;
}

export { notifyViolation };

/** What `onViolation` receives as `detail` for an `abort()` made after its hook call was over. */
export interface LateAbortDetail {
  late: true;
  hook: ProcessorHookName;
  reason: string;
  options: TripWireOptions;
}

/** No call in progress: the prototype of every binding's counters (never written: a count is an own property). */
const NO_CALLS: ActiveCalls = {
  processInput: 0,
  processInputStep: 0,
  processLLMRequest: 0,
  processLLMResponse: 0,
  processAPIError: 0,
  processOutputStream: 0,
  processOutputStep: 0,
  processToolResult: 0,
  processOutputResult: 0,
};

/** Counters reading 0 for every hook; an own property only for the hooks called (most processors implement one). */
function newActiveCalls(): ActiveCalls {
  return Object.create(NO_CALLS) as ActiveCalls;
}

const noLimits: HookLimits = { processorTimeoutMs: undefined, scheduler: undefined };

/**
 * The `TripWire` of `abort(reason, options)`; a `ProcessorError` naming the processor and `hook`
 * when the reason or the options cannot be read (a getter that throws, a hostile Proxy): the
 * processor's own failure, as a throw of its hook is.
 */
function tripwireOf(processor: Processor, hook: ProcessorHookName, reason: string | undefined, options: TripWireOptions | undefined): TripWire | ProcessorError {
  try {
    return new TripWire(reason || defaultAbortReason(processor.id, hook), options ?? {}, processor.id);
  } catch (reading) {
    return unreadableHookValue(processor.id, hook, 'called abort() with', reading);
  }
}

/** What a processor's `abort` for `hook` does (`this` = the binding). */
function abortHook(this: Binding, hook: ProcessorHookName, reason?: string, options?: TripWireOptions): never {
  const processor = this.processor;
  const tripwire = tripwireOf(processor, hook, reason, options);
  if (!TripWire.isInstance(tripwire)) {
    // during the call: the hook fails with it (it is not armed: a ProcessorError is no abort);
    // after it: nothing to fail, reported as a late abort is
    if (this.active[hook] !== 0) throw tripwire;
    notifyViolation(processor, `abort() called after ${hook} returned (ignored): ${tripwire.message}`, { late: true, hook });
    return undefined as never;
  }
  if (this.active[hook] === 0) {
    // The hook call is over (a timer the processor started, a promise it did not await): there
    // is nothing left to abort, and a throw here would reach no one — it would take the
    // process down. Ignored, and reported.
    const detail: LateAbortDetail = { late: true, hook, reason: tripwire.reason, options: tripwire.options };
    notifyViolation(processor, `abort() called after ${hook} returned (ignored): ${tripwire.reason}`, detail);
    return undefined as never;
  }
  this.armed ??= tripwire;
  notifyViolation(processor, tripwire.reason, tripwire.metadata);
  throw tripwire;
}

/** The binding of a processor for a run (see {@link ProcessorBinding}). */
class Binding implements ProcessorBinding {
  armed: TripWire | undefined = undefined;
  readonly active: ActiveCalls = newActiveCalls();
  // made on first use: most processors implement one hook, so most runs need one entry or none
  #aborts: Partial<Record<ProcessorHookName, AbortFunction>> | undefined;

  constructor(
    readonly processor: Processor,
    readonly state: ProcessorState,
    readonly index: number,
    readonly limits: HookLimits,
  ) {}

  abortFor(hook: ProcessorHookName): AbortFunction {
    const aborts = (this.#aborts ??= {});
    let abort = aborts[hook];
    if (abort === undefined) {
      abort = (reason?: string, options?: TripWireOptions): never => abortHook.call(this, hook, reason, options);
      aborts[hook] = abort;
    }
    return abort;
  }
}

/** Makes the binding of `processor` for a run, sharing `state`. */
export function bindProcessor(processor: Processor, state: ProcessorState, index = 0, limits: HookLimits = noLimits): ProcessorBinding {
  return new Binding(processor, state, index, limits);
}
