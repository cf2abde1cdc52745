import { catchError, concatMap, defer, isObservable, mergeMap, of, retry, throwError, type MonoTypeOperatorFunction, type Observable } from 'rxjs';
import { ProcessorError } from '../contract/errors/processor-error.js';
import { TripWire } from '../contract/errors/trip-wire.js';
import type { Processor, ProcessorLike } from '../contract/processor-types.js';
import { asProcessors } from '../contract/processor-types.js';
import { hasHook } from '../contract/has-hook.js';
import { bindingsWith, contextArgs } from './internal/hook-args.js';
import { invokeHook } from './internal/invoke-hook.js';
import { usageWatch } from './internal/usage-watch.js';
import { allChecks, messagesWatch, stepTextsWatch } from './internal/messages-watch.js';
import { isPromiseLike, toMaybePromise, type MaybeAsync, type MaybePromise } from '../contract/maybe-async.js';
import { toObservable } from '../contract/to-observable.js';
import type { ProcessorBinding } from './internal/processor-binding.js';
import { createRunContext, type RunContext } from './run-context.js';

/** Options of `retryOnAPIError`. */
export interface RetryOnAPIErrorOptions {
  /** Which errors are API errors (default: anything but a `TripWire` or a `ProcessorError`). */
  isAPIError?: (error: unknown) => boolean;
  /** The error `processAPIError` receives (default: the error itself). */
  toAPIError?: (error: unknown) => unknown;
  /** Called before each resubscription. */
  onRetry?: (error: unknown, retryCount: number) => void;
  /**
   * The budget when `maxProcessorRetries` is unset (default: 10 when any of the processors has
   * `processAPIError`, else 0). The loop passes 10 only when the agent has `errorProcessors`.
   */
  defaultBudget?: number;
}

/** The retry budget for API errors when none is set and error processors exist (as the specification says). */
export const DEFAULT_API_ERROR_RETRIES = 10;

/**
 * Asks each processor's `processAPIError`, in order, until one asks for a retry.
 * Synchronous while the hooks are; a promise once one returns a promise, or an Observable that
 * does not settle at once (its first value is awaited: the operator form keeps it on its scheduler).
 */
export function askProcessAPIError(processors: readonly Processor[], context: RunContext, error: unknown): MaybePromise<boolean> {
  return toMaybePromise(askProcessAPIErrorHooks(processors, context, error));
}

/** `askProcessAPIError`, an Observable hook result kept an Observable (the operator's path: its scheduler's time is kept). */
function askProcessAPIErrorHooks(processors: readonly Processor[], context: RunContext, error: unknown): MaybeAsync<boolean> {
  const bindings = bindingsWith(processors, context, 'processAPIError');
  // the hooks get the run's steps: a usage one leaves unaddable is its failure (a ProcessorError),
  // whatever it answered — an answer, a throw, an abort (checked after each call, before the answer is read)
  const keptUsage = bindings.length === 0 ? undefined : allChecks(usageWatch(context.steps), messagesWatch(context.messageList), stepTextsWatch(context.steps));
  const ask = (index: number): MaybeAsync<boolean> => {
    for (let position = index; position < bindings.length; position++) {
      const binding = bindings[position] as ProcessorBinding;
      const checkUsage = (): void => keptUsage?.(binding.processor.id, 'processAPIError');
      const list = context.messageList;
      const args = {
        ...contextArgs(context, binding, 'processAPIError', context.writer, context.apiErrorRetryCount),
        error,
        messages: list.get.all.db(),
        messageList: list,
        stepNumber: context.stepNumber,
        steps: [...context.steps], // a copy of the list: a hook cannot drop or add the run's steps
      };
      let answer: unknown;
      try {
        answer = invokeHook<unknown>(binding, 'processAPIError', args, context.tracingContext);
      } catch (thrown) {
        checkUsage();
        if (TripWire.isInstance(thrown)) throw thrown;
        continue; // a failing error processor counts as "not handled"; the next one is asked
      }
      if (isPromiseLike<unknown>(answer)) {
        return Promise.resolve(answer).then(
          (resolved) => {
            checkUsage();
            return asksRetry(resolved) ? true : toMaybePromise(ask(position + 1));
          },
          (thrown: unknown) => {
            checkUsage();
            if (TripWire.isInstance(thrown)) throw thrown;
            return toMaybePromise(ask(position + 1));
          },
        );
      }
      if (isObservable(answer)) {
        const next = position + 1;
        return answer.pipe(
          // a failing hook is "not handled" (a TripWire passes); what the next hooks do is not caught here
          catchError((thrown: unknown) => {
            if (!TripWire.isInstance(thrown)) return of(notHandled);
            checkUsage();
            return throwError(() => thrown);
          }),
          concatMap((resolved) => {
            checkUsage();
            return resolved !== notHandled && asksRetry(resolved) ? of(true) : toObservable(ask(next));
          }),
        );
      }
      checkUsage();
      if (asksRetry(answer)) return true;
    }
    return false;
  };
  return ask(0);
}

