import type { Observable } from 'rxjs';
import type { LanguageModelV4CallOptions, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { messageOf } from './checked-part.js';
import { invalidResponse } from './checked-stream.js';

/**
 * Property key of the virtual-time fast path: a model object that has a function under this
 * key is streamed through that function (an Observable of stream parts) instead of `doStream`
 * and its `ReadableStream`, so marble tests run on virtual time. Its parts are checked as a web
 * stream's are (a malformed one is an `InvalidModelResponseError`), the call ends at the first
 * `finish`, an Observable that emits for `OBSERVABLE_TURN_MS` (2 s) without the event loop taking
 * a turn is cut, and what it emits while the run's demand gate is held waits until the gate opens
 * (an Observable cannot be paused) — at most {@link OBSERVABLE_STREAM_MAX_HELD} parts (10,000 by
 * default), past which the call fails naming it. A property that throws where it is read fails the call with an
 * `InvalidModelResponseError`.
 *
 * @example
 * ```ts
 * import { of } from 'rxjs';
 * import { OBSERVABLE_STREAM } from 'rxagent/testing';
 * const model = { ...someV4Model, [OBSERVABLE_STREAM]: () => of({ type: 'text-delta', id: 't', delta: 'hi' }) };
 * ```
 */
export const OBSERVABLE_STREAM: unique symbol = Symbol.for('rxagent.model.observableStream');

/**
 * Property key of the bound on what an {@link OBSERVABLE_STREAM} call may send while the run's
 * demand gate is held (a consumer that does not read): a whole number of parts ≥ 1 under this key
 * of the model replaces the default (10,000). An Observable cannot be paused, so what it sends
 * meanwhile waits at the model seam; past this many parts waiting the call fails with an
 * `InvalidModelResponseError` naming `OBSERVABLE_STREAM_MAX_HELD`, its source is unsubscribed and
 * its signal cut. A value that is not such a number, or a property that throws where it is read,
 * fails the call naming it.
 *
 * @example
 * ```ts
 * import { OBSERVABLE_STREAM_MAX_HELD } from 'rxagent/testing';
 * const model = Object.assign(mockModel({ stream: endlessParts$ }), { [OBSERVABLE_STREAM_MAX_HELD]: 1_000 });
 * ```
 */
export const OBSERVABLE_STREAM_MAX_HELD: unique symbol = Symbol.for('rxagent.model.observableStreamMaxHeld');

/**
 * The model's {@link OBSERVABLE_STREAM_MAX_HELD}, or `fallback` when it sets none; throws an
 * `InvalidModelResponseError` naming the key for a value that is not a whole number ≥ 1 (up to
 * 2^53 − 1) or a property that throws where it is read. Read once per call.
 *
 * @example
 * ```ts
 * const limit = observableMaxHeld(model, 10_000);
 * ```
 */
export function observableMaxHeld(model: object, fallback: number): number {
  let value: unknown;
  try {
    value = (model as { [OBSERVABLE_STREAM_MAX_HELD]?: unknown })[OBSERVABLE_STREAM_MAX_HELD];
  } catch (error) {
    throw invalidResponse(model, `its OBSERVABLE_STREAM_MAX_HELD property throws where it is read (${messageOf(error)}).`, error);
  }
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw invalidResponse(model, `its OBSERVABLE_STREAM_MAX_HELD must be a whole number of parts ≥ 1 (got ${typeof value === 'number' ? String(value) : value === null ? 'null' : typeof value}).`);
  }
  return value;
}

/**
 * The function a model puts under {@link OBSERVABLE_STREAM}: same call options as `doStream`
 * (including the per-subscription `abortSignal`), stream parts as an Observable.
 *
 * @example
 * ```ts
 * import { of } from 'rxjs';
 * import type { ObservableStreamFunction } from 'rxagent/testing';
 * const stream: ObservableStreamFunction = () => of({ type: 'text-delta', id: 't', delta: 'hi' });
 * ```
 */
export type ObservableStreamFunction<
  TOptions = LanguageModelV4CallOptions,
  TPart = LanguageModelV4StreamPart,
> = (options: TOptions) => Observable<TPart>;

/**
 * Returns the model's {@link OBSERVABLE_STREAM} function, or `undefined` when it has none. A
 * property that throws where it is read (a getter, a Proxy) gives a function that throws an
 * `InvalidModelResponseError` naming the model and the problem: the call fails as any other
 * provider fault does, where the call's errors go.
 *
 * @example
 * ```ts
 * const fast = getObservableStream(model);
 * const parts$ = fast ? fast(options) : undefined;
 * ```
 */
export function getObservableStream<TOptions = LanguageModelV4CallOptions, TPart = LanguageModelV4StreamPart>(
  model: object,
): ObservableStreamFunction<TOptions, TPart> | undefined {
  let candidate: unknown;
  try {
    candidate = (model as { [OBSERVABLE_STREAM]?: unknown })[OBSERVABLE_STREAM];
  } catch (error) {
    const invalid = invalidResponse(model, `its OBSERVABLE_STREAM property throws where it is read (${messageOf(error)}).`, error);
    return () => {
      throw invalid;
    };
  }
  return typeof candidate === 'function'
    ? (options: TOptions) => (candidate as ObservableStreamFunction<TOptions, TPart>).call(model, options)
    : undefined;
}
