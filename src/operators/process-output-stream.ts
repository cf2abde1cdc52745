import { isObservable, Observable, type OperatorFunction, type Subscription } from 'rxjs';
import type { ChunkType } from '../contract/chunk-types.js';
import type { Processor } from '../contract/processor-types.js';
import { isPromiseLike } from '../contract/maybe-async.js';
import { runMachineryOf } from './internal/run-machinery.js';
import { createStreamChain } from './internal/stream-chain.js';
import type { InjectedChunk, SharedStreamChain } from './internal/stream-chain-types.js';
import { createRunContext, type RunContext } from './run-context.js';

/** Queue lengths at which the run's demand gate is held, and released again. */
const QUEUE_HIGH = 16;
const QUEUE_LOW = 8;

/**
 * One chain per run context and processor array — kept by the context — so `state` args,
 * `streamParts` and the reusable args objects live for the whole run even when the loop subscribes
 * once per step, and two runs never share one.
 */
function sharedStreamChain(processors: readonly Processor[], context: RunContext): SharedStreamChain {
  const chains = runMachineryOf(context).streamChains;
  let shared = chains.get(processors);
  if (shared === undefined) {
    const created: SharedStreamChain = {
      chain: createStreamChain(processors, context, (item) => created.inject(item)),
      inject: () => undefined,
    };
    shared = created;
    chains.set(processors, shared);
  }
  return shared;
}

/**
 * Runs every chunk through the processors' `processOutputStream` hooks, in order, one chunk at a
 * time. A hook returning `null`/`undefined` drops the chunk for the rest of the chain; `data-*`
 * chunks reach only processors with `processDataParts: true`; `writer.custom()` chunks are
 * emitted right after the chunk being processed, having passed the processors after the writer.
 * Synchronous hooks cost no promise and run on virtual time; async hooks are awaited in order
 * (chunks arriving meanwhile wait their turn; from 16 waiting chunks on, the run's demand gate is
 * held so the agent loop stops reading the provider until the queue drains below 8). A hook may
 * return an Observable: its first value is the result (empty: dropped, like `undefined`), on the
 * Observable's own scheduler — `of(part).pipe(delay(10))` takes 10 virtual frames in a marble test.
 * `abort()` errors the stream with the `TripWire`; any other throw errors it with a `ProcessorError`.
 *
 * ```
 * source:  --a--b--c--|
 * drop b:  --a-----c--|
 * abort c: --a--b--#        (# = TripWire { processorId })
 * delay 2: --a--b--c--|     hook: ({ part }) => of(part).pipe(delay(2))
 * result:  ----a--b--c|
 * ```
 *
 * @example
 * ```ts
 * import { processOutputStream } from 'rxagent/operators';
 * chunks$.pipe(processOutputStream([new WordCounter(), redactor], ctx)).subscribe((chunk) => send(chunk));
 * ```
 */
export function processOutputStream(processors: readonly Processor[], ctx?: RunContext): OperatorFunction<ChunkType, ChunkType> {
  return (source) =>
    new Observable<ChunkType>((subscriber) => {
      const context = ctx ?? createRunContext();
      const injected: InjectedChunk[] = [];
      const shared = sharedStreamChain(processors, context);
      if (shared.chain.length === 0) return source.subscribe(subscriber);
      const chain = shared.chain;
      shared.inject = (item) => injected.push(item);

      const queue: ChunkType[] = [];
      const demand = runMachineryOf(context).demand;
      const holder = {};
      let holding = false;
      let busy = false;
      let sourceDone = false;
      /** A source error that arrived while chunks before it were still being processed. */
      let sourceError: { error: unknown } | undefined;
      let closed = false;
      /** The chunk in flight through a hook that returned an Observable (unsubscribed on teardown). */
      let pending: Subscription | undefined;

      const fail = (error: unknown): void => {
        closed = true;
        subscriber.error(error);
      };

      /** Processes one item; returns true when it finished synchronously. */
      const process = (chunk: ChunkType, from: number): boolean => {
        let result: ReturnType<typeof chain.run>;
        try {
          result = chain.run(chunk, from);
        } catch (error) {
          fail(error);
          return true;
        }
        if (isPromiseLike<ChunkType | null>(result)) {
          busy = true;
          Promise.resolve(result).then(
            (resolved) => {
              busy = false;
              if (closed) return;
              if (resolved !== null) subscriber.next(resolved);
              drain();
            },
            (error: unknown) => {
              busy = false;
              if (!closed) fail(error);
            },
          );
          return false;
        }
        if (isObservable(result)) {
          // A hook returned an Observable that had not settled (a scheduler-timed delay): its one
          // value continues like a resolved promise, on the Observable's own (maybe virtual) time.
          busy = true;
          let settled = false;
          const subscription = result.subscribe({
            next: (resolved) => {
              settled = true;
              busy = false;
              if (closed) return;
              if (resolved !== null) subscriber.next(resolved);
              drain();
            },
            error: (error: unknown) => {
              settled = true;
              busy = false;
              if (!closed) fail(error);
            },
          });
          if (!settled) pending = subscription;
          return false;
        }
        if (result !== null) subscriber.next(result);
        return true;
      };

      const drain = (): void => {
        while (!busy && !closed) {
          const item = injected.shift();
          if (item !== undefined) {
            process(item.chunk, item.from);
            continue;
          }
          const next = queue.shift();
          if (holding && queue.length < QUEUE_LOW) {
            holding = false;
            demand.release(holder);
          }
          if (next === undefined) {
            if (sourceError !== undefined) {
              fail(sourceError.error);
              return;
            }
            if (sourceDone) {
              closed = true;
              subscriber.complete();
            }
            return;
          }
          process(next, 0);
        }
      };

      // Registered before subscribing: a consumer that unsubscribes while a synchronous source is
      // still emitting (take(1), takeUntil…) stops the hooks at once, not after the source ran out.
      subscriber.add(() => {
        closed = true;
      });
      const subscription = source.subscribe({
        next(chunk) {
          if (closed) return;
          if (busy || queue.length > 0) {
            queue.push(chunk);
            if (!holding && queue.length >= QUEUE_HIGH) {
              holding = true;
              demand.hold(holder);
            }
            return;
          }
          if (process(chunk, 0) && injected.length > 0) drain();
        },
        error(error) {
          if (closed) return;
          // In order, like `complete`: the verdict on the chunks before the error (an abort, a
          // processor error) comes first — an async hook's throw is not lost to a later provider error.
          if (busy || queue.length > 0) sourceError = { error };
          else fail(error);
        },
        complete() {
          sourceDone = true;
          if (!busy && queue.length === 0) drain();
        },
      });
      return () => {
        closed = true;
        pending?.unsubscribe();
        if (holding) {
          holding = false;
          demand.release(holder);
        }
        subscription.unsubscribe();
      };
    });
}
