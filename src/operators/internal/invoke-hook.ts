/**
 * Calls one processor hook with the contract's error rules: the first `abort()` of the call decides
 * the outcome (whatever the hook throws or returns after it), a `TripWire` passes (stamped with the
 * processor id; one from another package is recognised by its shape), anything else thrown becomes a
 * `ProcessorError` (fail closed; an option error — `prepareStep`, an option the run calls as a hook,
 * refused — passes as it is), and an async hook past `processorTimeoutMs` fails closed too.
 * Synchronous hooks stay synchronous.
 *
 * A hook may return an Observable (or an interop observable): its first value is the result, as a
 * promise's resolution would be (`undefined` when it completes empty), and its error is a throw.
 * One that settles during the call (`of(x)`) is a synchronous result; otherwise the call returns an
 * Observable of the settled outcome, timed on the Observable's own scheduler (a `TestScheduler`'s
 * virtual time in marble tests) and bounded by `processorTimeoutMs` on the run's scheduler.
 */
import { AsyncSubject, asyncScheduler, from, isObservable, Observable, tap, type InteropObservable, type Subscription } from 'rxjs';
import { ProcessorError, type ProcessorHookName } from '../../contract/errors/processor-error.js';
import { TripWire, toTripWire } from '../../contract/errors/trip-wire.js';
import type { ProcessorHookEvent, TracingContext } from '../../contract/tracing-context.js';
import { isObservableResult, isPromiseLike, type MaybeAsync } from '../../contract/maybe-async.js';
import { notifyViolation, type ProcessorBinding } from './processor-binding.js';
import { unreadableHookValue } from '../../contract/processor-checks.js';
import { isOptionError } from '../../contract/option-error.js';

