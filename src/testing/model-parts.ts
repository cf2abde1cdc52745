import type {
  LanguageModelV4FinishReason,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
  SharedV4Warning,
} from '@ai-sdk/provider';

/**
 * Options of {@link textParts} and {@link reasoningParts}.
 *
 * @example
 * ```ts
 * const options: TextPartsOptions = { id: 'text-1', chunkSize: 4 };
 * ```
 */
export interface TextPartsOptions {
  /** Block id shared by the start/delta/end parts. Default `'text-1'` / `'reasoning-1'`. */
  id?: string;
  /** Characters per delta. Default: one delta per word (each word keeps its leading spaces). */
  chunkSize?: number;
}

/**
 * Splits text into deltas: fixed-size chunks, or words with their leading whitespace.
 *
 * @example
 * ```ts
 * splitText('Hello world'); // ['Hello', ' world']
 * ```
 */
export function splitText(text: string, chunkSize?: number): string[] {
  if (text === '') return [];
  if (chunkSize !== undefined) {
    if (!Number.isInteger(chunkSize) || chunkSize < 1) throw new RangeError(`chunkSize must be a positive integer, got ${chunkSize}`);
    const chunks: string[] = [];
    for (let index = 0; index < text.length; index += chunkSize) chunks.push(text.slice(index, index + chunkSize));
    return chunks;
  }
  return text.match(/\s*\S+|\s+$/g) ?? [text];
}

/**
 * V4 stream parts of one text block: `text-start`, one `text-delta` per chunk, `text-end`.
 *
 * @example
 * ```ts
 * import { textParts, finishPart, mockModel } from 'rxagent/testing';
 * const model = mockModel({ parts: [...textParts('Hello world'), finishPart('stop')] });
 * ```
 */
export function textParts(text: string, options: TextPartsOptions = {}): LanguageModelV4StreamPart[] {
  const id = options.id ?? 'text-1';
  return [
    { type: 'text-start', id },
    ...splitText(text, options.chunkSize).map((delta): LanguageModelV4StreamPart => ({ type: 'text-delta', id, delta })),
    { type: 'text-end', id },
  ];
}

/**
 * V4 stream parts of one reasoning block: `reasoning-start`, deltas, `reasoning-end`.
 *
 * @example
 * ```ts
 * import { reasoningParts, textParts } from 'rxagent/testing';
 * const parts = [...reasoningParts('Think first.'), ...textParts('Answer.')];
 * ```
 */
export function reasoningParts(text: string, options: TextPartsOptions = {}): LanguageModelV4StreamPart[] {
  const id = options.id ?? 'reasoning-1';
  return [
    { type: 'reasoning-start', id },
    ...splitText(text, options.chunkSize).map(
      (delta): LanguageModelV4StreamPart => ({ type: 'reasoning-delta', id, delta }),
    ),
    { type: 'reasoning-end', id },
  ];
}

/**
 * Options of {@link toolCallParts}.
 *
 * @example
 * ```ts
 * const options: ToolCallPartsOptions = { toolCallId: 'call-2', chunkSize: 8 };
 * ```
 */
export interface ToolCallPartsOptions {
  /** Default `` `call-${toolName}` ``: pass one when a step calls the same tool twice. */
  toolCallId?: string;
  /** Characters per `tool-input-delta`. Default: the whole JSON input in one delta. */
  chunkSize?: number;
  /** Mark the call as executed by the provider. */
  providerExecuted?: boolean;
  /** `false` leaves out the `tool-input-*` parts (only the `tool-call` part). Default `true`. */
  streamInput?: boolean;
}

/**
 * V4 stream parts of one tool call: `tool-input-start`, input deltas (JSON), `tool-input-end`,
 * then the `tool-call` part with the JSON-encoded input.
 *
 * @example
 * ```ts
 * import { toolCallParts, finishPart, mockModel } from 'rxagent/testing';
 * const model = mockModel({ parts: [...toolCallParts('weather', { city: 'Paris' }), finishPart('tool-calls')] });
 * ```
 */
export function toolCallParts(
  toolName: string,
  input: unknown,
  options: ToolCallPartsOptions = {},
): LanguageModelV4StreamPart[] {
  const id = options.toolCallId ?? `call-${toolName}`;
  const json = typeof input === 'string' ? input : JSON.stringify(input ?? {});
  const executed = options.providerExecuted ? { providerExecuted: true } : {};
  const call: LanguageModelV4StreamPart = { type: 'tool-call', toolCallId: id, toolName, input: json, ...executed };
  if (options.streamInput === false) return [call];
  return [
    { type: 'tool-input-start', id, toolName, ...executed },
    ...splitText(json, options.chunkSize ?? Math.max(json.length, 1)).map(
      (delta): LanguageModelV4StreamPart => ({ type: 'tool-input-delta', id, delta }),
    ),
    { type: 'tool-input-end', id },
    call,
  ];
}

/**
 * Token counts for {@link finishPart}; leave out what the test does not care about.
 *
 * @example
 * ```ts
 * const usage: SimpleUsage = { inputTokens: 10, outputTokens: 5 };
 * ```
 */
export interface SimpleUsage {
  /** Tokens in the prompt. */
  inputTokens?: number;
  /** Tokens in the answer. */
  outputTokens?: number;
  /** Tokens of reasoning (part of the output). */
  reasoningTokens?: number;
  /** Input tokens served from the provider's cache. */
  cachedInputTokens?: number;
}

/**
 * Builds a V4 usage object from simple counts (fields not given stay `undefined`).
 *
 * @example
 * ```ts
 * usage({ inputTokens: 10, outputTokens: 5 }).outputTokens.total; // 5
 * ```
 */
export function usage(counts: SimpleUsage = {}): LanguageModelV4Usage {
  return {
    inputTokens: { total: counts.inputTokens, noCache: undefined, cacheRead: counts.cachedInputTokens, cacheWrite: undefined },
    outputTokens: { total: counts.outputTokens, text: undefined, reasoning: counts.reasoningTokens },
  };
}

/**
 * A V4 `finish` part. `reason` is the unified finish reason (or a full `{ unified, raw }`),
 * `tokens` simple counts or a full V4 usage object.
 *
 * @example
 * ```ts
 * import { finishPart } from 'rxagent/testing';
 * finishPart('stop', { inputTokens: 3, outputTokens: 2 });
 * ```
 */
export function finishPart(
  reason: LanguageModelV4FinishReason['unified'] | LanguageModelV4FinishReason = 'stop',
  tokens: SimpleUsage | LanguageModelV4Usage = {},
): Extract<LanguageModelV4StreamPart, { type: 'finish' }> {
  return {
    type: 'finish',
    finishReason: typeof reason === 'string' ? { unified: reason, raw: undefined } : reason,
    usage: isFullUsage(tokens) ? tokens : usage(tokens),
  };
}

function isFullUsage(tokens: SimpleUsage | LanguageModelV4Usage): tokens is LanguageModelV4Usage {
  return typeof tokens.inputTokens === 'object';
}

/**
 * A V4 `stream-start` part (what providers send first), with optional warnings.
 *
 * @example
 * ```ts
 * import { streamStartPart, textParts } from 'rxagent/testing';
 * const parts = [streamStartPart(), ...textParts('Hi')];
 * ```
 */
export function streamStartPart(warnings: SharedV4Warning[] = []): LanguageModelV4StreamPart {
  return { type: 'stream-start', warnings };
}
