/**
 * AI SDK 4 models (`LanguageModelV1`) through the V1 → V2 → V4 adapter (src/model/from-v1.ts):
 * written here from the V1 provider spec (no AI SDK 4 installed): streamed text, reasoning and a
 * streamed tool call with their brackets, usage and finish reason, the call options in V1's shape,
 * and a model whose doStream is "not implemented" (the AI SDK mocks' default) answered by doGenerate.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent } from '../../src/loop/agent.js';
import { resolveModel } from '../../src/model/resolve-model.js';
import type { LanguageModelV1, LanguageModelV1CallOptions, LanguageModelV1StreamPart } from 'rxagent/ai-sdk';
import { ModerationProcessor } from '../../src/processors/index.js';

function streamOf(parts: LanguageModelV1StreamPart[]): ReadableStream<LanguageModelV1StreamPart> {
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}

/** A V1 model streaming `parts` (each call), recording its call options. */
function v1Model(parts: (call: number) => LanguageModelV1StreamPart[]): LanguageModelV1 & { calls: LanguageModelV1CallOptions[] } {
  const calls: LanguageModelV1CallOptions[] = [];
  return {
    specificationVersion: 'v1',
    provider: 'legacy',
    modelId: 'legacy-v1',
    defaultObjectGenerationMode: 'json',
    calls,
    doGenerate: () => Promise.reject(new Error('doGenerate should not be called')),
    doStream: async (options) => {
      calls.push(options);
      return { stream: streamOf(parts(calls.length - 1)), rawCall: { rawPrompt: null, rawSettings: {} } };
    },
  };
}

const usage = { promptTokens: 7, completionTokens: 3 };

describe('a LanguageModelV1 as an agent model', () => {
  it('resolves to V4', () => {
    expect(resolveModel(v1Model(() => [])).specificationVersion).toBe('v4');
  });

  it('streams text and reasoning with their brackets; usage and finish reason come through', async () => {
    const model = v1Model(() => [
      { type: 'reasoning', textDelta: 'Thinking. ' },
      { type: 'text-delta', textDelta: 'Hello ' },
      { type: 'text-delta', textDelta: 'there' },
      { type: 'finish', finishReason: 'stop', usage },
    ]);
    const agent = new Agent({ id: 'v1', instructions: 'Be brief.', model });
    const chunks: string[] = [];
    const result = await agent.generate('Hi', { generateWith: 'doStream' });
    await new Promise<void>((resolve) => agent.stream$('Hi').subscribe({ next: (chunk) => chunks.push(chunk.type), complete: resolve }));
    expect(result.text).toBe('Hello there');
    expect(result.usage.inputTokens).toBe(7);
    expect(result.usage.outputTokens).toBe(3);
    expect(result.finishReason).toBe('stop');
    expect(chunks).toEqual(expect.arrayContaining(['reasoning-start', 'reasoning-delta', 'reasoning-end', 'text-start', 'text-delta', 'text-end', 'finish']));
    expect(chunks.indexOf('reasoning-end')).toBeLessThan(chunks.indexOf('text-start'));
    // the prompt in V1's shape: system as a string, user parts as text parts
    const prompt = model.calls[0]!.prompt;
    expect(prompt[0]).toEqual({ role: 'system', content: 'Be brief.' });
    expect(prompt.at(-1)).toMatchObject({ role: 'user', content: [{ type: 'text', text: 'Hi' }] });
    expect(model.calls[0]!.inputFormat).toBe('messages');
    expect(model.calls[0]!.mode.type).toBe('regular');
  });

  it('a streamed tool call runs the tool; the result goes back in V1 tool-result parts', async () => {
    const model = v1Model((call) =>
      call === 0
        ? [
            { type: 'tool-call-delta', toolCallType: 'function', toolCallId: 'c1', toolName: 'weather', argsTextDelta: '{"city":' },
            { type: 'tool-call-delta', toolCallType: 'function', toolCallId: 'c1', toolName: 'weather', argsTextDelta: '"Paris"}' },
            { type: 'tool-call', toolCallType: 'function', toolCallId: 'c1', toolName: 'weather', args: '{"city":"Paris"}' },
            { type: 'finish', finishReason: 'tool-calls', usage },
          ]
        : [{ type: 'text-delta', textDelta: 'It is 21°C.' }, { type: 'finish', finishReason: 'stop', usage }],
    );
    const agent = new Agent({
      id: 'v1',
      instructions: 'x',
      model,
      tools: { weather: { description: 'Weather', inputSchema: z.object({ city: z.string() }), execute: async ({ city }: { city: string }) => ({ city, tempC: 21 }) } },
    });
    const result = await agent.generate('Weather in Paris?', { generateWith: 'doStream' });
    expect(result.text).toBe('It is 21°C.');
    expect(result.toolResults[0]?.result).toEqual({ city: 'Paris', tempC: 21 });
    const firstMode = model.calls[0]!.mode;
    expect(firstMode.type === 'regular' && firstMode.tools?.[0]).toMatchObject({ type: 'function', name: 'weather', parameters: { type: 'object' } });
    const secondPrompt = model.calls[1]!.prompt;
    expect(secondPrompt.find((message) => message.role === 'assistant')?.content).toEqual([
      expect.objectContaining({ type: 'tool-call', toolCallId: 'c1', toolName: 'weather', args: { city: 'Paris' } }),
    ]);
    expect(secondPrompt.find((message) => message.role === 'tool')?.content[0]).toMatchObject({ type: 'tool-result', toolCallId: 'c1', result: { city: 'Paris', tempC: 21 }, isError: false });
  });

  it('a stream error part ends the run with an error chunk carrying it', async () => {
    const failure = new Error('overloaded');
    const model = v1Model(() => [{ type: 'error', error: failure }]);
    await expect(new Agent({ id: 'v1', instructions: 'x', model }).generate('Hi')).rejects.toBeDefined();
  });
});

