import { defer, finalize, Observable, tap } from 'rxjs';
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { getObservableStream, type ObservableStreamFunction } from './observable-stream.js';
import { cancelQuietly, checkedRead, readerOf, streamOf } from './checked-stream.js';

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
 * Calls a V4 model's `doStream` as a cold Observable of its stream parts.
 *
 * Per subscription: the call starts on subscribe; an `AbortController` is created whose signal
 * (combined with `options.abortSignal`) is what the provider sees; the `ReadableStream` is read
 * one chunk at a time (read → `next` → read again, so a synchronous consumer paces the reads, and
 * while `demand` is closed no read happens at all);
 * unsubscribing before the end aborts the signal and cancels the reader. A thrown `doStream`
 * error or a stream read error is the error notification, unchanged (e.g. the provider's
 * `APICallError`). A model with an `OBSERVABLE_STREAM` function is streamed through it
 * instead, so marble tests run on virtual time.
 *
 * ```
 * provider:  --a--b--c--|        subscriber: ^-----!
 * result:    --a--b--c--|        result:     --a--b (signal aborted, reader cancelled)
 * ```
 *
 * @example
 * ```ts
 * import { streamModel } from './stream-model.js';
 * streamModel(model, { prompt: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }] })
 *   .subscribe((part) => console.log(part.type));
 * ```
 */
export function streamModel(
  model: LanguageModelV4,
  options: LanguageModelV4CallOptions,
  onResponse?: (meta: ModelResponseMeta) => void,
  demand?: ModelDemand,
): Observable<LanguageModelV4StreamPart> {
  const observableStream = getObservableStream(model);
  return observableStream
    ? streamObservable(observableStream, options, onResponse)
    : streamReadable(model, options, onResponse, demand);
}

/**
 * Demand from downstream: while `open` is false the `doStream` reader waits (`whenOpen()`) before
 * reading the next part, so the provider is pulled only as fast as the consumer takes chunks.
 *
 * @example
 * ```ts
 * const demand: ModelDemand = { open: true, whenOpen: () => Promise.resolve() };
 * ```
 */
export interface ModelDemand {
  readonly open: boolean;
  whenOpen(): Promise<void>;
}

/**
 * A per-subscription controller that follows the caller's signal: a listener on it (not
 * `AbortSignal.any`, whose weak references and registry entries were ≈ 5 % of a one-chunk
 * `generate()`). The provider's signal aborts with the caller's reason when the caller's does —
 * also after the call ended, as with `AbortSignal.any` — or when the subscription is cut
 * ({@link CallAbort.cut}, which also drops the listener). One object, the listener itself, and one
 * listener (on the caller's signal only).
 */
class CallAbort implements EventListenerObject {
  readonly controller = new AbortController();
  /** The options the provider gets: the caller's, with this call's signal. */
  readonly callOptions: LanguageModelV4CallOptions;
  readonly #caller: AbortSignal | undefined;

  constructor(options: LanguageModelV4CallOptions) {
    const caller = options.abortSignal;
    if (caller !== undefined) {
      if (caller.aborted) this.controller.abort(caller.reason);
      else {
        this.#caller = caller;
        caller.addEventListener('abort', this, { once: true });
      }
    }
    this.callOptions = { ...options, abortSignal: this.controller.signal };
  }

  /** The caller's signal aborted (the listener is gone: `once`). */
  handleEvent(): void {
    const caller = this.#caller as AbortSignal;
    this.controller.abort(caller.reason);
  }

  /** The subscription was cut before the end: the listener is dropped and the call's signal aborted. */
  cut(): void {
    this.#caller?.removeEventListener('abort', this);
    this.controller.abort();
  }
}

/** Builds the `onResponse` report: metadata plus the warnings of a leading `stream-start`. */
function responseReport(
  meta: ModelResponseMeta,
  first: LanguageModelV4StreamPart | undefined,
): ModelResponseMeta {
  return first?.type === 'stream-start' ? { ...meta, warnings: first.warnings } : meta;
}

/** The virtual-time fast path: the model's own Observable, composed so teardown stays synchronous. */
function streamObservable(
  observableStream: ObservableStreamFunction,
  options: LanguageModelV4CallOptions,
  onResponse: ((meta: ModelResponseMeta) => void) | undefined,
): Observable<LanguageModelV4StreamPart> {
  return defer(() => {
    const abort = new CallAbort(options);
    let finished = false;
    let reported = onResponse === undefined;
    const report = (first: LanguageModelV4StreamPart | undefined): void => {
      if (reported) return;
      reported = true;
      onResponse?.(responseReport({}, first));
    };
    return observableStream(abort.callOptions).pipe(
      tap({
        next: (part) => report(part),
        complete: () => {
          finished = true;
          report(undefined);
        },
        error: () => {
          finished = true;
        },
      }),
      finalize(() => {
        if (!finished) abort.cut();
      }),
    );
  });
}

