/**
 * Observables → web streams, with cancellation passed back. (A provider's stream is read the other way by
 * the model seam: `streamResultParts`, which checks every part.)
 */
import { Observable, type Subscription } from 'rxjs';
import type { DemandGate } from '../../contract/index.js';

/**
 * A `ReadableStream` fed by a subscription made when the stream starts. Cancelling the stream
 * (or its reader) unsubscribes; the source's completion closes it. `encode` maps each value to
 * zero or more outputs; `onError`/`onComplete` may add final outputs before the stream closes.
 *
 * With `demand` (the gate the run behind `source` reads its provider by), the stream holds the gate
 * while its queue is full (`highWaterMark` outputs, default 16) and releases it when the reader
 * pulls: the run reads its provider only as fast as this stream is read.
 */
export function observableToReadable<T, R>(
  source: Observable<T>,
  handlers: {
    encode: (value: T) => readonly R[];
    onError?: (error: unknown) => readonly R[];
    onComplete?: () => readonly R[];
    /** True once nothing more may be written (the stream closes after the current outputs). */
    done?: () => boolean;
    /** The run's demand gate: held while the queue is full. */
    demand?: DemandGate;
    /** Queue size at which the demand gate is held. Default 16. */
    highWaterMark?: number;
  },
): ReadableStream<R> {
  let subscription: Subscription | undefined;
  let closed = false;
  const demand = handlers.demand;
  let holding = false;
  const holder = {};
  const release = (): void => {
    if (!holding) return;
    holding = false;
    demand?.release(holder);
  };
  return new ReadableStream<R>(
    {
      start(controller) {
        const close = (): void => {
          if (closed) return;
          closed = true;
          release();
          controller.close();
          subscription?.unsubscribe();
        };
        const write = (values: readonly R[]): void => {
          for (const value of values) controller.enqueue(value);
        };
        const observer = {
          next(value: T): void {
            if (closed) return;
            try {
              write(handlers.encode(value));
            } catch (error) {
              closed = true;
              release();
              controller.error(error);
              subscription?.unsubscribe();
              return;
            }
            if (handlers.done?.() === true) close();
            else if (!holding && demand !== undefined && (controller.desiredSize ?? 1) <= 0) {
              holding = true;
              demand.hold(holder);
            }
          },
          error(error: unknown): void {
            if (closed) return;
            write(handlers.onError?.(error) ?? []);
            if (handlers.onError === undefined) {
              closed = true;
              release();
              controller.error(error);
              return;
            }
            close();
          },
          complete(): void {
            if (closed) return;
            write(handlers.onComplete?.() ?? []);
            close();
          },
        };
        subscription = source.subscribe(observer);
        if (closed) subscription.unsubscribe();
      },
      pull() {
        release();
      },
      cancel() {
        closed = true;
        release();
        subscription?.unsubscribe();
      },
    },
    { highWaterMark: handlers.highWaterMark ?? 16 },
  );
}
