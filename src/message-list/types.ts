/**
 * The stored message shape (`MastraDBMessage`, format 2) and its parts, as the processor
 * specification gives them. `content` is always an object, never a string.
 */
import type { ModelMessage, ProviderMetadata, ToolResultPart, UIMessage } from 'ai';

/**
 * Where a message came from in a run. `user` is accepted as an alias of `input`.
 *
 * @example
 * ```ts
 * import type { MessageSource } from 'rxagent/message-list';
 * const source: MessageSource | undefined = messageList.getSource(message);
 * ```
 */
export type MessageSource = 'input' | 'response' | 'memory' | 'system';

/**
 * Role of a stored message.
 *
 * @example
 * ```ts
 * import type { MastraMessageRole } from 'rxagent/message-list';
 * const role: MastraMessageRole = message.role;
 * ```
 */
export type MastraMessageRole = 'user' | 'assistant' | 'system' | 'tool';

interface PartBase {
  providerMetadata?: ProviderMetadata;
  createdAt?: number;
}

/**
 * Plain text.
 *
 * @example
 * ```ts
 * import type { TextPart } from 'rxagent/message-list';
 * const part: TextPart = { type: 'text', text: 'Hello' };
 * ```
 */
export interface TextPart extends PartBase {
  type: 'text';
  text: string;
}

/**
 * One piece of a reasoning part: readable text (with an optional signature) or redacted data.
 *
 * @example
 * ```ts
 * import type { ReasoningDetail } from 'rxagent/message-list';
 * const detail: ReasoningDetail = { type: 'text', text: 'Thinking…', signature: 'sig' };
 * ```
 */
export type ReasoningDetail = { type: 'text'; text: string; signature?: string } | { type: 'redacted'; data: string };

/**
 * Model reasoning ("thinking"). `reasoning` is the joined readable text of `details`.
 *
 * @example
 * ```ts
 * import type { ReasoningPart } from 'rxagent/message-list';
 * const part: ReasoningPart = { type: 'reasoning', reasoning: 'Thinking…', details: [{ type: 'text', text: 'Thinking…' }] };
 * ```
 */
export interface ReasoningPart extends PartBase {
  type: 'reasoning';
  reasoning: string;
  details: ReasoningDetail[];
}

/**
 * Lifecycle state of a tool invocation.
 *
 * @example
 * ```ts
 * import type { ToolInvocationState } from 'rxagent/message-list';
 * const done = (state: ToolInvocationState) => state === 'result' || state === 'output-error';
 * ```
 */
export type ToolInvocationState = 'partial-call' | 'call' | 'result' | 'output-error';

/**
 * A tool call and (once known) its result.
 *
 * @example
 * ```ts
 * import type { ToolInvocation } from 'rxagent/message-list';
 * const invocation: ToolInvocation = { state: 'call', toolCallId: 'call-1', toolName: 'weather', args: { city: 'Paris' } };
 * ```
 */
export interface ToolInvocation {
  state: ToolInvocationState;
  toolCallId: string;
  toolName: string;
  args: unknown;
  result?: unknown;
  isError?: boolean;
  errorText?: string;
  /**
   * The exact model-facing output, kept only when `result` cannot express it (a model message's
   * `content` or `execution-denied` output). Dropped when the result is replaced.
   */
  modelOutput?: ToolResultPart['output'];
}

/**
 * A tool call and its result, updated in place as the call progresses.
 *
 * @example
 * ```ts
 * import type { ToolInvocationPart } from 'rxagent/message-list';
 * const part: ToolInvocationPart = { type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: 'call-1', toolName: 'weather', args: {}, result: 21 } };
 * ```
 */
export interface ToolInvocationPart extends PartBase {
  type: 'tool-invocation';
  toolInvocation: ToolInvocation;
  providerExecuted?: boolean;
  /** Display title of the tool (UI `title`). */
  title?: string;
  /** True when the UI shape is `dynamic-tool` (a tool not known statically). */
  dynamic?: boolean;
}

/**
 * A file: `data` is base64 or a URL string.
 *
 * @example
 * ```ts
 * import type { FilePart } from 'rxagent/message-list';
 * const part: FilePart = { type: 'file', mimeType: 'image/png', data: 'https://example.com/chart.png' };
 * ```
 */
