/**
 * `endWithTerminal()`: the one place where a run's stream gets its `start` and its one terminal
 * chunk.
 */
import { Observable, defer, type MonoTypeOperatorFunction, type Observer, type ObservableInput, type OperatorFunction, type Subscriber, type Subscription } from 'rxjs';
import type { ChunkType } from '../../contract/chunk-types.js';
import { makeChunk } from '../../contract/make-chunk.js';
import { providerError } from '../../model/provider-error.js';
import { terminalChunk } from '../../contract/terminal-chunk.js';
import { subscribeLinked } from '../internal/subscribe-linked.js';
import { OpenBrackets } from './close-brackets.js';
import { MissingTerminalError } from './missing-terminal-error.js';

/** Options of {@link endWithTerminal}. */
export interface EndWithTerminalOptions {
  /** The run id of the chunks the operator makes (a function is asked each time one is made). */
  runId: string | (() => string);
  /**
   * The caller's signal: a source that completes without a terminal chunk after it aborted (the
   * abort cut it, `takeUntil` upstream) ends with an `abort` chunk carrying its reason.
   */
  abortSignal?: AbortSignal | undefined;
  /**
   * The chunks that end the run after the source errored with `error` (default: one
   * terminal chunk: a `tripwire` chunk for a `TripWire`, else an `error` chunk). They pass the same
   * rules; an error of this input becomes its own terminal chunk the same way.
   */
  onError?: (error: unknown, runId: string) => ObservableInput<ChunkType>;
  /**
   * Also do what `closeBrackets()` after this operator does, in the same subscriber: what comes
   * out is bracketed, and the end closes what is still open.
   */
  closeBrackets?: boolean;
}

/** {@link EndWithTerminalOptions} with a last value: what follows the terminal chunk (the run's `RunEnd`). */
export interface EndWithTerminalThenOptions<E> extends EndWithTerminalOptions {
  /** Made when the terminal chunk is out, emitted after it (and after the brackets it closes), before the result completes. */
  then: () => E;
}

/** The terminal chunk of a run that failed with `error`: a `tripwire` chunk for a `TripWire`, else an `error` chunk with the provider's error. */
export function failureChunk(runId: string, error: unknown): ChunkType {
  return terminalChunk(runId, { error: providerError(error) });
}


/**
 * Holds a run's stream to its invariants: exactly one `start`, first, and exactly one terminal
 * chunk (`finish`, `tripwire`, `error` or `abort`), last.
 *
 * - a chunk before any `start` is preceded by a made `start`; a later `start` is left out;
 * - the first terminal chunk is emitted, the source is unsubscribed and the result completes;
 * - an error notification becomes `onError`'s chunks (default: a `tripwire` chunk for a
 *   `TripWire`, else an `error` chunk carrying the provider's error);
 * - a source that completes without a terminal ends with `abort` if `abortSignal` is aborted (the
 *   caller's abort cut it), else with an `error` chunk (its error named `MissingTerminalError`);
 * - an `onError` that throws is an error of its chunks (it becomes their terminal chunk); a `runId`
 *   or `then` that throws (or a value that is no chunk, `null`) errors the result.
 *
 * Per chunk it costs one `switch`; it allocates nothing for chunks that pass.
 *
 * ```
 * source:  --a--b--f--x--|     (f = finish)
 * result:  --(Sa)--b--(f|)     (S = the made start; x and the rest are cut)
 *
 * source:  --S--a--#           (# = TripWire)
 * result:  --S--a--(t|)        (t = tripwire chunk)
 *
 * source:  --S--a--|           (completed by takeUntil(abort) upstream)
 * result:  --S--a--(A|)        (A = abort chunk with the signal's reason)
 *
 * source:  --S--f              (with `then`: E = its value, after the terminal chunk)
 * result:  --S--(fE|)
 * ```
 *
 * @example
 * ```ts
 * import { takeUntil } from 'rxjs';
 * import { endWithTerminal } from 'rxagent/loop';
 *
 * const run$ = body$.pipe(takeUntil(aborted$), endWithTerminal({ runId: 'run-1', abortSignal: signal }));
 * ```
 */
export function endWithTerminal(options: EndWithTerminalOptions): MonoTypeOperatorFunction<ChunkType>;
export function endWithTerminal<E>(options: EndWithTerminalThenOptions<E>): OperatorFunction<ChunkType, ChunkType | E>;
export function endWithTerminal<E>(options: EndWithTerminalOptions & { then?: () => E }): OperatorFunction<ChunkType, ChunkType | E> {
  return (source) => new Observable<ChunkType | E>((subscriber) => new TerminalGuard(options, subscriber).start(source));
}

/**
 * One subscription of {@link endWithTerminal}: its state as fields, its steps as methods. It is
 * the observer of what it follows (the source, then `onError`'s chunks).
 */
