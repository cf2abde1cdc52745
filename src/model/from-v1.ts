/**
 * Adapts an AI SDK 4 `LanguageModelV1` to the V4 interface the loop speaks: V1 is lifted to V2
 * (prompt, tools and JSON mode in V1's call shape; results, usage and stream parts in V2's), then
 * {@link adaptV2} does the rest. The reference implementation accepts V1 models the same way (its
 * judges call them through a legacy path), and its unit tests build judges from
 * `MockLanguageModelV1`s that implement only `doGenerate`: when a V1 model's `doStream` fails with
 * "not implemented" (the AI SDK mocks' default), the step calls `doGenerate` and streams its
 * answer. Any other `doStream` failure is the model's error, as it is. What V1 parts and results
 * carry is taken as it is (ids, names, arguments and media types must be strings: never `String()`
 * of something else) and checked as V4 parts where the run reads them; what the conversion cannot
 * read is an `InvalidModelResponseError` naming the model.
 */
import type {
  LanguageModelV2,
  LanguageModelV2CallOptions,
  LanguageModelV2CallWarning,
  LanguageModelV2Content,
  LanguageModelV2FinishReason,
  LanguageModelV2Message,
  LanguageModelV2StreamPart,
  LanguageModelV4,
} from '@ai-sdk/provider';
import type { LanguageModelV1, LanguageModelV1CallOptions, LanguageModelV1GenerateResult, LanguageModelV1Message, LanguageModelV1StreamPart } from '../contract/language-model-v1.js';
import { adaptV2 } from './from-v2.js';
import { invalidResponse, streamOf, type ModelLike } from './checked-stream.js';
import { messageOf, shapeOf } from './checked-part.js';
import { RxAgentError } from '../errors/rxagent-error.js';

/**
 * The V4 view of a V1 model.
 *
 * @example
 * ```ts
 * import { adaptV1 } from './from-v1.js';
 * const model = adaptV1(legacyModel); // model.specificationVersion === 'v4'
 * ```
 */
export function adaptV1(model: LanguageModelV1): LanguageModelV4 {
  return adaptV2(liftV1ToV2(model));
}

function liftV1ToV2(model: LanguageModelV1): LanguageModelV2 {
  return {
    specificationVersion: 'v2',
    get provider() {
      return model.provider;
    },
    get modelId() {
      return model.modelId;
    },
    supportedUrls: {},
    async doGenerate(options) {
      const result = await model.doGenerate(toV1CallOptions(options));
      return readV1(model, 'doGenerate() result', () => ({ ...generateResultV1ToV2(model, result), request: { body: result.request?.body } }));
    },
    async doStream(options) {
      const callOptions = toV1CallOptions(options);
      let streamed: Awaited<ReturnType<LanguageModelV1['doStream']>>;
      try {
        streamed = await model.doStream(callOptions);
      } catch (error) {
        if (!(error instanceof Error) || !/not implemented/i.test(error.message)) throw error;
        const result = await model.doGenerate(callOptions);
        return readV1(model, 'doGenerate() result', () => ({ stream: streamOfGenerated(model, result), request: { body: result.request?.body } }));
      }
      const source = streamOf<LanguageModelV1StreamPart>(streamed, model);
      let streamWarnings: LanguageModelV2CallWarning[];
      let request: { body?: unknown };
      let response: { headers?: Record<string, string> | undefined };
      try {
        streamWarnings = readV1(model, 'doStream() result', () => warnings(model, streamed.warnings ?? []));
        request = readV1(model, 'doStream() result', () => ({ body: streamed.request?.body }));
        response = readV1(model, 'doStream() result', () => ({ headers: streamed.rawResponse?.headers }));
      } catch (error) {
        // the source stream is not read: released
        Promise.resolve(source.cancel(error)).catch(() => undefined);
        throw error;
      }
      return { stream: source.pipeThrough(partsV1ToV2(model, streamWarnings)), request, response };
    },
  };
}

