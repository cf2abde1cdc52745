import type { UIMessage } from 'ai';
import type { ProviderMetadata } from 'ai';
import type { MastraDBMessage, MastraMessagePart, ToolInvocation, ToolInvocationPart } from './types.js';
import { resolveConversionOptions, type ConversionOptions } from './conversion-options.js';
import { reasoningPart, withMetadata } from './internal/part-builders.js';
import { isRecord } from './schemas/schema-helpers.js';

type UIPart = UIMessage['parts'][number];

/**
 * Converts an AI SDK `UIMessage` to a stored `MastraDBMessage` (format 2), keeping its id.
 *
 * Text, reasoning (with `providerMetadata`, where e.g. Anthropic keeps the signature), tool
 * parts, sources, files, step-start and `data-*` parts are kept. Tool states map as
 * input-streaming → partial-call, input-available / approval-* → call, output-available →
 * result, output-error → output-error, output-denied → output-error (with an
 * `execution-denied` model output). `custom`, `reasoning-file` and `steering-message` parts
 * are not supported; `metadata` is kept when it is an object. The input is not validated: use
 * `uiMessageSchema` (or `MessageList.add`) for untrusted data.
 *
 * @example
 * ```ts
 * import { fromUIMessage } from 'rxagent/message-list';
 * const stored = fromUIMessage({ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hi' }] });
 * ```
 */
export function fromUIMessage(message: UIMessage, options?: ConversionOptions): MastraDBMessage {
  const { now } = resolveConversionOptions(options);
  const parts: MastraMessagePart[] = [];
  for (const part of message.parts) {
    const converted = fromUIPart(part);
    if (converted) parts.push(converted);
  }
  const metadata = isRecord(message.metadata) ? message.metadata : undefined;
  return {
    id: message.id,
    role: message.role,
    createdAt: now(),
    content: { format: 2, parts, ...(metadata ? { metadata } : {}) },
  };
}

function fromUIPart(part: UIPart): MastraMessagePart | undefined {
  switch (part.type) {
    case 'text':
      return withMetadata({ type: 'text' as const, text: part.text }, part.providerMetadata);
    case 'reasoning':
      return reasoningPart(part.text, part.providerMetadata);
    case 'source-url':
      return withMetadata(
        { type: 'source' as const, source: { sourceType: 'url' as const, id: part.sourceId, url: part.url, ...(part.title !== undefined ? { title: part.title } : {}) } },
        part.providerMetadata,
      );
    case 'source-document':
      return withMetadata(
        {
          type: 'source' as const,
          source: {
            sourceType: 'document' as const,
            id: part.sourceId,
            mediaType: part.mediaType,
            title: part.title,
            ...(part.filename !== undefined ? { filename: part.filename } : {}),
          },
        },
        part.providerMetadata,
      );
    case 'file':
      return withMetadata(
        {
          type: 'file' as const,
          mimeType: part.mediaType,
          data: part.url,
          ...(part.filename !== undefined ? { filename: part.filename } : {}),
          ...(part.providerReference ? { providerReference: { ...part.providerReference } } : {}),
        },
        part.providerMetadata,
      );
    case 'step-start':
      return { type: 'step-start' };
    case 'custom':
    case 'reasoning-file':
    case 'steering-message':
      return undefined;
    default:
      if (part.type === 'dynamic-tool' || part.type.startsWith('tool-')) return fromUIToolPart(part as UIToolPart);
      if (part.type.startsWith('data-')) {
        const data = part as { type: `data-${string}`; id?: string; data: unknown };
        return { type: data.type, data: data.data, ...(data.id !== undefined ? { id: data.id } : {}) };
      }
      return undefined;
  }
}

/** The fields of a UI tool part (static `tool-<name>` or `dynamic-tool`) that the conversion reads. */
interface UIToolPart {
  type: string;
  toolName?: string;
  toolCallId: string;
  state: string;
  input?: unknown;
  output?: unknown;
  errorText?: string;
  title?: string;
  providerExecuted?: boolean;
  callProviderMetadata?: ProviderMetadata;
  approval?: { reason?: string };
}

function fromUIToolPart(part: UIToolPart): ToolInvocationPart {
  const dynamic = part.type === 'dynamic-tool';
  const toolName = dynamic ? (part.toolName ?? '') : part.type.slice('tool-'.length);
  const base = { toolCallId: part.toolCallId, toolName, args: part.input };
  let toolInvocation: ToolInvocation;
  switch (part.state) {
    case 'input-streaming':
      toolInvocation = { state: 'partial-call', ...base };
      break;
    case 'output-available':
      toolInvocation = { state: 'result', ...base, result: part.output };
      break;
    case 'output-error':
      toolInvocation = { state: 'output-error', ...base, errorText: part.errorText ?? '' };
      break;
    case 'output-denied': {
      const reason = part.approval?.reason;
      toolInvocation = {
        state: 'output-error',
        ...base,
        errorText: reason ?? 'Tool execution denied.',
        modelOutput: reason === undefined ? { type: 'execution-denied' } : { type: 'execution-denied', reason },
      };
      break;
    }
    default:
      toolInvocation = { state: 'call', ...base };
  }
  return withMetadata(
    {
      type: 'tool-invocation' as const,
      toolInvocation,
      ...(part.providerExecuted !== undefined ? { providerExecuted: part.providerExecuted } : {}),
      ...(part.title !== undefined ? { title: part.title } : {}),
      ...(dynamic ? { dynamic: true } : {}),
    },
    part.callProviderMetadata,
  );
}
