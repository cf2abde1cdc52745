/**
 * A model call as a cold Observable: `callModel` calls the V4 model's `doStream` on subscribe and
 * emits the call's events (`call-info`, then the provider's parts); `streamModel` is the same call
 * as plain V4 parts. Behind the Observable of the web-stream path sits the read itself
 * (`liveReadOf`): the step-output kernel reads the provider's stream straight into its own sink.
 */
import { catchError, defer, filter, from, map, mergeMap, Observable, takeWhile, tap, throwError } from 'rxjs';
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { onceOpen, type DemandGate } from '../contract/demand-gate.js';
import { getObservableStream, observableMaxHeld, type ObservableStreamFunction } from './observable-stream.js';
import { callMetadataOf, cancelQuietly, checkedObservable, checkedPart, checkedRead, checkedValue, invalidResponse, providerFailure, readerOf, streamOf } from './checked-stream.js';
import type { CallInfo, ModelEvent } from './model-events.js';
import { CallAbort } from './internal/call-abort.js';
import { afterDueTimers, clock, EventLoopTurns, nextTurn, PARTS_PER_LOOK } from './internal/event-loop-turns.js';
import { pacedCall } from './internal/paced-call.js';

/**
 * What {@link streamModel} reports once per call, before the first part is emitted: the
 * request/response metadata `doStream` returned and the warnings of a leading `stream-start`.
 *
 * @example
 * ```ts
 * const onResponse = (meta: ModelResponseMeta) => console.log(meta.response?.headers);
 * ```
 */
export interface ModelResponseMeta {
  request?: { url?: string; body?: unknown };
  response?: { headers?: Record<string, string> };
  warnings?: unknown[];
}

/**
 * Where a model call's events go: a `Subscriber` is one; the step-output kernel's part sink is
 * another. `closed` is read after every wait: once it is true, no further part is read.
 *
 * @example
 * ```ts
 * const sink: PartSink<ModelEvent> = { closed: false, next: console.log, error: console.error, complete: () => undefined };
 * ```
 */
export interface PartSink<T> {
  readonly closed: boolean;
  next(value: T): void;
  error(error: unknown): void;
  complete(): void;
}

/** Starts the web-stream read of a call into `sink`; the result is the read's teardown. */
export type LiveRead = (sink: PartSink<ModelEvent>) => ModelRead;

/** Property key of the read behind a {@link callModel} Observable (see {@link liveReadOf}). */
const LIVE_READ: unique symbol = Symbol('rxagent.model.liveRead');

/** A model call Observable whose web-stream read can also be started without a subscriber. */
type LiveCall = Observable<ModelEvent> & { readonly [LIVE_READ]: LiveRead };

/** How long a stream may take to close after its `finish` before it is cancelled. */
export const FINISH_GRACE_MS = 1000;

/** How many parts a stream may send after its `finish` before it is cancelled. */
const MAX_PARTS_AFTER_FINISH = 100;

/**
 * How long a web-stream read keeps the event loop before it gives it a turn (`setImmediate`), so
 * that timers (an `AbortSignal.timeout`) and I/O run while a stream whose reads are always ready is
 * read (a stream that waits for its provider pays one macrotask hop per slice at most).
 */
export const READ_SLICE_MS = 8;

/**
 * How long a model's `OBSERVABLE_STREAM` may emit without the event loop taking a turn. Its
 * emissions cannot be paused: past this the call is cut, and once due timers ran (the run's
 * abort wins) it fails with an `InvalidModelResponseError`.
 */
export const OBSERVABLE_TURN_MS = 2000;

/**
 * How many parts of a model's `OBSERVABLE_STREAM` may wait at the seam while the run's demand gate
 * is held, unless the model sets its own (`OBSERVABLE_STREAM_MAX_HELD`): past this the call fails
 * with an `InvalidModelResponseError` naming the limit (an Observable cannot be paused, and a
 * consumer that never reads must not make the run hold everything it sends).
 */
export const DEFAULT_OBSERVABLE_MAX_HELD = 10_000;

/**
 * After `finish` the call is over for the run; the rest of the stream is read and dropped so that
 * it closes as it would (a wrapper's `flush` runs: cancelling at `finish` would skip it). A stream
 * that does not close within {@link FINISH_GRACE_MS}, or sends more than
 * {@link MAX_PARTS_AFTER_FINISH} parts, is cancelled. Nothing it does reaches the run.
 */
