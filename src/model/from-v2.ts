import {
  UnsupportedFunctionalityError,
  type JSONObject,
  type JSONValue,
  type LanguageModelV2,
  type LanguageModelV2CallOptions,
  type LanguageModelV2CallWarning,
  type LanguageModelV2Content,
  type LanguageModelV2FinishReason,
  type LanguageModelV2Message,
  type LanguageModelV2StreamPart,
  type LanguageModelV2ToolResultOutput,
  type LanguageModelV2Usage,
  type LanguageModelV3,
  type LanguageModelV3CallOptions,
  type LanguageModelV3Content,
  type LanguageModelV3FinishReason,
  type LanguageModelV3Message,
  type LanguageModelV3StreamPart,
  type LanguageModelV3ToolResultOutput,
  type LanguageModelV3Usage,
  type LanguageModelV4,
  type SharedV2ProviderOptions,
  type SharedV3ProviderOptions,
  type SharedV3Warning,
} from '@ai-sdk/provider';
import { adaptV3 } from './from-v3.js';
import { liftModel, type SpecLift } from './internal/lift-model.js';

/**
 * Adapts a `LanguageModelV2` to the V4 interface the loop speaks. V2 is first lifted to V3
 * (usage and finish reason objects, `provider` tools, tool-result parts, warnings), then
 * {@link adaptV3} does the rest. What V2 cannot express (tool approval responses, denied or
 * URL-only tool outputs, strict tools, input examples) is dropped or rewritten and reported
 * as a warning in the `stream-start` part. V2 usage has no `raw` field: the V2 usage object
 * itself is put there.
 *
 * @example
 * ```ts
 * import { adaptV2 } from './from-v2.js';
 * const model = adaptV2(someV2Model); // model.specificationVersion === 'v4'
 * ```
 */
export function adaptV2(model: LanguageModelV2): LanguageModelV4 {
  return adaptV3(liftModel(model, v2ToV3));
}

/** V2 → V3: the prompt and options down, results and parts up (see {@link liftModel}). */
const v2ToV3: SpecLift<LanguageModelV2, LanguageModelV3> = {
  specificationVersion: 'v3',
  callOptions: toV2CallOptions,
  result: (result, warnings) => ({
    ...result,
    content: result.content.map(contentV2ToV3),
    finishReason: finishReasonV2ToV3(result.finishReason),
    usage: usageV2ToV3(result.usage),
    warnings: [...result.warnings.map(warningV2ToV3), ...warnings],
  }),
  part: partV2ToV3,
};

function partV2ToV3(part: LanguageModelV2StreamPart): LanguageModelV3StreamPart {
  switch (part.type) {
    case 'finish':
      return {
        type: 'finish',
        finishReason: finishReasonV2ToV3(part.finishReason),
        usage: usageV2ToV3(part.usage),
        ...(part.providerMetadata === undefined ? {} : { providerMetadata: part.providerMetadata }),
      };
    case 'stream-start':
      return { type: 'stream-start', warnings: part.warnings.map(warningV2ToV3) };
    case 'tool-result':
      return toolResultV2ToV3(part);
    default:
      return part;
  }
}

function contentV2ToV3(content: LanguageModelV2Content): LanguageModelV3Content {
  return content.type === 'tool-result' ? toolResultV2ToV3(content) : content;
}

function toolResultV2ToV3(
  part: Extract<LanguageModelV2Content, { type: 'tool-result' }>,
): Extract<LanguageModelV3Content, { type: 'tool-result' }> {
  // V3/V4 tool-result parts are provider-executed by definition: `providerExecuted` goes away.
  const { providerExecuted: _providerExecuted, result, ...rest } = part;
  return { ...rest, result: toJsonResult(result) };
}

/**
 * V2 results are `unknown`; V3/V4 need a non-null JSON value. Objects go through a JSON round
 * trip (a `Date` becomes its ISO string, as on the wire); nullish becomes `''`.
 */
function toJsonResult(value: unknown): NonNullable<JSONValue> {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  const json: unknown = JSON.parse(JSON.stringify(value) ?? '""');
  return json === null || json === undefined ? '' : (json as NonNullable<JSONValue>);
}

function finishReasonV2ToV3(finishReason: LanguageModelV2FinishReason): LanguageModelV3FinishReason {
  return { unified: finishReason === 'unknown' ? 'other' : finishReason, raw: undefined };
}

const V2_USAGE_COUNTS = ['inputTokens', 'outputTokens', 'totalTokens', 'reasoningTokens', 'cachedInputTokens'] as const;

/**
 * V2 usage as V3's. Each count is read on its own: one that throws where it is read (a getter, a
 * Proxy) is `undefined`, the others stand (the V4 usage check then keeps whole numbers only). A
 * usage that is not an object (`null`, missing) cannot be read at all: every count is unknown, as
 * a V4 model's (one rule, streamed or generated).
 */
