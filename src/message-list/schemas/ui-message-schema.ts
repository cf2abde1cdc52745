/**
 * zod schemas for AI SDK v7 `UIMessage`s: `{ id, role, parts }` with text, reasoning, tool
 * (`tool-<name>` / `dynamic-tool`), source, file, step-start and `data-*` parts.
 */
import { z } from 'zod';
import type { UIMessage } from 'ai';
import { dispatch, describeType, isRecord, nonEmptyString, partsByType, providerRecordSchema } from './schema-helpers.js';

const providerMetadata = providerRecordSchema.optional();

const toolCommon = {
  toolCallId: nonEmptyString,
  title: z.string().optional(),
  providerExecuted: z.boolean().optional(),
  callProviderMetadata: providerMetadata,
};

const approvalSchema = z.looseObject({ id: z.string(), approved: z.boolean().optional(), reason: z.string().optional() });

const toolStateSchemas: Record<string, z.ZodType> = {
  'input-streaming': z.looseObject({ ...toolCommon, state: z.literal('input-streaming'), input: z.unknown().optional() }),
  'input-available': z.looseObject({ ...toolCommon, state: z.literal('input-available'), input: z.unknown() }),
  'output-available': z.looseObject({
    ...toolCommon,
    state: z.literal('output-available'),
    input: z.unknown(),
    output: z.unknown().optional(),
    resultProviderMetadata: providerMetadata,
    preliminary: z.boolean().optional(),
  }),
  'output-error': z.looseObject({
    ...toolCommon,
    state: z.literal('output-error'),
    input: z.unknown().optional(),
    errorText: z.string(),
    resultProviderMetadata: providerMetadata,
  }),
  'approval-requested': z.looseObject({ ...toolCommon, state: z.literal('approval-requested'), input: z.unknown(), approval: approvalSchema }),
  'approval-responded': z.looseObject({ ...toolCommon, state: z.literal('approval-responded'), input: z.unknown(), approval: approvalSchema }),
  'output-denied': z.looseObject({ ...toolCommon, state: z.literal('output-denied'), input: z.unknown(), approval: approvalSchema }),
};

function toolPartSchema(extra: z.ZodType): z.ZodType {
  return dispatch<unknown>((value) => {
    const extraResult = extra.safeParse(value);
    if (!extraResult.success) return extra;
    const state = isRecord(value) ? value['state'] : undefined;
    const schema = typeof state === 'string' && Object.hasOwn(toolStateSchemas, state) ? toolStateSchemas[state] : undefined;
    return schema ?? { path: ['state'], message: `unknown tool state ${JSON.stringify(state)} (expected one of ${Object.keys(toolStateSchemas).join(', ')})` };
  });
}

const uiPartSchema = partsByType(
  {
    text: z.object({ type: z.literal('text'), text: z.string(), state: z.enum(['streaming', 'done']).optional(), providerMetadata }),
    reasoning: z.object({ type: z.literal('reasoning'), text: z.string(), state: z.enum(['streaming', 'done']).optional(), providerMetadata }),
    'source-url': z.object({ type: z.literal('source-url'), sourceId: z.string(), url: z.string(), title: z.string().optional(), providerMetadata }),
    'source-document': z.object({
      type: z.literal('source-document'),
      sourceId: z.string(),
      mediaType: z.string(),
      title: z.string(),
      filename: z.string().optional(),
      providerMetadata,
    }),
    file: z.object({
      type: z.literal('file'),
      mediaType: nonEmptyString,
      url: z.string(),
      filename: z.string().optional(),
      providerReference: z.record(z.string(), z.string()).optional(),
      providerMetadata,
    }),
    'step-start': z.object({ type: z.literal('step-start') }),
    'dynamic-tool': toolPartSchema(z.looseObject({ type: z.literal('dynamic-tool'), toolName: nonEmptyString })),
  },
  [
    ['tool-', toolPartSchema(z.looseObject({ type: z.string() }))],
    ['data-', z.object({ type: z.string(), id: z.string().optional(), data: z.unknown() })],
  ],
  'UI part',
);

const uiMessageObjectSchema = z.object({
  id: nonEmptyString,
  role: z.enum(['system', 'user', 'assistant']),
  metadata: z.unknown().optional(),
  parts: z.array(uiPartSchema).min(1, 'must not be empty: give at least one part'),
});

/**
 * Validates an AI SDK v7 `UIMessage` (`{ id, role, parts }`).
 *
 * @example
 * ```ts
 * import { uiMessageSchema } from 'rxagent/message-list';
 * uiMessageSchema.parse({ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hi' }] });
 * ```
 */
export const uiMessageSchema: z.ZodType<UIMessage> = dispatch<UIMessage>((value) =>
  isRecord(value) ? uiMessageObjectSchema : { path: [], message: `expected a UI message object, received ${describeType(value)}` },
);