/**
 * Where {@link readModelStream} delivers a call's parts: a `Subscriber` is one; the loop's fused
 * step output is another (it converts each part where it is read, with no subscriber hop between).
 * `closed` is read after every wait: once it is true, no further part is read.
 *
 * @example
 * ```ts
 * const sink: PartSink<LanguageModelV4StreamPart> = { closed: false, next: console.log, error: console.error, complete: () => undefined };
 * ```
 */
export interface PartSink<T> {
  readonly closed: boolean;
  next(value: T): void;
  error(error: unknown): void;
  complete(): void;
}

/**
 * The `doStream` path of {@link streamModel} without an Observable around it: calls `doStream`
 * and reads its `ReadableStream` one part at a time into `sink` (read → `next` → read again, no
 * read while `demand` is closed or once `sink.closed`). Returns the teardown (an `Unsubscribable`,
 * so a `Subscriber` takes it as it is): before the end it cancels the reader and aborts the
 * call's signal.
 *
 * @example
 * ```ts
 * const read = readModelStream(model, callOptions, undefined, undefined, subscriber);
 * subscriber.add(read);
 * ```
 */
export function readModelStream(
  model: LanguageModelV4,
  options: LanguageModelV4CallOptions,
  onResponse: ((meta: ModelResponseMeta) => void) | undefined,
  demand: ModelDemand | undefined,
  sink: PartSink<LanguageModelV4StreamPart>,
): ModelRead {
  const read = new ModelRead(model, options, onResponse, demand, sink);
  void read.pump(); // settles, never rejects (see `pump`)
  return read;
}

/**
 * One `doStream` call read into its sink (see {@link readModelStream}): the call's state as
 * fields and its steps as methods, one object per call (no closure per call).
 */
export class ModelRead {
  readonly #abort: CallAbort;
  #finished = false;
  #reported: boolean;
  #reader: ReadableStreamDefaultReader<LanguageModelV4StreamPart> | undefined;

  constructor(
    private readonly model: LanguageModelV4,
    options: LanguageModelV4CallOptions,
    private readonly onResponse: ((meta: ModelResponseMeta) => void) | undefined,
    private readonly demand: ModelDemand | undefined,
    private readonly sink: PartSink<LanguageModelV4StreamPart>,
  ) {
    this.#abort = new CallAbort(options);
    this.#reported = onResponse === undefined;
  }

  /** Ends the call with `error` (unless the sink is closed already). */
  fail(error: unknown): void {
    if (this.sink.closed) return;
    this.#finished = true;
    this.sink.error(error);
  }

  /** Calls `doStream` and reads its parts into the sink, one at a time. */
  async pump(): Promise<void> {
    // Last line of defence, here rather than a `.catch` closure per call: nothing a provider does
    // may become an unhandled rejection.
    try {
      const { model, sink, demand } = this;
      let result: unknown;
      try {
        result = await model.doStream(this.#abort.callOptions);
      } catch (error) {
        this.fail(error);
        return;
      }
      // Whatever the provider resolved with is checked before use: a broken result is one clear
      // error notification, never a TypeError thrown into nowhere.
      const stream = streamOf<LanguageModelV4StreamPart>(result, model);
      if (sink.closed) {
        cancelQuietly(stream);
        return;
      }
      const { request, response } = result as Partial<Pick<ModelResponseMeta, 'request' | 'response'>>;
      const meta: ModelResponseMeta = { request, response };
      const activeReader = readerOf(stream, model);
      this.#reader = activeReader;
      try {
        while (!sink.closed) {
          if (demand !== undefined && !demand.open) {
            await demand.whenOpen();
            if (sink.closed) return;
          }
          const next = checkedRead<LanguageModelV4StreamPart>(await activeReader.read(), model);
          if (sink.closed) return;
          if (!this.#reported) {
            this.#reported = true;
            this.onResponse?.(responseReport(meta, next.done ? undefined : next.value));
          }
          if (next.done) {
            this.#finished = true;
            sink.complete();
            return;
          }
          sink.next(next.value);
        }
      } catch (error) {
        // a read error, a malformed part, or onResponse throwing: either ends this call
        if (!sink.closed) {
          this.fail(error);
          cancelQuietly(activeReader, error);
        }
      }
    } catch (error) {
      this.fail(error);
    }
  }

  /** The teardown: before the end, cancels the reader and aborts the call's signal. */
  unsubscribe(): void {
    if (this.#finished) return;
    this.#finished = true;
    cancelQuietly(this.#reader);
    this.#abort.cut();
  }
}

/** The `doStream` path: a `ReadableStream` read one chunk per delivered part. */
function streamReadable(
  model: LanguageModelV4,
  options: LanguageModelV4CallOptions,
  onResponse: ((meta: ModelResponseMeta) => void) | undefined,
  demand: ModelDemand | undefined,
): Observable<LanguageModelV4StreamPart> {
  return new Observable<LanguageModelV4StreamPart>((subscriber) => readModelStream(model, options, onResponse, demand, subscriber));
}
