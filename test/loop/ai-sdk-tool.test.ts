/** An AI SDK 7 `tool()` (description as a function, typed execute options) runs in an Agent as it is. */
import { describe, expect, it } from 'vitest';
import { tool } from 'ai';
import { z } from 'zod';
import { Agent } from '../../src/loop/agent.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';

describe('an AI SDK tool() in an Agent', () => {
  it('its description function is read with an empty context, and execute gets the call id and a context object', async () => {
    const seen: Array<{ toolCallId: string; context: unknown }> = [];
    const weather = tool({
      description: ({ context }) => `Weather for a city (context keys: ${Object.keys(context ?? {}).length})`,
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }, { toolCallId, context }) => {
        seen.push({ toolCallId, context });
        return { city, sky: 'clear' };
      },
    });
    const model = mockModel({
      parts: ({ callIndex }) =>
        callIndex === 0 ? [...toolCallParts('weather', { city: 'Oslo' }, { toolCallId: 'c1' }), finishPart('tool-calls')] : [...textParts('Clear.'), finishPart()],
    });
    const result = await new Agent({ id: 'a', model, tools: { weather } }).generate('Weather in Oslo?');
    expect(result.text).toBe('Clear.');
    expect(result.toolResults[0]?.result).toEqual({ city: 'Oslo', sky: 'clear' });
    expect(seen).toEqual([{ toolCallId: 'c1', context: {} }]);
    const sent = model.calls[0]?.tools?.[0];
    expect(sent && 'description' in sent ? sent.description : undefined).toBe('Weather for a city (context keys: 0)');
  });
});
