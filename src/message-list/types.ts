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
  /** Provider-specific metadata of the part, as the provider sent it. */
  providerMetadata?: ProviderMetadata;
  /** When the part was made (ms since the epoch). */
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
  /** The part's kind. */
  type: 'text';
  /** The text. */
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
export type ReasoningDetail = {
  /** The part's kind. */
  type: 'text';
  /** The text. */
  text: string;
  /** The provider's signature of the reasoning (Anthropic). */
  signature?: string;
} | {
/** The part's kind. */
type: 'redacted';
  /** The data (base64 or a URL for files; any JSON for `data-*` parts). */
  data: string;
};

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
  /** The part's kind. */
  type: 'reasoning';
  /** Reasoning text the reply starts with. */
  reasoning: string;
  /** Reasoning details (text and redacted parts). */
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
  /** The tool call's state: `partial-call`, `call` or `result`. */
  state: ToolInvocationState;
  /** The id of the model's tool call. */
  toolCallId: string;
  /** The name of the tool. */
  toolName: string;
  /** The tool call's arguments (parsed input). */
  args: unknown;
  /** The result. */
  result?: unknown;
  /** True when the tool result is an error. */
  isError?: boolean;
  /** The error's text, for an errored call. */
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
  /** The part's kind. */
  type: 'tool-invocation';
  /** The tool call (and its result, once known). */
  toolInvocation: ToolInvocation;
  /** True when the provider ran the tool itself (provider tools). */
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
  /** The part's kind. */
  type: 'file';
  /** The IANA media type. */
  mimeType: string;
  /** The data (base64 or a URL for files; any JSON for `data-*` parts). */
  data: string;
  /** The file name, if known. */
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
  /** The part's kind. */
  type: 'source';
  /** Where it came from. */
  source: {
    /** `'url'` for a web source, `'document'` for a document. */
    sourceType: 'url' | 'document';
    /** The message's id (unique in its thread). */
    id: string;
    /** The source's URL. */
    url?: string;
    /** The title. */
    title?: string;
    /** The IANA media type. */
    mediaType?: string;
    /** The file name, if known. */
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
  /** The part's kind. */
  type: 'step-start';
  /** The model that produced the step. */
  model?: string;
  /** When it was created. */
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
  /** The part's kind. */
  type: TType;
  /** The data (base64 or a URL for files; any JSON for `data-*` parts). */
  data: unknown;
  /** The message's id (unique in its thread). */
  id?: string;
  /** When it was created. */
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
  /** The stored content format: always 2. */
  format: 2;
  /** The message's parts, in order. */
  parts: MastraMessagePart[];
  /** Legacy flattened text, kept in step with the text parts. Read `parts` first. */
  content?: string;
  /** Free-form metadata kept with the message. */
  metadata?: Record<string, unknown>;
  /** Provider-specific metadata, as the provider sent it. */
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
  /** The message's id (unique in its thread). */
  id: string;
  /** Who wrote it: `user`, `assistant`, `system` or `tool`. */
  role: MastraMessageRole;
  /** When it was created. */
  createdAt: Date;
  /** The id of the conversation thread. */
  threadId?: string;
  /** The id of the resource (user, tenant) that owns the thread. */
  resourceId?: string;
  /** The part's kind. */
  type?: string;
  /** The message's content: `{ format: 2, parts, … }`. */
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
  /** Who wrote it: `user`, `assistant`, `system` or `tool`. */
  role: 'system';
  /** The message's content: `{ format: 2, parts, … }`. */
  content: string;
  /** Provider-specific options (by provider name). */
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
