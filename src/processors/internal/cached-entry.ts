/**
 * What `ResponseCache` writes to its store and what it accepts back: the model's own output only
 * (never a `data-*` chunk a processor or tool wrote for one run), as a copy (a consumer editing a
 * chunk it got in place changes nothing stored), and an entry read back only when it names the key
 * it was asked for and every chunk has the shape its type needs.
 */
import type { CachedLLMStepChunk, CachedLLMStepResponse } from '../../contract/index.js';
import { replayedChunkProblem } from '../../model/index.js';

/** An entry as stored: the response, and the key it was written under. */
export interface ResponseCacheEntry extends CachedLLMStepResponse {
  /** The key the entry was written under (an entry read under another key is a miss). */
  key: string;
}

/** The string fields each chunk type the model produces needs (`text` for deltas, ids…). */
const MODEL_CHUNKS: Readonly<Record<string, readonly string[]>> = {
  'response-metadata': [],
  'text-start': ['id'],
  'text-delta': ['id', 'text'],
  'text-end': ['id'],
  'reasoning-start': ['id'],
  'reasoning-delta': ['id', 'text'],
  'reasoning-end': ['id'],
  'tool-call-input-streaming-start': ['toolCallId', 'toolName'],
  'tool-call-delta': ['toolCallId', 'argsTextDelta'],
  'tool-call-input-streaming-end': ['toolCallId'],
  'tool-call': ['toolCallId', 'toolName'],
  // provider-executed tools only: the agent's own tools run after the response is stored
  'tool-result': ['toolCallId', 'toolName'],
  'tool-error': ['toolCallId', 'toolName'],
  source: ['id', 'sourceType'],
  file: ['data', 'mimeType'],
  raw: [],
};

/** Fields that name something (a call, a tool, a media type): never empty. */
const NAMES = new Set(['toolCallId', 'toolName', 'mimeType']);

function isModelChunkType(type: string): boolean {
  return Object.hasOwn(MODEL_CHUNKS, type);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The entry to store for a step's chunks: the model's own chunks, deep-copied. `undefined` when
 * they cannot be copied (a function or a class instance a provider put in its metadata).
 */
export function entryOf(key: string, chunks: readonly CachedLLMStepChunk[], warnings: unknown[] | undefined): ResponseCacheEntry | undefined {
  const own = chunks.filter((chunk) => isModelChunkType(chunk.type)).map(({ type, payload }) => ({ type, payload }));
  try {
    return structuredClone({ key, chunks: own, ...(warnings === undefined ? {} : { warnings }) });
  } catch {
    return undefined;
  }
}

/** Why `chunk` cannot be replayed, or `undefined` when it can. */
function chunkFault(chunk: unknown, index: number): string | undefined {
  if (!isRecord(chunk) || typeof chunk.type !== 'string') return `chunks[${index}] is not a chunk { type, payload }`;
  if (!isModelChunkType(chunk.type)) return `chunks[${index}] is a ${JSON.stringify(chunk.type)} chunk, which the model does not produce`;
  if (!isRecord(chunk.payload)) return `chunks[${index}].payload is not an object`;
  const payload = chunk.payload;
  const missing = (MODEL_CHUNKS[chunk.type] as readonly string[]).find((field) => typeof payload[field] !== 'string' || (NAMES.has(field) && payload[field] === ''));
  if (missing !== undefined) return `chunks[${index}].payload.${missing} is not ${NAMES.has(missing) ? 'a non-empty' : 'a'} string`;
  if (chunk.type === 'source' && payload.sourceType !== 'url' && payload.sourceType !== 'document') return `chunks[${index}].payload.sourceType is not 'url' or 'document'`;
  // what the run itself would refuse in a cached response (NaN, a value JSON cannot hold, …): a miss, not a failed run
  const refused = replayedChunkProblem(chunk as { type: string; payload?: unknown });
  return refused === undefined ? undefined : `chunks[${index}]${refused}`;
}

/**
 * The response in `value` when it is an entry written under `key` that can be replayed (a copy:
 * what the run does to it never reaches the store), else why it cannot be served.
 */
export function readEntry(value: unknown, key: string): { response: CachedLLMStepResponse } | { refused: string } {
  if (!isRecord(value)) return { refused: 'the entry is not an object' };
  if (value.key !== key) return { refused: 'the entry was written under another key' };
  const { chunks, warnings } = value;
  if (!Array.isArray(chunks)) return { refused: 'the entry has no chunks array' };
  if (warnings !== undefined && !Array.isArray(warnings)) return { refused: 'the entry\'s warnings are not an array' };
  for (let index = 0; index < chunks.length; index++) {
    const fault = chunkFault(chunks[index], index);
    if (fault !== undefined) return { refused: fault };
  }
  try {
    const copy = structuredClone({ chunks: (chunks as Array<{ type: string; payload: unknown }>).map(({ type, payload }) => ({ type, payload })), warnings });
    return { response: warnings === undefined ? { chunks: copy.chunks } : copy };
  } catch {
    return { refused: 'the entry cannot be copied' };
  }
}
