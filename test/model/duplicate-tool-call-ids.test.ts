/**
 * A provider that repeats a tool call id (twice in one step, or again in a later step or run)
 * must not drop a result: every executed call keeps its result in the stream, the prompt and
 * memory, and no prompt carries a tool call without its result.
 */
import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import type { LanguageModelV4Prompt, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { Agent, type ChunkType } from '../../src/index.js';
import { InMemoryStorage, Memory } from '../../src/memory/index.js';
import { finishPart, mockModel, textParts, toolCallParts } from '../../src/testing/index.js';

/** A model that answers each call with `script[callIndex]` (text when the script runs out). */
function scriptedCalls(script: LanguageModelV4StreamPart[][]) {
  return mockModel({ parts: ({ callIndex }) => script[callIndex] ?? [...textParts('All done.'), finishPart()] });
}

const echo = {
  description: 'echoes its input',
  inputSchema: z.object({ n: z.number() }),
  execute: ({ n }: { n: number }) => ({ echoed: n }),
};

const call = (n: number, toolCallId = 'call_0', streamInput = true): LanguageModelV4StreamPart[] =>
  toolCallParts('echo', { n }, { toolCallId, streamInput });

/** Every tool call of a prompt has exactly one result with the same id, and vice versa. */
function expectPairedPrompt(prompt: LanguageModelV4Prompt): Array<{ id: string; output: unknown }> {
  const calls: string[] = [];
  const results: Array<{ id: string; output: unknown }> = [];
  for (const message of prompt) {
    if (message.role === 'system') continue;
    for (const part of message.content) {
      if (typeof part === 'string') continue;
      if (part.type === 'tool-call') calls.push(part.toolCallId);
      if (part.type === 'tool-result') results.push({ id: part.toolCallId, output: part.output });
    }
  }
  expect(new Set(calls).size, 'tool call ids are unique in the prompt').toBe(calls.length);
  expect(results.map((result) => result.id).sort()).toEqual([...calls].sort());
  return results;
}

const resultsOf = (chunks: readonly ChunkType[]) =>
  chunks.filter((chunk): chunk is Extract<ChunkType, { type: 'tool-result' }> => chunk.type === 'tool-result');

describe('repeated tool call ids', () => {
  it('two calls with one id in one step: both run, both results stream and reach the next prompt', async () => {
    const model = scriptedCalls([[...call(1), ...call(2), finishPart('tool-calls')]]);
    const agent = new Agent({ id: 'a', instructions: 'x', model, tools: { echo } });
    const chunks = await lastValueFrom(agent.stream$('Go').pipe(toArray()));
    const results = resultsOf(chunks);
    expect(results.map((chunk) => chunk.payload.result)).toEqual([{ echoed: 1 }, { echoed: 2 }]);
    const ids = results.map((chunk) => chunk.payload.toolCallId);
    expect(new Set(ids).size).toBe(2);
    expect(ids[0]).toBe('call_0');
    // every chunk of the second call carries its renamed id
    const secondCallChunks = chunks.filter((chunk) => 'payload' in chunk && (chunk.payload as { toolCallId?: string }).toolCallId === ids[1]);
    expect(secondCallChunks.map((chunk) => chunk.type)).toEqual([
      'tool-call-input-streaming-start',
      'tool-call-delta',
      'tool-call-input-streaming-end',
      'tool-call',
      'tool-result',
    ]);
    const paired = expectPairedPrompt(model.calls[1]!.prompt);
    expect(paired).toHaveLength(2);
    expect(JSON.stringify(paired)).toContain('"echoed":2');
  });

  it('the same id again in the next step (no input streaming): each step keeps its own result', async () => {
    const model = scriptedCalls([
      [...call(1, 'call_0', false), finishPart('tool-calls')],
      [...call(2, 'call_0', false), finishPart('tool-calls')],
    ]);
    const agent = new Agent({ id: 'a', instructions: 'x', model, tools: { echo } });
    const result = await agent.generate('Go');
    expect(result.text).toBe('All done.');
    expect(result.toolResults.map((toolResult) => toolResult.result)).toEqual([{ echoed: 1 }, { echoed: 2 }]);
    expect(new Set(result.toolResults.map((toolResult) => toolResult.toolCallId)).size).toBe(2);
    expect(expectPairedPrompt(model.calls[1]!.prompt)).toHaveLength(1);
    expect(expectPairedPrompt(model.calls[2]!.prompt).map((paired) => JSON.stringify(paired.output))).toEqual([
      expect.stringContaining('"echoed":1'),
      expect.stringContaining('"echoed":2'),
    ]);
  });

  it('with memory: both results are stored, and a later run repeating the id does not overwrite them', async () => {
    const storage = new InMemoryStorage();
    const memory = new Memory({ storage });
    const thread = { thread: 't1', resource: 'user-1' };
    const first = scriptedCalls([[...call(1), ...call(2), finishPart('tool-calls')]]);
    await new Agent({ id: 'a', instructions: 'x', model: first, tools: { echo }, memory }).generate('Go', { memory: thread });
    const second = scriptedCalls([[...call(3), finishPart('tool-calls')]]);
    const rerun = await new Agent({ id: 'a', instructions: 'x', model: second, tools: { echo }, memory }).generate('Again', { memory: thread });
    expect(rerun.toolResults.map((toolResult) => toolResult.result)).toEqual([{ echoed: 3 }]);
    // the second run's follow-up prompt (history + its own call) pairs every call with its result
    expect(expectPairedPrompt(second.calls[1]!.prompt)).toHaveLength(3);
    const stored = await storage.getMessages({ threadId: 't1', resourceId: 'user-1' });
    const invocations = stored.flatMap((message) =>
      message.content.parts.flatMap((part) => (part.type === 'tool-invocation' ? [part.toolInvocation] : [])),
    );
    expect(invocations.map((invocation) => invocation.state)).toEqual(['result', 'result', 'result']);
    expect(new Set(invocations.map((invocation) => invocation.toolCallId)).size).toBe(3);
    expect(invocations.map((invocation) => (invocation.state === 'result' ? invocation.result : undefined))).toEqual([
      { echoed: 1 },
      { echoed: 2 },
      { echoed: 3 },
    ]);
  });
});
