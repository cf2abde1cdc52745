/**
 * The model call of a step as chunks: `streamModel` plus one fused operator that converts each V4
 * part (`modelPartToChunk`), drops the parts that only carry step facts, and wraps every failure
 * of the call in a `ModelCallError` — one subscriber hop per part instead of three
 * (`map` → `filter` → `catchError`), and the model pulled only while the run's demand is open.
 */
import { Observable, type OperatorFunction } from 'rxjs';
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import type { ChunkType } from '../contract/chunk-types.js';
import { ModelCallError } from './errors/model-call-error.js';
import { modelPartToChunk, type ModelStepFacts } from './model-part-to-chunk.js';
import { streamModel, type ModelDemand, type ModelResponseMeta } from './stream-model.js';

/**
 * Converts V4 parts into the run's chunks: `null` results are dropped, facts go to `facts`, and a
 * source error or a conversion throw (an `error` part) becomes an error notification carrying a
 * `ModelCallError`.
 *
 * ```
 * parts:   --s--a--b--f--|       (s = stream-start, f = finish: facts only)
 * result:  -----A--B-----|
 * parts:   --a--e                (e = error part)
 * result:  --A--#                (# = ModelCallError)
 * ```
 */
export function partsToChunks(runId: string, facts: ModelStepFacts): OperatorFunction<LanguageModelV4StreamPart, ChunkType> {
  return (source) =>
    new Observable<ChunkType>((subscriber) =>
      source.subscribe({
        next(part) {
          let chunk: ChunkType | null;
          try {
            chunk = modelPartToChunk(part, runId, facts);
          } catch (error) {
            subscriber.error(new ModelCallError({ cause: error }));
            return;
          }
          if (chunk !== null) subscriber.next(chunk);
        },
        error(error: unknown) {
          subscriber.error(new ModelCallError({ cause: error }));
        },
        complete() {
          subscriber.complete();
        },
      }),
    );
}

/** One model call of a step, not yet made: what {@link modelChunks} (or the loop's fused step output) needs. */
export interface ModelCall {
  readonly model: LanguageModelV4;
  readonly callOptions: LanguageModelV4CallOptions;
  readonly onResponse: (meta: ModelResponseMeta) => void;
  readonly runId: string;
  readonly facts: ModelStepFacts;
  readonly demand?: ModelDemand | undefined;
}

/**
 * One model call as the step's chunks (see {@link partsToChunks}); `demand` paces the provider.
 *
 * @example
 * ```ts
 * modelChunks(model, callOptions, (meta) => (attempt.meta = meta), env.runId, attempt.facts, demandOf(env.ctx));
 * ```
 */
export function modelChunks(
  model: LanguageModelV4,
  callOptions: LanguageModelV4CallOptions,
  onResponse: (meta: ModelResponseMeta) => void,
  runId: string,
  facts: ModelStepFacts,
  demand?: ModelDemand,
): Observable<ChunkType> {
  return streamModel(model, callOptions, onResponse, demand).pipe(partsToChunks(runId, facts));
}
