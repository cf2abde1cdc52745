import { defer, lastValueFrom, mergeMap, toArray, type Observable } from 'rxjs';
import type {
  LanguageModelV2,
  LanguageModelV2CallOptions,
  LanguageModelV2CallWarning,
  LanguageModelV2Content,
  LanguageModelV2StreamPart,
  LanguageModelV2Usage,
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3StreamPart,
  LanguageModelV4Content,
  LanguageModelV4FinishReason,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
  SharedV4Warning,
} from '@ai-sdk/provider';
import { OBSERVABLE_STREAM, type ObservableStreamFunction } from '../model/index.js';
import { foldParts, toReadableStream } from './internal/mock-internals.js';
import { createMockStream, type MockModelOptions } from './mock-model.js';

/**
 * A `LanguageModelV3` test double (see {@link mockModelV3}).
 *
 * @example
 * ```ts
 * const model: MockModelV3 = mockModelV3({ parts: textParts('Hi') });
 * ```
 */
export interface MockModelV3 extends LanguageModelV3 {
  /** Every call made, in order. */
  readonly calls: LanguageModelV3CallOptions[];
  /** The abort signal of each call, in order. */
  readonly abortSignals: Array<AbortSignal | undefined>;
  /** The stream as an Observable (virtual time in marble tests). */
  readonly [OBSERVABLE_STREAM]: ObservableStreamFunction<LanguageModelV3CallOptions, LanguageModelV3StreamPart>;
}

/**
 * A `LanguageModelV2` test double (see {@link mockModelV2}).
 *
 * @example
 * ```ts
 * const model: MockModelV2 = mockModelV2({ parts: textParts('Hi') });
 * ```
 */
export interface MockModelV2 extends LanguageModelV2 {
  /** Every call made, in order. */
  readonly calls: LanguageModelV2CallOptions[];
  /** The abort signal of each call, in order. */
  readonly abortSignals: Array<AbortSignal | undefined>;
  /** The stream as an Observable (virtual time in marble tests). */
  readonly [OBSERVABLE_STREAM]: ObservableStreamFunction<LanguageModelV2CallOptions, LanguageModelV2StreamPart>;
}

/**
 * Like `mockModel`, but the model speaks provider spec V3: the same V4 parts (from the same
 * helpers) are sent in their V3 shapes, and `calls` records V3 call options. For testing that
 * older provider packages give the same run.
 *
 * @example
 * ```ts
 * import { mockModelV3, textParts, finishPart } from 'rxagent/testing';
 * const model = mockModelV3({ parts: [...textParts('Hello'), finishPart('stop')] });
 * ```
 */
export function mockModelV3(options: MockModelOptions<LanguageModelV3CallOptions> = {}): MockModelV3 {
  const calls: LanguageModelV3CallOptions[] = [];
  const abortSignals: Array<AbortSignal | undefined> = [];
  const streamOf = (callOptions: LanguageModelV3CallOptions): Observable<LanguageModelV3StreamPart> =>
    createMockStream(options, record(calls, abortSignals))(callOptions).pipe(mergeMap(partV4ToV3));
  return {
    specificationVersion: 'v3',
    provider: options.provider ?? 'mock',
    modelId: options.modelId ?? 'mock-model',
    supportedUrls: options.supportedUrls ?? {},
    calls,
    abortSignals,
    [OBSERVABLE_STREAM]: (callOptions) => defer(() => streamOf(callOptions)),
    async doStream(callOptions) {
      return {
        stream: toReadableStream(streamOf(callOptions), callOptions.abortSignal),
        request: options.request,
        response: options.response,
      };
    },
    async doGenerate(callOptions) {
      const result = foldParts(await lastValueFrom(createMockStream(options, record(calls, abortSignals))(callOptions).pipe(toArray())));
      return {
        content: result.content.flatMap(contentV4ToV3),
        finishReason: { unified: unifiedV3(result.finishReason), raw: result.finishReason.raw },
        usage: result.usage,
        warnings: result.warnings.flatMap(warningV4ToV3),
        request: options.request,
        response: options.response,
      };
    },
  };
}

