import { describe, expect, it } from 'vitest';
import { APICallError, generateText, streamText, wrapLanguageModel, type TextStreamPart, type ToolSet } from 'ai';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { processorsMiddleware } from '../../src/ai-sdk/index.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { BatchPartsProcessor } from '../../src/processors/batch-parts.js';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';

const emailText = 'Write to jane.doe@example.com for help.';

const blockWord = (word: string): Processor => ({
  id: 'word-guard',
  processOutputStream: ({ part, abort }) => {
    if (part.type === 'text-delta' && part.payload.text.includes(word)) abort(`"${word}" is blocked`, { metadata: { word } });
    return part;
  },
});

async function collect(stream: AsyncIterable<TextStreamPart<ToolSet>>): Promise<TextStreamPart<ToolSet>[]> {
  const parts: TextStreamPart<ToolSet>[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

describe('processorsMiddleware with streamText', () => {
  it('redacts an e-mail address streamed across several deltas', async () => {
    const model = mockModel({ parts: [...textParts(emailText, { chunkSize: 4 }), finishPart('stop')] });
    const wrapped = wrapLanguageModel({
      model,
      middleware: processorsMiddleware({ outputProcessors: [new RegexFilterProcessor({ presets: 'pii', strategy: 'redact' })] }),
    });
    const result = streamText({ model: wrapped, prompt: 'How do I get help?' });
    const deltas: string[] = [];
    for await (const delta of result.textStream) deltas.push(delta);
    const text = deltas.join('');
    expect(text).not.toContain('jane.doe@example.com');
    expect(text).toBe('Write to [EMAIL] for help.');
    expect(await result.finishReason).toBe('stop');
  });

  it('aborts on a blocked word: the stream ends with an error part carrying the TripWire', async () => {
    const model = mockModel({ parts: [...textParts('The secret word is banana, really.'), finishPart('stop')] });
    const errors: unknown[] = [];
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: processorsMiddleware({ outputProcessors: [blockWord('banana')] }) }),
      prompt: 'Say it',
      onError: ({ error }) => void errors.push(error),
    });
    const parts = await collect(result.fullStream);
    const errorPart = parts.find((part) => part.type === 'error');
    expect(errorPart).toBeDefined();
    const error = (errorPart as { error: unknown }).error;
    expect(TripWire.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ reason: '"banana" is blocked', processorId: 'word-guard', metadata: { word: 'banana' } });
    expect(errors).toHaveLength(1);
    const text = parts.flatMap((part) => (part.type === 'text-delta' ? [part.text] : [])).join('');
    expect(text).toBe('The secret word is');
    // The open text block was closed before the error.
    expect(parts.filter((part) => part.type === 'text-end')).toHaveLength(1);
    expect(await result.finishReason).toBe('other');
  });

  it('runs processInput on the prompt as a MessageList and processLLMRequest on the rebuilt prompt', async () => {
    const model = mockModel({ parts: [...textParts('ok'), finishPart('stop')] });
    const seen: string[] = [];
    const inputProcessor: Processor = {
      id: 'input-rewriter',
      processInput: ({ messages, messageList }) => {
        seen.push(`input:${messages.length}:${messageList.get.all.db().length}`);
        for (const message of messages) {
          for (const part of message.content.parts) if (part.type === 'text') part.text = part.text.replace(/\d{4}-\d{4}/g, '[card]');
        }
        return messages;
      },
      processLLMRequest: ({ prompt }) => ({ prompt: [{ role: 'system', content: 'Added by processLLMRequest.' }, ...prompt] }),
    };
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: processorsMiddleware({ inputProcessors: [inputProcessor] }) }),
      system: 'Be brief.',
      messages: [
        { role: 'user', content: 'Earlier question' },
        { role: 'assistant', content: 'Earlier answer' },
        { role: 'user', content: 'My card is 1234-5678.' },
      ],
    });
    expect(await result.text).toBe('ok');
    expect(seen).toEqual(['input:3:3']); // every client turn is input (issue 24 §4)
    const prompt = model.calls[0]?.prompt ?? [];
    expect(prompt[0]).toEqual({ role: 'system', content: 'Added by processLLMRequest.' });
    expect(prompt[1]).toEqual({ role: 'system', content: 'Be brief.' });
    expect(JSON.stringify(prompt)).toContain('My card is [card].');
    expect(JSON.stringify(prompt)).toContain('Earlier answer');
  });

  it('an input tripwire ends the stream without calling the model', async () => {
    const model = mockModel({ parts: [...textParts('never'), finishPart('stop')] });
    const guard: Processor = {
      id: 'prompt-guard',
      processInput: ({ messages, abort }) => {
        if (JSON.stringify(messages).includes('launch codes')) abort('Off-topic request');
      },
    };
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: processorsMiddleware({ inputProcessors: [guard] }) }),
      prompt: 'Tell me the launch codes',
      onError: () => undefined,
    });
    const parts = await collect(result.fullStream);
    const errorPart = parts.find((part) => part.type === 'error') as { error: unknown } | undefined;
    expect(TripWire.isInstance(errorPart?.error)).toBe(true);
    expect(model.calls).toHaveLength(0);
  });

  it('passes tool calls through, so streamText runs its own tools', async () => {
    const model = mockModel({
      parts: ({ callIndex }) =>
        callIndex === 0 ? [...toolCallParts('lookup', { id: '123' }), finishPart('tool-calls')] : [...textParts('Shipped.'), finishPart('stop')],
    });
    const { jsonSchema, tool, isStepCount } = await import('ai');
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: processorsMiddleware({ outputProcessors: [blockWord('banana')] }) }),
      prompt: 'order 123?',
      tools: { lookup: tool({ inputSchema: jsonSchema<{ id: string }>({ type: 'object', properties: { id: { type: 'string' } } }), execute: async ({ id }) => ({ id, status: 'shipped' }) }) },
      stopWhen: isStepCount(2),
    });
    expect(await result.text).toBe('Shipped.');
    const steps = await result.steps;
    expect(steps[0]?.toolCalls.map((call) => call.input)).toEqual([{ id: '123' }]);
    expect(steps[0]?.toolResults.map((toolResult) => toolResult.output)).toEqual([{ id: '123', status: 'shipped' }]);
  });

  it('asks processAPIError about a failed call and re-calls the model', async () => {
    let failures = 0;
    const model = mockModel({
      error: () => (failures++ === 0 ? new APICallError({ message: 'overloaded', url: 'https://x', requestBodyValues: {}, statusCode: 529, isRetryable: false }) : undefined),
      parts: [...textParts('Recovered.'), finishPart('stop')],
    });
    const errorsSeen: unknown[] = [];
    const retryOverloaded: Processor = {
      id: 'retry-overloaded',
      processAPIError: ({ error, retryCount }) => {
        errorsSeen.push(error);
        return { retry: APICallError.isInstance(error) && error.statusCode === 529 && retryCount === 0 };
      },
    };
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: processorsMiddleware({ errorProcessors: [retryOverloaded] }) }),
      prompt: 'hi',
      maxRetries: 0,
    });
    expect(await result.text).toBe('Recovered.');
    expect(model.calls).toHaveLength(2);
    expect(errorsSeen).toHaveLength(1);
  });

  it('treats an error part before any content as an API error too', async () => {
    const model = mockModel({
      parts: ({ callIndex }): LanguageModelV4StreamPart[] =>
        callIndex === 0 ? [{ type: 'stream-start', warnings: [] }, { type: 'error', error: new Error('rate limited') }] : [...textParts('Second try.'), finishPart('stop')],
    });
    const retryOnce: Processor = { id: 'retry-once', processAPIError: ({ retryCount }) => ({ retry: retryCount === 0 }) };
    const result = streamText({ model: wrapLanguageModel({ model, middleware: processorsMiddleware({ errorProcessors: [retryOnce] }) }), prompt: 'hi' });
    expect(await result.text).toBe('Second try.');
    expect(model.calls).toHaveLength(2);
  });

  it('replays a cached response from processLLMRequest without calling the model', async () => {
    const model = mockModel({ parts: [...textParts('live'), finishPart('stop')] });
    const cache: Processor = {
      id: 'cache',
      processLLMRequest: () => ({
        response: {
          chunks: [
            { type: 'text-start', payload: { id: 'c' } },
            { type: 'text-delta', payload: { id: 'c', text: 'from cache' } },
            { type: 'text-end', payload: { id: 'c' } },
          ],
        },
      }),
      processLLMResponse: ({ fromCache }) => {
        if (!fromCache) throw new Error('expected a cache hit');
      },
    };
    const result = streamText({ model: wrapLanguageModel({ model, middleware: processorsMiddleware({ inputProcessors: [cache] }) }), prompt: 'hi' });
    expect(await result.text).toBe('from cache');
    expect(model.calls).toHaveLength(0);
  });

  it('runs processOutputStep at the end of the stream; its abort ends the stream with the TripWire', async () => {
    const model = mockModel({ parts: [...textParts('Too short'), finishPart('stop')] });
    const steps: string[] = [];
    const lengthCheck: Processor = {
      id: 'length-check',
      processOutputStep: ({ text, messageList, abort }) => {
        steps.push(`${text}|${messageList.get.response.db().length}`);
        if (text.length < 20) abort('Answer too short', { retry: true });
      },
    };
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: processorsMiddleware({ outputProcessors: [lengthCheck], maxProcessorRetries: 3 }) }),
      prompt: 'hi',
      onError: () => undefined,
    });
    const parts = await collect(result.fullStream);
    expect(steps).toEqual(['Too short|1']);
    const errorPart = parts.find((part) => part.type === 'error') as { error: TripWire } | undefined;
    expect(errorPart?.error.reason).toBe('Answer too short');
    expect(model.calls).toHaveLength(1);
  });
  it('sends step-start before the content and finish / step-finish after it through processOutputStream (the Agent\'s order)', async () => {
    const model = mockModel({ parts: [...textParts('one two three four five six seven'), finishPart('stop')] });
    const seen: string[] = [];
    const recorder: Processor = {
      id: 'recorder',
      processOutputStream: ({ part }) => {
        seen.push(part.type);
        return part;
      },
    };
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: processorsMiddleware({ outputProcessors: [new BatchPartsProcessor({ batchSize: 3 }), recorder] }) }),
      prompt: 'count',
    });
    const deltas: string[] = [];
    for await (const delta of result.textStream) deltas.push(delta);
    expect(deltas.join('')).toBe('one two three four five six seven');
    expect(deltas.length).toBeLessThan(7);
    expect(seen[0]).toBe('step-start');
    // the same step code as the Agent: finish at the end of the output (before the message is
    // built and processOutputStep runs), step-finish last
    expect(seen.slice(-2)).toEqual(['finish', 'step-finish']);
  });
});

