/**
 * The AI SDK 4 language model interface (`LanguageModelV1`, provider spec v1), as far as rxagent
 * reads it: `@ai-sdk/provider` 4 no longer ships its types. rxagent adapts such models inside
 * (src/model/from-v1.ts), so an AI SDK 4 provider model or a `MockLanguageModelV1` works where a
 * model is accepted.
 */

/** A part of a V1 prompt message (`{ type: 'text', text }`, `{ type: 'tool-call', … }`, …). */
export type LanguageModelV1MessagePart = Record<string, unknown> & {
  /** The part's kind. */
  type: string;
};

/** One message of a V1 prompt. */
export type LanguageModelV1Message =
  | {
      /** A system message. */
      role: 'system';
      /** Its text. */
      content: string;
    }
  | {
      /** A user, assistant or tool message. */
      role: 'user' | 'assistant' | 'tool';
      /** Its parts. */
      content: LanguageModelV1MessagePart[];
    };

/** A function tool as a V1 call lists it. */
export interface LanguageModelV1FunctionTool {
  /** Always `'function'`. */
  type: 'function';
  /** The tool's name. */
  name: string;
  /** What the model reads about it. */
  description?: string;
  /** Its input's JSON schema. */
  parameters: unknown;
}

/** What a V1 model's `doGenerate` / `doStream` is called with (the fields rxagent sets). */
export interface LanguageModelV1CallOptions {
  /** Always `'messages'` from rxagent. */
  inputFormat: 'messages' | 'prompt';
  /** `regular` (text and tools) or `object-json` (a JSON answer). */
  mode: LanguageModelV1Mode;
  /** The conversation. */
  prompt: LanguageModelV1Message[];
  /** At most this many output tokens. */
  maxTokens?: number;
  /** Sampling temperature. */
  temperature?: number;
  /** Sequences that stop the generation. */
  stopSequences?: string[];
  /** Nucleus sampling. */
  topP?: number;
  /** Top-k sampling. */
  topK?: number;
  /** Presence penalty. */
  presencePenalty?: number;
  /** Frequency penalty. */
  frequencyPenalty?: number;
  /** A JSON answer (with its schema) or text. */
  responseFormat?: LanguageModelV1ResponseFormat;
  /** Sampling seed. */
  seed?: number;
  /** Cancels the call. */
  abortSignal?: AbortSignal;
  /** Extra HTTP headers. */
  headers?: Record<string, string | undefined>;
  /** Provider options (V1 calls them provider metadata). */
  providerMetadata?: Record<string, Record<string, unknown>>;
}

/** How a V1 call asks for its answer. */
export type LanguageModelV1Mode =
  | {
      /** Text, and tool calls when tools are given. */
      type: 'regular';
      /** The function tools. */
      tools?: LanguageModelV1FunctionTool[];
      /** How the model may use them (`{ type: 'auto' | 'none' | 'required' }` or `{ type: 'tool', toolName }`). */
      toolChoice?: {
        /** `'auto'`, `'none'`, `'required'` or `'tool'`. */
        type: string;
        /** The tool to call, with `type: 'tool'`. */
        toolName?: string;
      };
    }
  | {
      /** A JSON answer. */
      type: 'object-json';
      /** Its JSON schema. */
      schema?: unknown;
      /** Its name. */
      name?: string;
      /** What it is. */
      description?: string;
    };

/** A V1 response format. */
export type LanguageModelV1ResponseFormat =
  | {
      /** Plain text. */
      type: 'text';
    }
  | {
      /** JSON. */
      type: 'json';
      /** Its JSON schema. */
      schema?: unknown;
      /** Its name. */
      name?: string;
      /** What it is. */
      description?: string;
    };

/** V1 token usage. */
export interface LanguageModelV1Usage {
  /** Tokens in the prompt. */
  promptTokens: number;
  /** Tokens in the answer. */
  completionTokens: number;
}

/** A V1 tool call (its arguments a JSON string). */
export interface LanguageModelV1ToolCall {
  /** Always `'function'` when given. */
  toolCallType?: 'function';
  /** The call's id. */
  toolCallId: string;
  /** The tool's name. */
  toolName: string;
  /** Its arguments, as JSON text. */
  args: string;
}

/** What a V1 `doGenerate` resolves to (the fields rxagent reads). */
export interface LanguageModelV1GenerateResult {
  /** The answer's text. */
  text?: string;
  /** Reasoning text, or reasoning parts (`{ type: 'text', text }`). */
  reasoning?: string | LanguageModelV1MessagePart[];
  /** Tool calls. */
  toolCalls?: LanguageModelV1ToolCall[];
  /** Why generation stopped. */
  finishReason: string;
  /** Token usage. */
  usage: LanguageModelV1Usage;
  /** Warnings about unsupported settings. */
  warnings?: unknown[];
  /** Provider metadata of the answer. */
  providerMetadata?: Record<string, Record<string, unknown>>;
  /** The raw response. */
  rawResponse?: LanguageModelV1RawResponse;
  /** The request as sent. */
  request?: LanguageModelV1Request;
  /** Response metadata. */
  response?: LanguageModelV1ResponseMetadata;
}

/** A V1 raw response. */
export interface LanguageModelV1RawResponse {
  /** Its HTTP headers. */
  headers?: Record<string, string>;
  /** Its body. */
  body?: unknown;
}

/** A V1 request, as sent. */
export interface LanguageModelV1Request {
  /** Its body (JSON text). */
  body?: string;
}

/** V1 response metadata. */
export interface LanguageModelV1ResponseMetadata {
  /** The provider's response id. */
  id?: string;
  /** When the response was created. */
  timestamp?: Date;
  /** The model that answered. */
  modelId?: string;
}

/** What a V1 `doStream` resolves to (the fields rxagent reads). */
export interface LanguageModelV1StreamResult {
  /** The model's stream parts. */
  stream: ReadableStream<LanguageModelV1StreamPart>;
  /** The raw response. */
  rawResponse?: LanguageModelV1RawResponse;
  /** The request as sent. */
  request?: LanguageModelV1Request;
  /** Warnings about unsupported settings. */
  warnings?: unknown[];
}

/** One part of a V1 stream (`text-delta`, `reasoning`, `tool-call-delta`, `tool-call`, `finish`, `error`, …). */
export type LanguageModelV1StreamPart = LanguageModelV1MessagePart;

/**
 * An AI SDK 4 (`LanguageModelV1`) model, accepted wherever a model is: rxagent adapts it to the
 * provider spec it speaks.
 *
 * @example
 * ```ts
 * import type { LanguageModelV1 } from 'rxagent/ai-sdk';
 * const judge: LanguageModelV1 = legacyOpenAI('gpt-4o-mini'); // @ai-sdk/openai@1
 * ```
 */
export interface LanguageModelV1 {
  /** `'v1'`. */
  readonly specificationVersion: 'v1';
  /** The provider's name. */
  readonly provider: string;
  /** The model's id at the provider. */
  readonly modelId: string;
  /** How the model answers in JSON by default (`'json'`, `'tool'` or none). */
  readonly defaultObjectGenerationMode?: 'json' | 'tool' | undefined;
  /** Calls the model, non-streaming. */
  doGenerate(options: LanguageModelV1CallOptions): PromiseLike<LanguageModelV1GenerateResult>;
  /** Calls the model, streaming. */
  doStream(options: LanguageModelV1CallOptions): PromiseLike<LanguageModelV1StreamResult>;
}