/**
 * Like `mockModel`, but the model speaks provider spec V2: the same V4 parts are sent in their
 * V2 shapes (string finish reason, flat usage, …), and `calls` records V2 call options.
 *
 * @example
 * ```ts
 * import { mockModelV2, textParts, finishPart } from 'rxagent/testing';
 * const model = mockModelV2({ parts: [...textParts('Hello'), finishPart('stop', { inputTokens: 3 })] });
 * ```
 */
export function mockModelV2(options: MockModelOptions<LanguageModelV2CallOptions> = {}): MockModelV2 {
  const calls: LanguageModelV2CallOptions[] = [];
  const abortSignals: Array<AbortSignal | undefined> = [];
  const streamOf = (callOptions: LanguageModelV2CallOptions): Observable<LanguageModelV2StreamPart> =>
    createMockStream(options, record(calls, abortSignals))(callOptions).pipe(
      mergeMap(partV4ToV3),
      mergeMap(partV3ToV2),
    );
  return {
    specificationVersion: 'v2',
    provider: options.provider ?? 'mock',
    modelId: options.modelId ?? 'mock-model',
    supportedUrls: options.supportedUrls ?? {},
    calls,
    abortSignals,
    [OBSERVABLE_STREAM]: (callOptions) => defer(() => streamOf(callOptions)),
    async doStream(callOptions) {
      return {
        stream: toReadableStream(streamOf(callOptions), callOptions.abortSignal),
        request: options.request,
        response: options.response,
      };
    },
    async doGenerate(callOptions) {
      const result = foldParts(await lastValueFrom(createMockStream(options, record(calls, abortSignals))(callOptions).pipe(toArray())));
      return {
        content: result.content.flatMap(contentV4ToV3).flatMap(contentV3ToV2),
        finishReason: unifiedV3(result.finishReason),
        usage: usageV4ToV2(result.usage),
        warnings: result.warnings.flatMap(warningV4ToV3).map(warningToV2),
        request: options.request,
        response: options.response,
      };
    },
  };
}

function record<TOptions extends { abortSignal?: AbortSignal }>(
  calls: TOptions[],
  abortSignals: Array<AbortSignal | undefined>,
): (callOptions: TOptions) => number {
  return (callOptions) => {
    calls.push(callOptions);
    abortSignals.push(callOptions.abortSignal);
    return calls.length - 1;
  };
}

function unifiedV3(finishReason: LanguageModelV4FinishReason): Exclude<LanguageModelV4FinishReason['unified'], 'interrupted'> {
  return finishReason.unified === 'interrupted' ? 'other' : finishReason.unified;
}

function warningV4ToV3(warning: SharedV4Warning): Array<Exclude<SharedV4Warning, { type: 'deprecated' }>> {
  return warning.type === 'deprecated' ? [{ type: 'other', message: `${warning.setting}: ${warning.message}` }] : [warning];
}

function warningToV2(warning: Exclude<SharedV4Warning, { type: 'deprecated' }>): LanguageModelV2CallWarning {
  return warning.type === 'other'
    ? warning
    : { type: 'other', message: `${warning.feature}${warning.details ? `: ${warning.details}` : ''}` };
}

function fileDataV4ToV3(data: Extract<LanguageModelV4StreamPart, { type: 'file' }>['data']): string | Uint8Array {
  if (data.type === 'data') return data.data;
  throw new Error('mockModelV2/V3: V2/V3 file parts carry data only, not a URL');
}