export interface FilePart extends PartBase {
  type: 'file';
  mimeType: string;
  data: string;
  filename?: string;
  /** A provider file reference (from `uploadFile`); sent instead of `data` when present. */
  providerReference?: Record<string, string>;
}

/**
 * A cited source.
 *
 * @example
 * ```ts
 * import type { SourcePart } from 'rxagent/message-list';
 * const part: SourcePart = { type: 'source', source: { sourceType: 'url', id: 's1', url: 'https://example.com' } };
 * ```
 */
export interface SourcePart extends PartBase {
  type: 'source';
  source: {
    sourceType: 'url' | 'document';
    id: string;
    url?: string;
    title?: string;
    mediaType?: string;
    filename?: string;
  };
}

/**
 * Marks where a model step began inside an assistant message.
 *
 * @example
 * ```ts
 * import type { StepStartPart } from 'rxagent/message-list';
 * const part: StepStartPart = { type: 'step-start' };
 * ```
 */
export interface StepStartPart {
  type: 'step-start';
  model?: string;
  createdAt?: number;
}

/**
 * A custom data part (`writer.custom()` chunks are stored as these).
 *
 * @example
 * ```ts
 * import type { DataPart } from 'rxagent/message-list';
 * const part: DataPart<'data-progress'> = { type: 'data-progress', data: { percent: 50 } };
 * ```
 */
export interface DataPart<TType extends `data-${string}` = `data-${string}`> {
  type: TType;
  data: unknown;
  id?: string;
  createdAt?: number;
}

/**
 * Any part of a stored message.
 *
 * @example
 * ```ts
 * import type { MastraMessagePart } from 'rxagent/message-list';
 * const texts = message.content.parts.filter((part: MastraMessagePart) => part.type === 'text');
 * ```
 */
export type MastraMessagePart =
  | TextPart
  | ReasoningPart
  | ToolInvocationPart
  | FilePart
  | SourcePart
  | StepStartPart
  | DataPart;

/**
 * Content of a stored message (format 2).
 *
 * @example
 * ```ts
 * import type { MastraMessageContentV2 } from 'rxagent/message-list';
 * const content: MastraMessageContentV2 = { format: 2, parts: [{ type: 'text', text: 'hi' }] };
 * ```
 */
export interface MastraMessageContentV2 {
  format: 2;
  parts: MastraMessagePart[];
  /** Legacy flattened text, kept in step with the text parts. Read `parts` first. */
  content?: string;
  metadata?: Record<string, unknown>;
  providerMetadata?: ProviderMetadata;
}

/**
 * A message as rxagent stores it and hands it to processors.
 *
 * @example
 * ```ts
 * import type { MastraDBMessage } from 'rxagent/message-list';
 * const message: MastraDBMessage = { id: 'm1', role: 'user', createdAt: new Date(), content: { format: 2, parts: [{ type: 'text', text: 'hi' }] } };
 * ```
 */
export interface MastraDBMessage {
  id: string;
  role: MastraMessageRole;
  createdAt: Date;
  threadId?: string;
  resourceId?: string;
  type?: string;
  content: MastraMessageContentV2;
}

/**
 * A system message as processors read and return it (`CoreMessage` with role `system`).
 *
 * @example
 * ```ts
 * import type { CoreSystemMessage } from 'rxagent/message-list';
 * const system: CoreSystemMessage = { role: 'system', content: 'Be brief.' };
 * ```
 */
export interface CoreSystemMessage {
  role: 'system';
  content: string;
  providerOptions?: Record<string, Record<string, unknown>>;
}

/**
 * Anything `MessageList.add` accepts: a string (a user message), an AI SDK `ModelMessage` or
 * `UIMessage`, a stored `MastraDBMessage`, or a `CoreSystemMessage`.
 *
 * @example
 * ```ts
 * import type { InboundMessage } from 'rxagent/message-list';
 * const inputs: InboundMessage[] = ['hi', { role: 'user', content: 'there' }];
 * ```
 */
export type InboundMessage = string | ModelMessage | UIMessage | MastraDBMessage | CoreSystemMessage;
