/**
 * The reverse of the loop's `modelPartToChunk`: an rxagent chunk back into the provider's V4
 * stream part, so processed chunks can flow on to the AI SDK (`wrapStream` middleware).
 */
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import type { JSONValue } from '@ai-sdk/provider';
import type { ChunkType } from '../contract/index.js';

function toolInput(args: unknown): string {
  if (typeof args === 'string') return args;
  return JSON.stringify(args ?? {});
}

function withMetadata<T extends LanguageModelV4StreamPart>(part: T, providerMetadata: unknown): T {
  return providerMetadata ? { ...part, providerMetadata } : part;
}

/**
 * The V4 stream part for a chunk, or `null` for chunks that have none (`start`, steps, `finish`,
 * tripwires, errors, `data-*` chunks, `tool-error`, client-side tool results — the run's own
 * bookkeeping, which the AI SDK derives itself).
 *
 * @example
 * ```ts
 * import { chunkToModelPart } from 'rxagent/ai-sdk';
 * chunkToModelPart({ type: 'text-delta', runId: 'r', from: 'AGENT', payload: { id: 't1', text: 'Hi' } });
 * // { type: 'text-delta', id: 't1', delta: 'Hi' }
 * ```
 */
export function chunkToModelPart(chunk: ChunkType): LanguageModelV4StreamPart | null {
  if (chunk.type.startsWith('data-')) return null;
  const agentChunk = chunk as Exclude<ChunkType, { type: `data-${string}`; data: unknown }>;
  switch (agentChunk.type) {
    case 'text-start':
      return withMetadata({ type: 'text-start' as const, id: agentChunk.payload.id }, agentChunk.payload.providerMetadata);
    case 'text-delta':
      return withMetadata({ type: 'text-delta' as const, id: agentChunk.payload.id, delta: agentChunk.payload.text }, agentChunk.payload.providerMetadata);
    case 'text-end':
      return withMetadata({ type: 'text-end' as const, id: agentChunk.payload.id }, agentChunk.payload.providerMetadata);
    case 'reasoning-start':
      return withMetadata({ type: 'reasoning-start' as const, id: agentChunk.payload.id }, agentChunk.payload.providerMetadata);
    case 'reasoning-delta':
      return withMetadata({ type: 'reasoning-delta' as const, id: agentChunk.payload.id, delta: agentChunk.payload.text }, agentChunk.payload.providerMetadata);
    case 'reasoning-end':
      return withMetadata({ type: 'reasoning-end' as const, id: agentChunk.payload.id }, agentChunk.payload.providerMetadata);
    case 'tool-call-input-streaming-start':
      return {
        type: 'tool-input-start',
        id: agentChunk.payload.toolCallId,
        toolName: agentChunk.payload.toolName,
        ...(agentChunk.payload.providerExecuted === undefined ? {} : { providerExecuted: agentChunk.payload.providerExecuted }),
        ...(agentChunk.payload.dynamic === undefined ? {} : { dynamic: agentChunk.payload.dynamic }),
      };
    case 'tool-call-delta':
      return { type: 'tool-input-delta', id: agentChunk.payload.toolCallId, delta: agentChunk.payload.argsTextDelta };
    case 'tool-call-input-streaming-end':
      return { type: 'tool-input-end', id: agentChunk.payload.toolCallId };
    case 'tool-call':
      return withMetadata(
        {
          type: 'tool-call' as const,
          toolCallId: agentChunk.payload.toolCallId,
          toolName: agentChunk.payload.toolName,
          input: toolInput(agentChunk.payload.args),
          ...(agentChunk.payload.providerExecuted === undefined ? {} : { providerExecuted: agentChunk.payload.providerExecuted }),
          ...(agentChunk.payload.dynamic === undefined ? {} : { dynamic: agentChunk.payload.dynamic }),
        },
        agentChunk.payload.providerMetadata,
      );
    case 'tool-result':
      if (agentChunk.payload.providerExecuted !== true) return null;
      return withMetadata(
        {
          type: 'tool-result' as const,
          toolCallId: agentChunk.payload.toolCallId,
          toolName: agentChunk.payload.toolName,
          result: (agentChunk.payload.result ?? null) as NonNullable<JSONValue>,
          ...(agentChunk.payload.isError === undefined ? {} : { isError: agentChunk.payload.isError }),
        },
        agentChunk.payload.providerMetadata,
      );
    case 'tool-call-approval':
      return { type: 'tool-approval-request', toolCallId: agentChunk.payload.toolCallId, approvalId: agentChunk.payload.approvalId };
    case 'source':
      if (agentChunk.payload.sourceType === 'url') {
        return withMetadata(
          {
            type: 'source' as const,
            sourceType: 'url' as const,
            id: agentChunk.payload.id,
            url: agentChunk.payload.url ?? '',
            ...(agentChunk.payload.title === undefined ? {} : { title: agentChunk.payload.title }),
          },
          agentChunk.payload.providerMetadata,
        );
      }
      return withMetadata(
        {
          type: 'source' as const,
          sourceType: 'document' as const,
          id: agentChunk.payload.id,
          mediaType: agentChunk.payload.mediaType ?? 'application/octet-stream',
          title: agentChunk.payload.title ?? agentChunk.payload.filename ?? agentChunk.payload.id,
          ...(agentChunk.payload.filename === undefined ? {} : { filename: agentChunk.payload.filename }),
        },
        agentChunk.payload.providerMetadata,
      );
    case 'file': {
      const data = agentChunk.payload.data;
      const isUrl = /^(https?:|data:|blob:)/i.test(data);
      return withMetadata(
        {
          type: 'file' as const,
          mediaType: agentChunk.payload.mimeType,
          data: isUrl ? { type: 'url' as const, url: new URL(data) } : { type: 'data' as const, data },
        },
        agentChunk.payload.providerMetadata,
      );
    }
    case 'response-metadata':
      return { type: 'response-metadata', ...agentChunk.payload };
    case 'raw':
      return { type: 'raw', rawValue: agentChunk.payload.rawValue };
    default:
      return null;
  }
}
