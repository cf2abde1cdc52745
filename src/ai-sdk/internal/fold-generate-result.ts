/** Folds a V4 part stream into the `doGenerate` result shape (for `wrapGenerate`). */
import type {
  LanguageModelV4Content,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
} from '@ai-sdk/provider';

/**
 * The generate result of a processed stream. An `error` part is thrown (a `TripWire` stays one,
 * so `generateText` rejects with it).
 */
export function foldGenerateResult(
  parts: readonly LanguageModelV4StreamPart[],
  meta: Pick<LanguageModelV4GenerateResult, 'request' | 'response'>,
): LanguageModelV4GenerateResult {
  const content: LanguageModelV4Content[] = [];
  const blocks = new Map<string, { type: 'text' | 'reasoning'; text: string }>();
  const result: LanguageModelV4GenerateResult = {
    content,
    finishReason: { unified: 'other', raw: undefined },
    usage: {
      inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: undefined, text: undefined, reasoning: undefined },
    },
    warnings: [],
    ...(meta.request === undefined ? {} : { request: meta.request }),
    ...(meta.response === undefined ? {} : { response: meta.response }),
  };
  const block = (type: 'text' | 'reasoning', id: string) => {
    let current = blocks.get(`${type}:${id}`);
    if (current === undefined) {
      current = { type, text: '' };
      blocks.set(`${type}:${id}`, current);
      content.push(current);
    }
    return current;
  };
  for (const part of parts) {
    switch (part.type) {
      case 'stream-start':
        result.warnings = part.warnings;
        break;
      case 'text-start':
        block('text', part.id);
        break;
      case 'text-delta':
        block('text', part.id).text += part.delta;
        break;
      case 'reasoning-start':
        block('reasoning', part.id);
        break;
      case 'reasoning-delta':
        block('reasoning', part.id).text += part.delta;
        break;
      case 'tool-call':
      case 'tool-result':
      case 'tool-approval-request':
      case 'source':
      case 'file':
        content.push(part);
        break;
      case 'response-metadata': {
        const { type: _type, ...metadata } = part;
        result.response = { ...result.response, ...metadata };
        break;
      }
      case 'finish':
        result.finishReason = part.finishReason;
        result.usage = part.usage;
        if (part.providerMetadata) result.providerMetadata = part.providerMetadata;
        break;
      case 'error':
        throw part.error;
      default:
        break;
    }
  }
  return result;
}
