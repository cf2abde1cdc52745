/**
 * Building blocks shared by the inbound message schemas: JSON values, provider option records,
 * and the `dispatch` combinator that picks one schema per input so errors keep precise paths
 * (a plain `z.union` reports every failure at the union's own path).
 */
import { z } from 'zod';
import type { JSONValue } from '@ai-sdk/provider';

/** Any JSON value. */
export const jsonValueSchema: z.ZodType<JSONValue> = z.lazy(() =>
  z.union([z.null(), z.string(), z.number(), z.boolean(), z.array(jsonValueSchema), z.record(z.string(), jsonValueSchema.optional())]),
);

/** `providerOptions` / `providerMetadata`: `{ [provider]: { [key]: JSON } }`. */
export const providerRecordSchema = z.record(z.string(), z.record(z.string(), jsonValueSchema.optional()));

/** A non-empty string. */
export const nonEmptyString = z.string().min(1, 'must not be empty');

/** Chooses the schema for a value, or explains why none fits (`path` is relative to the value). */
export type SchemaChoice = z.ZodType | { path: ReadonlyArray<string | number>; message: string };

/**
 * A schema typed `T` that validates with whatever `choose` returns for the value, copying the
 * chosen schema's issues (with their paths) onto this position. The output is the input itself.
 */
export function dispatch<T>(choose: (value: unknown) => SchemaChoice): z.ZodType<T> {
  return z.custom<T>().superRefine((value, context) => {
    const choice = choose(value);
    if (!(choice instanceof z.ZodType)) {
      context.addIssue({ code: 'custom', message: choice.message, path: [...choice.path] });
      return;
    }
    const result = choice.safeParse(value);
    if (result.success) return;
    for (const issue of result.error.issues) {
      context.addIssue({ code: 'custom', message: issue.message, path: issue.path.map(toPathKey) });
    }
  });
}

function toPathKey(key: PropertyKey): string | number {
  return typeof key === 'symbol' ? String(key) : key;
}

/** True for a non-null, non-array object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Describes a value's type for an error message (`number`, `array`, `null`, …). */
export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/**
 * Content that is either a non-empty string or a non-empty array of parts: the common shape of
 * model message `content`. Errors name the offending part (`['content', 2, 'text']`).
 */
export function stringOrParts<T>(partSchema: z.ZodType, options: { allowString: boolean }): z.ZodType<T> {
  const parts = z.array(partSchema).min(1, 'must not be empty: give at least one part');
  return dispatch<T>((value) => {
    if (typeof value === 'string' && options.allowString) return nonEmptyString;
    if (Array.isArray(value)) return parts;
    const expected = options.allowString ? 'a non-empty string or an array of parts' : 'an array of parts';
    return { path: [], message: `expected ${expected}, received ${describeType(value)}` };
  });
}

/**
 * Parts discriminated by `type`, where some types are prefixes (`tool-…`, `data-…`). Unknown
 * types are reported at the part's `type`.
 */
export function partsByType(
  exact: Readonly<Record<string, z.ZodType>>,
  prefixed: ReadonlyArray<readonly [prefix: string, schema: z.ZodType]> = [],
  what = 'part',
): z.ZodType<{
  /** What kind of value this is. */
  type: string;
}> {
  const known = [...Object.keys(exact), ...prefixed.map(([prefix]) => `${prefix}*`)].join(', ');
  return dispatch<{ type: string }>((value) => {
    if (!isRecord(value)) return { path: [], message: `expected a ${what} object, received ${describeType(value)}` };
    const type = value['type'];
    if (typeof type !== 'string') return { path: ['type'], message: `expected a string ${what} type, received ${describeType(type)}` };
    const schema = Object.hasOwn(exact, type) ? exact[type] : prefixed.find(([prefix]) => type.startsWith(prefix) && type.length > prefix.length)?.[1];
    return schema ?? { path: ['type'], message: `unsupported ${what} type '${type}' (expected one of ${known})` };
  });
}
