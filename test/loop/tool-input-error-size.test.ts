/**
 * A tool call whose input fails the tool's schema is a `tool-error` the model reads to correct its
 * call. Its text names the issues (path and message) and shows a short excerpt of the input — never
 * the whole input again (the AI SDK's `TypeValidationError` message repeats it verbatim), however
 * large the input, its keys or the validator's issues are. The full validation error stays on the
 * error object as its `cause`, server-side.
 */
import { TypeValidationError } from '@ai-sdk/provider';
import { zodSchema } from '@ai-sdk/provider-utils';
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AgentToolSet } from '../../src/contract/tool-types.js';
import { Agent } from '../../src/loop/agent.js';
import { ToolExecutionError } from '../../src/loop/tools/tool-execution-error.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';

/** The longest error text a failed validation may carry to the model and the client. */
const BOUND = 2_000;

/** Runs one call of `lookup` with `args`; returns its `tool-error` and the prompt of the model's next call. */
async function failedCall(tools: AgentToolSet, args: unknown, toolName = 'lookup') {
  const model = mockModel({
    parts: ({ callIndex }) => (callIndex === 0 ? [...toolCallParts(toolName, args), finishPart('tool-calls')] : [...textParts('done'), finishPart()]),
  });
  const chunks = await lastValueFrom(new Agent({ id: 'a', model, tools }).stream$('go').pipe(toArray()));
  const toolError = chunks.find((chunk) => chunk.type === 'tool-error');
  if (toolError?.type !== 'tool-error') throw new Error(`expected a tool-error, got ${chunks.map((chunk) => chunk.type).join(', ')}`);
  const error = toolError.payload.error as Error;
  const nextPrompt = JSON.stringify(model.calls[1]?.prompt.filter((message) => message.role === 'tool'));
  return { error, nextPrompt, chunks };
}

/** The Standard JSON Schema side of a test Standard Schema (what the model is offered). */
const standardJsonSchema = { input: () => ({ type: 'object' }), output: () => ({ type: 'object' }) };

const lookup = (inputSchema: unknown): AgentToolSet => ({ lookup: { inputSchema, execute: () => 'ran' } as AgentToolSet[string] });

describe('a tool input that fails validation: a bounded, useful error', () => {
  it('a 30 KB input: the text names the field and the issue, with a short excerpt; the full TypeValidationError is the cause', async () => {
    const big = 'q'.repeat(30 * 1024);
    const { error, nextPrompt } = await failedCall(lookup(z.object({ query: z.string().max(100), page: z.number() })), { query: big, page: 'two' });
    expect(ToolExecutionError.isInstance(error)).toBe(true);
    expect(error.message.length).toBeLessThan(BOUND);
    expect(error.message).toMatch(/^Invalid input for tool "lookup"/);
    expect(error.message).toContain('query');
    expect(error.message).toContain('page');
    expect(error.message).toMatch(/expected number/i);
    // an excerpt of the input, and how long it was
    expect(error.message).toContain('qqqq');
    expect(error.message).toMatch(/30,?7\d\d characters/);
    // the model reads the same bounded text
    expect(nextPrompt.length).toBeLessThan(BOUND + 500);
    expect(nextPrompt).toContain('Invalid input for tool');
    // the whole validation error stays server-side
    const cause = (error as ToolExecutionError).cause;
    expect(TypeValidationError.isInstance(cause)).toBe(true);
    expect((cause as TypeValidationError).value).toEqual({ query: big, page: 'two' });
  });

  it('a small input still reads whole: issues and the input as it was sent', async () => {
    const { error } = await failedCall(lookup(z.object({ x: z.number() })), { x: 'four' });
    expect(error.message).toContain('{"x":"four"}');
    expect(error.message).toContain('x');
    expect(error.message).toMatch(/expected number/i);
  });

  it('5,000 unknown keys (a strict object): few issues shown, each cut short, the count named', async () => {
    const args = Object.fromEntries(Array.from({ length: 5000 }, (_, index) => [`key_${index}_${'k'.repeat(20)}`, index]));
    const { error, nextPrompt } = await failedCall(lookup(z.strictObject({ x: z.number() })), { ...args });
    expect(error.message.length).toBeLessThan(BOUND);
    expect(nextPrompt.length).toBeLessThan(BOUND + 500);
    expect(error.message).toMatch(/x/);
  });

  it('10,000 issues (an array of bad items): the first issues and how many there were', async () => {
    const { error } = await failedCall(lookup(z.object({ items: z.array(z.number()) })), { items: Array.from({ length: 10_000 }, () => 'nope') });
    expect(error.message.length).toBeLessThan(BOUND);
    expect(error.message).toContain('items.0');
    expect(error.message).toMatch(/10,?000 issues/);
  });

  it('a 30 KB key in the issue path is cut short', async () => {
    const key = 'k'.repeat(30 * 1024);
    const { error } = await failedCall(lookup(z.record(z.string(), z.number())), { [key]: 'x' });
    expect(error.message.length).toBeLessThan(BOUND);
  });

  it('a Standard Schema whose issues carry the input (as valibot does): bounded too', async () => {
    const schema = {
      '~standard': {
        version: 1,
        vendor: 'test',
        jsonSchema: standardJsonSchema,
        validate: (value: unknown) => ({ issues: [{ message: `Invalid type: received ${JSON.stringify(value)}`, path: [{ key: 'query' }], input: value }] }),
      },
    };
    const { error } = await failedCall(lookup(schema), { query: 'z'.repeat(30 * 1024) });
    expect(error.message.length).toBeLessThan(BOUND);
    expect(error.message).toContain('query');
    expect(error.message).toContain('Invalid type');
  });

  it('an AI SDK schema (zodSchema(), validated asynchronously): bounded, the issue named', async () => {
    const { error } = await failedCall(lookup(zodSchema(z.object({ x: z.number() }))), { x: 'y'.repeat(30 * 1024) });
    expect(error.message.length).toBeLessThan(BOUND);
    expect(error.message).toMatch(/expected number/i);
    expect(TypeValidationError.isInstance((error as ToolExecutionError).cause)).toBe(true);
  });

  it('issues that cannot be read (a throwing getter, a Proxy that throws) still give a bounded error, never a throw', async () => {
    const hostile = new Proxy({}, { get: () => { throw new Error('no'); }, has: () => { throw new Error('no'); } });
    const schema = { '~standard': { version: 1, vendor: 'test', jsonSchema: standardJsonSchema, validate: () => ({ issues: [hostile, { get message(): string { throw new Error('no'); } }] }) } };
    const { error } = await failedCall(lookup(schema), { query: 'w'.repeat(30 * 1024) });
    expect(ToolExecutionError.isInstance(error)).toBe(true);
    expect(error.message.length).toBeLessThan(BOUND);
  });

  it('a 1 MB tool name the agent does not have: the "not found" error is bounded', async () => {
    const name = 'n'.repeat(1024 * 1024);
    const { error } = await failedCall(lookup(z.object({})), {}, name);
    expect(error.message.length).toBeLessThan(BOUND);
    expect(error.message).toMatch(/not found/);
  });

  it('an excerpt never ends in half a surrogate pair', async () => {
    const { error } = await failedCall(lookup(z.object({ x: z.number() })), { x: '😀'.repeat(20_000) });
    expect(error.message).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });
});
