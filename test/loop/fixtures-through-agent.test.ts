/**
 * The loop on real wire data: every recorded provider stream in test/fixtures/providers replayed
 * through its real provider package (custom fetch), run by an Agent with processors.
 */
import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createGroq } from '@ai-sdk/groq';
import { createOpenAI } from '@ai-sdk/openai';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { APICallError } from '@ai-sdk/provider';
import { Agent } from '../../src/loop/agent.js';
import type { AgentConfig } from '../../src/loop/agent-types.js';
import { MessageList } from '../../src/message-list/message-list.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { loadFixture, replayFetch } from '../../src/testing/replay-model.js';
import { fixture } from '../model/helpers.js';

type Kind = 'openai-chat' | 'openai-responses' | 'anthropic' | 'google' | 'groq';

function replayModel(kind: Kind, file: string): LanguageModelV4 {
  const fetch = replayFetch(loadFixture(fixture(file)));
  switch (kind) {
    case 'openai-chat':
      return createOpenAI({ apiKey: 'test', fetch }).chat('gpt-4.1-nano');
    case 'openai-responses':
      return createOpenAI({ apiKey: 'test', fetch }).responses('gpt-5-mini');
    case 'anthropic':
      return createAnthropic({ apiKey: 'test', fetch })('claude-sonnet-4-5');
    case 'google':
      return createGoogleGenerativeAI({ apiKey: 'test', fetch })('gemini-3-pro-preview');
    case 'groq':
      return createGroq({ apiKey: 'test', fetch })('llama-3.3-70b-versatile');
  }
}

/** Counts every chunk the output processors saw, by type (and proves they ran on wire data). */
function spy(): { processor: Processor; seen: Map<string, number> } {
  const seen = new Map<string, number>();
  return { seen, processor: { id: 'spy', processOutputStream: ({ part }) => (seen.set(part.type, (seen.get(part.type) ?? 0) + 1), part) } };
}

async function run(kind: Kind, file: string, config: Partial<AgentConfig> = {}) {
  const { processor, seen } = spy();
  const agent = new Agent({ id: 'fixture', model: replayModel(kind, file), outputProcessors: [processor], maxSteps: 1, ...config });
  const chunks = await lastValueFrom(agent.stream$('Hello').pipe(toArray()));
  const result = await new Agent({ id: 'fixture', model: replayModel(kind, file), maxSteps: 1, ...config }).generate('Hello', { generateWith: 'doStream' }).catch((error: unknown) => error);
  return { chunks, seen, result };
}

const textOf = (chunks: ChunkType[]) => chunks.map((chunk) => (chunk.type === 'text-delta' ? chunk.payload.text : '')).join('');
const ofType = <T extends ChunkType['type']>(chunks: ChunkType[], type: T) => chunks.filter((chunk) => chunk.type === type) as Array<Extract<ChunkType, { type: T }>>;
const fixtureText = (file: string, pick: (event: Record<string, unknown>) => string | undefined) =>
  loadFixture(fixture(file))
    .map((line) => pick(JSON.parse(line) as Record<string, unknown>) ?? '')
    .join('');

function expectWellFormed(chunks: ChunkType[], terminal: ChunkType['type'] = 'finish') {
  expect(chunks[0]?.type).toBe('start');
  expect(chunks.at(-1)?.type).toBe(terminal);
  expect(chunks.filter((chunk) => ['finish', 'tripwire', 'error', 'abort'].includes(chunk.type))).toHaveLength(1);
  expect(ofType(chunks, 'step-start').length).toBe(ofType(chunks, 'step-finish').length);
}