/** Turns whatever a hook threw into the error the run ends with. */
export function toHookError(thrown: unknown, binding: ProcessorBinding, hook: ProcessorHookName): Error {
  try {
    const tripwire = toTripWire(thrown);
    if (tripwire !== undefined) {
      if (tripwire.processorId !== undefined) return tripwire;
      return new TripWire(tripwire.reason, tripwire.options, binding.processor.id);
    }
    if (ProcessorError.isInstance(thrown) && thrown.processorId === binding.processor.id) return thrown;
    // an option function the run calls as a hook (`prepareStep`) refused by an option's check: the caller's option error
    if (isOptionError(thrown)) return thrown;
    return ProcessorError.fromThrown(binding.processor.id, hook, thrown);
  } catch (reading) {
    // a thrown value that cannot be read (a Proxy that throws on every get, a revoked Proxy, a toString that throws)
    return unreadableHookValue(binding.processor.id, hook, 'threw', reading);
  }
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

/**
 * How a hook's result settles: a thenable, an Observable, or a value. Reading a hostile result (a
 * Proxy that throws on every get, a revoked Proxy) to tell is the processor's fault: the call is
 * over, and it fails with a `ProcessorError` (the first abort of the call still wins).
 */
function kindOf(result: unknown, binding: ProcessorBinding, hook: ProcessorHookName): 'thenable' | 'observable' | 'value' {
  try {
    if (isPromiseLike<unknown>(result)) return 'thenable';
    return isObservableResult(result) ? 'observable' : 'value';
  } catch (reading) {
    binding.active[hook]--;
    const armed = binding.armed;
    binding.armed = undefined;
    throw armed ?? unreadableHookValue(binding.processor.id, hook, 'returned', reading);
  }
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

function timeoutError(binding: ProcessorBinding, hook: ProcessorHookName, timeoutMs: number): ProcessorError {
  return new ProcessorError(binding.processor.id, hook, `did not settle within processorTimeoutMs (${timeoutMs} ms); failing closed.`, {
    cause: { processorTimeoutMs: timeoutMs },
  });
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
    const timer = scheduler.schedule(() => reject(timeoutError(binding, hook, timeoutMs)), timeoutMs);
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
 * An Observable hook result as the call's outcome, under the rules of {@link invokeHook}: the first
 * value (the source is unsubscribed then), or `undefined` when it completes without one; an error
 * is a throw. Subscribed at once, as the hook's work has started: when it settles meanwhile the
 * outcome is returned (or thrown) synchronously; else an Observable of it (one value, or an error)
 * whose unsubscription cancels the source. The call counts as in progress until it settles (an
 * `abort()` from inside the Observable is not late) or is cancelled.
 */
function observed<R>(result: Observable<unknown> | InteropObservable<unknown>, binding: ProcessorBinding, hook: ProcessorHookName): R | Observable<R> {
  const outcome = new AsyncSubject<R>();
  let over = false;
  let timer: Subscription | undefined;
  const end = (): boolean => {
    if (over) return false;
    over = true;
    binding.active[hook]--;
    timer?.unsubscribe();
    return true;
  };
  const reject = (thrown: unknown): void => {
    if (end()) outcome.error(failed(binding, hook, thrown));
  };
  const resolve = (value: unknown): void => {
    if (!end()) return;
    let settled: R;
    try {
      settled = settle(binding, value as R);
    } catch (error) {
      outcome.error(error);
      return;
    }
    outcome.next(settled);
    outcome.complete();
  };
  // `let`: a synchronous source calls back before the assignment (the check after covers it)
  let source: Subscription | undefined;
  source = from(result).subscribe({
    next: (value) => {
      resolve(value); // the first value only: `end` lets one outcome through
      source?.unsubscribe();
    },
    error: reject,
    complete: () => resolve(undefined),
  });
  if (over) {
    source.unsubscribe();
    let value: R | undefined;
    let error: { thrown: unknown } | undefined;
    outcome.subscribe({ next: (settled) => (value = settled), error: (thrown: unknown) => (error = { thrown }) });
    if (error !== undefined) throw error.thrown;
    return value as R;
  }
  const timeoutMs = binding.limits.processorTimeoutMs;
  if (timeoutMs !== undefined) {
    timer = (binding.limits.scheduler ?? asyncScheduler).schedule(() => {
      source?.unsubscribe();
      reject(timeoutError(binding, hook, timeoutMs));
    }, timeoutMs);
  }
  return new Observable<R>((subscriber) => {
    const inner = outcome.subscribe(subscriber);
    return () => {
      inner.unsubscribe();
      if (over) return;
      // cancelled before it settled (the consumer left): the hook call is over
      source?.unsubscribe();
      end();
    };
  });
}

/**
 * Invokes `binding.processor[hook](args)`.
 * Returns the hook's result, a promise of it only when the hook returned one, or an Observable of
 * it only when the hook returned an Observable that did not settle during the call.
 */
export function invokeHook<R>(
  binding: ProcessorBinding,
  hook: ProcessorHookName,
  args: object,
  tracingContext?: TracingContext,
): MaybeAsync<R> {
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
  const kind = kindOf(result, binding, hook);
  if (kind === 'thenable') {
    return Promise.resolve(bounded(result as PromiseLike<R>, binding, hook)).then(
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
  if (kind === 'observable') return observed<R>(result as Observable<unknown>, binding, hook);
  active[hook]--;
  return settle(binding, result as R);
}

/**
 * What {@link invokeStreamHook} and {@link settleStreamHook} give when the hook handed back the very
 * part it got with its `type` changed in place: the chain checks that part as it checks a new chunk.
 */
export const RETYPED_IN_PLACE: unique symbol = Symbol('rxagent.retypedInPlace');

/**
 * `settled`, the outcome of the hook that got `part` of `type` — {@link RETYPED_IN_PLACE} when it is
 * `part` with another type. The type is read in a `try`: a getter the hook defined on the part that
 * throws is the hook's error (a `ProcessorError` naming it), not a raw one from the chain. For the
 * outcomes that are not a plain synchronous return (traced, an Observable that settled at once, a
 * promise's resolution): the plain return reads it inside the call's own `try`.
 */
function handedBack(binding: ProcessorBinding, part: unknown, type: string, settled: unknown): unknown {
  if (settled !== part) return settled;
  try {
    return (part as { type: unknown }).type === type ? part : RETYPED_IN_PLACE;
  } catch (reading) {
    throw toHookError(reading, binding, 'processOutputStream');
  }
}

/**
 * `invokeHook` for `processOutputStream` on the per-chunk path, with the same rules. Two savings:
 * a hook that returns the `part` it got (a pass-through) costs no thenable check, and an async
 * result is returned as it is, for the chain to settle in its own single `then`
 * ({@link settleStreamHook} / {@link streamHookError}): one promise per async processor per chunk
 * instead of two. Returns the settled result of a synchronous hook (never a thenable), the
 * hook's thenable, or — for an Observable result that did not settle during the call — an
 * Observable of the result already settled (the chain does not settle it again).
 *
 * `type` is the part's type as the chain gave it: a synchronous result that is the part itself is
 * {@link RETYPED_IN_PLACE} when its type is no longer `type` (read inside the call's `try`, so that
 * a throwing `type` getter the hook defined on the part fails as this hook's `ProcessorError`).
 */
export function invokeStreamHook(
  binding: ProcessorBinding,
  args: { part: unknown; abortSignal?: AbortSignal },
  tracingContext: TracingContext | undefined,
  type: string,
): unknown {
  const part = args.part;
  if (tracingContext?.onHook !== undefined) {
    const traced = invokeHook<unknown>(binding, 'processOutputStream', args, tracingContext);
    // Already settled by invokeHook; the chain still calls settleStreamHook/streamHookError on it,
    // which count the call as over a second time: count it once more here.
    if (isPromiseLike<unknown>(traced)) {
      binding.active.processOutputStream++;
      return traced;
    }
    return handedBack(binding, part, type, traced);
  }
  args.abortSignal?.throwIfAborted();
  const processor = binding.processor as unknown as { processOutputStream(args: object): unknown };
  const active = binding.active;
  let result: unknown;
  binding.armed = undefined;
  active.processOutputStream++;
  try {
    result = processor.processOutputStream(args);
    // the part handed back: its type read here, where a throw is the hook's (the chain reads it no more)
    if (result === part && (part as { type: unknown }).type !== type) result = RETYPED_IN_PLACE;
  } catch (thrown) {
    active.processOutputStream--;
    throw failed(binding, 'processOutputStream', thrown);
  }
  if (result !== part) {
    const kind = kindOf(result, binding, 'processOutputStream');
    if (kind === 'thenable') return bounded(result as PromiseLike<unknown>, binding, 'processOutputStream');
    if (kind === 'observable') return handedBack(binding, part, type, observed<unknown>(result as Observable<unknown>, binding, 'processOutputStream'));
  }
  active.processOutputStream--;
  return settle(binding, result);
}

/**
 * What an async `processOutputStream` hook resolved with, under the abort rules of {@link invokeHook}
 * ({@link RETYPED_IN_PLACE} when it is `part`, which the hook got as of `type`, with another type).
 */
export function settleStreamHook(binding: ProcessorBinding, resolved: unknown, part: unknown, type: string): unknown {
  binding.active.processOutputStream--;
  return handedBack(binding, part, type, settle(binding, resolved));
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

/** One `onHook` report (with the payloads when `input` was taken); tracing never breaks a run. */
function reportHook(
  onHook: NonNullable<TracingContext['onHook']>,
  binding: ProcessorBinding,
  hook: ProcessorHookName,
  startTime: number,
  error: unknown,
  result: unknown,
  input?: { value: unknown },
): void {
  try {
    const event: ProcessorHookEvent = { processorId: binding.processor.id, hook, outcome: outcomeOf(error, result, hook), startTime, endTime: performance.now() };
    if (input !== undefined) Object.assign(event, { input: input.value }, error === undefined ? { output: result } : { error });
    onHook(event);
  } catch {
    // tracing never breaks a run
  }
}

function invokeTraced<R>(
  binding: ProcessorBinding,
  hook: ProcessorHookName,
  args: object,
  tracingContext: TracingContext,
): MaybeAsync<R> {
  const onHook = tracingContext.onHook as NonNullable<TracingContext['onHook']>;
  // what the hook got, taken before it runs (the stream chain reuses its args object)
  const input = tracingContext.includePayloads === true ? { value: hook === 'processOutputStream' ? (args as { part: unknown }).part : { ...args } } : undefined;
  const startTime = performance.now();
  let result: MaybeAsync<R>;
  try {
    result = invokeHook<R>(binding, hook, args);
  } catch (error) {
    reportHook(onHook, binding, hook, startTime, error, undefined, input);
    throw error;
  }
  if (isPromiseLike<R>(result)) {
    return Promise.resolve(result).then(
      (resolved) => {
        reportHook(onHook, binding, hook, startTime, undefined, resolved, input);
        return resolved;
      },
      (error: unknown) => {
        reportHook(onHook, binding, hook, startTime, error, undefined, input);
        throw error;
      },
    );
  }
  if (isObservable(result)) {
    return result.pipe(
      tap({
        next(resolved) {
          reportHook(onHook, binding, hook, startTime, undefined, resolved, input);
        },
        error(error: unknown) {
          reportHook(onHook, binding, hook, startTime, error, undefined, input);
        },
      }),
    );
  }
  reportHook(onHook, binding, hook, startTime, undefined, result, input);
  return result;
}