function drainAfterFinish(reader: ReadableStreamDefaultReader<unknown>): void {
  let parts = 0;
  const stop = (): void => {
    clearTimeout(timer);
    cancelQuietly(reader);
  };
  const timer = setTimeout(stop, FINISH_GRACE_MS);
  (timer as { unref?: () => void }).unref?.();
  const next = (): void => {
    if (++parts > MAX_PARTS_AFTER_FINISH) {
      stop();
      return;
    }
    let pending: unknown;
    try {
      pending = reader.read();
    } catch {
      stop();
      return;
    }
    Promise.resolve(pending).then(
      (result: unknown) => {
        let done = true;
        try {
          done = typeof result !== 'object' || result === null || (result as { done?: unknown }).done === true;
        } catch {
          // a result that cannot be read ends the drain
        }
        if (done) clearTimeout(timer);
        else next();
      },
      () => clearTimeout(timer),
    );
  };
  next();
}

/**
 * One `doStream` call read into its sink, one part at a time: read → check → `next` → read again,
 * no read while `demand` is closed or once `sink.closed`; reads that are always ready give the
 * event loop a turn every {@link READ_SLICE_MS} (timers — the caller's `AbortSignal.timeout` —
 * and I/O run in between). `read` reads the result of a call someone else made. The call ends at its first `finish` (what
 * follows is dropped, see {@link drainAfterFinish}) or when the stream closes. `unsubscribe` (the
 * teardown) cancels the reader and aborts the call's signal before the end. Nothing a provider
 * does becomes an unhandled rejection: a thrown `doStream`, a broken result, a read error or a
 * malformed part is the sink's `error` (see `partProblem` for what a part is checked for).
 */
export class ModelRead {
  readonly #abort: CallAbort | undefined;
  #finished = false;
  #reader: ReadableStreamDefaultReader<LanguageModelV4StreamPart> | undefined;
  /** While the read waits for the demand gate: what makes the gate forget the wait. */
  #forgetWait: (() => void) | undefined;

  /**
   * `options`: the call's (`pump` calls `doStream` with them, under the call's own signal);
   * `undefined` for a call someone else already made (`read` its result).
   */
  constructor(
    private readonly model: LanguageModelV4,
    options: LanguageModelV4CallOptions | undefined,
    private readonly demand: DemandGate | undefined,
    private readonly sink: PartSink<ModelEvent>,
  ) {
    this.#abort = options === undefined ? undefined : new CallAbort(options);
  }

