/**
 * The one adapter of an older provider spec to the next: the model's identity passed through, the
 * call options converted down, the generate result and every stream part converted up, the
 * warnings of the conversion put into the stream's `stream-start`, and the model's Observable
 * stream (if it has one) lifted the same way. A spec version supplies only its conversions
 * ({@link SpecLift}: `from-v3.ts` for V3 → V4, `from-v2.ts` for V2 → V3).
 */
import type { LanguageModelV2, LanguageModelV3, LanguageModelV4 } from '@ai-sdk/provider';
import { getObservableStream, OBSERVABLE_STREAM, OBSERVABLE_STREAM_MAX_HELD, type ObservableStreamFunction } from '../observable-stream.js';
import { mapPartsObservable, pullMapStream, withConversionWarnings, type PartConverter } from './map-parts.js';
import { callMetadataOf, invalidResponse } from '../checked-stream.js';
import { messageOf } from '../checked-part.js';
import { RxAgentError } from '../../errors/rxagent-error.js';

type SpecModel = LanguageModelV2 | LanguageModelV3 | LanguageModelV4;
type CallOf<M extends SpecModel> = Parameters<M['doGenerate']>[0];
type ResultOf<M extends SpecModel> = Awaited<ReturnType<M['doGenerate']>>;
type PartOf<M extends SpecModel> = Awaited<ReturnType<M['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never;
type WarningOf<M extends SpecModel> = ResultOf<M>['warnings'][number];

/**
 * The conversions between two spec versions, `TFrom` (the model's) and `TTo` (the one it is lifted to).
 *
 * @example
 * ```ts
 * const v3ToV4: SpecLift<LanguageModelV3, LanguageModelV4> = { specificationVersion: 'v4', callOptions, result, part };
 * ```
 */
export interface SpecLift<TFrom extends SpecModel, TTo extends SpecModel> {
  /** The version the lifted model reports. */
  readonly specificationVersion: TTo['specificationVersion'];
  /** The call options down to the model's spec, and what could not be expressed there. */
  callOptions(options: CallOf<TTo>): { callOptions: CallOf<TFrom>; warnings: Array<WarningOf<TTo>> };
  /** A generate result up, with the conversion's warnings added to its own. */
  result(result: ResultOf<TFrom>, warnings: ReadonlyArray<WarningOf<TTo>>): ResultOf<TTo>;
  /** One stream part up. */
  part(part: PartOf<TFrom>): PartOf<TTo>;
}

/**
 * `model` as a model of the next spec version, by `lift`'s conversions.
 *
 * @example
 * ```ts
 * const v4: LanguageModelV4 = liftModel(v3Model, v3ToV4);
 * ```
 */
export function liftModel<TFrom extends SpecModel, TTo extends SpecModel>(model: TFrom, lift: SpecLift<TFrom, TTo>): TTo {
  type Warning = WarningOf<TTo>;
  type Part = PartOf<TTo> & { type: string }; // every part of every version has a `type`
  const converter = (warnings: readonly Warning[]): PartConverter<PartOf<TFrom>, PartOf<TTo>> =>
    withConversionWarnings(warnings, (part) => [lift.part(part) as Part], (head, extra) => streamStart(head, extra));
  // the spec versions' method types differ only in their argument and result types, which `lift` converts
  const call = model as unknown as {
    doGenerate(options: CallOf<TFrom>): PromiseLike<ResultOf<TFrom>>;
    doStream(options: CallOf<TFrom>): PromiseLike<unknown>;
  };
  const lifted = {
    specificationVersion: lift.specificationVersion,
    get provider() {
      return model.provider;
    },
    get modelId() {
      return model.modelId;
    },
    get supportedUrls() {
      return model.supportedUrls;
    },
    async doGenerate(options: CallOf<TTo>): Promise<ResultOf<TTo>> {
      const { callOptions, warnings } = lift.callOptions(options);
      const result = await call.doGenerate(callOptions);
      if (typeof result !== 'object' || result === null) {
        throw invalidResponse(model, `doGenerate() resolved with ${result === null ? 'null' : typeof result}, not a result object.`);
      }
      try {
        return lift.result(result, warnings);
      } catch (error) {
        // what the conversion cannot read is the provider's answer, not a bug of the run
        if (RxAgentError.isInstance(error)) throw error;
        throw invalidResponse(model, `its doGenerate() result cannot be read as a ${String(model.specificationVersion)} result: ${messageOf(error)}`, error);
      }
    },
    async doStream(options: CallOf<TTo>) {
      const { callOptions, warnings } = lift.callOptions(options);
      const result = await call.doStream(callOptions);
      const stream = pullMapStream(result, model, converter(warnings));
      try {
        // the metadata the V4 result carries, read once (a getter that throws is the provider's fault)
        return { stream, ...callMetadataOf(result as object, model, 'doStream()') };
      } catch (error) {
        void stream.cancel(error).catch(() => undefined);
        throw error;
      }
    },
  } as unknown as TTo & { [OBSERVABLE_STREAM]?: ObservableStreamFunction<CallOf<TTo>, PartOf<TTo>> };
  const observableStream = getObservableStream<CallOf<TFrom>, PartOf<TFrom>>(model);
  if (observableStream) {
    lifted[OBSERVABLE_STREAM] = (options) => {
      const { callOptions, warnings } = lift.callOptions(options);
      return mapPartsObservable(
        model,
        () => observableStream(callOptions),
        () => converter(warnings),
      );
    };
    // the model's bound on what waits behind a held gate, read where the lifted call reads it
    Object.defineProperty(lifted, OBSERVABLE_STREAM_MAX_HELD, { get: () => (model as { [OBSERVABLE_STREAM_MAX_HELD]?: unknown })[OBSERVABLE_STREAM_MAX_HELD] });
  }
  return lifted;
}

/** `head` (a `stream-start` or nothing) as a `stream-start` that also carries `extra`. */
function streamStart<TPart, TWarning>(head: TPart | undefined, extra: readonly TWarning[]): TPart {
  const own = (head as { type?: string; warnings?: TWarning[] } | undefined)?.type === 'stream-start' ? (head as { warnings: TWarning[] }).warnings : [];
  return { type: 'stream-start', warnings: [...own, ...extra] } as TPart;
}
