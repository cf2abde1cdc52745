import { describe, expect, it } from 'vitest';
import { createOpenAI } from '@ai-sdk/openai';
import { APICallError, JSONParseError, type LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { streamModel } from '../../src/model/stream-model.js';
import { loadFixture, replayFetch } from '../../src/testing/replay-model.js';
import { collect, finishOf, fixture, fixtureEvents, partsOf, reasoningOf, textOf, userPrompt } from './helpers.js';

function openaiReplay(name: string) {
  const lines = loadFixture(fixture(`openai/${name}`));
  const replay = replayFetch(lines);
  const provider = createOpenAI({ apiKey: 'test-key', fetch: replay });
  return { lines, replay, provider };
}

const functionTool = (name: string): NonNullable<LanguageModelV4CallOptions['tools']>[number] => ({
  type: 'function',
  name,
  inputSchema: { type: 'object', properties: {} },
});

describe('OpenAI recordings through @ai-sdk/openai and streamModel', () => {
  it('openai-text (chat completions): the whole text, in order, and usage from the last chunk', async () => {
    const { lines, replay, provider } = openaiReplay('openai-text.chunks.txt');
    const parts = await collect(provider.chat('gpt-4.1-nano'));

    const expected = fixtureEvents(lines)
      .flatMap((event) => (event['choices'] as Array<{ delta?: { content?: string | null } }>) ?? [])
      .map((choice) => choice.delta?.content ?? '')
      .join('');
    const text = textOf(parts);
    expect(text).toBe(expected);
    expect(text.startsWith('**Holiday Name:** Harmony Day\n\n**Date:**')).toBe(true);
    expect(text).toHaveLength(1724);
    expect(partsOf(parts, 'text-delta').length).toBeGreaterThan(290);
    expect(parts[0]?.type).toBe('stream-start');
    expect(parts.map((part) => part.type).filter((type) => type !== 'text-delta')).toEqual([
      'stream-start',
      'response-metadata',
      'text-start',
      'text-end',
      'finish',
    ]);
    const finish = finishOf(parts);
    expect(finish.finishReason).toEqual({ unified: 'stop', raw: 'stop' });
    expect(finish.usage.inputTokens.total).toBeGreaterThan(0);
    expect(finish.usage.outputTokens.total).toBeGreaterThan(0);

    expect(replay.requests).toHaveLength(1);
    expect(replay.requests[0]?.url).toBe('https://api.openai.com/v1/chat/completions');
    expect(replay.requests[0]?.body).toMatchObject({
      model: 'gpt-4.1-nano',
      stream: true,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expect(replay.requests[0]?.headers['authorization']).toBe('Bearer test-key');
  });

  it('openai-reasoning-encrypted-content (responses, 4 responses in one stream): reasoning, calculator calls, final text', async () => {
    const { lines, provider } = openaiReplay('openai-reasoning-encrypted-content.1.chunks.txt');
    const parts = await collect(provider.responses('gpt-5.1-codex-max'), {
      ...userPrompt('Compute ((12 + 7) * 3) * 10'),
      tools: [functionTool('calculator')],
    });

    const summaryDeltas = fixtureEvents(lines)
      .filter((event) => event['type'] === 'response.reasoning_summary_text.delta')
      .map((event) => event['delta'] as string);
    expect(partsOf(parts, 'reasoning-delta')).toHaveLength(summaryDeltas.length);
    expect(reasoningOf(parts)).toBe(summaryDeltas.join(''));
    expect(reasoningOf(parts).length).toBeGreaterThan(50);

    const calls = partsOf(parts, 'tool-call');
    expect(calls.map((call) => call.toolName)).toEqual(['calculator', 'calculator', 'calculator']);
    expect(calls.map((call) => JSON.parse(call.input) as unknown)).toEqual([
      { a: 12, b: 7, op: 'add' },
      { a: 19, b: 3, op: 'multiply' },
      { a: 57, b: 10, op: 'multiply' },
    ]);
    expect(calls.every((call) => call.providerExecuted !== true)).toBe(true);
    // streamed tool input assembles to the same JSON as the tool-call part
    for (const call of calls) {
      const input = partsOf(parts, 'tool-input-delta')
        .filter((delta) => delta.id === call.toolCallId)
        .map((delta) => delta.delta)
        .join('');
      expect(JSON.parse(input)).toEqual(JSON.parse(call.input));
    }
    expect(textOf(parts)).toBe('The final result is **570**.');
    expect(partsOf(parts, 'response-metadata')).toHaveLength(4);
    expect(partsOf(parts, 'finish')).toHaveLength(1);
  });

  it('parallel-tool-call-wrapper: the wrapper call is unwrapped into the declared tools; malformed lines are error parts', async () => {
    const { provider } = openaiReplay('parallel-tool-call-wrapper.1.chunks.txt');
    const parts = await collect(provider.responses('gpt-5.4'), {
      ...userPrompt('Weather in SF and attractions in Rome'),
      tools: [functionTool('weather'), functionTool('cityAttractions')],
    });
    const calls = partsOf(parts, 'tool-call');
    expect(calls.map((call) => [call.toolName, JSON.parse(call.input) as unknown])).toEqual([
      ['weather', { location: 'San Francisco' }],
      ['cityAttractions', { city: 'Rome' }],
    ]);
    expect(calls.map((call) => call.toolCallId)).toEqual(['call_parallel_0', 'call_parallel_1']);
    // The recorded response.created / response.completed lines are not valid JSON (a brace is
    // missing in the fixture itself): the provider reports each as an in-stream error part.
    const errors = partsOf(parts, 'error');
    expect(errors).toHaveLength(2);
    expect(errors.every((part) => JSONParseError.isInstance(part.error))).toBe(true);
    expect(finishOf(parts).finishReason.unified).toBe('error');
  });

  it('parallel-tool-call-wrapper without the declared tools: one call to the wrapper itself', async () => {
    const { provider } = openaiReplay('parallel-tool-call-wrapper.1.chunks.txt');
    const calls = partsOf(await collect(provider.responses('gpt-5.4')), 'tool-call');
    expect(calls.map((call) => call.toolName)).toEqual(['parallel']);
    expect(JSON.parse(calls[0]!.input)).toMatchObject({ tool_uses: [{ recipient_name: 'functions.weather' }, {}] });
  });

  it('openai-error: an error before any output is the error notification, an APICallError (429, not retryable)', async () => {
    const { provider } = openaiReplay('openai-error.1.chunks.txt');
    // This provider version peeks at the stream and throws from doStream when the first event
    // is an error (so callers can retry), instead of streaming an `error` part.
    const received: string[] = [];
    const error = await new Promise<unknown>((resolve) =>
      streamModel(provider.responses('gpt-4.1'), userPrompt()).subscribe({
        next: (part) => received.push(part.type),
        error: resolve,
        complete: () => resolve(undefined),
      }),
    );
    expect(received).toEqual([]);
    expect(APICallError.isInstance(error)).toBe(true);
    const apiError = error as APICallError;
    expect(apiError.statusCode).toBe(429);
    expect(apiError.isRetryable).toBe(false);
    expect(apiError.message).toContain('exceeded your current quota');
  });

  it('openai-mcp-tool-approval: a provider-executed dynamic MCP call and its tool-approval-request', async () => {
    const { provider } = openaiReplay('openai-mcp-tool-approval.1.chunks.txt');
    const parts = await collect(provider.responses('gpt-5-mini'));
    const [call] = partsOf(parts, 'tool-call');
    expect(call).toMatchObject({ toolName: 'mcp.create_short_url', providerExecuted: true, dynamic: true });
    expect(JSON.parse(call!.input)).toMatchObject({ url: 'https://ai-sdk.dev/', max_clicks: 100 });
    expect(partsOf(parts, 'tool-approval-request')).toEqual([
      { type: 'tool-approval-request', approvalId: expect.stringMatching(/^mcpr_/), toolCallId: call!.toolCallId },
    ]);
    expect(partsOf(parts, 'reasoning-start')).toHaveLength(1);
    expect(finishOf(parts).usage.inputTokens.total).toBe(422);
  });

  it('openai-web-search-tool: provider-executed web_search calls with results, url sources, cached and reasoning tokens', async () => {
    const { lines, provider } = openaiReplay('openai-web-search-tool.1.chunks.txt');
    const parts = await collect(provider.responses('gpt-5-mini'), {
      ...userPrompt('Tech news today?'),
      tools: [{ type: 'provider', id: 'openai.web_search', name: 'web_search', args: {} }],
    });
    const calls = partsOf(parts, 'tool-call');
    const results = partsOf(parts, 'tool-result');
    expect(calls).toHaveLength(6);
    expect(calls.every((call) => call.toolName === 'web_search' && call.providerExecuted === true)).toBe(true);
    expect(results.map((result) => result.toolCallId)).toEqual(calls.map((call) => call.toolCallId));
    expect(results[0]?.result).toMatchObject({ action: { type: 'search', query: 'tech news today December 5 2025' } });

    const sources = partsOf(parts, 'source');
    expect(sources.length).toBeGreaterThanOrEqual(12);
    expect(sources.every((source) => source.sourceType === 'url' && source.url.startsWith('http'))).toBe(true);

    const expected = fixtureEvents(lines)
      .filter((event) => event['type'] === 'response.output_text.delta')
      .map((event) => event['delta'] as string)
      .join('');
    expect(textOf(parts)).toBe(expected);
    expect(textOf(parts).startsWith('I checked today’s tech headlines')).toBe(true);
    expect(partsOf(parts, 'text-delta')).toHaveLength(121);

    const { usage } = finishOf(parts);
    expect(usage.inputTokens).toMatchObject({ total: 31073, cacheRead: 3712, noCache: 27361 });
    expect(usage.outputTokens).toMatchObject({ total: 4416, reasoning: 3712 });
  });
});
