import { describe, expect, it } from 'vitest';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { loadFixture, replayFetch } from '../../src/testing/replay-model.js';
import { collect, finishOf, fixture, fixtureEvents, partsOf, textOf } from './helpers.js';

function googleReplay(name: string, modelId: string) {
  const lines = loadFixture(fixture(`google/${name}`));
  const replay = replayFetch(lines);
  const model = createGoogleGenerativeAI({ apiKey: 'test-key', fetch: replay })(modelId);
  return { lines, replay, model };
}

describe('Gemini recordings through @ai-sdk/google and streamModel', () => {
  it('google-text: the text of the three chunks, STOP, usage with thoughts tokens', async () => {
    const { lines, replay, model } = googleReplay('google-text.chunks.txt', 'gemini-3-pro-preview');
    const parts = await collect(model);
    const expected = fixtureEvents(lines)
      .flatMap((event) => event['candidates'] as Array<{ content?: { parts?: Array<{ text?: string }> } }>)
      .flatMap((candidate) => candidate.content?.parts ?? [])
      .map((part) => part.text ?? '')
      .join('');
    expect(textOf(parts)).toBe(expected);
    expect(textOf(parts).startsWith('There are **3** "r"s in strawberry.')).toBe(true);
    const finish = finishOf(parts);
    expect(finish.finishReason).toEqual({ unified: 'stop', raw: 'STOP' });
    expect(finish.usage.outputTokens.reasoning).toBeGreaterThan(0);
    expect(replay.requests[0]?.url).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse',
    );
    expect(replay.requests[0]?.body).toMatchObject({ contents: [{ role: 'user', parts: [{ text: 'Hello' }] }] });
  });

  it('google-tool-call: a whole functionCall in one part with its thought signature; STOP becomes tool-calls', async () => {
    const { model } = googleReplay('google-tool-call.chunks.txt', 'gemini-3-pro-preview');
    const parts = await collect(model);
    const [call] = partsOf(parts, 'tool-call');
    expect(call?.toolName).toBe('weather');
    expect(JSON.parse(call!.input)).toEqual({ location: 'San Francisco' });
    expect(typeof call?.providerMetadata?.['google']?.['thoughtSignature']).toBe('string');
    expect(finishOf(parts).finishReason).toEqual({ unified: 'tool-calls', raw: 'STOP' });
  });

  it('google-stream-tool-call-arguments: two getWeather calls whose arguments stream as partialArgs', async () => {
    const { model } = googleReplay('google-stream-tool-call-arguments.chunks.txt', 'gemini-3.1-pro-preview');
    const parts = await collect(model);
    const calls = partsOf(parts, 'tool-call');
    expect(calls.map((call) => [call.toolName, JSON.parse(call.input) as unknown])).toEqual([
      ['getWeather', { location: 'Boston' }],
      ['getWeather', { location: 'San Francisco' }],
    ]);
    for (const call of calls) {
      const streamed = partsOf(parts, 'tool-input-delta')
        .filter((delta) => delta.id === call.toolCallId)
        .map((delta) => delta.delta)
        .join('');
      expect(JSON.parse(streamed)).toEqual(JSON.parse(call.input));
    }
    expect(partsOf(parts, 'tool-input-delta').length).toBeGreaterThanOrEqual(4);
    expect(finishOf(parts).finishReason.unified).toBe('tool-calls');
  });
});
