/** Type tests: AI SDK 7 `tool()` objects are agent tools as they are (the README promises it). */
import { describe, expectTypeOf, it } from 'vitest';
import { tool } from 'ai';
import { z } from 'zod';
import type { AgentTool, AgentToolSet } from '../../src/contract/tool-types.js';

describe('AI SDK tool() as AgentTool', () => {
  it('a tool with a typed execute and a description function is assignable', () => {
    const weather = tool({
      description: () => 'Weather for a city',
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }, { toolCallId }) => ({ city, toolCallId }),
    });
    expectTypeOf(weather).toMatchTypeOf<AgentTool>();
    const tools: AgentToolSet = { weather };
    expectTypeOf(tools).toMatchTypeOf<AgentToolSet>();
  });
});
