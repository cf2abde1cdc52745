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

/**
 * A metadata record (`providerMetadata`, `content.metadata`) of a message checked by hand: absent,
 * or — with `records` — a plain object, its values not looked into.
 */
function metadataOk(value: unknown, records: boolean): boolean {
  if (value === undefined) return true;
  if (!records || !isRecord(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** The common part shapes, checked by hand; anything else (or any doubt) is left to the schema. */
function isPlainPart(part: unknown, records: boolean): boolean {
  if (!isRecord(part) || !metadataOk(part['providerMetadata'], records) || !finiteOrAbsent(part['createdAt'])) return false;
  switch (part['type']) {
    case 'text':
      return typeof part['text'] === 'string';
    case 'reasoning':
      return typeof part['reasoning'] === 'string' && part['details'] === undefined;
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

/** {@link isPlainDbMessage}, with metadata records taken as they are when `records`. */
function isPlainMessage(value: unknown, records: boolean): boolean {
  if (!isRecord(value) || !nonEmpty(value['id']) || !roles.has(value['role'] as string)) return false;
  const createdAt = value['createdAt'];
  if (createdAt !== undefined && !(createdAt instanceof Date && !Number.isNaN(createdAt.getTime()))) return false;
  if (!optional(value['threadId'], 'string') || !optional(value['resourceId'], 'string') || !optional(value['type'], 'string')) return false;
  const content = value['content'];
  if (!isRecord(content) || content['format'] !== 2 || !optional(content['content'], 'string')) return false;
  if (!metadataOk(content['metadata'], records) || !metadataOk(content['providerMetadata'], records)) return false;
  const parts = content['parts'];
  if (!Array.isArray(parts) || parts.length === 0) return false;
  for (const part of parts) if (!isPlainPart(part, records)) return false;
  return true;
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
  return isPlainMessage(value, false);
}

/**
 * Why `messages` (stored messages, as a list holds them) are not all stored messages — the first
 * one's place and what is wrong there — or `undefined`. What `dbMessageSchema` refuses, except a
 * part of a type it does not know (a string `type`: the specification's `ReasoningTransformer`
 * renames `reasoning` parts to `thinking` in place; the list passes such parts through). The
 * common shape is checked by hand ({@link isPlainDbMessage}), its metadata records (`providerMetadata`,
 * `content.metadata`) only as records: this walk runs after every hook call, and the schema over a
 * 100-message history with provider metadata took ≈ 300 µs a walk (1.3 µs by hand). Only other
 * messages run the schema.
 * Throws what a value that cannot be read throws (a Proxy that throws, a revoked Proxy).
 *
 * @example
 * ```ts
 * storedMessagesProblem([{ id: 'm1', role: 'user', content: 42 }]); // 'message "m1" (#0) content: expected object, …'
 * ```
 */
export function storedMessagesProblem(messages: readonly unknown[]): string | undefined {
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index];
    if (isPlainMessage(message, true)) continue;
    const parsed = dbMessageSchema.safeParse(message);
    if (parsed.success) continue;
    const issue = parsed.error.issues.find((candidate) => !isUnknownPartType(message, candidate.path));
    if (issue === undefined) continue;
    const id = isRecord(message) && typeof message['id'] === 'string' ? `message ${JSON.stringify(message['id'].slice(0, 40))} (#${index})` : `message #${index}`;
    const path = issue.path.length === 0 ? '' : ` ${issue.path.map(String).join('.')}`;
    return `${id}${path}: ${issue.message}`;
  }
  return undefined;
}

/** Whether `path` is `content.parts[i].type` of a part whose type is a string (one the schema does not know). */
function isUnknownPartType(message: unknown, path: readonly PropertyKey[]): boolean {
  if (path.length !== 4 || path[0] !== 'content' || path[1] !== 'parts' || typeof path[2] !== 'number' || path[3] !== 'type') return false;
  const content = isRecord(message) ? message['content'] : undefined;
  const parts = isRecord(content) ? content['parts'] : undefined;
  const part: unknown = Array.isArray(parts) ? parts[path[2]] : undefined;
  return isRecord(part) && typeof part['type'] === 'string';
}