  /**
   * Calls `doStream` and reads its parts into the sink. Never rejects; settles unless the read is cut
   * while it waits for the demand gate (then nothing holds it: it is collected unsettled).
   */
  async pump(): Promise<void> {
    const { model } = this;
    let result: unknown;
    try {
      result = await model.doStream((this.#abort as CallAbort).callOptions);
    } catch (error) {
      this.#fail(providerFailure(model, error));
      return;
    }
    // returned, not awaited: this call's frame is let go while the read runs (≈ 0.4 KB of each
    // in-flight stream's memory, bench/README.md)
    return this.read(result);
  }

  /**
   * Reads the parts of `result` (what `doStream` resolved with) into the sink: `call-info`, then
   * the parts, each checked. Never rejects.
   */
  async read(result: unknown): Promise<void> {
    const { model, sink, demand } = this;
    let reader: ReadableStreamDefaultReader<LanguageModelV4StreamPart> | undefined;
    let info: CallInfo;
    try {
      const stream = streamOf<LanguageModelV4StreamPart>(result, model);
      if (sink.closed) {
        cancelQuietly(stream);
        return;
      }
      reader = readerOf(stream, model);
      info = { type: 'call-info', ...callMetadataOf(result as object, model, 'doStream()') };
    } catch (error) {
      cancelQuietly(reader, error);
      this.#fail(error);
      return;
    }
    this.#reader = reader;
    // the read's time slice (see READ_SLICE_MS), in locals (a slice object measured ≈ 0.2 KB more
    // of each in-flight stream's memory): parts since the last look at the clock, when the slice
    // began (-1: at the next look), whether it is over (the loop is owed a turn)
    let partsSinceLook = 0;
    let sliceStart = -1;
    let turnOwed = false;
    try {
      sink.next(info);
      while (!sink.closed) {
        const held = demand !== undefined && !demand.open;
        if (held || turnOwed) {
          // one place the read waits: for the demand gate — forgotten when the call is cut
          // (unsubscribe), so a dropped run is not kept by a held gate — or for the loop's turn
          turnOwed = false;
          await (held
            ? new Promise<void>((resolve) => {
                this.#forgetWait = onceOpen(demand, resolve);
              })
            : nextTurn());
          this.#forgetWait = undefined;
          if (sink.closed) return;
          continue;
        }
        const next = checkedRead<LanguageModelV4StreamPart>(await reader.read(), model);
        if (sink.closed) return;
        if (next.done) {
          this.#end();
          return;
        }
        const part = checkedPart(next.value, model);
        sink.next(part);
        if (part.type === 'finish') {
          if (this.#finished) return; // the sink left at the finish (the teardown cancelled the reader)
          drainAfterFinish(reader);
          this.#end();
          return;
        }
        // reads that are always ready never leave the microtask queue: give timers and I/O a turn
        if (++partsSinceLook === PARTS_PER_LOOK) {
          partsSinceLook = 0;
          const now = clock();
          if (sliceStart < 0) sliceStart = now;
          else if (now - sliceStart >= READ_SLICE_MS) {
            sliceStart = -1;
            turnOwed = true;
          }
        }
      }
    } catch (error) {
      // a read error or a malformed part ends this call
      if (!sink.closed) {
        this.#fail(providerFailure(model, error));
        cancelQuietly(reader, error);
      }
    }
  }

  /** The call ended: its signal no longer follows the caller's, the sink completes. */
  #end(): void {
    this.#finished = true;
    this.#abort?.release();
    if (!this.sink.closed) this.sink.complete();
  }

  #fail(error: unknown): void {
    if (this.sink.closed) return;
    this.#finished = true;
    this.#abort?.release();
    this.sink.error(error);
  }

  /** The teardown: before the end, cancels the reader and aborts the call's signal. */
  unsubscribe(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#forgetWait?.();
    cancelQuietly(this.#reader);
    this.#abort?.cut();
  }
}

/** Starts reading one `doStream` call into `sink`; returns its teardown. */
function readModelStream(model: LanguageModelV4, options: LanguageModelV4CallOptions, demand: DemandGate | undefined, sink: PartSink<ModelEvent>): ModelRead {
  const read = new ModelRead(model, options, demand, sink);
  void read.pump();
  return read;
}

/** Thrown inside the check of an `OBSERVABLE_STREAM` call that keeps the event loop to itself (compared by identity: an error may be a Proxy). */
const STARVED: unique symbol = Symbol('rxagent.model.starved');

/**
 * A virtual-time model's own Observable, its parts checked as a web stream's are (a value that is
 * not a part, `partProblem`), ending at its first `finish` (what follows is dropped), its errors as
 * `ModelRead` passes them on (`providerFailure`), its parts handed on only while `demand` is open
 * (what it sends while the gate is held waits at the seam, `pacedCall`), its teardown aborting the
 * call's signal when cut short. An Observable that emits for {@link OBSERVABLE_TURN_MS} without the
 * event loop taking a turn is unsubscribed; once due timers ran it fails with an
 * `InvalidModelResponseError`. One that sends more than {@link DEFAULT_OBSERVABLE_MAX_HELD} parts
 * (or the model's `OBSERVABLE_STREAM_MAX_HELD`) while the gate is held fails with one naming it.
 */
function observableCall(model: LanguageModelV4, stream: ObservableStreamFunction, options: LanguageModelV4CallOptions, demand: DemandGate | undefined): Observable<ModelEvent> {
  return defer(() => {
    // read once per call: a bad value fails this call (its error notification), before the source runs
    const maxHeld = observableMaxHeld(model, DEFAULT_OBSERVABLE_MAX_HELD);
    const abort = new CallAbort(options);
    const turns = new EventLoopTurns(OBSERVABLE_TURN_MS);
    return defer(() => checkedObservable(stream(abort.callOptions), model)).pipe(
      map((value) => {
        const part = checkedPart(checkedValue<LanguageModelV4StreamPart>(value, model), model);
        if (turns.starved()) throw STARVED;
        return part;
      }),
      takeWhile((part) => part.type !== 'finish', true),
      catchError((error: unknown) => {
        if (error !== STARVED) return throwError(() => providerFailure(model, error));
        // the source is stopped, the call cut short (its signal tells the model so); a run's abort
        // that came due while the loop was starved ends the run first
        abort.cut();
        const problem = `its stream emitted for ${OBSERVABLE_TURN_MS} ms without the event loop taking a turn (no timer, I/O or abort could run).`;
        return from(afterDueTimers()).pipe(mergeMap(() => throwError(() => invalidResponse(model, problem))));
      }),
      // handed on while the run's demand gate is open; the call's signal let go at its end, cut before
      pacedCall(abort, demand, {
        limit: maxHeld,
        error: () => invalidResponse(model, `its stream sent more than OBSERVABLE_STREAM_MAX_HELD (${maxHeld} parts) while the run's consumer was not reading (an Observable cannot be paused): the call is cut.`),
      }),
    );
  });
}

/**
 * One model call as a cold Observable of its events: on subscribe the call starts; `call-info`
 * (the metadata `doStream` resolved with), then the provider's V4 parts, read one at a time while
 * `demand` is open; the call completes at its first `finish` (the rest of the stream is dropped)
 * or when the stream closes; unsubscribing before the end aborts the call's signal and cancels the
 * reader. A thrown `doStream` or a read error is the error notification, unchanged (e.g. the
 * provider's `APICallError`) unless it cannot be written as JSON; a malformed part is an
 * `InvalidModelResponseError` (see `partProblem`). A model with an `OBSERVABLE_STREAM` function is
 * streamed through it instead (virtual time in marble tests), its parts checked, paced by `demand`
 * and cut at `finish` the same way (no `call-info`).
 *
 * ```
 * provider:  --a--b--|
 * result:    i-a--b--|        (i = call-info)
 * ```
 *
 * @example
 * ```ts
 * callModel(model, { prompt }).subscribe((event) => console.log(event.type));
 * ```
 */
export function callModel(model: LanguageModelV4, options: LanguageModelV4CallOptions, demand?: DemandGate): Observable<ModelEvent> {
  const observable = getObservableStream(model);
  if (observable !== undefined) return observableCall(model, observable, options, demand);
  const read: LiveRead = (sink) => readModelStream(model, options, demand, sink);
  const call$ = new Observable<ModelEvent>((subscriber) => read(subscriber));
  return Object.assign(call$, { [LIVE_READ]: read }) as LiveCall;
}

/**
 * The V4 parts of a `doStream` result the caller already has (the AI SDK called `doStream` for
 * `processorsMiddleware`), read as {@link callModel} reads a call's: each part checked (a
 * malformed one is an `InvalidModelResponseError`, see `partProblem`), the parts end at the first
 * `finish` (the rest is drained and dropped), always-ready reads give the event loop a turn every
 * {@link READ_SLICE_MS}; unsubscribing before the end cancels the reader. No `call-info`.
 *
 * ```
 * stream:  --a--f--x--|
 * result:  --a--f|          (f = finish; x is read and dropped)
 * ```
 *
 * @example
 * ```ts
 * const parts$ = streamResultParts(model, await model.doStream(options));
 * ```
 */
export function streamResultParts(model: LanguageModelV4, result: unknown): Observable<LanguageModelV4StreamPart> {
  const events$ = new Observable<ModelEvent>((subscriber) => {
    const read = new ModelRead(model, undefined, undefined, subscriber);
    void read.read(result);
    return read;
  });
  return events$.pipe(filter((event): event is LanguageModelV4StreamPart => event.type !== 'call-info' && event.type !== 'replayed-chunk'));
}

/**
 * The web-stream read behind a {@link callModel} Observable (undefined for any other Observable):
 * the step-output kernel starts it with its own sink instead of subscribing, one hop per part less.
 * Same events, same teardown.
 */
export function liveReadOf(events$: Observable<ModelEvent>): LiveRead | undefined {
  return (events$ as Partial<LiveCall>)[LIVE_READ];
}

/**
 * A V4 model's `doStream` as a cold Observable of its stream parts (see {@link callModel}); the
 * call's metadata and the warnings of a leading `stream-start` go to `onResponse`, once, before the
 * first part.
 *
 * ```
 * provider:  --a--b--c--|        subscriber: ^-----!
 * result:    --a--b--c--|        result:     --a--b (signal aborted, reader cancelled)
 * ```
 *
 * @example
 * ```ts
 * streamModel(model, { prompt: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }] })
 *   .subscribe((part) => console.log(part.type));
 * ```
 */
export function streamModel(
  model: LanguageModelV4,
  options: LanguageModelV4CallOptions,
  onResponse?: (meta: ModelResponseMeta) => void,
  demand?: DemandGate,
): Observable<LanguageModelV4StreamPart> {
  return defer(() => {
    let meta: ModelResponseMeta | undefined = onResponse === undefined ? undefined : {};
    const report = (first: LanguageModelV4StreamPart | undefined): void => {
      if (meta === undefined) return;
      const reported = first?.type === 'stream-start' ? { ...meta, warnings: first.warnings } : meta;
      meta = undefined;
      onResponse?.(reported);
    };
    return callModel(model, options, demand).pipe(
      filter((event): event is LanguageModelV4StreamPart => {
        if (event.type === 'call-info') {
          if (meta !== undefined) meta = { request: event.request, response: event.response };
          return false;
        }
        if (event.type === 'replayed-chunk') return false;
        report(event);
        return true;
      }),
      tap({ complete: () => report(undefined) }),
    );
  });
}
