/**
 * `validateToolInput`: the result `safeValidateTypes` gives, but synchronous when the validator
 * is (no promise hop for a synchronous tool), and asynchronous only when it must be.
 */
import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { TypeValidationError } from '@ai-sdk/provider';
import { asSchema, safeValidateTypes, zodSchema } from '@ai-sdk/provider-utils';
import { Agent } from '../../src/loop/agent.js';
import type { AgentToolSet } from '../../src/contract/tool-types.js';
import { validateToolInput, type ToolInputValidation } from '../../src/model/tool-schema.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';

const isPromise = (value: unknown): boolean => value instanceof Promise;
const errorOf = (result: ToolInputValidation): TypeValidationError => {
  if (result.success) throw new Error('expected a failed validation');
  return result.error;
};

describe('validateToolInput', () => {
  const point = z.object({ x: z.number() });

  it('zod without async parts: synchronous, with the value zod parsed', () => {
    const result = validateToolInput(z.object({ x: z.coerce.number() }), { x: '4' });
    expect(isPromise(result)).toBe(false);
    expect(result).toEqual({ success: true, value: { x: 4 } });
  });

  it('zod rejecting: synchronous, the same TypeValidationError message as safeValidateTypes', async () => {
    const result = validateToolInput(point, { x: 'four' }) as ToolInputValidation;
    expect(isPromise(result)).toBe(false);
    const reference = await safeValidateTypes({ value: { x: 'four' }, schema: asSchema(point) });
    expect(reference.success).toBe(false);
    expect(TypeValidationError.isInstance(errorOf(result))).toBe(true);
    expect(errorOf(result).message).toBe(reference.success ? undefined : reference.error.message);
  });

  it('zod with an async refinement: a promise, with the refinement applied', async () => {
    const checked = z.object({ x: z.number().refine(async (x) => x > 0, 'not positive') });
    const passing = validateToolInput(checked, { x: 1 });
    const failing = validateToolInput(checked, { x: -1 });
    expect(isPromise(passing)).toBe(true);
    expect(await passing).toEqual({ success: true, value: { x: 1 } });
    expect(errorOf(await failing).message).toContain('not positive');
  });

  it('a plain JSON schema of type object: synchronous; a non-object is rejected', () => {
    const schema = { type: 'object', properties: { x: { type: 'number' } } };
    expect(validateToolInput(schema, { x: 1 })).toEqual({ success: true, value: { x: 1 } });
    const rejected = validateToolInput(schema, 'x=1') as ToolInputValidation;
    expect(errorOf(rejected).message).toContain('expected a JSON object');
  });

  it('a synchronous Standard Schema: synchronous, its issues as the cause', () => {
    const positive = {
      '~standard': {
        version: 1,
        vendor: 'test',
        validate: (value: unknown) => (typeof value === 'number' && value > 0 ? { value } : { issues: [{ message: 'not positive' }] }),
      },
    };
    expect(validateToolInput(positive, 2)).toEqual({ success: true, value: 2 });
    const rejected = validateToolInput(positive, -2) as ToolInputValidation;
    expect(isPromise(rejected)).toBe(false);
    expect(errorOf(rejected).cause).toEqual([{ message: 'not positive' }]);
  });

  it('an AI SDK schema with an asynchronous validate (zodSchema()): still validated, asynchronously', async () => {
    const result = validateToolInput(zodSchema(point), { x: 'four' });
    expect(isPromise(result)).toBe(true);
    expect(TypeValidationError.isInstance(errorOf(await result))).toBe(true);
  });
});

describe("zod 4's JSON schema output (z.toJSONSchema, zodSchema(…).jsonSchema): a JSON schema with a hidden ~standard of vendor zod", () => {
  const point = z.object({ x: z.number() });

  it('is sent as the JSON schema it is and validated by its own ~standard (reading it as a zod schema threw a TypeError)', async () => {
    for (const schema of [z.toJSONSchema(point), zodSchema(point).jsonSchema]) {
      expect(Object.keys(schema)).not.toContain('~standard');
      expect(await validateToolInput(schema, { x: 4 })).toEqual({ success: true, value: { x: 4 } });
      expect(TypeValidationError.isInstance(errorOf(await validateToolInput(schema, { x: 'four' })))).toBe(true);
    }
  });

  it('as an Agent tool: the request carries the plain JSON schema, the call runs, bad input is a tool-error', async () => {
    const inputSchema = z.toJSONSchema(point);
    const seen: unknown[] = [];
    const model = mockModel({
      parts: ({ callIndex, options }) => {
        seen.push(JSON.parse(JSON.stringify(options.tools?.[0])));
        if (callIndex === 0) return [...toolCallParts('double', { x: 2 }, { toolCallId: 'c1' }), ...toolCallParts('double', { x: 'two' }, { toolCallId: 'c2' }), finishPart('tool-calls')];
        return [...textParts('done'), finishPart()];
      },
    });
    const chunks = await lastValueFrom(new Agent({ id: 'a', model, tools: { double: { inputSchema, execute: ({ x }: { x: number }) => x * 2 } } }).stream$('go').pipe(toArray()));
    expect(seen[0]).toMatchObject({ type: 'function', name: 'double', inputSchema: { type: 'object', properties: { x: { type: 'number' } } } });
    expect(chunks.find((chunk) => chunk.type === 'tool-result')).toMatchObject({ payload: { toolCallId: 'c1', result: 4 } });
    expect(chunks.find((chunk) => chunk.type === 'tool-error')).toMatchObject({ payload: { toolCallId: 'c2' } });
    expect(chunks.at(-1)?.type).toBe('finish');
  });
});

describe('tools whose validation or execute is asynchronous run as before', () => {
  const run = async (tools: AgentToolSet) => {
    const model = mockModel({
      parts: ({ callIndex }) => (callIndex === 0 ? [...toolCallParts('double', { x: 2 }), finishPart('tool-calls')] : [...textParts('done'), finishPart()]),
    });
    const chunks = await lastValueFrom(new Agent({ id: 'a', model, tools }).stream$('go').pipe(toArray()));
    return chunks.filter((chunk) => chunk.type === 'tool-result' || chunk.type === 'tool-error');
  };

  it('an async refinement in the schema', async () => {
    const [answer] = await run({ double: { inputSchema: z.object({ x: z.number().refine(async (x) => x > 0) }), execute: ({ x }: { x: number }) => x * 2 } });
    expect(answer).toMatchObject({ type: 'tool-result', payload: { result: 4 } });
  });

  it('an async execute', async () => {
    const [answer] = await run({ double: { inputSchema: z.object({ x: z.number() }), execute: async ({ x }: { x: number }) => x * 2 } });
    expect(answer).toMatchObject({ type: 'tool-result', payload: { result: 4 } });
  });

  it('an execute that throws synchronously: a tool-error, the run goes on', async () => {
    const [answer] = await run({
      double: {
        inputSchema: z.object({ x: z.number() }),
        execute: () => {
          throw new Error('no doubling today');
        },
      },
    });
    expect(answer?.type).toBe('tool-error');
    expect(answer?.type === 'tool-error' && (answer.payload.error as Error).message).toBe('no doubling today');
  });
});
