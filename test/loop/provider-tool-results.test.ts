/**
 * Issue 13 §4: `processToolResult` runs on provider-executed tool results (web search, web fetch)
 * before they stream or are stored — replayed through the real provider packages.
 */
import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { Agent } from '../../src/loop/agent.js';
import { InMemoryStorage, Memory } from '../../src/memory/index.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { loadFixture, replayFetch } from '../../src/testing/replay-model.js';
import { fixture } from '../model/helpers.js';

const cases: Array<{ name: string; model: () => LanguageModelV4; tools: Record<string, unknown>; toolName: string }> = [
  {
    name: 'openai web search',
    model: () => createOpenAI({ apiKey: 'test', fetch: replayFetch(loadFixture(fixture('openai/openai-web-search-tool.1.chunks.txt'))) }).responses('gpt-5-mini'),
    tools: { web_search: { type: 'provider', id: 'openai.web_search', args: {} } },
    toolName: 'web_search',
  },
  {
    name: 'anthropic web fetch',
    model: () => createAnthropic({ apiKey: 'test', fetch: replayFetch(loadFixture(fixture('anthropic/anthropic-web-fetch-tool.1.chunks.txt'))) })('claude-sonnet-4-5'),
    tools: { web_fetch: { type: 'provider', id: 'anthropic.web_fetch_20250910', args: {} } },
    toolName: 'web_fetch',
  },
];

describe.each(cases)('processToolResult on a provider-executed result: $name', ({ model, tools, toolName }) => {
  const scrub = (seen: Array<{ toolName: string; providerExecuted?: boolean; stepNumber: number }>): Processor => ({
    id: 'scrub-fetched',
    processToolResult: ({ toolName: name, providerExecuted, stepNumber }) => {
      seen.push({ toolName: name, ...(providerExecuted === undefined ? {} : { providerExecuted }), stepNumber });
    },
  });

  it('sees the result (providerExecuted: true) before it streams', async () => {
    const seen: Array<{ toolName: string; providerExecuted?: boolean; stepNumber: number }> = [];
    const agent = new Agent({ id: 'a', model: model(), maxSteps: 1, tools: tools as never, outputProcessors: [scrub(seen)] });
    const chunks = await lastValueFrom(agent.stream$('Hello').pipe(toArray()));
    const results = chunks.filter((chunk): chunk is Extract<ChunkType, { type: 'tool-result' }> => chunk.type === 'tool-result');
    expect(results.length).toBeGreaterThan(0);
    expect(seen.length).toBe(results.length);
    expect(seen.every((event) => event.toolName === toolName && event.providerExecuted === true && event.stepNumber === 0)).toBe(true);
  });

  it('a rewritten result is what streams, what generate() reports and what memory stores', async () => {
    const redact: Processor = {
      id: 'redact-fetched',
      processToolResult: ({ toolCallId, toolName: name, args, messageList }) => {
        messageList.updateToolInvocation({ type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId, toolName: name, args, result: '[fetched content removed]' } });
      },
    };
    const storage = new InMemoryStorage();
    const agent = new Agent({ id: 'a', model: model(), maxSteps: 1, tools: tools as never, outputProcessors: [redact], memory: new Memory({ storage }) });
    const output = await agent.stream('Hello', { memory: { thread: 't1', resource: 'u1' } });
    const result = await output.result;
    const streamed = result.chunks.filter((chunk): chunk is Extract<ChunkType, { type: 'tool-result' }> => chunk.type === 'tool-result');
    expect(streamed.length).toBeGreaterThan(0);
    expect(streamed.every((chunk) => chunk.payload.result === '[fetched content removed]')).toBe(true);
    expect(result.toolResults.every((toolResult) => toolResult.result === '[fetched content removed]')).toBe(true);
    const stored = JSON.stringify(await storage.getMessages({ threadId: 't1' }));
    expect(stored).toContain('[fetched content removed]');
    expect(result.steps[0]?.toolResults.length).toBe(streamed.length);
  });
});
