import type { AgentChunk, AgentChunkKind, ChunkPayloads } from './chunk-types.js';

/** An agent chunk `{ type, runId, from: 'AGENT', payload }`. */
export function makeChunk<K extends AgentChunkKind>(runId: string, type: K, payload: ChunkPayloads[K]): AgentChunk<K> {
  return { type, runId, from: 'AGENT', payload } as AgentChunk<K>;
}
