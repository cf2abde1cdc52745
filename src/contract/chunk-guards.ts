/** Type guards for chunks: one per kind plus the generic `isChunkType`. */
import type { AgentChunk, AgentChunkKind, ChunkOfType, ChunkType, DataChunkType, TerminalChunk } from './chunk-types.js';

/**
 * True when `chunk.type` is one of `types` (narrows the chunk).
 *
 * @example
 * ```ts
 * import { isChunkType } from 'rxagent';
 * if (isChunkType(chunk, 'text-delta')) console.log(chunk.payload.text);
 * ```
 */
export function isChunkType<const T extends ChunkType['type']>(
  chunk: ChunkType,
  ...types: readonly T[]
): chunk is ChunkOfType<T> & ChunkType {
  return types.includes(chunk.type as T);
}

/**
 * True for custom `data-*` chunks.
 *
 * @example
 * ```ts
 * import { isDataChunk } from 'rxagent';
 * if (isDataChunk(chunk)) console.log(chunk.type, chunk.data);
 * ```
 */
export function isDataChunk(chunk: ChunkType): chunk is DataChunkType {
  return chunk.type.charCodeAt(0) === 100 /* d */ && chunk.type.startsWith('data-');
}

/**
 * True for the chunks that end a run: `finish`, `tripwire`, `error`, `abort`.
 *
 * @example
 * ```ts
 * import { isTerminalChunk } from 'rxagent';
 * const done = isTerminalChunk(chunk);
 * ```
 */
export function isTerminalChunk(chunk: ChunkType): chunk is TerminalChunk {
  const type = chunk.type;
  return type === 'finish' || type === 'tripwire' || type === 'error' || type === 'abort';
}

const guard =
  <K extends AgentChunkKind>(kind: K) =>
  (chunk: ChunkType): chunk is AgentChunk<K> =>
    chunk.type === kind;

/** @example `if (isTextDeltaChunk(chunk)) text += chunk.payload.text;` */
export const isTextDeltaChunk = guard('text-delta');
/** @example `if (isTextStartChunk(chunk)) open(chunk.payload.id);` */
export const isTextStartChunk = guard('text-start');
/** @example `if (isTextEndChunk(chunk)) close(chunk.payload.id);` */
export const isTextEndChunk = guard('text-end');
/** @example `if (isReasoningDeltaChunk(chunk)) thoughts += chunk.payload.text;` */
export const isReasoningDeltaChunk = guard('reasoning-delta');
/** @example `if (isReasoningStartChunk(chunk)) openThought(chunk.payload.id);` */
export const isReasoningStartChunk = guard('reasoning-start');
/** @example `if (isReasoningEndChunk(chunk)) closeThought(chunk.payload.id);` */
export const isReasoningEndChunk = guard('reasoning-end');
/** @example `if (isToolCallChunk(chunk)) console.log(chunk.payload.toolName);` */
export const isToolCallChunk = guard('tool-call');
/** @example `if (isToolResultChunk(chunk)) console.log(chunk.payload.result);` */
export const isToolResultChunk = guard('tool-result');
/** @example `if (isToolErrorChunk(chunk)) console.error(chunk.payload.error);` */
export const isToolErrorChunk = guard('tool-error');
/** @example `if (isToolCallDeltaChunk(chunk)) args += chunk.payload.argsTextDelta;` */
export const isToolCallDeltaChunk = guard('tool-call-delta');
/** @example `if (isToolCallInputStartChunk(chunk)) console.log(chunk.payload.toolName);` */
export const isToolCallInputStartChunk = guard('tool-call-input-streaming-start');
/** @example `if (isToolCallInputEndChunk(chunk)) console.log(chunk.payload.toolCallId);` */
export const isToolCallInputEndChunk = guard('tool-call-input-streaming-end');
/** @example `if (isSourceChunk(chunk)) cite(chunk.payload.url);` */
export const isSourceChunk = guard('source');
/** @example `if (isFileChunk(chunk)) save(chunk.payload.data);` */
export const isFileChunk = guard('file');
/** @example `if (isStartChunk(chunk)) console.log('run started');` */
export const isStartChunk = guard('start');
/** @example `if (isStepStartChunk(chunk)) console.log(chunk.payload.stepNumber);` */
export const isStepStartChunk = guard('step-start');
/** @example `if (isStepFinishChunk(chunk)) console.log(chunk.payload.stepResult.reason);` */
export const isStepFinishChunk = guard('step-finish');
/** @example `if (isFinishChunk(chunk)) console.log(chunk.payload.stepResult.reason);` */
export const isFinishChunk = guard('finish');
/** @example `if (isErrorChunk(chunk)) console.error(chunk.payload.error);` */
export const isErrorChunk = guard('error');
/** @example `if (isAbortChunk(chunk)) console.log('aborted');` */
export const isAbortChunk = guard('abort');
/** @example `if (isTripwireChunk(chunk)) console.warn(chunk.payload.reason);` */
export const isTripwireChunk = guard('tripwire');
/** @example `if (isObjectChunk(chunk)) render(chunk.payload.object);` */
export const isObjectChunk = guard('object');
/** @example `if (isResponseMetadataChunk(chunk)) console.log(chunk.payload.modelId);` */
export const isResponseMetadataChunk = guard('response-metadata');
