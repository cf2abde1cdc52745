import { filter, type OperatorFunction } from 'rxjs';
import type { ChunkOfType, ChunkType } from '../contract/chunk-types.js';

/**
 * Keeps only chunks of the given types, narrowing the type (like NgRx's `ofType`).
 *
 * ```
 * source:             --s--d--d--f--|     (s = start, d = text-delta, f = finish)
 * ofChunkType('text-delta'):  -----d--d-----|
 * ```
 *
 * @example
 * ```ts
 * import { ofChunkType } from 'rxagent/operators';
 * agent.stream$('hi').pipe(ofChunkType('text-delta')).subscribe((chunk) => process.stdout.write(chunk.payload.text));
 * ```
 */
export function ofChunkType<const T extends ChunkType['type']>(...types: readonly T[]): OperatorFunction<ChunkType, ChunkOfType<T>> {
  if (types.length === 1) {
    const only = types[0];
    return filter((chunk: ChunkType): chunk is ChunkType & ChunkOfType<T> => chunk.type === only) as OperatorFunction<ChunkType, ChunkOfType<T>>;
  }
  const wanted = new Set<string>(types);
  return filter((chunk: ChunkType): chunk is ChunkType & ChunkOfType<T> => wanted.has(chunk.type)) as OperatorFunction<ChunkType, ChunkOfType<T>>;
}