/** V4 stream part → V3 stream part(s); V4-only parts (ping, custom, reasoning-file) are left out. */
function partV4ToV3(part: LanguageModelV4StreamPart): LanguageModelV3StreamPart[] {
  switch (part.type) {
    case 'ping':
    case 'custom':
    case 'reasoning-file':
      return [];
    case 'file':
      return [{ ...part, data: fileDataV4ToV3(part.data) }];
    case 'text-end': {
      const { citations: _citations, ...rest } = part;
      return [rest];
    }
    case 'tool-input-start': {
      const { inputEncoding: _inputEncoding, ...rest } = part;
      return [rest];
    }
    case 'finish':
      return [{ ...part, finishReason: { unified: unifiedV3(part.finishReason), raw: part.finishReason.raw } }];
    case 'stream-start':
      return [{ type: 'stream-start', warnings: part.warnings.flatMap(warningV4ToV3) }];
    default:
      return [part];
  }
}

/**
 * V3 provider metadata is `Record<string, JSONObject>` (values may be `undefined`), V2's type
 * says `JSONValue`: identical once serialised, so parts that only differ there are re-typed.
 */
function sameAsV2<T>(value: object): T {
  return value as T;
}

/** V3 stream part → V2 stream part(s); tool approval requests have no V2 form. */
function partV3ToV2(part: LanguageModelV3StreamPart): LanguageModelV2StreamPart[] {
  switch (part.type) {
    case 'tool-approval-request':
      return [];
    case 'tool-input-start': {
      const { dynamic: _dynamic, title: _title, ...rest } = part;
      return [sameAsV2(rest)];
    }
    case 'tool-call': {
      const { dynamic: _dynamic, ...rest } = part;
      return [sameAsV2(rest)];
    }
    case 'tool-result':
      return [toolResultV3ToV2(part)];
    case 'file':
      return [{ type: 'file', mediaType: part.mediaType, data: part.data }];
    case 'finish':
      return [
        sameAsV2({
          type: 'finish',
          finishReason: part.finishReason.unified,
          usage: usageV4ToV2(part.usage),
          ...(part.providerMetadata === undefined ? {} : { providerMetadata: part.providerMetadata }),
        }),
      ];
    case 'stream-start':
      return [{ type: 'stream-start', warnings: part.warnings.map(warningToV2) }];
    default:
      return [sameAsV2(part)];
  }
}

function toolResultV3ToV2(
  part: Extract<LanguageModelV3StreamPart, { type: 'tool-result' }>,
): Extract<LanguageModelV2StreamPart, { type: 'tool-result' }> {
  return sameAsV2({
    type: 'tool-result',
    toolCallId: part.toolCallId,
    toolName: part.toolName,
    result: part.result,
    providerExecuted: true,
    ...(part.isError === undefined ? {} : { isError: part.isError }),
    ...(part.providerMetadata === undefined ? {} : { providerMetadata: part.providerMetadata }),
  });
}

function usageV4ToV2(usage: LanguageModelV4Usage): LanguageModelV2Usage {
  const input = usage.inputTokens.total;
  const output = usage.outputTokens.total;
  return {
    inputTokens: input,
    outputTokens: output,
    totalTokens: input === undefined && output === undefined ? undefined : (input ?? 0) + (output ?? 0),
    reasoningTokens: usage.outputTokens.reasoning,
    cachedInputTokens: usage.inputTokens.cacheRead,
  };
}

function contentV4ToV3(content: LanguageModelV4Content): LanguageModelV3Content[] {
  switch (content.type) {
    case 'custom':
    case 'reasoning-file':
      return [];
    case 'file':
      return [{ ...content, data: fileDataV4ToV3(content.data) }];
    case 'text': {
      const { citations: _citations, ...rest } = content;
      return [rest];
    }
    default:
      return [content];
  }
}

function contentV3ToV2(content: LanguageModelV3Content): LanguageModelV2Content[] {
  switch (content.type) {
    case 'tool-approval-request':
      return [];
    case 'tool-call': {
      const { dynamic: _dynamic, ...rest } = content;
      return [sameAsV2(rest)];
    }
    case 'tool-result':
      return [toolResultV3ToV2(content)];
    case 'file':
      return [{ type: 'file', mediaType: content.mediaType, data: content.data }];
    default:
      return [sameAsV2(content)];
  }
}
