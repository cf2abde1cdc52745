/**
 * The AI SDK 4 language model interface (`LanguageModelV1`, provider spec v1), as far as rxagent
 * reads it: `@ai-sdk/provider` 4 no longer ships its types. rxagent adapts such models inside
 * (src/model/from-v1.ts), so an AI SDK 4 provider model or a `MockLanguageModelV1` works where a
 * model is accepted.
 */

/** One message of a V1 prompt. */
export type LanguageModelV1Message =
  | { role: 'system'; content: string }
  | { role: 'user'; content: Array<Record<string, unknown> & { type: string }> }
  | { role: 'assistant'; content: Array<Record<string, unknown> & { type: string }> }
  | { role: 'tool'; content: Array<Record<string, unknown> & { type: string }> };

/** What a V1 model's `doGenerate` / `doStream` is called with (the fields rxagent sets). */
export interface LanguageModelV1CallOptions {
  /** Always `'messages'` from rxagent. */
  inputFormat: 'messages' | 'prompt';
  /** `regular` (text and tools) or `object-json` (a JSON answer). */
  mode:
    | { type: 'regular'; tools?: Array<{ type: 'function'; name: string; description?: string; parameters: unknown }>; toolChoice?: { type: string; toolName?: string } }
    | { type: 'object-json'; schema?: unknown; name?: string; description?: string };
  /** The conversation. */
  prompt: LanguageModelV1Message[];
  /** Call settings, as V1 names them. */
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
  responseFormat?: { type: 'text' } | { type: 'json'; schema?: unknown; name?: string; description?: string };
  /** Sampling seed. */
  seed?: number;
  /** Cancels the call. */
  abortSignal?: AbortSignal;
  /** Extra HTTP headers. */
  headers?: Record<string, string | undefined>;
  /** Provider options (V1 calls them provider metadata). */
  providerMetadata?: Record<string, Record<string, unknown>>;
}

/** V1 token usage. */
export interface LanguageModelV1Usage {
  /** Tokens in the prompt. */
  promptTokens: number;
  /** Tokens in the answer. */
  completionTokens: number;
}

/** What a V1 `doGenerate` resolves to (the fields rxagent reads). */
export interface LanguageModelV1GenerateResult {
  /** The answer's text. */
  text?: string;
  /** Reasoning text, or reasoning parts. */
  reasoning?: string | Array<{ type: string; text?: string }>;
  /** Tool calls, `args` a JSON string. */
  toolCalls?: Array<{ toolCallType?: 'function'; toolCallId: string; toolName: string; args: string }>;
  /** Why generation stopped. */
  finishReason: string;
  /** Token usage. */
  usage: LanguageModelV1Usage;
  /** Warnings about unsupported settings. */
  warnings?: unknown[];
  /** Provider metadata of the answer. */
  providerMetadata?: Record<string, Record<string, unknown>>;
  /** The raw response's headers and body. */
  rawResponse?: { headers?: Record<string, string>; body?: unknown };
  /** The request body sent. */
  request?: { body?: string };
  /** Response metadata. */
  response?: { id?: string; timestamp?: Date; modelId?: string };
}

/** One part of a V1 stream (the kinds rxagent reads; others are ignored). */
export type LanguageModelV1StreamPart = Record<string, unknown> & { type: string };

/**
 * An AI SDK 4 (`LanguageModelV1`) model, accepted wherever a model is: rxagent adapts it to the
 * provider spec it speaks.
 *
 * @example
 * ```ts
 * import type { LanguageModelV1 } from 'rxagent';
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
  doStream(options: LanguageModelV1CallOptions): PromiseLike<{
    stream: ReadableStream<LanguageModelV1StreamPart>;
    rawResponse?: { headers?: Record<string, string> };
    request?: { body?: string };
    warnings?: unknown[];
  }>;
}
