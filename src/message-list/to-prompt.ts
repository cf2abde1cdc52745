import type { LanguageModelV4Message, LanguageModelV4Prompt, LanguageModelV4ToolResultOutput, SharedV4FileData, SharedV4ProviderOptions } from '@ai-sdk/provider';
import type { FilePart, ModelMessage } from 'ai';
import type { CoreSystemMessage, FilePart as StoredFilePart, MastraDBMessage } from './types.js';
import { appendModelMessages, toModelFilePart } from './to-model.js';
import { isUrlString, parseDataUrl, toStoredFileData } from './internal/file-data.js';
import { isRecord } from './schemas/schema-helpers.js';

type ModelPart = Exclude<ModelMessage['content'], string>[number];
type PromptPart = Exclude<LanguageModelV4Message['content'], string>[number];

/**
 * What `toPrompt` assembles a provider prompt from.
 *
 * @example
 * ```ts
 * import type { ToPromptInput } from 'rxagent/message-list';
 * const input: ToPromptInput = { systemMessages: messageList.getAllSystemMessages(), messages: messageList.get.all.db() };
 * ```
 */
export interface ToPromptInput {
  /** System messages, in the order they should appear (before the conversation). */
  systemMessages: ReadonlyArray<CoreSystemMessage>;
  /** The conversation, in list order. */
  messages: ReadonlyArray<MastraDBMessage>;
}

/**
 * Builds a provider prompt (`LanguageModelV4Prompt`): the system messages first, then the
 * conversation converted as `toModelMessages` does (tool calls followed by a `tool` message with
 * their results; `data-*`, sources and step-start parts are not sent), with file content as
 * tagged file data (`data`, `url` or `reference`).
 *
 * @example
 * ```ts
 * import { toPrompt } from 'rxagent/message-list';
 * const prompt = toPrompt({ systemMessages: [{ role: 'system', content: 'Be brief.' }], messages: messageList.get.all.db() });
 * ```
 */
export function toPrompt(input: ToPromptInput): LanguageModelV4Prompt {
  const prompt: LanguageModelV4Prompt = [];
  for (const system of input.systemMessages) {
    prompt.push(
      system.providerOptions
        ? { role: 'system', content: system.content, providerOptions: system.providerOptions as SharedV4ProviderOptions }
        : { role: 'system', content: system.content },
    );
  }
  // one pass: the model messages `toModelMessages` builds have the prompt's shape (the same keys,
  // content always an array of text / reasoning / tool-call / tool-result parts) except file parts,
  // built here directly in their prompt form; `toPromptMessage` would copy every other one as is
  const conversation = prompt as unknown as ModelMessage[];
  for (const message of input.messages) appendModelMessages(conversation, message, toPromptFilePart);
  // the prompt lives as long as the model call: a copy of exactly its length (performance house rules, bench/README.md)
  return prompt.slice();
}

/** A stored file part in its provider prompt form, typed as the model part it stands in for. */
function toPromptFilePart(part: StoredFilePart): FilePart {
  return toPromptPart(toModelFilePart(part)) as unknown as FilePart;
}

/**
 * Converts one AI SDK `ModelMessage` to a provider prompt message (string content becomes a text
 * part; file data becomes tagged file data).
 *
 * @example
 * ```ts
 * import { toPromptMessage } from 'rxagent/message-list';
 * toPromptMessage({ role: 'user', content: 'hi' }); // { role: 'user', content: [{ type: 'text', text: 'hi' }] }
 * ```
 */
export function toPromptMessage(message: ModelMessage): LanguageModelV4Message {
  const options = providerOptionsOf(message.providerOptions);
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content, ...options };
    case 'user':
      return { role: 'user', content: toPromptParts(message.content) as Extract<LanguageModelV4Message, { role: 'user' }>['content'], ...options };
    case 'assistant':
      return { role: 'assistant', content: toPromptParts(message.content) as Extract<LanguageModelV4Message, { role: 'assistant' }>['content'], ...options };
    case 'tool':
      return { role: 'tool', content: toPromptParts(message.content) as Extract<LanguageModelV4Message, { role: 'tool' }>['content'], ...options };
  }
}

function toPromptParts(content: ModelMessage['content']): PromptPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  const parts: PromptPart[] = [];
  for (const part of content) {
    const converted = toPromptPart(part);
    if (converted) parts.push(converted);
  }
  return parts;
}

function toPromptPart(part: ModelPart): PromptPart | undefined {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text, ...providerOptionsOf(part.providerOptions) };
    case 'reasoning':
      return { type: 'reasoning', text: part.text, ...providerOptionsOf(part.providerOptions) };
    case 'image':
      return {
        type: 'file',
        data: toPromptFileData(part.image),
        mediaType: part.mediaType ?? (typeof part.image === 'string' ? parseDataUrl(part.image)?.mediaType : undefined) ?? 'image',
        ...providerOptionsOf(part.providerOptions),
      };
    case 'file':
      return {
        type: 'file',
        data: toPromptFileData(part.data),
        mediaType: part.mediaType,
        ...(part.filename !== undefined ? { filename: part.filename } : {}),
        ...providerOptionsOf(part.providerOptions),
      };
    case 'tool-call':
      return {
        type: 'tool-call',
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        input: part.input,
        ...(part.providerExecuted !== undefined ? { providerExecuted: part.providerExecuted } : {}),
        ...providerOptionsOf(part.providerOptions),
      };
    case 'tool-result':
      return {
        type: 'tool-result',
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        // the AI SDK and provider output unions differ only in binary data typing
        output: part.output as LanguageModelV4ToolResultOutput,
        ...providerOptionsOf(part.providerOptions),
      };
    default:
      return undefined;
  }
}

function toPromptFileData(data: unknown): SharedV4FileData {
  if (data instanceof URL) return { type: 'url', url: data };
  if (data instanceof Uint8Array) return { type: 'data', data };
  if (isRecord(data) && (data['type'] === 'url' || data['type'] === 'data' || data['type'] === 'reference' || data['type'] === 'text')) {
    if (data['type'] === 'data' && !(typeof data['data'] === 'string' || data['data'] instanceof Uint8Array)) return toPromptFileData(toStoredFileData(data).data);
    return data as unknown as SharedV4FileData;
  }
  if (typeof data === 'string') {
    if (!isUrlString(data)) return { type: 'data', data };
    const dataUrl = parseDataUrl(data);
    return dataUrl ? { type: 'data', data: dataUrl.base64 } : { type: 'url', url: new URL(data) };
  }
  const stored = toStoredFileData(data);
  return stored.providerReference ? { type: 'reference', reference: stored.providerReference } : toPromptFileData(stored.data);
}

function providerOptionsOf(providerOptions: Record<string, Record<string, unknown>> | undefined): { providerOptions?: SharedV4ProviderOptions } {
  // provider options are JSON objects by contract (validated on the way in)
  return providerOptions ? { providerOptions: providerOptions as SharedV4ProviderOptions } : {};
}
