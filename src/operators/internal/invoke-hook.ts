/**
 * Calls one processor hook with the contract's error rules: the first `abort()` of the call decides
 * the outcome (whatever the hook throws or returns after it), a `TripWire` passes (stamped with the
 * processor id; one from another package is recognised by its shape), anything else thrown becomes a
 * `ProcessorError` (fail closed), and an async hook past `processorTimeoutMs` fails closed too.
 * Synchronous hooks stay synchronous.
 */
import { asyncScheduler } from 'rxjs';
import { ProcessorError, type ProcessorHookName } from '../../processor/errors/processor-error.js';
import { TripWire, toTripWire } from '../../processor/errors/trip-wire.js';
import type { TracingContext } from '../../processor/tracing-context.js';
import { isPromiseLike, type MaybePromise } from '../../processor/maybe-async.js';
import { notifyViolation, type ProcessorBinding } from './processor-binding.js';

/** Turns whatever a hook threw into the error the run ends with. */
export function toHookError(thrown: unknown, binding: ProcessorBinding, hook: ProcessorHookName): Error {
  const tripwire = toTripWire(thrown);
  if (tripwire !== undefined) {
    if (tripwire.processorId !== undefined) return tripwire;
    return new TripWire(tripwire.reason, tripwire.options, binding.processor.id);
  }
  if (ProcessorError.isInstance(thrown) && thrown.processorId === binding.processor.id) return thrown;
  return ProcessorError.fromThrown(binding.processor.id, hook, thrown);
}

/**
 * The hook call failed with `thrown`: the first abort of the call wins over it. A TripWire the hook
 * threw itself (not through `abort`, e.g. another package's) is reported to `onViolation` as an
 * abort is (the reference's runner does so for every TripWire a hook raises).
 */
function failed(binding: ProcessorBinding, hook: ProcessorHookName, thrown: unknown): Error {
  const armed = binding.armed;
  binding.armed = undefined;
  if (armed !== undefined) return armed;
  const error = toHookError(thrown, binding, hook);
  if (thrown !== error && TripWire.isInstance(error)) notifyViolation(binding.processor, error.reason, error.metadata);
  return error;
}

function settle<R>(binding: ProcessorBinding, result: R): R {
  const armed = binding.armed;
  if (armed !== undefined) {
    // The processor called abort() but caught the TripWire: the abort stands (a block never
    // degrades into a warn).
    binding.armed = undefined;
    throw armed;
  }
  return result;
}

/**
 * `pending` bounded by the run's `processorTimeoutMs`, timed on its scheduler (only async hooks pay
 * for this, and only when a limit is set).
 */
function bounded<R>(pending: PromiseLike<R>, binding: ProcessorBinding, hook: ProcessorHookName): PromiseLike<R> {
  const timeoutMs = binding.limits.processorTimeoutMs;
  if (timeoutMs === undefined) return pending;
  const scheduler = binding.limits.scheduler ?? asyncScheduler;
  return new Promise<R>((resolve, reject) => {
    const timer = scheduler.schedule(() => {
      reject(
        new ProcessorError(binding.processor.id, hook, `did not settle within processorTimeoutMs (${timeoutMs} ms); failing closed.`, {
          cause: { processorTimeoutMs: timeoutMs },
        }),
      );
    }, timeoutMs);
    pending.then(
      (value) => {
        timer.unsubscribe();
        resolve(value);
      },
      (error: unknown) => {
        timer.unsubscribe();
        reject(error);
      },
    );
  });
}

/**
 * Invokes `binding.processor[hook](args)`.
 * Returns the hook's result, or a promise of it only when the hook returned one.
 */
export function invokeHook<R>(
  binding: ProcessorBinding,
  hook: ProcessorHookName,
  args: object,
  tracingContext?: TracingContext,
): MaybePromise<R> {
  // A cancelled run (unsubscribed, or its abortSignal fired) calls no further hook — e.g. the next
  // processor of a chain that was waiting on an async hook when the consumer left.
  (args as { abortSignal?: AbortSignal }).abortSignal?.throwIfAborted();
  const onHook = tracingContext?.onHook;
  if (onHook !== undefined) return invokeTraced<R>(binding, hook, args, tracingContext as TracingContext);
  const processor = binding.processor as unknown as Record<ProcessorHookName, (args: object) => unknown>;
  const active = binding.active;
  let result: unknown;
  binding.armed = undefined;
  active[hook]++;
  try {
    result = processor[hook](args);
  } catch (thrown) {
    active[hook]--;
    throw failed(binding, hook, thrown);
  }
  if (isPromiseLike<R>(result)) {
    return Promise.resolve(bounded(result, binding, hook)).then(
      (resolved) => {
        active[hook]--;
        return settle(binding, resolved);
      },
      (thrown: unknown) => {
        active[hook]--;
        throw failed(binding, hook, thrown);
      },
    );
  }
  active[hook]--;
  return settle(binding, result as R);
}

