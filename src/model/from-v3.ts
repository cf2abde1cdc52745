import {
  UnsupportedFunctionalityError,
  type LanguageModelV3,
  type LanguageModelV3CallOptions,
  type LanguageModelV3Content,
  type LanguageModelV3DataContent,
  type LanguageModelV3Message,
  type LanguageModelV3StreamPart,
  type LanguageModelV3ToolResultOutput,
  type LanguageModelV4,
  type LanguageModelV4CallOptions,
  type LanguageModelV4Content,
  type LanguageModelV4Message,
  type LanguageModelV4StreamPart,
  type LanguageModelV4ToolResultOutput,
  type SharedV4FileData,
  type SharedV4Warning,
} from '@ai-sdk/provider';
import { convertUint8ArrayToBase64 } from '@ai-sdk/provider-utils';
import { liftModel, type SpecLift } from './internal/lift-model.js';

/**
 * Adapts a `LanguageModelV3` to the V4 interface the loop speaks: V4 call options and prompt
 * are converted down for the call, V3 stream parts and results are converted up. What V3
 * cannot express (the `reasoning` setting, `custom`/`reasoning-file` assistant parts) is
 * dropped and reported as a warning in the `stream-start` part.
 *
 * @example
 * ```ts
 * import { adaptV3 } from './from-v3.js';
 * const model = adaptV3(someV3Model); // model.specificationVersion === 'v4'
 * ```
 */
export function adaptV3(model: LanguageModelV3): LanguageModelV4 {
  return liftModel(model, v3ToV4);
}

/** V3 → V4: the prompt and options down, results and parts up (see {@link liftModel}). */
const v3ToV4: SpecLift<LanguageModelV3, LanguageModelV4> = {
  specificationVersion: 'v4',
  callOptions: toV3CallOptions,
  result: (result, warnings) => ({ ...result, content: result.content.map(contentV3ToV4), warnings: [...result.warnings, ...warnings] }),
  part: partV3ToV4,
};

function partV3ToV4(part: LanguageModelV3StreamPart): LanguageModelV4StreamPart {
  return part.type === 'file' ? { ...part, data: { type: 'data', data: part.data } } : part;
}

function contentV3ToV4(content: LanguageModelV3Content): LanguageModelV4Content {
  return content.type === 'file' ? { ...content, data: { type: 'data', data: content.data } } : content;
}

function toV3CallOptions(options: LanguageModelV4CallOptions): {
  callOptions: LanguageModelV3CallOptions;
  warnings: SharedV4Warning[];
} {
  const warnings: SharedV4Warning[] = [];
  const { reasoning, prompt, ...rest } = options;
  if (reasoning !== undefined && reasoning !== 'provider-default') {
    warnings.push({
      type: 'unsupported',
      feature: 'reasoning',
      details: `LanguageModelV3 has no reasoning setting; reasoning '${reasoning}' was not sent (use providerOptions).`,
    });
  }
  return { callOptions: { ...rest, prompt: prompt.map((message) => messageV4ToV3(message, warnings)) }, warnings };
}

function messageV4ToV3(message: LanguageModelV4Message, warnings: SharedV4Warning[]): LanguageModelV3Message {
  switch (message.role) {
    case 'system':
      return message;
    case 'user':
      return {
        ...message,
        content: message.content.map((part) =>
          part.type === 'file' ? { ...part, data: fileDataV4ToV3(part.data) } : part,
        ),
      };
    case 'assistant':
      return {
        ...message,
        content: message.content.flatMap((part): V3AssistantPart[] => {
          switch (part.type) {
            case 'file':
              return [{ ...part, data: fileDataV4ToV3(part.data) }];
            case 'tool-result':
              return [{ ...part, output: toolOutputV4ToV3(part.output) }];
            case 'custom':
            case 'reasoning-file':
              warnings.push({
                type: 'compatibility',
                feature: `assistant ${part.type} part`,
                details: `LanguageModelV3 prompts have no '${part.type}' part; it was left out of the prompt.`,
              });
              return [];
            default:
              return [part];
          }
        }),
      };
    case 'tool':
      return {
        ...message,
        content: message.content.map((part) =>
          part.type === 'tool-result' ? { ...part, output: toolOutputV4ToV3(part.output) } : part,
        ),
      };
  }
}

function fileDataV4ToV3(data: SharedV4FileData): LanguageModelV3DataContent {
  switch (data.type) {
    case 'data':
      return data.data;
    case 'url':
      return data.url;
    case 'text':
      return new TextEncoder().encode(data.text);
    case 'reference':
      throw new UnsupportedFunctionalityError({
        functionality: 'file parts given by provider reference (LanguageModelV3 accepts data or a URL)',
      });
  }
}

type V3AssistantPart = Extract<LanguageModelV3Message, { role: 'assistant' }>['content'][number];
type V3ContentOutputPart = Extract<LanguageModelV3ToolResultOutput, { type: 'content' }>['value'][number];
type V4ContentOutputPart = Extract<LanguageModelV4ToolResultOutput, { type: 'content' }>['value'][number];

function toolOutputV4ToV3(output: LanguageModelV4ToolResultOutput): LanguageModelV3ToolResultOutput {
  if (output.type !== 'content') return output;
  return { ...output, value: output.value.map(contentOutputPartV4ToV3) };
}

function contentOutputPartV4ToV3(part: V4ContentOutputPart): V3ContentOutputPart {
  if (part.type !== 'file') return part;
  const { providerOptions } = part;
  const isImage = part.mediaType.startsWith('image');
  switch (part.data.type) {
    case 'data': {
      const data = typeof part.data.data === 'string' ? part.data.data : convertUint8ArrayToBase64(part.data.data);
      return isImage
        ? { type: 'image-data', data, mediaType: part.mediaType, providerOptions }
        : { type: 'file-data', data, mediaType: part.mediaType, filename: part.filename, providerOptions };
    }
    case 'url':
      return { type: isImage ? 'image-url' : 'file-url', url: part.data.url.toString(), providerOptions };
    case 'reference':
      return { type: isImage ? 'image-file-id' : 'file-id', fileId: { ...part.data.reference }, providerOptions };
    case 'text':
      return { type: 'text', text: part.data.text, providerOptions };
  }
}
