/** Tools a processor gives a step (processInputStep `{ tools }`) are the ones that step executes. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent } from '../../src/loop/agent.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { ToolSearchProcessor } from '../../src/processors/tool-search.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { mockModel } from '../../src/testing/mock-model.js';

describe('step tools', () => {
  it('executes a tool added by processInputStep (regression: the loop executed the agent tools only)', async () => {
    const model = mockModel({
      parts: ({ callIndex }) => (callIndex === 0 ? [...toolCallParts('added', { x: 1 }), finishPart('tool-calls')] : [...textParts('done'), finishPart()]),
    });
    const adder: Processor = {
      id: 'adder',
      processInputStep: ({ tools }) => ({ tools: { ...tools, added: { inputSchema: z.object({ x: z.number() }), execute: async ({ x }: { x: number }) => x + 41 } } }),
    };
    const result = await new Agent({ id: 'a', model, inputProcessors: [adder] }).generate('go');
    expect(result.toolResults).toEqual([{ toolCallId: 'call-added', toolName: 'added', args: { x: 1 }, result: 42 }]);
    expect(result.text).toBe('done');
  });

  it('ToolSearchProcessor: search, load, then call the loaded tool in the next step', async () => {
    const catalogue = {
      getWeather: { description: 'Current weather for a city', inputSchema: z.object({ city: z.string() }), execute: async ({ city }: { city: string }) => `sunny in ${city}` },
      sendEmail: { description: 'Send an e-mail', inputSchema: z.object({ to: z.string() }), execute: async () => 'sent' },
    };
    const model = mockModel({
      parts: ({ callIndex }) =>
        [
          [...toolCallParts('search_tools', { query: 'weather city' }, { toolCallId: 's' }), finishPart('tool-calls')],
          [...toolCallParts('load_tool', { name: 'getWeather' }, { toolCallId: 'l' }), finishPart('tool-calls')],
          [...toolCallParts('getWeather', { city: 'Oslo' }, { toolCallId: 'w' }), finishPart('tool-calls')],
          [...textParts('It is sunny in Oslo.'), finishPart()],
        ][callIndex] ?? [finishPart()],
    });
    const result = await new Agent({ id: 'a', model, inputProcessors: [new ToolSearchProcessor({ tools: catalogue })] }).generate('Weather in Oslo?');
    expect(result.text).toBe('It is sunny in Oslo.');
    expect(JSON.stringify(result.toolResults.find((entry) => entry.toolName === 'search_tools')?.result)).toContain('getWeather');
    expect(result.toolResults.find((entry) => entry.toolName === 'getWeather')?.result).toBe('sunny in Oslo');
    const thirdCallTools = (model.calls[2]?.tools ?? []).map((tool) => tool.name);
    expect(thirdCallTools).toContain('getWeather');
    expect((model.calls[0]?.tools ?? []).map((tool) => tool.name)).not.toContain('getWeather');
  });
});