/**
 * `invokeHook` for `processOutputStream` on the per-chunk path, with the same rules. Two savings:
 * a hook that returns the `part` it got (a pass-through) costs no thenable check, and an async
 * result is returned as it is, for the chain to settle in its own single `then`
 * ({@link settleStreamHook} / {@link streamHookError}): one promise per async processor per chunk
 * instead of two. Returns the settled result of a synchronous hook (never a thenable), or the
 * hook's thenable.
 */
export function invokeStreamHook(
  binding: ProcessorBinding,
  args: { part: unknown; abortSignal?: AbortSignal },
  tracingContext: TracingContext | undefined,
): unknown {
  if (tracingContext?.onHook !== undefined) {
    const traced = invokeHook<unknown>(binding, 'processOutputStream', args, tracingContext);
    // Already settled by invokeHook; the chain still calls settleStreamHook/streamHookError on it,
    // which count the call as over a second time: count it once more here.
    if (isPromiseLike<unknown>(traced)) binding.active.processOutputStream++;
    return traced;
  }
  args.abortSignal?.throwIfAborted();
  const processor = binding.processor as unknown as { processOutputStream(args: object): unknown };
  const active = binding.active;
  let result: unknown;
  binding.armed = undefined;
  active.processOutputStream++;
  try {
    result = processor.processOutputStream(args);
  } catch (thrown) {
    active.processOutputStream--;
    throw failed(binding, 'processOutputStream', thrown);
  }
  if (result !== args.part && isPromiseLike<unknown>(result)) return bounded(result, binding, 'processOutputStream');
  active.processOutputStream--;
  return settle(binding, result);
}

/** What an async `processOutputStream` hook resolved with, under the abort rules of {@link invokeHook}. */
export function settleStreamHook(binding: ProcessorBinding, resolved: unknown): unknown {
  binding.active.processOutputStream--;
  return settle(binding, resolved);
}

/** The error an async `processOutputStream` hook's rejection becomes (see {@link toHookError}). */
export function streamHookError(binding: ProcessorBinding, thrown: unknown): Error {
  binding.active.processOutputStream--;
  return failed(binding, 'processOutputStream', thrown);
}

function outcomeOf(error: unknown, result: unknown, hook: ProcessorHookName): 'pass' | 'drop' | 'abort' | 'retry' | 'error' {
  if (error !== undefined) {
    if (TripWire.isInstance(error)) return error.retry ? 'retry' : 'abort';
    return 'error';
  }
  if (hook === 'processOutputStream' && (result === null || result === undefined)) return 'drop';
  if (hook === 'processAPIError' && (result as { retry?: boolean } | undefined)?.retry === true) return 'retry';
  return 'pass';
}

function invokeTraced<R>(
  binding: ProcessorBinding,
  hook: ProcessorHookName,
  args: object,
  tracingContext: TracingContext,
): MaybePromise<R> {
  const onHook = tracingContext.onHook as NonNullable<TracingContext['onHook']>;
  const startTime = performance.now();
  const report = (error: unknown, result: unknown): void => {
    try {
      onHook({
        processorId: binding.processor.id,
        hook,
        outcome: outcomeOf(error, result, hook),
        startTime,
        endTime: performance.now(),
      });
    } catch {
      // tracing never breaks a run
    }
  };
  let result: MaybePromise<R>;
  try {
    result = invokeHook<R>(binding, hook, args);
  } catch (error) {
    report(error, undefined);
    throw error;
  }
  if (isPromiseLike<R>(result)) {
    return Promise.resolve(result).then(
      (resolved) => {
        report(undefined, resolved);
        return resolved;
      },
      (error: unknown) => {
        report(error, undefined);
        throw error;
      },
    );
  }
  report(undefined, result);
  return result;
}
