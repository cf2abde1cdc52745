/**
 * Issue 13 §4: a tool error is content the *model* receives in the next step's prompt. What it gets
 * (and what memory stores) is the `tool-error` chunk's error as it left the output processors, so a
 * redacting guard in `outputProcessors` alone covers it; a dropped chunk leaves a neutral text, and
 * the call never lacks its result.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent } from '../../src/loop/agent.js';
import { Memory } from '../../src/memory/memory.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { mockModel } from '../../src/testing/mock-model.js';

const SECRET = 'AKIAIOSFODNN7EXAMPLE';

function failingToolAgent(outputProcessors: Processor[], storage?: InMemoryStorage) {
  const prompts: string[] = [];
  const model = mockModel({
    parts: ({ options }) => {
      prompts.push(JSON.stringify(options.prompt));
      return options.prompt.at(-1)?.role === 'tool' ? [...textParts('Sorry, that failed.'), finishPart('stop')] : [...toolCallParts('lookup', {}), finishPart('tool-calls')];
    },
  });
  const agent = new Agent({
    id: 'tool-error-prompt',
    model,
    outputProcessors,
    ...(storage === undefined ? {} : { memory: new Memory({ storage }) }),
    tools: {
      lookup: {
        inputSchema: z.object({}),
        execute: async () => {
          throw new Error(`upstream refused key ${SECRET}`);
        },
      },
    },
  });
  return { agent, prompts };
}

describe('a tool error in the next model prompt', () => {
  it('without processors the model gets the error text itself', async () => {
    const { agent, prompts } = failingToolAgent([]);
    const result = await agent.generate('look it up');
    expect(result.text).toBe('Sorry, that failed.');
    expect(prompts).toHaveLength(2);
    expect(prompts[1]).toContain(`upstream refused key ${SECRET}`);
  });

  it('a redacting RegexFilterProcessor in outputProcessors only: neither the model, the stream nor memory sees the secret', async () => {
    const storage = new InMemoryStorage();
    const { agent, prompts } = failingToolAgent([new RegexFilterProcessor({ presets: ['secrets'], strategy: 'redact' })], storage);
    const result = await agent.generate('look it up', { memory: { thread: 't1', resource: 'u1' } });
    expect(prompts).toHaveLength(2);
    expect(prompts[1]).toContain('upstream refused key');
    expect(prompts[1]).not.toContain(SECRET);
    expect(JSON.stringify(result.chunks)).not.toContain(SECRET);
    expect(JSON.stringify(await storage.getMessages({ threadId: 't1' }))).not.toContain(SECRET);
  });

  it('a processor that drops the tool-error chunk: the call still has an error result, with a neutral text', async () => {
    const dropErrors: Processor = { id: 'drop-errors', processOutputStream: ({ part }) => (part.type === 'tool-error' ? null : part) };
    const { agent, prompts } = failingToolAgent([dropErrors]);
    await agent.generate('look it up');
    expect(prompts).toHaveLength(2);
    expect(prompts[1]).not.toContain(SECRET);
    expect(prompts[1]).toContain('The tool failed.');
  });
});
