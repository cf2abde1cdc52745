/**
 * The stored message shape (`MastraDBMessage`, format 2) and its parts, as the processor
 * specification gives them. `content` is always an object, never a string.
 */
import type { ModelMessage, ProviderMetadata, ToolResultPart, UIMessage } from 'ai';

/** Where a message came from in a run. `user` is accepted as an alias of `input`. */
export type MessageSource = 'input' | 'response' | 'memory' | 'system';

/** Role of a stored message. */
export type MastraMessageRole = 'user' | 'assistant' | 'system' | 'tool';

interface PartBase {
  providerMetadata?: ProviderMetadata;
  createdAt?: number;
}

/** Plain text. */
export interface TextPart extends PartBase {
  type: 'text';
  text: string;
}

/** One piece of a reasoning part: readable text (with an optional signature) or redacted data. */
export type ReasoningDetail = { type: 'text'; text: string; signature?: string } | { type: 'redacted'; data: string };

/** Model reasoning ("thinking"). `reasoning` is the joined readable text of `details`. */
export interface ReasoningPart extends PartBase {
  type: 'reasoning';
  reasoning: string;
  details: ReasoningDetail[];
}

/** Lifecycle state of a tool invocation. */
export type ToolInvocationState = 'partial-call' | 'call' | 'result' | 'output-error';

/** A tool call and (once known) its result. */
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

/** A tool call and its result, updated in place as the call progresses. */
export interface ToolInvocationPart extends PartBase {
  type: 'tool-invocation';
  toolInvocation: ToolInvocation;
  providerExecuted?: boolean;
  /** Display title of the tool (UI `title`). */
  title?: string;
  /** True when the UI shape is `dynamic-tool` (a tool not known statically). */
  dynamic?: boolean;
}

/** A file: `data` is base64 or a URL string. */
export interface FilePart extends PartBase {
  type: 'file';
  mimeType: string;
  data: string;
  filename?: string;
  /** A provider file reference (from `uploadFile`); sent instead of `data` when present. */
  providerReference?: Record<string, string>;
}

/** A cited source. */
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

/** Marks where a model step began inside an assistant message. */
export interface StepStartPart {
  type: 'step-start';
  model?: string;
  createdAt?: number;
}

/** A custom data part (`writer.custom()` chunks are stored as these). */
export interface DataPart<TType extends `data-${string}` = `data-${string}`> {
  type: TType;
  data: unknown;
  id?: string;
  createdAt?: number;
}

/** Any part of a stored message. */
export type MastraMessagePart =
  | TextPart
  | ReasoningPart
  | ToolInvocationPart
  | FilePart
  | SourcePart
  | StepStartPart
  | DataPart;

/** Content of a stored message (format 2). */
export interface MastraMessageContentV2 {
  format: 2;
  parts: MastraMessagePart[];
  /** Legacy flattened text, kept in step with the text parts. Read `parts` first. */
  content?: string;
  metadata?: Record<string, unknown>;
  providerMetadata?: ProviderMetadata;
}

/** A message as rxagent stores it and hands it to processors. */
export interface MastraDBMessage {
  id: string;
  role: MastraMessageRole;
  createdAt: Date;
  threadId?: string;
  resourceId?: string;
  type?: string;
  content: MastraMessageContentV2;
}

/** A system message as processors read and return it (`CoreMessage` with role `system`). */
export interface CoreSystemMessage {
  role: 'system';
  content: string;
  providerOptions?: Record<string, Record<string, unknown>>;
}

/**
 * Anything `MessageList.add` accepts: a string (a user message), an AI SDK `ModelMessage` or
 * `UIMessage`, a stored `MastraDBMessage`, or a `CoreSystemMessage`.
 */
export type InboundMessage = string | ModelMessage | UIMessage | MastraDBMessage | CoreSystemMessage;
