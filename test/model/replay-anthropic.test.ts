import { describe, expect, it } from 'vitest';
import { createAnthropic } from '@ai-sdk/anthropic';
import { loadFixture, replayFetch } from '../../src/testing/replay-model.js';
import { collect, finishOf, fixture, fixtureEvents, partsOf, reasoningOf, textOf } from './helpers.js';

function anthropicReplay(name: string) {
  const lines = loadFixture(fixture(`anthropic/${name}`));
  const replay = replayFetch(lines);
  const model = createAnthropic({ apiKey: 'test-key', fetch: replay })('claude-sonnet-4-5');
  return { lines, replay, model };
}

/** Concatenated `content_block_delta` payloads of one delta kind, straight from the recording. */
function recordedDeltas(lines: readonly string[], kind: 'text_delta' | 'thinking_delta'): string {
  const field = kind === 'text_delta' ? 'text' : 'thinking';
  return fixtureEvents(lines)
    .filter((event) => event['type'] === 'content_block_delta')
    .map((event) => event['delta'] as Record<string, string>)
    .filter((delta) => delta['type'] === kind)
    .map((delta) => delta[field])
    .join('');
}

describe('Anthropic recordings through @ai-sdk/anthropic and streamModel (data-only SSE lines)', () => {
  it('anthropic-text: the text, end_turn → stop, usage', async () => {
    const { lines, replay, model } = anthropicReplay('anthropic-text.chunks.txt');
    const parts = await collect(model);
    expect(textOf(parts)).toBe(recordedDeltas(lines, 'text_delta'));
    expect(textOf(parts).startsWith("Hello! I'm doing well")).toBe(true);
    expect(partsOf(parts, 'text-delta')).toHaveLength(6);
    const finish = finishOf(parts);
    expect(finish.finishReason).toEqual({ unified: 'stop', raw: 'end_turn' });
    expect(finish.usage.outputTokens.total).toBeGreaterThan(0);
    expect(replay.requests[0]?.url).toBe('https://api.anthropic.com/v1/messages');
    expect(replay.requests[0]?.body).toMatchObject({ model: 'claude-sonnet-4-5', stream: true });
    expect(replay.requests[0]?.headers['x-api-key']).toBe('test-key');
  });

  it('anthropic-json-tool: text then a json tool call assembled from input_json_delta (empty first delta)', async () => {
    const { model } = anthropicReplay('anthropic-json-tool.2.chunks.txt');
    const parts = await collect(model);
    expect(textOf(parts)).toBe("I'll invoke the JSON response tool.");
    const [call] = partsOf(parts, 'tool-call');
    expect(call?.toolName).toBe('json');
    expect(JSON.parse(call!.input)).toEqual({ elements: [{ location: 'San Francisco', temperature: 58, condition: 'sunny' }] });
    const streamedInput = partsOf(parts, 'tool-input-delta').map((delta) => delta.delta).join('');
    expect(JSON.parse(streamedInput)).toEqual(JSON.parse(call!.input));
    expect(finishOf(parts).finishReason).toEqual({ unified: 'tool-calls', raw: 'tool_use' });
  });

  it('anthropic-clear-thinking: reasoning text with its signature, then the answer', async () => {
    const { lines, model } = anthropicReplay('anthropic-clear-thinking.1.chunks.txt');
    const parts = await collect(model);
    const reasoning = reasoningOf(parts);
    expect(reasoning).toBe(recordedDeltas(lines, 'thinking_delta'));
    expect(reasoning.length).toBeGreaterThan(20);
    const signed = parts.filter(
      (part) =>
        (part.type === 'reasoning-delta' || part.type === 'reasoning-end') &&
        typeof part.providerMetadata?.['anthropic']?.['signature'] === 'string',
    );
    expect(signed.length).toBeGreaterThan(0);
    expect(textOf(parts)).toBe('925 ÷ 5 = 185');
    const types = parts.map((part) => part.type);
    expect(types.indexOf('reasoning-end')).toBeLessThan(types.indexOf('text-start'));
  });

  it('anthropic-refusal: no content blocks, finish reason content-filter (raw refusal)', async () => {
    const { model } = anthropicReplay('anthropic-refusal.chunks.txt');
    const parts = await collect(model);
    expect(textOf(parts)).toBe('');
    expect(partsOf(parts, 'text-start')).toHaveLength(0);
    expect(finishOf(parts).finishReason).toEqual({ unified: 'content-filter', raw: 'refusal' });
  });

  it('anthropic-web-fetch-tool: a provider-executed web_fetch call and its document result, then the text', async () => {
    const { lines, model } = anthropicReplay('anthropic-web-fetch-tool.1.chunks.txt');
    const parts = await collect(model);
    const [call] = partsOf(parts, 'tool-call');
    expect(call).toMatchObject({ toolName: 'web_fetch', providerExecuted: true });
    expect(JSON.parse(call!.input)).toEqual({ url: 'https://en.wikipedia.org/wiki/Maglemosian_culture' });
    const [result] = partsOf(parts, 'tool-result');
    expect(result).toMatchObject({
      toolCallId: call!.toolCallId,
      toolName: 'web_fetch',
      result: { type: 'web_fetch_result', url: 'https://en.wikipedia.org/wiki/Maglemosian_culture' },
    });
    expect(textOf(parts)).toBe(recordedDeltas(lines, 'text_delta'));
    expect(textOf(parts).startsWith("I'll fetch the content from that Wikipedia page")).toBe(true);
    expect(partsOf(parts, 'text-delta')).toHaveLength(40);
    const types = parts.map((part) => part.type);
    expect(types.indexOf('tool-result')).toBeLessThan(types.lastIndexOf('text-delta'));
  });
});
