import { isObservable, Observable, type OperatorFunction, type Subscription } from 'rxjs';
import type { ChunkType } from '../contract/chunk-types.js';
import type { Processor, ProcessorLike } from '../contract/processor-types.js';
import { asProcessors } from '../contract/processor-types.js';
import { runMachineryOf } from './internal/run-machinery.js';
import { sharedStreamChain } from './internal/shared-stream-chain.js';
import type { InjectedChunk, PassResult, SharedStreamChain, StreamChain, SuspendedPass } from './internal/stream-chain-types.js';
import { isSuspendedPass } from './internal/stream-chain.js';
import type { DemandGate } from '../contract/demand-gate.js';
import { createRunContext, type RunContext } from './run-context.js';

/** Queue lengths at which the run's demand gate is held, and released again. */
const QUEUE_HIGH = 16;
const QUEUE_LOW = 8;

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
export function processOutputStream(list: readonly ProcessorLike[], ctx?: RunContext): OperatorFunction<ChunkType, ChunkType> {
  const processors = asProcessors(list);
  return (source) =>
    new Observable<ChunkType>((subscriber) => {
      const pass = openOutputStream(processors, ctx ?? createRunContext(), subscriber);
      if (pass === undefined) return source.subscribe(subscriber);
      // Registered before subscribing: a consumer that unsubscribes while a synchronous source is
      // still emitting (take(1), takeUntil…) stops the hooks at once, not after the source ran out.
      // The pass is the observer of the source and the teardown (its `unsubscribe` is `close`).
      subscriber.add(pass);
      return source.subscribe(pass);
    });
}

/** Where an {@link OutputStreamPass} delivers: a `Subscriber`, or the loop's fused step output. */
export interface OutputSink {
  next(chunk: ChunkType): void;
  error(error: unknown): void;
  complete(): void;
}

/**
 * The state of one subscription of {@link processOutputStream} without the Observable around it:
 * the loop's step output (`model-output.ts`) feeds it chunks straight from the model read, one
 * function call per chunk instead of a subscriber hop on each side. `undefined` when no processor
 * has the hook (every chunk passes as it is).
 *
 * @example
 * ```ts
 * const pass = openOutputStream(processors, ctx, subscriber);
 * pass?.push(chunk);
 * ```
 */
export function openOutputStream(processors: readonly Processor[], context: RunContext, sink: OutputSink): OutputStreamPass | undefined {
  const shared = sharedStreamChain(processors, context);
  if (shared.chain.length === 0) return undefined;
  return new OutputStreamPass(shared, runMachineryOf(context).demand, sink);
}

/**
 * Chunks in order through the chain (see {@link processOutputStream}): synchronous results go out
 * at once; behind an async hook chunks queue (the run's demand gate held from 16 queued chunks,
 * released below 8); a source error waits for the chunks before it.
 */
export class OutputStreamPass {
  readonly #chain: StreamChain;
  readonly #sink: OutputSink;
  readonly #demand: DemandGate;
  readonly #injected: InjectedChunk[] = [];
  readonly #queue: ChunkType[] = [];
  #holding = false;
  #busy = false;
  #sourceDone = false;
  /** A source error that arrived while chunks before it were still being processed. */
  #sourceError: { error: unknown } | undefined;
  #closed = false;
  /** The chunk in flight through a hook that returned an Observable (unsubscribed on teardown). */
  #pending: Subscription | undefined;

  constructor(shared: SharedStreamChain, demand: DemandGate, sink: OutputSink) {
    this.#chain = shared.chain;
    this.#demand = demand;
    this.#sink = sink;
    shared.target = this;
  }

  /** A chunk a processor wrote with `writer.custom()`: it re-enters the chain after the current item. */
  inject(item: InjectedChunk): void {
    this.#injected.push(item);
  }

  /** {@link push}: the pass is an observer of the source as it is. */
  next(chunk: ChunkType): void {
    this.push(chunk);
  }

