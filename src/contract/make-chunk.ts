import type { AgentChunk, AgentChunkKind, ChunkPayloads, ChunkType } from './chunk-types.js';

/** An agent chunk `{ type, runId, from: 'AGENT', payload }`. */
export function makeChunk<K extends AgentChunkKind>(runId: string, type: K, payload: ChunkPayloads[K]): AgentChunk<K> {
  return { type, runId, from: 'AGENT', payload } as AgentChunk<K>;
}

/**
 * `chunk` as a chunk of run `runId`: itself unless it carries another run's id, else a copy that
 * carries `runId` (the object given is not changed: it may be frozen, or shared). A chunk a
 * processor or a tool hands a run — one it returned, wrote with `writer.custom()` or queued — is
 * that run's, whatever id it came with; one that came with none (a data chunk may) is left so, and
 * so is every chunk when `runId` is unknown (`undefined`).
 *
 * @example
 * ```ts
 * withRunId({ type: 'data-progress', data: 1, runId: 'run-0' }, 'run-1').runId; // 'run-1'
 * ```
 */
export function withRunId<T extends ChunkType>(chunk: T, runId: string | undefined): T {
  const given = chunk.runId;
  return given === undefined || runId === undefined || given === runId ? chunk : { ...chunk, runId };
}
