import type { UIMessage } from 'ai';
import type { MastraDBMessage, MastraMessagePart, ToolInvocationPart } from './types.js';
import { withMetadata, reasoningText } from './internal/part-builders.js';
import { toUrlString } from './internal/file-data.js';

type UIPart = UIMessage['parts'][number];

/**
 * Converts a stored message to an AI SDK `UIMessage` (same id; `content.metadata` becomes
 * `metadata`; a stored `tool` message becomes an `assistant` one).
 *
 * Tool invocations become `tool-<name>` parts (`dynamic-tool` when stored as dynamic) with
 * states partial-call → input-streaming, call → input-available, result → output-available,
 * output-error → output-error. Files get a URL (`data:` URL for base64 content).
 *
 * @example
 * ```ts
 * import { toUIMessage } from 'rxagent/message-list';
 * const uiMessages = messageList.get.all.db().map(toUIMessage);
 * ```
 */
export function toUIMessage(message: MastraDBMessage): UIMessage {
  const parts: UIPart[] = [];
  for (const part of message.content.parts) parts.push(toUIPart(part));
  if (parts.length === 0 && typeof message.content.content === 'string' && message.content.content !== '') {
    parts.push({ type: 'text', text: message.content.content });
  }
  return {
    id: message.id,
    role: message.role === 'tool' ? 'assistant' : message.role,
    ...(message.content.metadata ? { metadata: message.content.metadata } : {}),
    parts,
  };
}

function toUIPart(part: MastraMessagePart): UIPart {
  switch (part.type) {
    case 'text':
      return withMetadata({ type: 'text', text: part.text }, part.providerMetadata);
    case 'reasoning':
      return withMetadata({ type: 'reasoning', text: reasoningText(part) }, part.providerMetadata);
    case 'tool-invocation':
      return toUIToolPart(part);
    case 'file':
      return withMetadata(
        {
          type: 'file',
          mediaType: part.mimeType,
          url: toUrlString(part, part.mimeType),
          ...(part.filename !== undefined ? { filename: part.filename } : {}),
          ...(part.providerReference ? { providerReference: { ...part.providerReference } } : {}),
        },
        part.providerMetadata,
      );
    case 'source': {
      const { source } = part;
      if (source.sourceType === 'url') {
        return withMetadata(
          { type: 'source-url', sourceId: source.id, url: source.url ?? '', ...(source.title !== undefined ? { title: source.title } : {}) },
          part.providerMetadata,
        );
      }
      return withMetadata(
        {
          type: 'source-document',
          sourceId: source.id,
          mediaType: source.mediaType ?? 'application/octet-stream',
          title: source.title ?? '',
          ...(source.filename !== undefined ? { filename: source.filename } : {}),
        },
        part.providerMetadata,
      );
    }
    case 'step-start':
      return { type: 'step-start' };
    default:
      return { type: part.type, data: part.data, ...(part.id !== undefined ? { id: part.id } : {}) };
  }
}

function toUIToolPart(part: ToolInvocationPart): UIPart {
  const { toolInvocation } = part;
  const common = {
    toolCallId: toolInvocation.toolCallId,
    ...(part.title !== undefined ? { title: part.title } : {}),
    ...(part.providerExecuted !== undefined ? { providerExecuted: part.providerExecuted } : {}),
    ...(part.providerMetadata ? { callProviderMetadata: part.providerMetadata } : {}),
  };
  const naming = part.dynamic
    ? { type: 'dynamic-tool' as const, toolName: toolInvocation.toolName }
    : { type: `tool-${toolInvocation.toolName}` as const };
  switch (toolInvocation.state) {
    case 'partial-call':
      return { ...naming, ...common, state: 'input-streaming', input: toolInvocation.args };
    case 'call':
      return { ...naming, ...common, state: 'input-available', input: toolInvocation.args };
    case 'result':
      return { ...naming, ...common, state: 'output-available', input: toolInvocation.args, output: toolInvocation.result };
    case 'output-error':
      return { ...naming, ...common, state: 'output-error', input: toolInvocation.args, errorText: toolInvocation.errorText ?? 'Tool execution failed.' };
  }
}
