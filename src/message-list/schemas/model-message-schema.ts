/**
 * zod schemas for AI SDK v7 `ModelMessage`s (system, user, assistant, tool) and their parts.
 */
import { z } from 'zod';
import type { ModelMessage } from 'ai';
import { dispatch, isRecord, describeType, jsonValueSchema, nonEmptyString, partsByType, providerRecordSchema, stringOrParts } from './schema-helpers.js';

const providerOptions = providerRecordSchema.optional();

const binarySchema = z.union([z.instanceof(Uint8Array), z.instanceof(ArrayBuffer)]);
const providerReferenceSchema = z.record(z.string(), z.string());

const taggedFileDataSchema = partsByType(
  {
    data: z.object({ type: z.literal('data'), data: z.union([z.string(), binarySchema]) }),
    url: z.object({ type: z.literal('url'), url: z.instanceof(URL) }),
    reference: z.object({ type: z.literal('reference'), reference: providerReferenceSchema }),
    text: z.object({ type: z.literal('text'), text: z.string() }),
  },
  [],
  'file data',
);

/** Raw file content: base64 or URL string, bytes, a `URL`, a tagged `FileData` or a provider reference. */
const fileDataSchema = dispatch<unknown>((value) => {
  if (typeof value === 'string' || value instanceof Uint8Array || value instanceof ArrayBuffer || value instanceof URL) return z.unknown();
  if (isRecord(value)) return 'type' in value ? taggedFileDataSchema : providerReferenceSchema;
  return { path: [], message: `expected file data (base64 or URL string, bytes, URL or tagged file data), received ${describeType(value)}` };
});

const textPartSchema = z.object({ type: z.literal('text'), text: z.string(), providerOptions });
const imagePartSchema = z.object({ type: z.literal('image'), image: fileDataSchema, mediaType: z.string().optional(), providerOptions });
const filePartSchema = z.object({
  type: z.literal('file'),
  data: fileDataSchema,
  mediaType: nonEmptyString,
  filename: z.string().optional(),
  providerOptions,
});
const reasoningPartSchema = z.object({ type: z.literal('reasoning'), text: z.string(), providerOptions });
const toolCallPartSchema = z.object({
  type: z.literal('tool-call'),
  toolCallId: nonEmptyString,
  toolName: nonEmptyString,
  input: z.unknown(),
  providerExecuted: z.boolean().optional(),
  providerOptions,
});

/**
 * A tool result's `output`: `{ type: 'text' | 'json' | 'error-text' | 'error-json' | 'content' | 'execution-denied', … }`.
 *
 * @example
 * ```ts
 * import { toolResultOutputSchema } from 'rxagent/message-list';
 * toolResultOutputSchema.parse({ type: 'json', value: { celsius: 21 } });
 * ```
 */
export const toolResultOutputSchema = partsByType(
  {
    text: z.object({ type: z.literal('text'), value: z.string(), providerOptions }),
    json: z.object({ type: z.literal('json'), value: jsonValueSchema, providerOptions }),
    'error-text': z.object({ type: z.literal('error-text'), value: z.string(), providerOptions }),
    'error-json': z.object({ type: z.literal('error-json'), value: jsonValueSchema, providerOptions }),
    content: z.object({ type: z.literal('content'), value: z.array(z.looseObject({ type: z.string() })), providerOptions }),
    'execution-denied': z.object({ type: z.literal('execution-denied'), reason: z.string().optional(), providerOptions }),
  },
  [],
  'tool output',
);

const toolResultPartSchema = z.object({
  type: z.literal('tool-result'),
  toolCallId: nonEmptyString,
  toolName: nonEmptyString,
  output: toolResultOutputSchema,
  providerOptions,
});

const userPart = partsByType({ text: textPartSchema, image: imagePartSchema, file: filePartSchema });
const assistantPart = partsByType({
  text: textPartSchema,
  file: filePartSchema,
  reasoning: reasoningPartSchema,
  'tool-call': toolCallPartSchema,
  'tool-result': toolResultPartSchema,
});
const toolPart = partsByType({ 'tool-result': toolResultPartSchema });

const optionalId = z.string().min(1).optional();

/**
 * A system `ModelMessage` (`{ role: 'system', content: string }`), also the shape of a `CoreSystemMessage`.
 *
 * @example
 * ```ts
 * import { systemModelMessageSchema } from 'rxagent/message-list';
 * systemModelMessageSchema.parse({ role: 'system', content: 'Be brief.' });
 * ```
 */
export const systemModelMessageSchema = z.object({
  /** Who wrote it: `user`, `assistant`, `system` or `tool`. */
  role: z.literal('system'),
  /** The content. */
  content: nonEmptyString,
  /** Provider-specific options. */
  providerOptions,
  /** The message's id, if it has one. */
  id: optionalId,
});

const userModelMessageSchema = z.object({
  role: z.literal('user'),
  content: stringOrParts(userPart, { allowString: true }),
  providerOptions,
  id: optionalId,
});
const assistantModelMessageSchema = z.object({
  role: z.literal('assistant'),
  content: stringOrParts(assistantPart, { allowString: true }),
  providerOptions,
  id: optionalId,
});
const toolModelMessageSchema = z.object({
  role: z.literal('tool'),
  content: stringOrParts(toolPart, { allowString: false }),
  providerOptions,
  id: optionalId,
});

const modelMessageByRole = z.discriminatedUnion('role', [
  systemModelMessageSchema,
  userModelMessageSchema,
  assistantModelMessageSchema,
  toolModelMessageSchema,
]);

/**
 * Validates an AI SDK v7 `ModelMessage`. An optional string `id` is accepted and kept.
 *
 * @example
 * ```ts
 * import { modelMessageSchema } from 'rxagent/message-list';
 * modelMessageSchema.parse({ role: 'user', content: [{ type: 'text', text: 'hi' }] });
 * ```
 */
export const modelMessageSchema: z.ZodType<ModelMessage> = dispatch<ModelMessage>(() => modelMessageByRole);
