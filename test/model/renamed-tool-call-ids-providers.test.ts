/**
 * Issue 24 §15: a renamed duplicate tool call id must be accepted by every provider. The strictest
 * documented rule is Anthropic's (`tool_use.id` and `tool_use_id` match `^[a-zA-Z0-9_-]+$`); the
 * provider packages in devDependencies (@ai-sdk/anthropic, openai, google, groq) have no validation
 * of their own for tool call ids — they copy the id into the request body — so each package builds
 * its real request from the prompt the agent makes, and every tool call id in that body is checked
 * against the rule. The old suffix (`call_0~2`) failed it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createGroq } from '@ai-sdk/groq';
import { createOpenAI } from '@ai-sdk/openai';
import type { LanguageModelV4, LanguageModelV4Prompt, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { Agent } from '../../src/index.js';
import { finishPart, mockModel, textParts, toolCallParts } from '../../src/testing/index.js';
import { replayFetch } from '../../src/testing/replay-model.js';
import { checkProperty } from '../reliability/support/property.js';

const STRICTEST_ID = /^[a-zA-Z0-9_-]+$/;

const echo = { description: 'echoes', inputSchema: z.object({ n: z.number() }), execute: ({ n }: { n: number }) => ({ echoed: n }) };

/** The prompt of the agent's second model call after the model repeated `providerIds` in one step. */
async function promptAfterDuplicates(providerIds: readonly string[]): Promise<{ prompt: LanguageModelV4Prompt; ids: string[] }> {
  const script: LanguageModelV4StreamPart[][] = [
    [...providerIds.flatMap((toolCallId, index) => toolCallParts('echo', { n: index }, { toolCallId, streamInput: index % 2 === 0 })), finishPart('tool-calls')],
  ];
  const model = mockModel({ parts: ({ callIndex }) => script[callIndex] ?? [...textParts('done'), finishPart()] });
  const result = await new Agent({ id: 'a', instructions: 'x', model, tools: { echo } }).generate('Go');
  return { prompt: model.calls[1]!.prompt, ids: result.toolResults.map((toolResult) => toolResult.toolCallId) };
}

/** Every value under a key naming a tool call id in a request body (any depth). */
function toolIdsIn(body: unknown, found: string[] = []): string[] {
  if (Array.isArray(body)) for (const item of body) toolIdsIn(item, found);
  else if (body !== null && typeof body === 'object') {
    const record = body as Record<string, unknown>;
    const isToolCall = ['tool_use', 'function_call', 'function_call_output'].includes(String(record['type'])) || 'function' in record;
    for (const [key, value] of Object.entries(record)) {
      const idKey = ['tool_use_id', 'call_id', 'tool_call_id'].includes(key) || (key === 'id' && isToolCall);
      if (idKey && typeof value === 'string') found.push(value);
      else toolIdsIn(value, found);
    }
  }
  return found;
}

const providers: Record<string, (fetch: typeof globalThis.fetch) => LanguageModelV4> = {
  anthropic: (fetch) => createAnthropic({ apiKey: 'k', fetch })('claude-sonnet-4-5'),
  'openai (responses)': (fetch) => createOpenAI({ apiKey: 'k', fetch })('gpt-4.1'),
  'openai (chat)': (fetch) => createOpenAI({ apiKey: 'k', fetch }).chat('gpt-4.1'),
  groq: (fetch) => createGroq({ apiKey: 'k', fetch })('llama-3.3-70b-versatile'),
  google: (fetch) => createGoogleGenerativeAI({ apiKey: 'k', fetch })('gemini-2.5-flash'),
};

/** The JSON body `provider` sends for `prompt` (the call is answered with a 400; only the request matters). */
async function requestBody(provider: string, prompt: LanguageModelV4Prompt): Promise<unknown> {
  const replay = replayFetch(['{"error": {"message": "stop here"}}'], { status: 400 });
  const model = providers[provider]!(replay as unknown as typeof globalThis.fetch);
  await Promise.resolve(model.doStream({ prompt, tools: [{ type: 'function', name: 'echo', inputSchema: { type: 'object' } }] })).catch(() => undefined);
  expect(replay.requests).toHaveLength(1);
  return replay.requests[0]!.body;
}

describe('renamed duplicate tool call ids use only characters every provider accepts', () => {
  it('the suffix is `_<n>`', async () => {
    const { ids } = await promptAfterDuplicates(['call_0', 'call_0', 'call_0']);
    expect(ids).toEqual(['call_0', 'call_0_2', 'call_0_3']);
  });

  for (const provider of Object.keys(providers)) {
    it(`${provider}: every tool call id in the request body matches ^[a-zA-Z0-9_-]+$`, async () => {
      const { prompt, ids } = await promptAfterDuplicates(['toolu_01', 'toolu_01']);
      const sent = toolIdsIn(await requestBody(provider, prompt));
      for (const id of sent) expect(id).toMatch(STRICTEST_ID);
      // providers that send call ids send ours verbatim (Google matches results by name and sends none)
      if (provider !== 'google') expect(new Set(sent)).toEqual(new Set(ids));
    });
  }

  it('property: any provider ids that satisfy the rule, repeated in any pattern, stay within it after renaming', async () => {
    const idArbitrary = fc.stringMatching(/^[a-zA-Z0-9_-]{1,12}$/);
    // a few distinct ids, then a sequence drawing from them (repeats guaranteed by the small pool)
    const scenario = fc.uniqueArray(idArbitrary, { minLength: 1, maxLength: 3 }).chain((pool) =>
      fc.array(fc.constantFrom(...pool), { minLength: 2, maxLength: 6 }),
    );
    await checkProperty(
      'renamed-tool-call-ids',
      scenario,
      async (providerIds) => {
        const { ids } = await promptAfterDuplicates(providerIds);
        if (new Set(ids).size !== providerIds.length) throw new Error(`ids not unique: ${JSON.stringify(ids)}`);
        for (const id of ids) if (!STRICTEST_ID.test(id)) throw new Error(`renamed id ${JSON.stringify(id)} breaks ^[a-zA-Z0-9_-]+$`);
      },
      Math.max(50, Math.floor(Number.parseInt(process.env.RXAGENT_PROPERTY_RUNS ?? '1000', 10) / 10)),
    );
  });
});
