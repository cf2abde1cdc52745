import { defer, of, retry, throwError, type MonoTypeOperatorFunction } from 'rxjs';
import { TripWire } from '../contract/errors/trip-wire.js';
import { createRunContext, type RunContext } from './run-context.js';

/** Options of `retryOnTripwire`. */
export interface RetryOnTripwireOptions {
  /** Called before each resubscription with the rejecting `TripWire` (the loop rolls the step back here). */
  onRetry?: (tripwire: TripWire, retryCount: number) => void;
  /** Vetoes a retry (the loop refuses retries from hooks that run before the model). */
  shouldRetry?: (tripwire: TripWire) => boolean;
}

/**
 * Resubscribes to the source (re-runs the step) when it errors with a `TripWire` whose `retry` is
 * true, while `ctx.retryCount < ctx.maxProcessorRetries`. Each retry increments `ctx.retryCount`
 * (the `retryCount` every hook sees) and stores the reason in `ctx.retryFeedback` for the next
 * attempt's prompt. Without a budget (`maxProcessorRetries` unset) or once it is used up, the
 * `TripWire` passes through: a plain abort.
 *
 * ```
 * source:     --a--#               (# = TripWire { retry: true })
 * budget 1:   --a----a--b--|       (one resubscription)
 * no budget:  --a--#
 * ```
 *
 * @example
 * ```ts
 * import { createRunContext, retryOnTripwire } from 'rxagent/operators';
 * const ctx = createRunContext({ maxProcessorRetries: 2 });
 * step$.pipe(retryOnTripwire(ctx)).subscribe();
 * ```
 */
export function retryOnTripwire<T>(ctx?: RunContext, options: RetryOnTripwireOptions = {}): MonoTypeOperatorFunction<T> {
  return (source) =>
    defer(() => {
      const context = ctx ?? createRunContext();
      return source.pipe(
        retry({
          delay(error: unknown) {
            const budget = context.maxProcessorRetries;
            if (
              !TripWire.isInstance(error) ||
              !error.retry ||
              budget === undefined ||
              context.retryCount >= budget ||
              options.shouldRetry?.(error) === false
            ) {
              return throwError(() => error);
            }
            if (context.abortSignal.aborted) return throwError(() => error);
            context.retryCount++;
            context.retryFeedback = error.reason;
            options.onRetry?.(error, context.retryCount);
            return of(true);
          },
        }),
      );
    });
}
