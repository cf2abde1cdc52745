/**
 * zod schema for a stored `MastraDBMessage` (format 2). Unknown keys are kept (looseObject), so
 * fields written by newer versions or by Mastra itself survive a round trip through the list.
 */
import { z } from 'zod';
import type { MastraDBMessage } from '../types.js';
import { describeType, dispatch, isRecord, nonEmptyString, partsByType, providerRecordSchema } from './schema-helpers.js';

const providerMetadata = providerRecordSchema.optional();
const createdAt = z.number().optional();

const reasoningDetailSchema = partsByType(
  {
    text: z.looseObject({ type: z.literal('text'), text: z.string(), signature: z.string().optional() }),
    redacted: z.looseObject({ type: z.literal('redacted'), data: z.string() }),
  },
  [],
  'reasoning detail',
);

const toolInvocationSchema = z.looseObject({
  state: z.enum(['partial-call', 'call', 'result', 'output-error']),
  toolCallId: nonEmptyString,
  toolName: nonEmptyString,
  args: z.unknown().optional(),
  result: z.unknown().optional(),
  isError: z.boolean().optional(),
  errorText: z.string().optional(),
});

/** One part of a stored message. */
export const dbPartSchema = partsByType(
  {
    text: z.looseObject({ type: z.literal('text'), text: z.string(), providerMetadata, createdAt }),
    reasoning: z.looseObject({
      type: z.literal('reasoning'),
      reasoning: z.string(),
      details: z.array(reasoningDetailSchema).optional(),
      providerMetadata,
      createdAt,
    }),
    'tool-invocation': z.looseObject({
      type: z.literal('tool-invocation'),
      toolInvocation: toolInvocationSchema,
      providerExecuted: z.boolean().optional(),
      title: z.string().optional(),
      dynamic: z.boolean().optional(),
      providerMetadata,
      createdAt,
    }),
    file: z.looseObject({
      type: z.literal('file'),
      mimeType: nonEmptyString,
      data: z.string(),
      filename: z.string().optional(),
      providerReference: z.record(z.string(), z.string()).optional(),
      providerMetadata,
      createdAt,
    }),
    source: z.looseObject({
      type: z.literal('source'),
      source: z.looseObject({
        sourceType: z.enum(['url', 'document']),
        id: z.string(),
        url: z.string().optional(),
        title: z.string().optional(),
        mediaType: z.string().optional(),
        filename: z.string().optional(),
      }),
      providerMetadata,
      createdAt,
    }),
    'step-start': z.looseObject({ type: z.literal('step-start'), model: z.string().optional(), createdAt }),
  },
  [['data-', z.looseObject({ type: z.string(), id: z.string().optional(), data: z.unknown(), createdAt })]],
  'message part',
);

const dateSchema = dispatch<Date | string>((value) => {
  if (value instanceof Date && !Number.isNaN(value.getTime())) return z.unknown();
  if (typeof value === 'string' && !Number.isNaN(Date.parse(value))) return z.unknown();
  return { path: [], message: `expected a Date or an ISO date string, received ${describeType(value)}` };
});

const contentSchema = z
  .looseObject({
    format: z.literal(2),
    parts: z.array(dbPartSchema),
    content: z.string().optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    providerMetadata,
  })
  .superRefine((content, context) => {
    if (content.parts.length === 0 && !content.content) {
      context.addIssue({ code: 'custom', path: ['parts'], message: 'must not be empty: give at least one part' });
    }
  });

const dbMessageObjectSchema = z.looseObject({
  id: nonEmptyString,
  role: z.enum(['user', 'assistant', 'system', 'tool']),
  createdAt: dateSchema.optional(),
  threadId: z.string().optional(),
  resourceId: z.string().optional(),
  type: z.string().optional(),
  content: contentSchema,
});

/**
 * Validates a stored `MastraDBMessage` (format 2). `createdAt` may be a `Date` or an ISO string
 * (as read back from JSON); a message whose `parts` are empty needs a legacy `content.content`.
 *
 * @example
 * ```ts
 * import { dbMessageSchema } from 'rxagent/message-list';
 * dbMessageSchema.parse({ id: 'm1', role: 'user', createdAt: new Date(), content: { format: 2, parts: [{ type: 'text', text: 'hi' }] } });
 * ```
 */
export const dbMessageSchema: z.ZodType<MastraDBMessage> = dispatch<MastraDBMessage>((value) =>
  isRecord(value) ? dbMessageObjectSchema : { path: [], message: `expected a message object, received ${describeType(value)}` },
);

const roles = new Set(['user', 'assistant', 'system', 'tool']);
const invocationStates = new Set(['partial-call', 'call', 'result', 'output-error']);

const optional = (value: unknown, type: 'string' | 'boolean'): boolean => value === undefined || typeof value === type;
const nonEmpty = (value: unknown): boolean => typeof value === 'string' && value.length > 0;
const finiteOrAbsent = (value: unknown): boolean => value === undefined || (typeof value === 'number' && Number.isFinite(value));

/** The common part shapes, checked by hand; anything else (or any doubt) is left to the schema. */
function isPlainPart(part: unknown): boolean {
  if (!isRecord(part) || part['providerMetadata'] !== undefined || !finiteOrAbsent(part['createdAt'])) return false;
  switch (part['type']) {
    case 'text':
      return typeof part['text'] === 'string';
    case 'step-start':
      return optional(part['model'], 'string');
    case 'tool-invocation': {
      const invocation = part['toolInvocation'];
      return (
        isRecord(invocation) &&
        invocationStates.has(invocation['state'] as string) &&
        nonEmpty(invocation['toolCallId']) &&
        nonEmpty(invocation['toolName']) &&
        optional(invocation['isError'], 'boolean') &&
        optional(invocation['errorText'], 'string') &&
        optional(part['providerExecuted'], 'boolean') &&
        optional(part['title'], 'string') &&
        optional(part['dynamic'], 'boolean')
      );
    }
    default:
      return false;
  }
}

/**
 * True when `value` is a stored message of the common shape (text, step-start and tool-invocation
 * parts, no metadata records) that `dbMessageSchema` accepts: checked by hand, without running
 * the schema (the loop adds one such message per step). False means "run the schema" — never
 * "invalid" — so errors stay the schema's.
 *
 * @example
 * ```ts
 * isPlainDbMessage({ id: 'm1', role: 'assistant', content: { format: 2, parts: [{ type: 'text', text: 'hi' }] } }); // true
 * ```
 */
export function isPlainDbMessage(value: unknown): boolean {
  if (!isRecord(value) || !nonEmpty(value['id']) || !roles.has(value['role'] as string)) return false;
  const createdAt = value['createdAt'];
  if (createdAt !== undefined && !(createdAt instanceof Date && !Number.isNaN(createdAt.getTime()))) return false;
  if (!optional(value['threadId'], 'string') || !optional(value['resourceId'], 'string') || !optional(value['type'], 'string')) return false;
  const content = value['content'];
  if (!isRecord(content) || content['format'] !== 2 || !optional(content['content'], 'string')) return false;
  if (content['metadata'] !== undefined || content['providerMetadata'] !== undefined) return false;
  const parts = content['parts'];
  if (!Array.isArray(parts) || parts.length === 0) return false;
  for (const part of parts) if (!isPlainPart(part)) return false;
  return true;
}