/** `read()`, with what it throws reported as the provider's broken `what` (an rxagent error stays as it is). */
function readV1<T>(model: ModelLike, what: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (RxAgentError.isInstance(error)) throw error;
    throw invalidResponse(model, `its ${what} cannot be read as a v1 result: ${messageOf(error)}`, error);
  }
}

/** `part[field]` when it is a string; else the provider broke the V1 contract. */
function stringField(model: ModelLike, part: Record<string, unknown>, field: string): string {
  const value = part[field];
  if (typeof value === 'string') return value;
  throw invalidResponse(model, `the stream sent a v1 "${String(part.type)}" part whose ${field} is ${shapeOf(value)}, not a string.`);
}

/** A V1 delta as text: a delta that is not a string adds nothing (as for V4 deltas). */
const deltaText = (value: unknown): string => (typeof value === 'string' ? value : '');

function toV1CallOptions(options: LanguageModelV2CallOptions): LanguageModelV1CallOptions {
  const tools = (options.tools ?? [])
    .filter((tool) => tool.type === 'function')
    .map((tool) => ({ type: 'function' as const, name: tool.name, ...(tool.description === undefined ? {} : { description: tool.description }), parameters: tool.inputSchema }));
  const json = options.responseFormat?.type === 'json' ? options.responseFormat : undefined;
  const mode: LanguageModelV1CallOptions['mode'] =
    json !== undefined && tools.length === 0
      ? { type: 'object-json', schema: json.schema, ...(json.name === undefined ? {} : { name: json.name }), ...(json.description === undefined ? {} : { description: json.description }) }
      : { type: 'regular', ...(tools.length > 0 ? { tools } : {}), ...(options.toolChoice === undefined ? {} : { toolChoice: options.toolChoice }) };
  const optional = {
    maxTokens: options.maxOutputTokens,
    temperature: options.temperature,
    stopSequences: options.stopSequences,
    topP: options.topP,
    topK: options.topK,
    presencePenalty: options.presencePenalty,
    frequencyPenalty: options.frequencyPenalty,
    responseFormat: options.responseFormat,
    seed: options.seed,
    abortSignal: options.abortSignal,
    headers: options.headers,
    providerMetadata: options.providerOptions,
  };
  return {
    inputFormat: 'messages',
    mode,
    prompt: options.prompt.map(messageV2ToV1),
    ...Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined)),
  };
}

function base64(data: unknown): unknown {
  return data instanceof Uint8Array ? Buffer.from(data).toString('base64') : data;
}

function messageV2ToV1(message: LanguageModelV2Message): LanguageModelV1Message {
  if (message.role === 'system') return { role: 'system', content: message.content };
  const content = message.content.map((part): Record<string, unknown> & { type: string } => {
    switch (part.type) {
      case 'text':
        return { type: 'text', text: part.text, ...(part.providerOptions === undefined ? {} : { providerMetadata: part.providerOptions }) };
      case 'reasoning':
        return { type: 'reasoning', text: part.text };
      case 'file':
        return part.mediaType.startsWith('image/') && message.role === 'user'
          ? { type: 'image', image: typeof part.data === 'string' && !/^[a-z]+:/i.test(part.data) ? Buffer.from(part.data, 'base64') : part.data, mimeType: part.mediaType }
          : { type: 'file', data: base64(part.data), mimeType: part.mediaType, ...(part.filename === undefined ? {} : { filename: part.filename }) };
      case 'tool-call':
        return { type: 'tool-call', toolCallId: part.toolCallId, toolName: part.toolName, args: part.input };
      case 'tool-result': {
        const output = part.output as { type: string; value?: unknown };
        return { type: 'tool-result', toolCallId: part.toolCallId, toolName: part.toolName, result: output.value, isError: output.type.startsWith('error') };
      }
    }
  });
  return { role: message.role, content } as LanguageModelV1Message;
}

const FINISH_REASONS = new Set(['stop', 'length', 'content-filter', 'tool-calls', 'error', 'other', 'unknown']);

function finishReason(reason: unknown): LanguageModelV2FinishReason {
  return typeof reason === 'string' && FINISH_REASONS.has(reason) ? (reason as LanguageModelV2FinishReason) : 'unknown';
}