describe('OpenAI', () => {
  it('openai-text (chat): the whole text streams through the output processors, in order', async () => {
    const { chunks, seen, result } = await run('openai-chat', 'openai/openai-text.chunks.txt');
    const expected = fixtureText('openai/openai-text.chunks.txt', (event) => {
      const choices = event.choices as Array<{ delta?: { content?: string | null } }> | undefined;
      return choices?.[0]?.delta?.content ?? undefined;
    });
    expectWellFormed(chunks);
    expect(textOf(chunks)).toBe(expected);
    expect(expected.length).toBeGreaterThan(1000);
    expect(seen.get('text-delta')).toBeGreaterThan(250);
    expect(result).toMatchObject({ text: expected, finishReason: 'stop' });
  });

  it('openai-reasoning-encrypted-content (responses): reasoning, streamed tool calls executed, their results', async () => {
    const executed: unknown[] = [];
    const { chunks, result } = await run('openai-responses', 'openai/openai-reasoning-encrypted-content.1.chunks.txt', {
      tools: { calculator: { inputSchema: z.object({}).passthrough(), execute: async (input: unknown) => (executed.push(input), 42) } },
    });
    expectWellFormed(chunks);
    expect(ofType(chunks, 'reasoning-delta').length).toBeGreaterThan(10);
    const calls = ofType(chunks, 'tool-call');
    expect(calls.length).toBeGreaterThanOrEqual(3);
    expect(ofType(chunks, 'tool-result').map((chunk) => chunk.payload.toolCallId)).toEqual(calls.map((call) => call.payload.toolCallId));
    expect(ofType(chunks, 'tool-call-delta').length).toBeGreaterThan(0);
    expect((result as { steps: unknown[] }).steps).toHaveLength(1);
  });

  it('parallel-tool-call-wrapper: the malformed recorded lines surface as one terminal error chunk', async () => {
    const { chunks, result } = await run('openai-responses', 'openai/parallel-tool-call-wrapper.1.chunks.txt', {
      tools: { weather: { execute: async () => 'sunny' }, cityAttractions: { execute: async () => 'museum' } },
    });
    expectWellFormed(chunks, 'error');
    expect(result).toBeInstanceOf(Error);
  });

  it('openai-error: the provider throws an APICallError (429): one error chunk carrying it', async () => {
    const { chunks } = await run('openai-responses', 'openai/openai-error.1.chunks.txt');
    expectWellFormed(chunks, 'error');
    const error = ofType(chunks, 'error')[0]?.payload.error;
    expect(APICallError.isInstance(error)).toBe(true);
  });

  it('openai-mcp-tool-approval: the approval request reaches the stream', async () => {
    const { chunks } = await run('openai-responses', 'openai/openai-mcp-tool-approval.1.chunks.txt');
    expectWellFormed(chunks);
    expect(ofType(chunks, 'tool-call-approval')).toHaveLength(1);
  });

  it('openai-web-search-tool: provider-executed searches, url sources and the text, stored on the response', async () => {
    const { chunks, result } = await run('openai-responses', 'openai/openai-web-search-tool.1.chunks.txt', {
      tools: { web_search: { type: 'provider', id: 'openai.web_search', args: {} } },
    });
    expectWellFormed(chunks);
    const results = ofType(chunks, 'tool-result');
    expect(results.length).toBeGreaterThan(0);
    expect(results.every((chunk) => chunk.payload.providerExecuted)).toBe(true);
    expect(ofType(chunks, 'source').length).toBeGreaterThan(5);
    expect(textOf(chunks).length).toBeGreaterThan(200);
    expect((result as { toolResults: unknown[] }).toolResults.length).toBe(results.length);
  });
});

