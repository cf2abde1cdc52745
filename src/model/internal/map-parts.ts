import { defer, mergeMap, type Observable } from 'rxjs';
import { cancelQuietly, checkedObservable, checkedRead, checkedValue, invalidResponse, readerOf, streamOf, type ModelLike } from '../checked-stream.js';
import { messageOf } from '../checked-part.js';
import { RxAgentError } from '../../errors/rxagent-error.js';

/**
 * Converts one part of the older spec into zero or more parts of the newer one.
 *
 * @example
 * ```ts
 * const convert: PartConverter<V3Part, V4Part> = (part) => [partV3ToV4(part)];
 * ```
 */
export type PartConverter<TFrom, TTo> = (part: TFrom) => TTo[];

/**
 * A pull-through `ReadableStream` over the stream of an older-spec `doStream` result: one `read()`
 * downstream causes exactly one `read()` upstream (highWaterMark 0, no TransformStream queue), and
 * `cancel` is forwarded. A result that is not `{ stream: ReadableStream }`, a throwing
 * `getReader()`, a malformed part or a part the conversion cannot read (a V2 `finish` without
 * usage) is an `InvalidModelResponseError` naming `model`; the stream read from is then cancelled.
 *
 * @example
 * ```ts
 * const v4Stream = pullMapStream(v3Result, v3Model, (part) => [partV3ToV4(part)]);
 * ```
 */
export function pullMapStream<TFrom, TTo>(
  result: unknown,
  model: ModelLike,
  convert: PartConverter<TFrom, TTo>,
): ReadableStream<TTo> {
  const reader = readerOf(streamOf<TFrom>(result, model), model);
  const convertPart = blamingModel(model, convert);
  return new ReadableStream<TTo>(
    {
      async pull(controller) {
        try {
          // Loop so that a part converting to nothing does not stall the reader.
          for (;;) {
            const next = checkedRead<TFrom>(await reader.read(), model);
            if (next.done) {
              controller.close();
              return;
            }
            const converted = convertPart(next.value);
            if (converted.length > 0) {
              for (const part of converted) controller.enqueue(part);
              return;
            }
          }
        } catch (error) {
          // the failed pull errors this stream; the one it reads from is released here
          cancelQuietly(reader, error);
          throw error;
        }
      },
      cancel(reason) {
        cancelQuietly(reader, reason);
      },
    },
    { highWaterMark: 0 },
  );
}

/** `convert`, with a part it cannot read (a V2 `finish` without usage) as an `InvalidModelResponseError` naming `model`. */
function blamingModel<TFrom, TTo>(model: ModelLike, convert: PartConverter<TFrom, TTo>): PartConverter<TFrom, TTo> {
  return (part) => {
    try {
      return convert(part);
    } catch (error) {
      if (RxAgentError.isInstance(error)) throw error;
      const type = (part as { type?: unknown }).type;
      const version = (model as { specificationVersion?: unknown }).specificationVersion;
      throw invalidResponse(model, `its "${String(type)}" part cannot be read as a ${String(version)} part: ${messageOf(error)}`, error);
    }
  };
}

/**
 * The Observable counterpart of {@link pullMapStream}; `createConverter` runs per subscription.
 * Each value is checked as a read one is (a part object with a string `type`) before it is
 * converted; a value that is not one, or a part the conversion cannot read, is the error
 * notification: an `InvalidModelResponseError` naming `model`.
 *
 * @example
 * ```ts
 * const v4Parts$ = mapPartsObservable(v3Model, () => v3Parts$, () => (part) => [partV3ToV4(part)]);
 * ```
 */
export function mapPartsObservable<TFrom, TTo>(
  model: ModelLike,
  source: () => Observable<TFrom>,
  createConverter: () => PartConverter<TFrom, TTo>,
): Observable<TTo> {
  return defer(() => {
    const convert = blamingModel(model, createConverter());
    return checkedObservable<TFrom>(source(), model).pipe(mergeMap((value) => convert(checkedValue<TFrom>(value, model))));
  });
}

/**
 * Wraps a converter so that `warnings` produced while converting the call options down end up
 * in the stream: appended to a leading `stream-start` part, or in a `stream-start` inserted
 * before the first part when the model sends none.
 *
 * @example
 * ```ts
 * const convert = withConversionWarnings(warnings, base, (head, extra) => ({ type: 'stream-start', warnings: [...extra] }));
 * ```
 */
export function withConversionWarnings<TFrom, TTo extends { type: string }, TWarning>(
  warnings: readonly TWarning[],
  convert: PartConverter<TFrom, TTo>,
  streamStart: (part: TTo | undefined, warnings: readonly TWarning[]) => TTo,
): PartConverter<TFrom, TTo> {
  if (warnings.length === 0) return convert;
  let first = true;
  return (part) => {
    const converted = convert(part);
    if (!first || converted.length === 0) return converted;
    first = false;
    const [head, ...tail] = converted;
    return head?.type === 'stream-start'
      ? [streamStart(head, warnings), ...tail]
      : [streamStart(undefined, warnings), ...converted];
  };
}
