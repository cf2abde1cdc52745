/** A tool's `inputSchema` (zod, AI SDK schema, or a plain JSON schema object) as an AI SDK `Schema`. */
import type { JSONSchema7 } from '@ai-sdk/provider';
import { asSchema, jsonSchema, type FlexibleSchema, type Schema } from '@ai-sdk/provider-utils';

const schemas = new WeakMap<object, Schema<unknown>>();

function isFlexibleSchema(value: object): boolean {
  return (
    typeof value === 'function' ||
    '~standard' in value ||
    '_zod' in value ||
    '_def' in value ||
    Object.getOwnPropertySymbols(value).some((symbol) => symbol.description === 'vercel.ai.schema')
  );
}

/** The AI SDK schema of `inputSchema` (plain JSON schemas are accepted without validation). */
export function toToolSchema(inputSchema: unknown): Schema<unknown> {
  if (inputSchema === undefined || inputSchema === null || typeof inputSchema !== 'object' && typeof inputSchema !== 'function') {
    return jsonSchema({ type: 'object', additionalProperties: true });
  }
  const key = inputSchema as object;
  let schema = schemas.get(key);
  if (schema === undefined) {
    schema = isFlexibleSchema(key)
      ? asSchema(inputSchema as FlexibleSchema<unknown>)
      : jsonSchema(inputSchema as JSONSchema7);
    schemas.set(key, schema);
  }
  return schema;
}