/** What a failed Observable answer stands for: "not handled". */
const notHandled = Symbol('not handled');

/**
 * Whether a `processAPIError` answer is `{ retry: true }`. An answer that cannot be read (a Proxy
 * that throws, a getter that throws) is "not handled", as a failing error processor is.
 */
function asksRetry(answer: unknown): boolean {
  try {
    return (answer as { retry?: unknown } | null | undefined)?.retry === true;
  } catch {
    return false;
  }
}

/** The API-error retry budget of a run: explicit, else 10 with error processors, else none. */
export function apiErrorBudget(processors: readonly Processor[], context: RunContext, defaultBudget?: number): number {
  if (context.maxProcessorRetries !== undefined) return context.maxProcessorRetries;
  if (defaultBudget !== undefined) return defaultBudget;
  return hasHook(processors, 'processAPIError') ? DEFAULT_API_ERROR_RETRIES : 0;
}

/**
 * On an error (a provider error thrown or arriving as an `error` part), asks each processor's
 * `processAPIError` in order; the first `{ retry: true }` resubscribes to the source (the model
 * call), with the `MessageList` as the processor left it. Bounded by `maxProcessorRetries` —
 * default 10 when any processor has `processAPIError`, none otherwise. `retryCount` in
 * `processAPIError` is 0, 1, …. A `TripWire` is never retried here.
 *
 * ```
 * source:      --a--#                (first subscription errors)
 * retried:          --a--b--|        (processAPIError said { retry: true })
 * result:      --a----a--b--|
 * no budget:   --a--#
 * ```
 *
 * @example
 * ```ts
 * import { retryOnAPIError } from 'rxagent/operators';
 * modelCall$.pipe(retryOnAPIError([new PrefillErrorHandler()], ctx)).subscribe();
 * ```
 */
export function retryOnAPIError<T>(
  list: readonly ProcessorLike[],
  ctx?: RunContext,
  options: RetryOnAPIErrorOptions = {},
): MonoTypeOperatorFunction<T> {
  const processors = asProcessors(list);
  const isAPIError = options.isAPIError ?? ((error: unknown) => !TripWire.isInstance(error) && !ProcessorError.isInstance(error));
  const toAPIError = options.toAPIError ?? ((error: unknown) => error);
  return (source) =>
    defer(() => {
      const context = ctx ?? createRunContext();
      const budget = apiErrorBudget(processors, context, options.defaultBudget);
      return source.pipe(
        retry({
          delay(error: unknown): Observable<unknown> {
            if (!isAPIError(error) || context.apiErrorRetryCount >= budget || context.abortSignal.aborted) {
              return throwError(() => error);
            }
            return defer(() => {
              const answer = askProcessAPIErrorHooks(processors, context, toAPIError(error));
              const decide = (retryRequested: boolean): Observable<unknown> => {
                if (!retryRequested) return throwError(() => error);
                context.apiErrorRetryCount++;
                options.onRetry?.(error, context.apiErrorRetryCount);
                return of(true);
              };
              return isPromiseLike<boolean>(answer) || isObservable(answer) ? toObservable(answer).pipe(mergeMap(decide)) : decide(answer);
            });
          },
        }),
      );
    });
}