describe('Anthropic', () => {
  it('anthropic-text', async () => {
    const { chunks, result } = await run('anthropic', 'anthropic/anthropic-text.chunks.txt');
    const expected = fixtureText('anthropic/anthropic-text.chunks.txt', (event) => (event.delta as { text?: string } | undefined)?.text);
    expectWellFormed(chunks);
    expect(textOf(chunks)).toBe(expected);
    expect(result).toMatchObject({ text: expected, finishReason: 'stop' });
  });

  it('anthropic-json-tool: text, then a streamed tool call executed with its parsed input', async () => {
    let input: unknown;
    const { chunks } = await run('anthropic', 'anthropic/anthropic-json-tool.2.chunks.txt', {
      tools: { json: { execute: async (args: unknown) => ((input = args), 'ok') } },
    });
    expectWellFormed(chunks);
    expect(textOf(chunks).length).toBeGreaterThan(0);
    expect(ofType(chunks, 'tool-call')).toHaveLength(1);
    expect(input).toEqual(ofType(chunks, 'tool-call')[0]?.payload.args);
    expect(ofType(chunks, 'tool-result')[0]?.payload.result).toBe('ok');
  });

  it('anthropic-clear-thinking: reasoning with its signature is kept on the stored assistant message', async () => {
    const storedReasoning: unknown[] = [];
    const capture: Processor = {
      id: 'capture',
      processOutputResult: ({ messages }) => {
        for (const message of messages) for (const part of message.content.parts) if (part.type === 'reasoning') storedReasoning.push(part);
      },
    };
    const { chunks } = await run('anthropic', 'anthropic/anthropic-clear-thinking.1.chunks.txt', { outputProcessors: [capture] });
    expectWellFormed(chunks);
    expect(ofType(chunks, 'reasoning-delta').length).toBeGreaterThan(1);
    expect(storedReasoning).toHaveLength(2);
    expect(storedReasoning[0]).toMatchObject({ type: 'reasoning', details: [{ type: 'text', signature: expect.any(String) }] });
    const prompt = new MessageList().add(
      (storedReasoning as never[]).length ? [{ id: 'm', role: 'assistant', createdAt: new Date(), content: { format: 2, parts: [storedReasoning[0] as never] } }] : [],
      'memory',
    );
    expect(JSON.stringify(prompt.get.all.prompt())).toContain('signature');
  });

  it('anthropic-refusal: no content, finish reason content-filter', async () => {
    const { chunks, result } = await run('anthropic', 'anthropic/anthropic-refusal.chunks.txt');
    expectWellFormed(chunks);
    expect(textOf(chunks)).toBe('');
    expect(result).toMatchObject({ text: '', finishReason: 'content-filter' });
  });

  it('anthropic-web-fetch-tool: a provider-executed fetch and its document result, then the text', async () => {
    const { chunks } = await run('anthropic', 'anthropic/anthropic-web-fetch-tool.1.chunks.txt', {
      tools: { web_fetch: { type: 'provider', id: 'anthropic.web_fetch_20250910', args: {} } },
    });
    expectWellFormed(chunks);
    expect(ofType(chunks, 'tool-result')[0]?.payload).toMatchObject({ toolName: 'web_fetch', providerExecuted: true });
    expect(textOf(chunks).length).toBeGreaterThan(100);
  });
});

describe('Google and Groq', () => {
  it('google-text', async () => {
    const { chunks, result } = await run('google', 'google/google-text.chunks.txt');
    expectWellFormed(chunks);
    expect(textOf(chunks).length).toBeGreaterThan(0);
    expect((result as { text: string }).text).toBe(textOf(chunks));
  });

  it('google-tool-call: a whole call in one part, executed', async () => {
    const { chunks } = await run('google', 'google/google-tool-call.chunks.txt', {
      tools: { getWeather: { execute: async () => ({ tempC: 20 }) } },
    });
    expectWellFormed(chunks);
    expect(ofType(chunks, 'tool-call').length).toBeGreaterThanOrEqual(1);
    expect(ofType(chunks, 'tool-result').length + ofType(chunks, 'tool-error').length).toBe(ofType(chunks, 'tool-call').length);
  });

  it('google-stream-tool-call-arguments: two getWeather calls with streamed arguments, results in call order', async () => {
    const { chunks } = await run('google', 'google/google-stream-tool-call-arguments.chunks.txt', {
      tools: { getWeather: { execute: async (input: { location?: string }) => `weather for ${JSON.stringify(input)}` } },
    });
    expectWellFormed(chunks);
    const calls = ofType(chunks, 'tool-call');
    expect(calls).toHaveLength(2);
    expect(ofType(chunks, 'tool-result').map((chunk) => chunk.payload.toolCallId)).toEqual(calls.map((call) => call.payload.toolCallId));
  });

  it('groq-tool-call: the whole call in one delta, with empty arguments', async () => {
    const { chunks } = await run('groq', 'groq/groq-tool-call.chunks.txt', { tools: { weather: { execute: async () => 'rain' } } });
    expectWellFormed(chunks);
    expect(ofType(chunks, 'tool-call')[0]?.payload).toMatchObject({ toolName: 'weather', args: {} });
    expect(ofType(chunks, 'tool-result')[0]?.payload.result).toBe('rain');
  });
});