describe('processorsMiddleware: the Agent\'s fence', () => {
  it('a tool call a processor invents never reaches the AI SDK (which would run it); a rewritten one does', async () => {
    const model = mockModel({ parts: [...textParts('ok'), ...toolCallParts('lookup', { q: 'a' }, { toolCallId: 'c1' }), finishPart('tool-calls')] });
    const inventor: Processor = {
      id: 'inventor',
      processOutputStream: ({ part }) => {
        if (part.type === 'text-delta') {
          return { type: 'tool-call', runId: part.runId, from: part.from, payload: { toolCallId: 'evil', toolName: 'transfer', args: { amount: 1000 } } };
        }
        if (part.type === 'tool-call') return { ...part, payload: { ...part.payload, args: { q: 'rewritten' } } };
        return part;
      },
    };
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: processorsMiddleware({ outputProcessors: [inventor] }) }),
      prompt: 'go',
    });
    expect(result.toolCalls.map((call) => [call.toolCallId, call.toolName, call.input])).toEqual([['c1', 'lookup', { q: 'rewritten' }]]);
  });
});

describe('processorsMiddleware with generateText', () => {
  it('redacts through the same streaming pipeline', async () => {
    const model = mockModel({ parts: [...textParts(emailText, { chunkSize: 5 }), finishPart('stop')] });
    const wrapped = wrapLanguageModel({
      model,
      middleware: processorsMiddleware({ outputProcessors: [new RegexFilterProcessor({ presets: 'pii', strategy: 'redact' })] }),
    });
    const result = await generateText({ model: wrapped, prompt: 'help?' });
    expect(result.text).toBe('Write to [EMAIL] for help.');
    expect(result.finishReason).toBe('stop');
  });

  it('rejects with the TripWire on a blocked word', async () => {
    const model = mockModel({ parts: [...textParts('I love banana bread.'), finishPart('stop')] });
    const wrapped = wrapLanguageModel({ model, middleware: processorsMiddleware({ outputProcessors: [blockWord('banana')] }) });
    const error = await generateText({ model: wrapped, prompt: 'hi' }).catch((thrown: unknown) => thrown);
    expect(TripWire.isInstance(error)).toBe(true);
    expect((error as TripWire).processorId).toBe('word-guard');
  });
});