class TerminalGuard<E> implements Observer<ChunkType> {
  readonly #options: EndWithTerminalOptions & { then?: () => E };
  readonly #subscriber: Subscriber<ChunkType | E>;
  readonly #brackets: OpenBrackets | undefined;
  #started = false;
  #ended = false;
  /** Whether an error of what is followed goes to `onError` (the source's) or becomes its terminal chunk (`onError`'s). */
  #mapErrors = true;
  #upstream: Subscription | undefined;
  #generation = 0;

  constructor(options: EndWithTerminalOptions & { then?: () => E }, subscriber: Subscriber<ChunkType | E>) {
    this.#options = options;
    this.#subscriber = subscriber;
    this.#brackets = options.closeBrackets === true ? new OpenBrackets() : undefined;
  }

  start(source: Observable<ChunkType>): void {
    this.#follow(source);
  }

  #runId(): string {
    const options = this.#options;
    // called on the options (a method of theirs may use `this`)
    return typeof options.runId === 'string' ? options.runId : options.runId();
  }

  #emit(chunk: ChunkType): void {
    if (this.#brackets === undefined) this.#subscriber.next(chunk);
    else this.#brackets.pass(chunk, this.#subscriber);
  }

  /** A chunk of what is followed (or one the guard made). Per chunk: a few field reads and a `switch`. */
  next(chunk: ChunkType): void {
    if (this.#ended) return;
    // a value that is no chunk (outside the types) errors the result: dropped, it would leave the run open
    if (typeof chunk !== 'object' || chunk === null) return this.#fail(new TypeError(`endWithTerminal(): ${String(chunk)} is not a chunk`));
    if (chunk.type === 'start') {
      if (this.#started) return;
      this.#started = true;
      this.#emit(chunk);
      return;
    }
    if (!this.#started) this.#startFirst();
    switch (chunk.type) {
      case 'finish':
      case 'tripwire':
      case 'error':
      case 'abort':
        this.#end(chunk);
        return;
      default:
        if (!this.#ended) this.#emit(chunk);
    }
  }

  /** The source's first chunk is no `start`: one is made first (a `runId` that throws errors the result). */
  #startFirst(): void {
    this.#started = true;
    let runId: string;
    try {
      runId = this.#runId();
    } catch (error) {
      return this.#fail(error);
    }
    this.#emit(makeChunk(runId, 'start', {}));
  }

  /** The terminal chunk: the source is cut, what is open closed, then `then`'s value (a `then` that throws errors the result). */
  #end(terminal: ChunkType): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#upstream?.unsubscribe();
    this.#emit(terminal);
    this.#brackets?.closeAll('other', this.#subscriber);
    const { then } = this.#options;
    // not for a consumer that left, nor twice (a terminal fed back while the made start was out ended it)
    if (then !== undefined && !this.#subscriber.closed) {
      let value: E;
      try {
        value = then.call(this.#options);
      } catch (error) {
        return this.#fail(error);
      }
      this.#subscriber.next(value);
    }
    this.#subscriber.complete();
  }

  error(error: unknown): void {
    if (this.#ended) return;
    const options = this.#options;
    const { onError } = options;
    try {
      if (this.#mapErrors && onError !== undefined) {
        this.#mapErrors = false;
        const runId = this.#runId();
        // defer: a throw of onError is an error of its chunks
        this.#follow(defer(() => onError.call(options, error, runId)));
      } else this.#endWith(failureChunk(this.#runId(), error));
    } catch (thrown) {
      this.#fail(thrown);
    }
  }

  complete(): void {
    if (this.#ended) return;
    const { abortSignal } = this.#options;
    try {
      this.#endWith(
        abortSignal?.aborted === true
          ? terminalChunk(this.#runId(), { aborted: abortSignal.reason as unknown })
          : terminalChunk(this.#runId(), { error: new MissingTerminalError() }),
      );
    } catch (thrown) {
      this.#fail(thrown);
    }
  }

  /** A callback of the options threw (or a value was no chunk): the result errors with it. */
  #fail(error: unknown): void {
    this.#ended = true;
    this.#upstream?.unsubscribe();
    this.#subscriber.error(error);
  }

  #endWith(chunk: ChunkType): void {
    this.#upstream?.unsubscribe();
    this.next(chunk);
  }

  #follow(input: ObservableInput<ChunkType>): void {
    const mine = ++this.#generation;
    const subscription = subscribeLinked(input, this.#subscriber, this);
    if (this.#ended) subscription.unsubscribe();
    else if (mine === this.#generation) {
      // (an input that errored synchronously was already followed by onError's)
      this.#upstream = subscription;
      this.#subscriber.add(subscription);
    }
  }
}
