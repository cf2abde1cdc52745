import type { ModelMessage, ProviderMetadata } from 'ai';
import type { MastraDBMessage, MastraMessagePart, MastraMessageRole, ToolInvocationPart } from './types.js';
import { resolveConversionOptions, type ConversionOptions } from './conversion-options.js';
import { reasoningPart, withMetadata } from './internal/part-builders.js';
import { parseDataUrl, toStoredFileData } from './internal/file-data.js';
import { invocationResultFromOutput, type ToolResultOutput } from './internal/tool-output.js';

type ContentPart = Exclude<ModelMessage['content'], string>[number];

/**
 * Converts an AI SDK `ModelMessage` to a stored `MastraDBMessage`. An `id` on the input is kept,
 * otherwise one is generated.
 *
 * Text, reasoning (`providerOptions` → `providerMetadata`), files and images (→ file parts,
 * binary data as base64), tool calls (→ tool-invocation, state `call`) are kept; a tool result
 * in an assistant message (provider-executed) completes its call in the same message. A `tool`
 * message becomes a stored `tool` message whose tool-invocation parts carry the results (with
 * `args: {}`, unknown here): `MessageList.add` folds those into the matching calls. Tool approval
 * parts are not supported. The input is not validated: use `modelMessageSchema` (or
 * `MessageList.add`) for untrusted data.
 *
 * @example
 * ```ts
 * import { fromModelMessage } from 'rxagent/message-list';
 * const stored = fromModelMessage({ role: 'user', content: 'What is the weather?' });
 * ```
 */
export function fromModelMessage(message: ModelMessage, options?: ConversionOptions): MastraDBMessage {
  const { generateId, now } = resolveConversionOptions(options);
  const given = (message as { id?: unknown }).id;
  const parts: MastraMessagePart[] = [];
  if (typeof message.content === 'string') {
    parts.push({ type: 'text', text: message.content });
  } else {
    for (const part of message.content) addModelPart(parts, part);
  }
  const role: MastraMessageRole = message.role;
  return {
    id: typeof given === 'string' && given !== '' ? given : generateId(),
    role,
    createdAt: now(),
    content: { format: 2, parts, ...(message.providerOptions ? { providerMetadata: message.providerOptions } : {}) },
  };
}

function addModelPart(parts: MastraMessagePart[], part: ContentPart): void {
  switch (part.type) {
    case 'text':
      parts.push(withMetadata({ type: 'text' as const, text: part.text }, part.providerOptions));
      return;
    case 'reasoning':
      parts.push(reasoningPart(part.text, part.providerOptions));
      return;
    case 'image': {
      const stored = toStoredFileData(part.image);
      const mimeType = part.mediaType ?? (typeof part.image === 'string' ? parseDataUrl(part.image)?.mediaType : undefined) ?? 'image';
      parts.push(withMetadata({ type: 'file' as const, mimeType, ...stored }, part.providerOptions));
      return;
    }
    case 'file': {
      const stored = toStoredFileData(part.data);
      parts.push(
        withMetadata(
          { type: 'file' as const, mimeType: part.mediaType, ...stored, ...(part.filename !== undefined ? { filename: part.filename } : {}) },
          part.providerOptions,
        ),
      );
      return;
    }
    case 'tool-call':
      parts.push(
        withMetadata(
          {
            type: 'tool-invocation' as const,
            toolInvocation: { state: 'call' as const, toolCallId: part.toolCallId, toolName: part.toolName, args: part.input },
            ...(part.providerExecuted !== undefined ? { providerExecuted: part.providerExecuted } : {}),
          },
          part.providerOptions,
        ),
      );
      return;
    case 'tool-result':
      addToolResult(parts, part.toolCallId, part.toolName, part.output, part.providerOptions);
      return;
    default:
      // custom, reasoning-file and tool approval parts have no stored form
      return;
  }
}

function addToolResult(
  parts: MastraMessagePart[],
  toolCallId: string,
  toolName: string,
  output: ToolResultOutput,
  providerOptions: ProviderMetadata | undefined,
): void {
  const resultFields = invocationResultFromOutput(output);
  const call = parts.find(
    (part): part is ToolInvocationPart => part.type === 'tool-invocation' && part.toolInvocation.toolCallId === toolCallId,
  );
  if (call) {
    call.toolInvocation = { ...call.toolInvocation, ...resultFields };
    return;
  }
  parts.push(
    withMetadata({ type: 'tool-invocation' as const, toolInvocation: { toolCallId, toolName, args: {}, ...resultFields } }, providerOptions),
  );
}