function usage(value: unknown): { inputTokens: number | undefined; outputTokens: number | undefined; totalTokens: number | undefined } {
  const counts = (value ?? {}) as { promptTokens?: unknown; completionTokens?: unknown };
  const input = typeof counts.promptTokens === 'number' && Number.isFinite(counts.promptTokens) ? counts.promptTokens : undefined;
  const output = typeof counts.completionTokens === 'number' && Number.isFinite(counts.completionTokens) ? counts.completionTokens : undefined;
  return { inputTokens: input, outputTokens: output, totalTokens: input === undefined || output === undefined ? undefined : input + output };
}

function warnings(model: ModelLike, values: unknown): LanguageModelV2CallWarning[] {
  if (!Array.isArray(values)) throw invalidResponse(model, `its warnings are ${shapeOf(values)}, not an array.`);
  return values.map((warning): LanguageModelV2CallWarning => {
    const message: unknown = typeof warning === 'object' && warning !== null ? (warning as { message?: unknown }).message : undefined;
    return { type: 'other', message: typeof message === 'string' ? message : JSON.stringify(warning) ?? String(warning) };
  });
}

function reasoningText(reasoning: LanguageModelV1GenerateResult['reasoning']): string {
  if (typeof reasoning === 'string') return reasoning;
  return (reasoning ?? []).map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : '')).join('');
}

function generateResultV1ToV2(model: ModelLike, result: LanguageModelV1GenerateResult): Awaited<ReturnType<LanguageModelV2['doGenerate']>> {
  if (typeof result !== 'object' || result === null) throw invalidResponse(model, `doGenerate() resolved with ${shapeOf(result)}, not a result object.`);
  const content: LanguageModelV2Content[] = [];
  const reasoning = reasoningText(result.reasoning);
  if (reasoning !== '') content.push({ type: 'reasoning', text: reasoning });
  if (typeof result.text === 'string' && result.text !== '') content.push({ type: 'text', text: result.text });
  const toolCalls: unknown = result.toolCalls ?? [];
  if (!Array.isArray(toolCalls)) throw invalidResponse(model, `doGenerate() resolved with toolCalls that are ${shapeOf(toolCalls)}, not an array.`);
  // ids, names and arguments go on as they are: the V4 part check names what is not a string
  for (const call of toolCalls as Array<{ toolCallId: string; toolName: string; args: string }>) {
    content.push({ type: 'tool-call', toolCallId: call.toolCallId, toolName: call.toolName, input: call.args });
  }
  return {
    content,
    finishReason: finishReason(result.finishReason),
    usage: usage(result.usage),
    warnings: warnings(model, result.warnings ?? []),
    ...(result.providerMetadata === undefined ? {} : { providerMetadata: result.providerMetadata as never }),
    response: { ...result.response, ...(result.rawResponse?.headers === undefined ? {} : { headers: result.rawResponse.headers }) },
  };
}

/** A `doGenerate` answer as a V2 stream (for V1 models that cannot stream). */
function streamOfGenerated(model: ModelLike, result: LanguageModelV1GenerateResult): ReadableStream<LanguageModelV2StreamPart> {
  const generated = generateResultV1ToV2(model, result);
  const parts: LanguageModelV2StreamPart[] = [{ type: 'stream-start', warnings: generated.warnings }];
  if (result.response !== undefined) parts.push({ type: 'response-metadata', ...result.response });
  for (const [index, item] of generated.content.entries()) {
    const id = String(index);
    if (item.type === 'text') parts.push({ type: 'text-start', id }, { type: 'text-delta', id, delta: item.text }, { type: 'text-end', id });
    else if (item.type === 'reasoning') parts.push({ type: 'reasoning-start', id }, { type: 'reasoning-delta', id, delta: item.text }, { type: 'reasoning-end', id });
    else if (item.type === 'tool-call') parts.push(item);
  }
  parts.push({ type: 'finish', finishReason: generated.finishReason, usage: generated.usage, ...(generated.providerMetadata === undefined ? {} : { providerMetadata: generated.providerMetadata }) });
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}

