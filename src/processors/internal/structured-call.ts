/**
 * One model call that must answer with JSON matching a zod schema: the model-backed processors'
 * only way of talking to their model. The model is called through `streamModel` (so V2/V3/V4
 * objects and mock models with a virtual-time stream all work); the text parts are collected,
 * Markdown fences and prose around the object are tolerated, and the object is validated.
 */
import { lastValueFrom, map, reduce } from 'rxjs';
import { z } from 'zod';
import type { JSONSchema7, LanguageModelV4, LanguageModelV4CallOptions, SharedV4ProviderOptions } from '@ai-sdk/provider';
import { type ModelInput, type ModelRegistry, resolveModel, streamModel } from '../../model/index.js';
import { parseJsonAnswer } from './judge-answer.js';
import { thrownMessage } from '../../contract/index.js';
import { AnswerStreamCutError } from './judge-retry.js';

// How an answer is read (fences, prose, near-JSON) lives with the rest of the answer reader.
export { parseJsonAnswer };

/**
 * Why a structured call failed: the model call itself, an answer that is not the expected JSON,
 * or a model that stopped on its content filter (`finishReason: 'content-filter'`).
 */
export type StructuredCallFailure = 'model' | 'malformed' | 'refused';

/** A failed structured call. `kind` tells a failing model from a malformed answer. */
export class StructuredCallError extends Error {
  readonly kind: StructuredCallFailure;
  /** The model's raw answer, for a malformed one. */
  readonly answer: string | undefined;

  constructor(kind: StructuredCallFailure, message: string, options: { cause?: unknown; answer?: string } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'StructuredCallError';
    this.kind = kind;
    this.answer = options.answer;
  }
}

/** One structured call. */
export interface StructuredCallRequest<T> {
  model: LanguageModelV4;
  /** The task and the answer format (see {@link answerFormat}). */
  system: string;
  /** The content to judge. */
  prompt: string;
  schema: z.ZodType<T>;
  /**
   * The JSON schema sent as the response format, when it differs from `schema` (a `schema` that
   * also accepts older answer shapes, or transforms them, is sent as this one shape instead).
   */
  responseSchema?: z.ZodType;
  /**
   * Describe the answer in the prompt only and send no response format (for models without native
   * JSON output). The prompt always describes it; this only drops the response format.
   */
  jsonPromptInjection?: boolean;
  abortSignal?: AbortSignal;
  providerOptions?: SharedV4ProviderOptions;
}

/** Resolves a processor's model option once (V2/V3 adapted; `'provider/model'` needs `registry`). */
export function resolveProcessorModel(model: ModelInput, registry?: ModelRegistry): LanguageModelV4 {
  return resolveModel(model, registry);
}

/** The sentence every structured prompt ends with: answer with JSON only, shaped like `example`. */
export function answerFormat(example: string): string {
  return `Respond with a single JSON object and nothing else (no prose, no Markdown), shaped like:\n${example}`;
}

function jsonSchemaOf(schema: z.ZodType): JSONSchema7 | undefined {
  try {
    return z.toJSONSchema(schema) as JSONSchema7;
  } catch {
    return undefined;
  }
}

/**
 * Calls the model once and returns its answer parsed and validated by `schema`. Throws a
 * {@link StructuredCallError}: `kind: 'model'` when the call fails (thrown, an `error` stream part,
 * finish reason `error`, or a stream that ends without its `finish`), `kind: 'malformed'` when the
 * answer is not JSON matching the schema or was cut off (finish reason `length`), `kind: 'refused'`
 * on finish reason `content-filter`.
 */
export async function structuredCall<T>(request: StructuredCallRequest<T>): Promise<T> {
  const jsonSchema = jsonSchemaOf(request.responseSchema ?? request.schema);
  const callOptions: LanguageModelV4CallOptions = {
    prompt: [
      { role: 'system', content: request.system },
      { role: 'user', content: [{ type: 'text', text: request.prompt }] },
    ],
    temperature: 0,
    ...(request.jsonPromptInjection === true
      ? {}
      : { responseFormat: jsonSchema === undefined ? { type: 'json' as const } : { type: 'json' as const, schema: jsonSchema } }),
    ...(request.abortSignal === undefined ? {} : { abortSignal: request.abortSignal }),
    ...(request.providerOptions === undefined ? {} : { providerOptions: request.providerOptions }),
  };
  let answer: string;
  let finish: string | undefined;
  try {
    answer = await lastValueFrom(
      streamModel(request.model, callOptions).pipe(
        map((part) => {
          if (part.type === 'error') throw part.error;
          if (part.type === 'finish') finish = part.finishReason.unified;
          return part.type === 'text-delta' ? part.delta : '';
        }),
        reduce((text, delta) => text + delta, ''),
      ),
    );
  } catch (error) {
    const reason = thrownMessage(error) ?? 'a value that cannot be read';
    throw new StructuredCallError('model', `model call failed: ${reason}`, { cause: error });
  }
  if (finish === 'content-filter') throw new StructuredCallError('refused', 'the model stopped on its content filter', { answer });
  // an answer cut off by the output limit, or ended by a provider error, is not the model's whole answer
  if (finish === 'length') throw new StructuredCallError('malformed', 'the answer was cut off at the output limit', { answer });
  if (finish === 'error') throw new StructuredCallError('model', 'the model call ended with an error');
  // a stream that ends without its finish was cut (a dropped connection): its text may be the start
  // of an answer that said more, so it is no answer — a failure of the call, retried like one
  if (finish === undefined) throw new StructuredCallError('model', 'the answer stream ended without a finish (cut off)', { answer, cause: new AnswerStreamCutError() });
  const parsed = parseJsonAnswer(answer);
  if (parsed === undefined) {
    throw new StructuredCallError('malformed', 'the model did not answer with JSON', { answer });
  }
  const validated = request.schema.safeParse(parsed);
  if (!validated.success) {
    throw new StructuredCallError('malformed', `the model's answer does not match the expected shape: ${validated.error.message}`, {
      answer,
      cause: validated.error,
    });
  }
  return validated.data;
}
