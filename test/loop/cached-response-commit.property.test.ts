/**
 * Issue 24 §16: every run that finishes passes its commit, whatever the response came from. A
 * `processLLMRequest` cache hit of any shape — text or not, reasoning or not, its own `finish` or
 * none — ends with `processOutputResult` run once, memory's save (the user turn, and the reply when
 * it has content) and a `finish` chunk last; the model is never called. Before (the build at 801340c): a
 * cached response holding only `finish` ran `processOutputResult` 0 times and stored nothing.
 *
 * Cases: `RXAGENT_PROPERTY_RUNS` / 10 (CI 100; the soak run 2,000).
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import type { CachedLLMStepChunk } from '../../src/contract/chunk-types.js';
import { Agent } from '../../src/index.js';
import { Memory } from '../../src/memory/memory.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { checkProperty, expectNone, PROPERTY_RUNS, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';

const runs = Math.max(20, Math.floor(PROPERTY_RUNS / 10));

function cachedChunks(shape: { text: string; reasoning: boolean; finish: 'stop' | 'length' | null }): CachedLLMStepChunk[] {
  const chunks: CachedLLMStepChunk[] = [];
  if (shape.reasoning) chunks.push({ type: 'reasoning-start', payload: { id: 'r' } }, { type: 'reasoning-delta', payload: { id: 'r', text: 'thinking' } }, { type: 'reasoning-end', payload: { id: 'r' } });
  if (shape.text !== '') chunks.push({ type: 'text-start', payload: { id: 't' } }, { type: 'text-delta', payload: { id: 't', text: shape.text } }, { type: 'text-end', payload: { id: 't' } });
  if (shape.finish !== null) chunks.push({ type: 'finish', payload: { stepResult: { reason: shape.finish }, output: { usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } } } } as CachedLLMStepChunk);
  return chunks;
}

describe('a cached response passes the commit (property)', () => {
  it(
    `any cached shape: processOutputResult once, memory saved, finish last, no model call (${runs} cases)`,
    async () => {
      const arbitrary = fc.record({
        text: fc.constantFrom('', 'Cached answer.', 'x'),
        reasoning: fc.boolean(),
        finish: fc.constantFrom('stop' as const, 'length' as const, null),
      });
      await checkProperty(
        'cached response commit',
        arbitrary,
        async (shape) => {
          const storage = new InMemoryStorage();
          const model = mockModel({ parts: [...textParts('from the model'), finishPart()] });
          let results = 0;
          const agent = new Agent({
            id: 'a',
            model,
            memory: new Memory({ storage }),
            inputProcessors: [{ id: 'cache', processLLMRequest: () => ({ response: { chunks: cachedChunks(shape) } }) }],
            outputProcessors: [{ id: 'end', processOutputResult: () => void results++ }],
          });
          const output = await agent.stream('Hello', { memory: { thread: 't1', resource: 'u1' } });
          const types: string[] = [];
          for await (const chunk of output.fullStream) types.push(chunk.type);
          const stored = await storage.getMessages({ threadId: 't1' });
          const problems: string[] = [];
          if (model.calls.length !== 0) problems.push('the model was called');
          if (results !== 1) problems.push(`processOutputResult ran ${results} times`);
          if (types.at(-1) !== 'finish') problems.push(`last chunk ${types.at(-1)}`);
          // the reply is stored when it has content (text or reasoning)
          const expected = shape.text === '' && !shape.reasoning ? ['user'] : ['user', 'assistant'];
          const roles = stored.map((message) => message.role);
          if (JSON.stringify(roles) !== JSON.stringify(expected)) problems.push(`stored ${JSON.stringify(roles)}`);
          if (shape.text !== '' && (await output.text) !== shape.text) problems.push(`text ${JSON.stringify(await output.text)}`);
          expectNone(problems, JSON.stringify(shape));
        },
        runs,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
