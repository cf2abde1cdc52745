/** Web streams ↔ Observables, with cancellation passed through both ways. */
import { Observable, type Subscription } from 'rxjs';

/**
 * A `ReadableStream` fed by a subscription made when the stream starts. Cancelling the stream
 * (or its reader) unsubscribes; the source's completion closes it. `encode` maps each value to
 * zero or more outputs; `onError`/`onComplete` may add final outputs before the stream closes.
 */
export function observableToReadable<T, R>(
  source: Observable<T>,
  handlers: {
    encode: (value: T) => readonly R[];
    onError?: (error: unknown) => readonly R[];
    onComplete?: () => readonly R[];
    /** True once nothing more may be written (the stream closes after the current outputs). */
    done?: () => boolean;
  },
): ReadableStream<R> {
  let subscription: Subscription | undefined;
  let closed = false;
  return new ReadableStream<R>({
    start(controller) {
      const close = (): void => {
        if (closed) return;
        closed = true;
        controller.close();
        subscription?.unsubscribe();
      };
      const write = (values: readonly R[]): void => {
        for (const value of values) controller.enqueue(value);
      };
      subscription = source.subscribe({
        next(value) {
          if (closed) return;
          try {
            write(handlers.encode(value));
          } catch (error) {
            closed = true;
            controller.error(error);
            subscription?.unsubscribe();
            return;
          }
          if (handlers.done?.() === true) close();
        },
        error(error: unknown) {
          if (closed) return;
          write(handlers.onError?.(error) ?? []);
          if (handlers.onError === undefined) {
            closed = true;
            controller.error(error);
            return;
          }
          close();
        },
        complete() {
          if (closed) return;
          write(handlers.onComplete?.() ?? []);
          close();
        },
      });
      if (closed) subscription.unsubscribe();
    },
    cancel() {
      closed = true;
      subscription?.unsubscribe();
    },
  });
}

/**
 * A cold Observable of a `ReadableStream`'s values: subscribing reads it; unsubscribing before the
 * end cancels the reader (which cancels the stream and, for a provider stream, the request).
 */
export function readableToObservable<T>(stream: ReadableStream<T>): Observable<T> {
  return new Observable<T>((subscriber) => {
    const reader = stream.getReader();
    let finished = false;
    const fail = (error: unknown): void => {
      finished = true;
      subscriber.error(error);
    };
    const pump = (): void => {
      // `Promise.resolve` also tolerates a broken reader whose read() returns no promise
      Promise.resolve()
        .then(() => reader.read())
        .then(({ done, value }) => {
          if (subscriber.closed) return;
          if (done) {
            finished = true;
            subscriber.complete();
            return;
          }
          subscriber.next(value);
          pump();
        })
        .catch((error: unknown) => {
          if (!subscriber.closed) fail(error);
        });
    };
    pump();
    return () => {
      if (finished) return;
      try {
        reader.cancel().catch(() => undefined);
      } catch {
        // a reader whose cancel throws: nothing more to release
      }
    };
  });
}