/** V1 stream parts → V2: text and reasoning get start/end brackets, streamed tool input its start/end. */
function partsV1ToV2(model: ModelLike, streamWarnings: LanguageModelV2CallWarning[]): TransformStream<LanguageModelV1StreamPart, LanguageModelV2StreamPart> {
  let text: string | undefined;
  let reasoning: string | undefined;
  const toolInputs = new Set<string>();
  let blocks = 0;
  const close = (controller: TransformStreamDefaultController<LanguageModelV2StreamPart>) => {
    if (text !== undefined) controller.enqueue({ type: 'text-end', id: text });
    if (reasoning !== undefined) controller.enqueue({ type: 'reasoning-end', id: reasoning });
    text = undefined;
    reasoning = undefined;
  };
  const transform = (part: LanguageModelV1StreamPart, controller: TransformStreamDefaultController<LanguageModelV2StreamPart>): void => {
    if (typeof part !== 'object' || part === null || typeof (part as { type?: unknown }).type !== 'string') {
      throw invalidResponse(model, `the stream sent ${shapeOf(part)} where a v1 stream part ({ type, … }) was expected.`);
    }
    switch (part.type) {
      case 'text-delta': {
        if (reasoning !== undefined) close(controller);
        if (text === undefined) controller.enqueue({ type: 'text-start', id: (text = `text-${blocks++}`) });
        controller.enqueue({ type: 'text-delta', id: text, delta: deltaText(part['textDelta']) });
        return;
      }
      case 'reasoning': {
        if (text !== undefined) close(controller);
        if (reasoning === undefined) controller.enqueue({ type: 'reasoning-start', id: (reasoning = `reasoning-${blocks++}`) });
        controller.enqueue({ type: 'reasoning-delta', id: reasoning, delta: deltaText(part['textDelta']) });
        return;
      }
      case 'tool-call-delta': {
        const id = stringField(model, part, 'toolCallId');
        if (!toolInputs.has(id)) {
          toolInputs.add(id);
          controller.enqueue({ type: 'tool-input-start', id, toolName: stringField(model, part, 'toolName') });
        }
        controller.enqueue({ type: 'tool-input-delta', id, delta: deltaText(part['argsTextDelta']) });
        return;
      }
      case 'tool-call': {
        close(controller);
        const id = stringField(model, part, 'toolCallId');
        const toolName = stringField(model, part, 'toolName');
        const input = part['args'] === undefined ? '' : stringField(model, part, 'args');
        if (toolInputs.delete(id)) controller.enqueue({ type: 'tool-input-end', id });
        controller.enqueue({ type: 'tool-call', toolCallId: id, toolName, input });
        return;
      }
      case 'response-metadata':
        controller.enqueue({ type: 'response-metadata', ...(part as object) } as LanguageModelV2StreamPart);
        return;
      case 'source': {
        const source = part['source'] as { id?: string; url?: string; title?: string } | null | undefined;
        if (typeof source === 'object' && source !== null && source.url !== undefined) {
          controller.enqueue({ type: 'source', sourceType: 'url', id: source.id ?? source.url, url: source.url, ...(source.title === undefined ? {} : { title: source.title }) });
        }
        return;
      }
      case 'file':
        controller.enqueue({ type: 'file', mediaType: part['mimeType'] as string, data: part['data'] as string | Uint8Array });
        return;
      case 'finish':
        close(controller);
        controller.enqueue({
          type: 'finish',
          finishReason: finishReason(part['finishReason']),
          usage: usage(part['usage']),
          ...(part['providerMetadata'] === undefined ? {} : { providerMetadata: part['providerMetadata'] as never }),
        });
        return;
      case 'error':
        controller.enqueue({ type: 'error', error: part['error'] });
        return;
      default:
        // reasoning-signature, redacted-reasoning: nothing in V2's stream carries them
        return;
    }
  };
  return new TransformStream({
    start(controller) {
      controller.enqueue({ type: 'stream-start', warnings: streamWarnings });
    },
    transform(part, controller) {
      readV1(model, 'stream part', () => transform(part, controller));
    },
  });
}