function usageV2ToV3(usage: LanguageModelV2Usage): LanguageModelV3Usage {
  if (typeof usage !== 'object' || usage === null) {
    return { inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: undefined, text: undefined, reasoning: undefined } };
  }
  const raw: JSONObject = {};
  try {
    for (const [key, value] of Object.entries(usage)) if (typeof value === 'number') raw[key] = value;
  } catch {
    // a usage whose keys or a getter throw: raw keeps what was read, the counts are read below
  }
  const counts: Partial<Record<(typeof V2_USAGE_COUNTS)[number], unknown>> = {};
  for (const key of V2_USAGE_COUNTS) {
    try {
      counts[key] = usage[key];
    } catch {
      // unknown, as any count that is not a whole number
    }
  }
  return {
    inputTokens: { total: counts.inputTokens, noCache: undefined, cacheRead: counts.cachedInputTokens, cacheWrite: undefined } as LanguageModelV3Usage['inputTokens'],
    outputTokens: { total: counts.outputTokens, text: undefined, reasoning: counts.reasoningTokens } as LanguageModelV3Usage['outputTokens'],
    raw,
  };
}

function warningV2ToV3(warning: LanguageModelV2CallWarning): SharedV3Warning {
  switch (warning.type) {
    case 'unsupported-setting':
      return { type: 'unsupported', feature: String(warning.setting), details: warning.details };
    case 'unsupported-tool':
      return { type: 'unsupported', feature: `tool ${warning.tool.name}`, details: warning.details };
    case 'other':
      return warning;
    default:
      // a warning of no V2 type: passed on as it is (never `undefined` in the list), checked as a V4 stream-start's
      return warning as unknown as SharedV3Warning;
  }
}

function toV2CallOptions(options: LanguageModelV3CallOptions): {
  callOptions: LanguageModelV2CallOptions;
  warnings: SharedV3Warning[];
} {
  const warnings: SharedV3Warning[] = [];
  const { prompt, tools, providerOptions, ...rest } = options;
  const callOptions: LanguageModelV2CallOptions = {
    ...rest,
    prompt: prompt.flatMap((message) => messageV3ToV2(message, warnings)),
  };
  if (providerOptions !== undefined) callOptions.providerOptions = v2ProviderOptions(providerOptions);
  if (tools !== undefined) {
    callOptions.tools = tools.map((tool) => {
      if (tool.type === 'provider') return { type: 'provider-defined', id: tool.id, name: tool.name, args: tool.args };
      const { inputExamples, strict, providerOptions: toolOptions, ...functionTool } = tool;
      if (inputExamples !== undefined || strict !== undefined) {
        warnings.push({
          type: 'unsupported',
          feature: `tool ${tool.name}: ${inputExamples === undefined ? 'strict' : 'inputExamples'}`,
          details: 'LanguageModelV2 function tools have no strict mode or input examples.',
        });
      }
      return toolOptions === undefined ? functionTool : { ...functionTool, providerOptions: v2ProviderOptions(toolOptions) };
    });
  }
  return { callOptions, warnings };
}

/**
 * V3 provider options are `Record<string, JSONObject>`, whose values may be `undefined`; the V2
 * type says `JSONValue`. The two are identical once serialised, so only the static type changes.
 */
function v2ProviderOptions(options: SharedV3ProviderOptions): SharedV2ProviderOptions {
  return options as SharedV2ProviderOptions;
}

/** A V3 message whose parts already have V2 shapes, up to `providerOptions` (see above). */
function asV2Message(message: object): LanguageModelV2Message {
  return message as LanguageModelV2Message;
}

function messageV3ToV2(message: LanguageModelV3Message, warnings: SharedV3Warning[]): LanguageModelV2Message[] {
  switch (message.role) {
    case 'system':
    case 'user':
      return [asV2Message(message)];
    case 'assistant':
      return [
        asV2Message({
          ...message,
          content: message.content.map((part) =>
            part.type === 'tool-result' ? { ...part, output: toolOutputV3ToV2(part.output, warnings) } : part,
          ),
        }),
      ];
    case 'tool': {
      const content: object[] = [];
      for (const part of message.content) {
        if (part.type === 'tool-result') {
          content.push({ ...part, output: toolOutputV3ToV2(part.output, warnings) });
        } else {
          warnings.push({
            type: 'compatibility',
            feature: 'tool-approval-response',
            details: 'LanguageModelV2 prompts have no tool approval responses; it was left out of the prompt.',
          });
        }
      }
      return content.length === 0 ? [] : [asV2Message({ ...message, content })];
    }
  }
}

type V2ContentOutputPart = Extract<LanguageModelV2ToolResultOutput, { type: 'content' }>['value'][number];

function toolOutputV3ToV2(
  output: LanguageModelV3ToolResultOutput,
  warnings: SharedV3Warning[],
): LanguageModelV2ToolResultOutput {
  switch (output.type) {
    case 'text':
    case 'error-text':
      return { type: output.type, value: output.value };
    case 'json':
    case 'error-json':
      return { type: output.type, value: output.value };
    case 'execution-denied':
      warnings.push({
        type: 'compatibility',
        feature: 'execution-denied tool output',
        details: 'LanguageModelV2 has no denied tool output; it was sent as text.',
      });
      return { type: 'text', value: output.reason ?? 'Tool execution denied.' };
    case 'content':
      return {
        type: 'content',
        value: output.value.flatMap((part): V2ContentOutputPart[] => {
          switch (part.type) {
            case 'text':
              return [{ type: 'text', text: part.text }];
            case 'file-data':
            case 'image-data':
              return [{ type: 'media', data: part.data, mediaType: part.mediaType }];
            case 'custom':
              return [];
            default:
              throw new UnsupportedFunctionalityError({
                functionality: `tool output content '${part.type}' with a LanguageModelV2 model (only text and inline data)`,
              });
          }
        }),
      };
  }
}