describe('a V1 judge that only implements doGenerate (MockLanguageModelV1 style)', () => {
  function generateOnly(answer: unknown): LanguageModelV1 & { prompts: LanguageModelV1CallOptions[] } {
    const prompts: LanguageModelV1CallOptions[] = [];
    return {
      specificationVersion: 'v1',
      provider: 'mock',
      modelId: 'mock-v1',
      defaultObjectGenerationMode: 'json',
      prompts,
      doGenerate: async (options) => {
        prompts.push(options);
        return { text: JSON.stringify(answer), finishReason: 'stop', usage: { promptTokens: 10, completionTokens: 20 } };
      },
      doStream: () => {
        throw new Error('Not implemented');
      },
    };
  }

  it('ModerationProcessor blocks with the answer doGenerate gave, asked in object-json mode', async () => {
    const judge = generateOnly({ category_scores: [{ category: 'violence', score: 0.9 }], reason: 'violent' });
    const moderation = new ModerationProcessor({ model: judge });
    const reasons: string[] = [];
    const abort = (reason?: string): never => {
      reasons.push(reason ?? '');
      throw new Error(`blocked: ${reason}`);
    };
    const message = { id: 'm1', role: 'user' as const, createdAt: new Date(), content: { format: 2 as const, parts: [{ type: 'text' as const, text: 'I will hurt you' }] } };
    await expect(moderation.processInput({ messages: [message], abort } as never)).rejects.toThrow(/blocked/);
    expect(reasons[0]).toContain('Content flagged for moderation');
    expect(judge.prompts).toHaveLength(1);
    expect(judge.prompts[0]!.mode.type).toBe('object-json');
  });

  it('any other doStream failure is the model error, and doGenerate is not tried', async () => {
    let generated = 0;
    const model: LanguageModelV1 = {
      specificationVersion: 'v1',
      provider: 'mock',
      modelId: 'failing',
      doGenerate: async () => {
        generated++;
        return { text: 'no', finishReason: 'stop', usage };
      },
      doStream: () => Promise.reject(new Error('401 Unauthorized')),
    };
    await expect(new Agent({ id: 'v1', instructions: 'x', model }).generate('Hi', { generateWith: 'doStream' })).rejects.toBeDefined();
    expect(generated).toBe(0);
  });
});
