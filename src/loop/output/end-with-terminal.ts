/**
 * `endWithTerminal()`: the one place where a run's stream gets its `start` and its one terminal
 * chunk.
 */
import { Observable, type MonoTypeOperatorFunction, type ObservableInput, type Subscription } from 'rxjs';
import type { ChunkType } from '../../contract/chunk-types.js';
import { TripWire } from '../../contract/errors/trip-wire.js';
import { makeChunk } from '../../contract/make-chunk.js';
import { providerError } from '../../model/provider-error.js';
import { tripwirePayload } from '../../contract/tripwire-payload.js';
import { subscribeLinked } from './internal/subscribe-linked.js';
import { OpenBrackets } from './close-brackets.js';

/** Options of {@link endWithTerminal}. */
export interface EndWithTerminalOptions {
  /** The run id of the chunks the operator makes (a function is asked each time one is made). */
  runId: string | (() => string);
  /** Its abort ends the run: the source is unsubscribed and an `abort` chunk is the terminal. */
  abortSignal?: AbortSignal | undefined;
  /** While this returns `true`, an abort is left to the source (it is committing its result). */
  holdAbort?: () => boolean;
  /**
   * The chunks that end the run after the source errored with `error` (default: one
   * {@link terminalChunk}). They pass the same rules; an error of this input becomes its
   * {@link terminalChunk}.
   */
  onError?: (error: unknown, runId: string) => ObservableInput<ChunkType>;
  /**
   * Also do what `closeBrackets()` after this operator does, in the same subscriber (one hop per
   * chunk fewer): what comes out is bracketed, and the end closes what is still open.
   */
  closeBrackets?: boolean;
}

/** The terminal chunk for `error`: a `tripwire` chunk for a `TripWire`, else an `error` chunk with the provider's error. */
export function terminalChunk(runId: string, error: unknown): ChunkType {
  return TripWire.isInstance(error) ? makeChunk(runId, 'tripwire', tripwirePayload(error)) : makeChunk(runId, 'error', { error: providerError(error) });
}

/** The error of a source that completed without a terminal chunk (a bug upstream, reported as the run's `error`). */
export class MissingTerminalError extends Error {
  constructor() {
    super('the run ended without a terminal chunk (finish, tripwire, error or abort)');
    this.name = 'MissingTerminalError';
  }
}

/**
 * Holds a run's stream to its invariants: exactly one `start`, first, and exactly one terminal
 * chunk (`finish`, `tripwire`, `error` or `abort`), last.
 *
 * - a chunk before any `start` is preceded by a made `start`; a later `start` is left out;
 * - the first terminal chunk is emitted, the source is unsubscribed and the result completes;
 * - an error notification becomes `onError`'s chunks (default: a `tripwire` chunk for a
 *   `TripWire`, else an `error` chunk carrying the provider's error);
 * - the abort of `abortSignal` (already aborted at subscription, or later, unless `holdAbort()`)
 *   unsubscribes the source and ends with an `abort` chunk carrying the signal's reason;
 * - a source that completes without a terminal ends with `abort` if the signal is aborted, else
 *   with an `error` chunk ({@link MissingTerminalError}).
 *
 * Per chunk it costs one `switch`; it allocates nothing for chunks that pass.
 *
 * ```
 * source:  --a--b--f--x--|     (f = finish)
 * result:  --(Sa)--b--(f|)     (S = the made start; x and the rest are cut)
 *
 * source:  --S--a--#           (# = TripWire)
 * result:  --S--a--(t|)        (t = tripwire chunk)
 * ```
 *
 * @example
 * ```ts
 * // internal to the loop (not a public entry)
 * import { endWithTerminal } from '../loop/output/end-with-terminal.js';
 *
 * const run$ = body$.pipe(endWithTerminal({ runId: 'run-1', abortSignal: controller.signal }));
 * ```
 */
export function endWithTerminal(options: EndWithTerminalOptions): MonoTypeOperatorFunction<ChunkType> {
  const { abortSignal, holdAbort, onError } = options;
  const idOf = options.runId;
  const runIdNow = typeof idOf === 'string' ? (): string => idOf : idOf;
  return (source) =>
    new Observable<ChunkType>((subscriber) => {
      const brackets = options.closeBrackets === true ? new OpenBrackets() : undefined;
      const emit = brackets === undefined ? (chunk: ChunkType): void => subscriber.next(chunk) : (chunk: ChunkType): void => brackets.pass(chunk, subscriber);
      const end = (): void => {
        brackets?.closeAll('other', subscriber);
        subscriber.complete();
      };
      let started = false;
      let ended = false;
      let upstream: Subscription | undefined;
      let generation = 0;

      const pass = (chunk: ChunkType): void => {
        if (ended) return;
        if (chunk.type === 'start') {
          if (started) return;
          started = true;
          emit(chunk);
          return;
        }
        if (!started) {
          started = true;
          emit(makeChunk(runIdNow(), 'start', {}));
        }
        switch (chunk.type) {
          case 'finish':
          case 'tripwire':
          case 'error':
          case 'abort':
            ended = true;
            upstream?.unsubscribe();
            emit(chunk);
            end();
            return;
          default:
            emit(chunk);
        }
      };
      const endWith = (chunk: ChunkType): void => {
        upstream?.unsubscribe();
        pass(chunk);
      };
      const completed = (): void => {
        if (ended) return;
        endWith(
          abortSignal?.aborted === true
            ? makeChunk(runIdNow(), 'abort', { reason: abortSignal.reason as unknown })
            : makeChunk(runIdNow(), 'error', { error: new MissingTerminalError() }),
        );
      };
      const follow = (input: ObservableInput<ChunkType>, mapErrors: boolean): void => {
        const mine = ++generation;
        const subscription = subscribeLinked(input, subscriber, {
          next: pass,
          error: (error: unknown) => {
            if (ended) return;
            if (mapErrors && onError !== undefined) follow(onError(error, runIdNow()), false);
            else endWith(terminalChunk(runIdNow(), error));
          },
          complete: completed,
        });
        if (ended) subscription.unsubscribe();
        else if (mine === generation) {
          // (an input that errored synchronously was already followed by onError's)
          upstream = subscription;
          subscriber.add(subscription);
        }
      };

      if (abortSignal !== undefined) {
        const onAbort = (): void => {
          if (ended || holdAbort?.() === true) return;
          endWith(makeChunk(runIdNow(), 'abort', { reason: abortSignal.reason as unknown }));
        };
        if (abortSignal.aborted && holdAbort?.() !== true) {
          onAbort();
          return;
        }
        abortSignal.addEventListener('abort', onAbort, { once: true });
        subscriber.add(() => abortSignal.removeEventListener('abort', onAbort));
      }
      follow(source, true);
    });
}
