/** Small chunk builders and readers shared by the stream processors. */
import type { ProviderMetadata } from 'ai';
import type { AgentChunk, ChunkFrom, ChunkType } from '../../contract/index.js';

/** The `runId` of a chunk (data chunks may lack one). */
export function runIdOf(chunk: ChunkType): string {
  return chunk.runId ?? '';
}

/** The `from` of a chunk (data chunks may lack one). */
export function fromOf(chunk: ChunkType): ChunkFrom {
  return chunk.from ?? 'AGENT';
}

/** A `text-delta` chunk for text block `id`, stamped like `template`. */
export function textDeltaChunk(
  template: ChunkType,
  id: string,
  text: string,
  providerMetadata?: ProviderMetadata,
): AgentChunk<'text-delta'> {
  return {
    type: 'text-delta',
    runId: runIdOf(template),
    from: fromOf(template),
    payload: providerMetadata === undefined ? { id, text } : { id, text, providerMetadata },
  };
}

/** An agent chunk of kind `K` stamped like `template`. */
export function chunkLike<K extends AgentChunk['type']>(
  template: ChunkType,
  type: K,
  payload: Extract<AgentChunk, { type: K }>['payload'],
): AgentChunk<K> {
  return { type, runId: runIdOf(template), from: fromOf(template), payload } as AgentChunk<K>;
}
