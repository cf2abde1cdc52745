/**
 * What a client may see of a chunk read back from storage: the one rule every reader follows
 * (byte replay, UI resume, the UI encoder's default `errorText`). An error that reaches a client
 * keeps its `name` and loses everything else — a provider's request or response body, its URL,
 * headers, a stack trace, a message that quotes any of them. Whoever keeps the run (the journal)
 * keeps the full error; readers serve the safe form.
 */
import type { AgentChunkKind, ChunkType } from './chunk-types.js';

/** The `message` every error served to a client carries. */
export const CLIENT_ERROR_MESSAGE = 'An error occurred.';

/** Every agent chunk kind this build knows (a `satisfies` keeps the list whole). */
const KINDS = {
  start: [],
  'step-start': [],
  'response-metadata': [],
  'text-start': ['id'],
  'text-delta': ['id', 'text'],
  'text-end': ['id'],
  'reasoning-start': ['id'],
  'reasoning-delta': ['id', 'text'],
  'reasoning-end': ['id'],
  'tool-call-input-streaming-start': ['toolCallId', 'toolName'],
  'tool-call-delta': ['toolCallId'],
  'tool-call-input-streaming-end': ['toolCallId'],
  'tool-call': ['toolCallId', 'toolName'],
  'tool-result': ['toolCallId', 'toolName'],
  'tool-error': ['toolCallId', 'toolName'],
  'tool-call-approval': ['toolCallId'],
  source: [],
  file: [],
  raw: [],
  'step-finish': [],
  finish: [],
  error: [],
  abort: [],
  tripwire: ['reason'],
  object: [],
  'object-result': [],
} as const satisfies Record<AgentChunkKind, readonly string[]>;

const KIND_FIELDS: ReadonlyMap<string, readonly string[]> = new Map(Object.entries(KINDS));

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Why a value read back from storage is not a chunk this build can serve, or `undefined` when it
 * is: not an object, no string `type`, a type this build does not know (a newer format), an agent
 * chunk without its `payload` object or without one of the string fields its kind needs.
 */
export function chunkProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return 'not a chunk object';
  const type = value['type'];
  if (typeof type !== 'string' || type === '') return 'no string `type`';
  if (type.startsWith('data-')) return 'data' in value ? undefined : `${type} chunk without \`data\``;
  const fields = KIND_FIELDS.get(type);
  if (fields === undefined) return `unknown chunk type ${JSON.stringify(type.slice(0, 64))} (written by a newer format?)`;
  const payload = value['payload'];
  if (!isRecord(payload)) return `${type} chunk without a \`payload\` object`;
  for (const field of fields) if (typeof payload[field] !== 'string') return `${type} chunk without a string \`payload.${field}\``;
  return undefined;
}

/**
 * The form of an error a client may see: `{ name, message }` with the error's `name` (when it is
 * a plain identifier of at most 64 characters, else `'Error'`) and a fixed message.
 *
 * @example
 * ```ts
 * clientSafeError(new TypeError('https://api.example.com/v1?key=…')); // { name: 'TypeError', message: 'An error occurred.' }
 * ```
 */
export function clientSafeError(error: unknown): { name: string; message: string } {
  let name: unknown;
  try {
    name = isRecord(error) ? error['name'] : undefined;
  } catch {
    // a Proxy that throws, a revoked Proxy, a `name` getter that throws: no name to show
  }
  return { name: typeof name === 'string' && /^[A-Za-z_$][\w$]{0,63}$/.test(name) ? name : 'Error', message: CLIENT_ERROR_MESSAGE };
}

/**
 * `chunk` as a client may see it: an `error` or `tool-error` chunk with its `payload.error` in the
 * safe form ({@link clientSafeError}); any other chunk unchanged (the same object).
 *
 * @example
 * ```ts
 * clientSafeChunk({ type: 'error', runId, from: 'AGENT', payload: { error: apiCallError } }).payload.error; // { name: 'AI_APICallError', message: 'An error occurred.' }
 * ```
 */
export function clientSafeChunk<T extends ChunkType>(chunk: T): T {
  if (chunk.type !== 'error' && chunk.type !== 'tool-error') return chunk;
  const payload = (chunk as { payload?: unknown }).payload;
  if (!isRecord(payload)) return chunk;
  return { ...chunk, payload: { ...payload, error: clientSafeError(payload['error']) } };
}
