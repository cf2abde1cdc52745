/** A tool's `inputSchema` (zod, AI SDK schema, or a plain JSON schema object) as an AI SDK `Schema`. */
import { TypeValidationError, type JSONSchema7 } from '@ai-sdk/provider';
import { asSchema, jsonSchema, safeValidateTypes, type FlexibleSchema, type Schema, type ValidationResult } from '@ai-sdk/provider-utils';
import { isPromiseLike, type MaybePromise } from '../contract/maybe-async.js';

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
 * A JSON schema that carries a Standard Schema validator: zod 4's `z.toJSONSchema()` output (and
 * the AI SDK's `zodSchema(…).jsonSchema`) has a non-enumerable `~standard` of vendor `zod` but is no
 * zod schema (no `_zod`, no `_def`); read as one, building the request threw a `TypeError`.
 */
function isValidatedJsonSchema(value: object): boolean {
  return typeof value !== 'function' && '~standard' in value && !('_zod' in value) && !('_def' in value) && typeof (value as Partial<SyncParsable>).safeParse !== 'function';
}

/** `schema`, sent as the JSON schema it is, validated by its own `~standard.validate`. */
function validatedJsonSchema(schema: JSONSchema7 & StandardValidator): Schema<unknown> {
  const standard = schema['~standard'];
  return jsonSchema(schema, {
    validate: (value) => {
      const result = standard.validate(value);
      return isPromiseLike<StandardResult>(result) ? Promise.resolve(result).then((resolved) => fromStandard(value, resolved)) : fromStandard(value, result);
    },
  });
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
    schema = isValidatedJsonSchema(key)
      ? validatedJsonSchema(key as JSONSchema7 & StandardValidator)
      : isFlexibleSchema(key)
      ? asSchema(inputSchema as FlexibleSchema<unknown>)
      : jsonSchema(inputSchema as JSONSchema7, objectTyped(inputSchema as JSONSchema7) ? { validate: validateObject } : {});
    schemas.set(key, schema);
  }
  return schema;
}

/** What {@link validateToolInput} found: the validated value, or the `TypeValidationError`. */
export type ToolInputValidation = { success: true; value: unknown } | { success: false; error: TypeValidationError };

/** A zod 3 / zod 4 classic schema: `safeParse` runs synchronously unless the schema has async parts. */
interface SyncParsable {
  safeParse(value: unknown): { success: true; data: unknown } | { success: false; error: unknown };
}

/** What a Standard Schema's `validate` gives: a value, or issues. */
type StandardResult = { value: unknown; issues?: undefined } | { value?: undefined; issues: unknown };

/** A Standard Schema (valibot, arktype…): `validate` returns a promise only when it must. */
interface StandardValidator {
  '~standard': { vendor: string; validate(value: unknown): StandardResult | PromiseLike<StandardResult> };
}

/** A validation result, now or later. */
type Validation = ValidationResult<unknown> | PromiseLike<ValidationResult<unknown>>;

function settle(value: unknown, result: ValidationResult<unknown>): ToolInputValidation {
  return result.success ? { success: true, value: result.value } : { success: false, error: TypeValidationError.wrap({ value, cause: result.error }) };
}

function fromStandard(value: unknown, result: StandardResult): ValidationResult<unknown> {
  return result.issues === undefined ? { success: true, value: result.value } : { success: false, error: new TypeValidationError({ value, cause: result.issues }) };
}

/** Validation with each validator's own synchronous entry point, or `undefined` when it has none. */
function validateNow(inputSchema: unknown, schema: Schema<unknown>, value: unknown): Validation | undefined {
  if (typeof inputSchema !== 'object' || inputSchema === null) {
    return schema.validate === undefined ? { success: true, value } : schema.validate(value);
  }
  const candidate = inputSchema as Partial<SyncParsable> & Partial<StandardValidator> & { _def?: unknown };
  if ((candidate['~standard']?.vendor === 'zod' || candidate._def !== undefined) && !isValidatedJsonSchema(candidate)) {
    if (typeof candidate.safeParse !== 'function') return undefined;
    // throws for async refinements and transforms: the asynchronous path handles those
    const parsed = candidate.safeParse(value);
    return parsed.success ? { success: true, value: parsed.data } : { success: false, error: parsed.error as Error };
  }
  if (candidate['~standard'] !== undefined) {
    const result = candidate['~standard'].validate(value);
    return isPromiseLike<StandardResult>(result) ? Promise.resolve(result).then((resolved) => fromStandard(value, resolved)) : fromStandard(value, result);
  }
  return schema.validate === undefined ? { success: true, value } : schema.validate(value);
}

/**
 * Validates a tool's input against its `inputSchema` with the result `safeValidateTypes` gives,
 * synchronously when the validator is (zod without async refinements, a JSON schema, a
 * synchronous Standard Schema): no promise hop when nothing is async.
 */
export function validateToolInput(inputSchema: unknown, value: unknown): MaybePromise<ToolInputValidation> {
  // built first: creating a zod 4 schema also installs zod's English error messages
  const schema = toToolSchema(inputSchema);
  const later = (): Promise<ToolInputValidation> =>
    safeValidateTypes({ value, schema }).then((result) => (result.success ? { success: true, value: result.value } : { success: false, error: result.error }));
  let now: Validation | undefined;
  try {
    now = validateNow(inputSchema, schema, value);
  } catch {
    return later();
  }
  if (now === undefined) return later();
  if (isPromiseLike<ValidationResult<unknown>>(now)) {
    return Promise.resolve(now).then(
      (result) => settle(value, result),
      (error: unknown) => settle(value, { success: false, error: error as Error }),
    );
  }
  return settle(value, now);
}
