import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { finishPart, reasoningParts, streamStartPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';

/** One V4 run using every part kind that V2, V3 and V4 can all express. */
export const sharedRun: LanguageModelV4StreamPart[] = [
  streamStartPart([{ type: 'other', message: 'heads up' }]),
  { type: 'response-metadata', id: 'resp-1', modelId: 'mock-model-2024', timestamp: new Date(0) },
  ...reasoningParts('Let me think.'),
  { type: 'text-start', id: 'text-1', providerMetadata: { mock: { itemId: 'item-1' } } },
  ...textParts('Hello there, world', { chunkSize: 5 }).slice(1),
  ...toolCallParts('weather', { city: 'Paris' }, { toolCallId: 'call-1', chunkSize: 7 }),
  ...toolCallParts('web_search', { query: 'rxjs' }, { toolCallId: 'call-2', providerExecuted: true }),
  { type: 'tool-result', toolCallId: 'call-2', toolName: 'web_search', result: { hits: ['https://rxjs.dev'] } },
  { type: 'source', sourceType: 'url', id: 'src-1', url: 'https://rxjs.dev', title: 'RxJS' },
  { type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'iVBORw0KGgo=' } },
  { type: 'raw', rawValue: { anything: true } },
  { type: 'error', error: new Error('a stream error part') },
  {
    ...finishPart('tool-calls', { inputTokens: 12, outputTokens: 7, reasoningTokens: 3, cachedInputTokens: 2 }),
    providerMetadata: { mock: { requestId: 'r1' } },
  },
];
