/** A tool's `inputSchema` (zod, AI SDK schema, or a plain JSON schema object) as an AI SDK `Schema`. */
import type { JSONSchema7 } from '@ai-sdk/provider';
import { asSchema, jsonSchema, type FlexibleSchema, type Schema, type ValidationResult } from '@ai-sdk/provider-utils';

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

/**
 * A tool's input is a JSON object (what providers send, and what the model's arguments must parse
 * to): anything else — e.g. arguments that were not valid JSON and stayed a string — is invalid.
 */
function validateObject(value: unknown): ValidationResult<unknown> {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return { success: true, value };
  const received = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'string' ? `the text ${JSON.stringify(value.slice(0, 60))}` : typeof value;
  return { success: false, error: new TypeError(`expected a JSON object, received ${received}`) };
}

/** A JSON schema of `type: 'object'`: its values must at least be objects. */
function objectTyped(schema: JSONSchema7): boolean {
  return schema.type === 'object';
}

const anyObject = jsonSchema({ type: 'object', additionalProperties: true }, { validate: validateObject });

/** The AI SDK schema of `inputSchema` (plain JSON schemas are not validated, beyond an object for `type: 'object'`). */
export function toToolSchema(inputSchema: unknown): Schema<unknown> {
  if (inputSchema === undefined || inputSchema === null || typeof inputSchema !== 'object' && typeof inputSchema !== 'function') {
    return anyObject;
  }
  const key = inputSchema as object;
  let schema = schemas.get(key);
  if (schema === undefined) {
    schema = isFlexibleSchema(key)
      ? asSchema(inputSchema as FlexibleSchema<unknown>)
      : jsonSchema(inputSchema as JSONSchema7, objectTyped(inputSchema as JSONSchema7) ? { validate: validateObject } : {});
    schemas.set(key, schema);
  }
  return schema;
}
