/**
 * What `ResponseCache` writes to its store and what it accepts back: the model's own output only
 * (never a `data-*` chunk a processor or tool wrote for one run), as a copy (a consumer editing a
 * chunk it got in place changes nothing stored), and an entry read back only when it names the key
 * it was asked for, says its step was accepted and every chunk has the shape its type needs.
 *
 * An entry is written in two forms: when the model finished its step (`accepted` unset: no reader
 * serves it) and again, `accepted: true`, once no processor rejected the step; a rejected step's
 * entry is overwritten with one without chunks. So a store that keeps only some fields, or an
 * entry of an older build, is never served. Each entry carries the digest of its key, chunks and
 * warnings: an entry a store cut short, changed, or put together from another key's chunks does
 * not match it, and is a miss.
 */
import type { CachedLLMStepChunk, CachedLLMStepResponse } from '../../contract/index.js';
import { replayedChunkProblem } from '../../model/index.js';
import { canonicalDigest } from './cache-key.js';

/** An entry as stored: the response, and the key it was written under. */
export interface ResponseCacheEntry extends CachedLLMStepResponse {
  /** The key the entry was written under (an entry read under another key is a miss). */
  key: string;
  /** Set once the step of the response was accepted: an entry without it is a miss. */
  accepted?: true;
  /** The digest of `key`, `chunks` and `warnings` (see `entryDigest`): an entry that does not match it is a miss. */
  digest: string;
}

/**
 * The digest an entry carries: of its key, chunks and warnings in their JSON form — what a store
 * that keeps JSON hands back (dates as text, object keys in any order) matches it too —, so an
 * entry a store cut short (fewer chunks, a shorter string), changed, or made of another key's
 * chunks does not. Throws for a value JSON cannot hold (a cycle, a bigint).
 */
function entryDigest(key: string, chunks: ReadonlyArray<{ type: string; payload: unknown }>, warnings: unknown): string {
  return canonicalDigest(JSON.parse(JSON.stringify([key, chunks, warnings ?? null])) as unknown);
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
 * The entry to store for a step's chunks while the step waits to be accepted: the model's own
 * chunks, deep-copied. `undefined` when they cannot be copied (a function or a class instance a
 * provider put in its metadata) or there are none (an entry without chunks is a withdrawn one).
 */
export function entryOf(key: string, chunks: readonly CachedLLMStepChunk[], warnings: unknown[] | undefined): ResponseCacheEntry | undefined {
  const own = chunks.filter((chunk) => isModelChunkType(chunk.type)).map(({ type, payload }) => ({ type, payload }));
  if (own.length === 0) return undefined;
  try {
    const copy = structuredClone({ key, chunks: own, ...(warnings === undefined ? {} : { warnings }) });
    return { ...copy, digest: entryDigest(key, copy.chunks, copy.warnings) };
  } catch {
    return undefined;
  }
}

/** `entry` once its step was accepted: the form readers serve. */
export function acceptedEntry(entry: ResponseCacheEntry): ResponseCacheEntry {
  return { ...entry, accepted: true };
}

/** What overwrites the entry of a step a processor rejected: no chunks, never served. */
export function withdrawnEntry(key: string): ResponseCacheEntry {
  return { key, chunks: [], digest: entryDigest(key, [], undefined) };
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

/** What reading an entry back gave: the response to serve, a miss to report, or an entry not (yet) accepted. */
export type ReadEntry = { response: CachedLLMStepResponse } | { refused: string } | { unaccepted: true };

/**
 * The response in `value` when it is an accepted entry written under `key` that can be replayed (a
 * copy: what the run does to it never reaches the store); `unaccepted` for an entry of that key
 * whose step was not accepted (yet); else why it cannot be served. A value that throws where it is
 * read (a getter, a Proxy) is refused.
 */
export function readEntry(value: unknown, key: string): ReadEntry {
  try {
    return readEntryNow(value, key);
  } catch {
    return { refused: 'the entry cannot be read' };
  }
}

function readEntryNow(value: unknown, key: string): ReadEntry {
  if (!isRecord(value)) return { refused: 'the entry is not an object' };
  if (value.key !== key) return { refused: 'the entry was written under another key' };
  if (value.accepted !== true) return { unaccepted: true };
  const { chunks, warnings } = value;
  if (!Array.isArray(chunks)) return { refused: 'the entry has no chunks array' };
  if (chunks.length === 0) return { refused: 'the entry has no chunks' };
  if (warnings !== undefined && !Array.isArray(warnings)) return { refused: 'the entry\'s warnings are not an array' };
  const notWarning = warnings?.findIndex((warning) => !isRecord(warning) || typeof warning.type !== 'string') ?? -1;
  if (notWarning >= 0) return { refused: `warnings[${notWarning}] is not a warning { type, … }` };
  for (let index = 0; index < chunks.length; index++) {
    const fault = chunkFault(chunks[index], index);
    if (fault !== undefined) return { refused: fault };
  }
  const own = (chunks as Array<{ type: string; payload: unknown }>).map(({ type, payload }) => ({ type, payload }));
  let digest: string;
  try {
    digest = entryDigest(key, own, warnings);
  } catch {
    return { refused: 'the entry\'s warnings are not JSON' };
  }
  if (value.digest !== digest) return { refused: 'the entry does not match its digest (cut short, changed, or made of another entry)' };
  try {
    const copy = structuredClone({ chunks: own, warnings });
    return { response: warnings === undefined ? { chunks: copy.chunks } : copy };
  } catch {
    return { refused: 'the entry cannot be copied' };
  }
}