  /** A chunk from the source. */
  push(chunk: ChunkType): void {
    if (this.#closed) return;
    if (this.#busy || this.#queue.length > 0) {
      this.#queue.push(chunk);
      if (!this.#holding && this.#queue.length >= QUEUE_HIGH) {
        this.#holding = true;
        this.#demand.hold(this);
      }
      return;
    }
    const suspended = this.#process(chunk, 0);
    if (suspended !== undefined) void this.#awaitHooks(suspended);
    else if (this.#injected.length > 0) this.#drain();
  }

  /** The source failed: in order, like `complete` — the verdict on the chunks before it comes first. */
  error(error: unknown): void {
    if (this.#closed) return;
    // an async hook's throw is not lost to a later provider error
    if (this.#busy || this.#queue.length > 0) this.#sourceError = { error };
    else this.#fail(error);
  }

  /** The source completed: the sink completes once the queue is through. */
  complete(): void {
    this.#sourceDone = true;
    if (!this.#busy && this.#queue.length === 0) this.#drain();
  }

  /** {@link close}: the pass is a teardown a `Subscriber` takes as it is. */
  unsubscribe(): void {
    this.close();
  }

  /** Teardown: no hook runs any more, a pending Observable hook is unsubscribed, the gate released. */
  close(): void {
    this.#closed = true;
    this.#pending?.unsubscribe();
    if (this.#holding) {
      this.#holding = false;
      this.#demand.release(this);
    }
  }

  #fail(error: unknown): void {
    this.#closed = true;
    this.#sink.error(error);
  }

  #settled(resolved: ChunkType | null): void {
    this.#busy = false;
    if (this.#closed) return;
    if (resolved !== null) this.#sink.next(resolved);
    this.#drain();
  }

  /** Processes one item: out at once, or later (busy); a pass stopped at a hook's promise is returned, for the caller to await. */
  #process(chunk: ChunkType, from: number): SuspendedPass | undefined {
    let result: PassResult;
    try {
      result = this.#chain.run(chunk, from);
    } catch (error) {
      this.#fail(error);
      return undefined;
    }
    if (result === chunk || result === null) {
      // the common case (every processor passed the chunk on, or one dropped it): no suspension or Observable check
      if (result !== null) this.#sink.next(result);
      return undefined;
    }
    return this.#deliver(result);
  }

  /** What a pass gave: a chunk goes out; a suspended pass is returned (busy); an Observable is followed (busy). */
  #deliver(result: PassResult): SuspendedPass | undefined {
    if (result === null) return undefined;
    if (isSuspendedPass(result)) {
      this.#busy = true;
      return result;
    }
    if (isObservable(result)) {
      // A hook returned an Observable that had not settled (a scheduler-timed delay): its one
      // value continues like a resolved promise, on the Observable's own (maybe virtual) time.
      this.#busy = true;
      let settled = false;
      const subscription = result.subscribe({
        next: (resolved) => {
          settled = true;
          this.#settled(resolved);
        },
        error: (error: unknown) => {
          settled = true;
          this.#failBehindHook(error);
        },
      });
      if (!settled) this.#pending = subscription;
      return undefined;
    }
    this.#sink.next(result);
    return undefined;
  }

  /**
   * Behind a hook's promise: awaits it, then {@link #resumed} runs the rest of the pass and the items
   * that waited meanwhile — in this one async call for as long as hooks keep returning promises (one
   * `await` per async hook call; no promise or callback of the pass per chunk).
   */
  async #awaitHooks(first: SuspendedPass): Promise<void> {
    let suspended: SuspendedPass | undefined = first;
    while (suspended !== undefined) {
      let resolved: unknown;
      try {
        resolved = await suspended.pending;
      } catch (thrown) {
        this.#failBehindHook(this.#chain.rejected(suspended, thrown));
        return;
      }
      suspended = this.#resumed(suspended, resolved);
    }
  }

  /** The hook `suspended` waited for resolved: the rest of its pass, then the waiting items; returns the next pass that stopped at a hook's promise. */
  #resumed(suspended: SuspendedPass, resolved: unknown): SuspendedPass | undefined {
    let result: PassResult;
    try {
      result = this.#chain.resume(suspended, resolved);
    } catch (error) {
      this.#failBehindHook(error);
      return undefined;
    }
    this.#busy = false;
    // torn down meanwhile: the pass goes on to its end (its hooks' calls settle), but nothing more goes out
    if (this.#closed) return isSuspendedPass(result) ? result : undefined;
    return this.#deliver(result) ?? this.#drainItems();
  }

  /** A hook that was awaited failed (or a hook after it threw): the run fails unless it was torn down meanwhile. */
  #failBehindHook(error: unknown): void {
    this.#busy = false;
    if (!this.#closed) this.#fail(error);
  }

  /** Processes waiting items (injected ones first) while they pass synchronously; returns a pass that stopped at a hook's promise. */
  #drainItems(): SuspendedPass | undefined {
    while (!this.#busy && !this.#closed) {
      const item = this.#injected.shift();
      if (item !== undefined) {
        const suspended = this.#process(item.chunk, item.from);
        if (suspended !== undefined) return suspended;
        continue;
      }
      const next = this.#queue.shift();
      if (this.#holding && this.#queue.length < QUEUE_LOW) {
        this.#holding = false;
        this.#demand.release(this);
      }
      if (next === undefined) {
        if (this.#sourceError !== undefined) this.#fail(this.#sourceError.error);
        else if (this.#sourceDone) {
          this.#closed = true;
          this.#sink.complete();
        }
        return undefined;
      }
      const suspended = this.#process(next, 0);
      if (suspended !== undefined) return suspended;
    }
    return undefined;
  }

  #drain(): void {
    const suspended = this.#drainItems();
    if (suspended !== undefined) void this.#awaitHooks(suspended);
  }
}
