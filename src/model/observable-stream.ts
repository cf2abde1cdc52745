import type { Observable } from 'rxjs';
import type { LanguageModelV4CallOptions, LanguageModelV4StreamPart } from '@ai-sdk/provider';

/**
 * Property key of the virtual-time fast path: a model object that has a function under this
 * key is streamed through that function (an Observable of stream parts) instead of `doStream`
 * and its `ReadableStream`, so marble tests run on virtual time. Its parts are checked as a web
 * stream's are (a malformed one is an `InvalidModelResponseError`), the call ends at the first
 * `finish`, and an Observable that emits for `OBSERVABLE_TURN_MS` (2 s) without the event loop
 * taking a turn is cut.
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
 * Returns the model's {@link OBSERVABLE_STREAM} function, or `undefined` when it has none.
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
  const candidate: unknown = (model as { [OBSERVABLE_STREAM]?: unknown })[OBSERVABLE_STREAM];
  return typeof candidate === 'function'
    ? (options: TOptions) => (candidate as ObservableStreamFunction<TOptions, TPart>).call(model, options)
    : undefined;
}
