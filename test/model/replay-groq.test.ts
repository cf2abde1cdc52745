import { describe, expect, it } from 'vitest';
import { createGroq } from '@ai-sdk/groq';
import { loadFixture, replayFetch } from '../../src/testing/replay-model.js';
import { collect, finishOf, fixture, partsOf } from './helpers.js';

describe('Groq recording through @ai-sdk/groq and streamModel', () => {
  it('groq-tool-call: a whole tool call in one delta, usage from x_groq', async () => {
    const replay = replayFetch(loadFixture(fixture('groq/groq-tool-call.chunks.txt')));
    const parts = await collect(createGroq({ apiKey: 'test-key', fetch: replay })('llama-3.3-70b-versatile'));
    const calls = partsOf(parts, 'tool-call');
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ toolName: 'weather', input: '{}' });
    expect(partsOf(parts, 'tool-input-start')).toEqual([
      expect.objectContaining({ id: calls[0]!.toolCallId, toolName: 'weather' }),
    ]);
    const finish = finishOf(parts);
    expect(finish.finishReason).toEqual({ unified: 'tool-calls', raw: 'tool_calls' });
    expect(finish.usage.inputTokens.total).toBe(210);
    expect(finish.usage.outputTokens.total).toBe(15);
    expect(replay.requests[0]?.url).toBe('https://api.groq.com/openai/v1/chat/completions');
  });
});
