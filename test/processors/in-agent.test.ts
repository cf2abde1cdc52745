/** Built-in processors inside an Agent: what streams, what generate() reports and what memory stores agree. */
import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { APICallError } from '@ai-sdk/provider';
import { Agent } from '../../src/loop/agent.js';
import { Memory } from '../../src/memory/memory.js';
import type { MastraDBMessage } from '../../src/message-list/types.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { BatchPartsProcessor } from '../../src/processors/batch-parts.js';
import { ModerationProcessor } from '../../src/processors/moderation.js';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { StreamErrorRetryProcessor } from '../../src/processors/stream-error-retry.js';
import { StructuredOutputProcessor } from '../../src/processors/structured-output.js';
import { TokenLimiterProcessor } from '../../src/processors/token-limiter.js';
import { ToolCallFilter } from '../../src/processors/tool-call-filter.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { judgeModel, unreachableJudgeError } from './support/harness.js';

const streamedText = (chunks: ChunkType[]) => chunks.map((chunk) => (chunk.type === 'text-delta' ? chunk.payload.text : '')).join('');
const storedText = (messages: MastraDBMessage[]) =>
  messages.filter((message) => message.role === 'assistant').map((message) => message.content.parts.map((part) => (part.type === 'text' ? part.text : '')).join('')).join('');
const terminals = (chunks: ChunkType[]) => chunks.filter((chunk) => ['finish', 'tripwire', 'error', 'abort'].includes(chunk.type));

describe('RegexFilterProcessor in an Agent', () => {
  it('the redacted text is the same in stream$(), generate() and memory', async () => {
    const answer = 'Reach Ada at ada.lovelace@example.com today.';
    const model = () => mockModel({ parts: [...textParts(answer, { chunkSize: 5 }), finishPart()] });
    const storage = new InMemoryStorage();
    const make = () => new Agent({ id: 'a', model: model(), memory: new Memory({ storage }), outputProcessors: [new RegexFilterProcessor({ presets: 'pii', strategy: 'redact' })] });
    const chunks = await lastValueFrom(make().stream$('x', { memory: { thread: 't1', resource: 'u' } }).pipe(toArray()));
    const result = await make().generate('x', { memory: { thread: 't2', resource: 'u' } });
    expect(streamedText(chunks)).toBe('Reach Ada at [EMAIL] today.');
    expect(result.text).toBe(streamedText(chunks));
    expect(storedText(await storage.getMessages({ threadId: 't1' }))).toBe(result.text);
    expect(storedText(await storage.getMessages({ threadId: 't2' }))).toBe(result.text);
  });
});

describe('ModerationProcessor (window mode) in an Agent', () => {
  it('judges a long answer with a bounded number of calls; stream$ and generate agree', async () => {
    const answer = Array.from({ length: 60 }, (_, index) => `Sentence number ${index} is perfectly calm.`).join(' ');
    const judge = judgeModel(() => '{"categories": {"violence": 0.01}}');
    const make = () =>
      new Agent({
        id: 'a',
        model: mockModel({ parts: [...textParts(answer, { chunkSize: 4 }), finishPart()] }),
        outputProcessors: [new ModerationProcessor({ model: judge, streamMode: 'window', windowSize: 200 })],
      });
    const chunks = await lastValueFrom(make().stream$('x').pipe(toArray()));
    const calls = judge.calls.length;
    expect(calls).toBeLessThanOrEqual(Math.ceil(answer.length / 200) + 1);
    expect(streamedText(chunks)).toBe(answer);
    expect((await make().generate('x')).text).toBe(answer);
    expect(terminals(chunks)).toHaveLength(1);
  });

  it("a judge that cannot be reached, under 'strict' (the default), ends the run with a tripwire; under 'fail-open' the text passes", async () => {
    const make = (errorStrategy: 'strict' | 'fail-open', error: unknown = unreachableJudgeError()) =>
      new Agent({
        id: 'a',
        model: mockModel({ parts: [...textParts('Some reply.'), finishPart()] }),
        outputProcessors: [new ModerationProcessor({ model: mockModel({ error }), streamMode: 'final', errorStrategy, judgeDeadlineMs: 50 })],
      });
    const strict = await make('strict').generate('x');
    expect(strict.tripwire?.processorId).toBe('moderation');
    expect(strict.finishReason).toBe('other');
    expect((await make('fail-open').generate('x')).text).toBe('Some reply.');
    // a failure not recognised as an outage is not opened by 'fail-open' (it was: any error counted as one)
    const unknown = await make('fail-open', new Error('judge down')).generate('x');
    expect(unknown.tripwire?.processorId).toBe('moderation');
  });
});

describe('BatchPartsProcessor in an Agent', () => {
  it('batches deltas without changing the text or the stream shape', async () => {
    const answer = 'one two three four five six seven eight nine ten';
    const agent = new Agent({ id: 'a', model: mockModel({ parts: [...textParts(answer), finishPart()] }), outputProcessors: [new BatchPartsProcessor({ batchSize: 3 })] });
    const chunks = await lastValueFrom(agent.stream$('x').pipe(toArray()));
    expect(streamedText(chunks)).toBe(answer);
    expect(chunks.filter((chunk) => chunk.type === 'start')).toHaveLength(1);
    expect(terminals(chunks)).toEqual([chunks.at(-1)]);
    expect(chunks.filter((chunk) => chunk.type === 'text-delta').length).toBeLessThan(answer.split(' ').length);
  });
});

describe('StreamErrorRetryProcessor as an error processor', () => {
  it('retries a 503 once and no error chunk leaks', async () => {
    const unavailable = new APICallError({
      message: 'overloaded',
      url: 'u',
      requestBodyValues: {},
      statusCode: 503,
      isRetryable: true,
      responseHeaders: { 'retry-after': '0' },
    });
    const model = mockModel({ error: ({ callIndex }: { callIndex: number }) => (callIndex === 0 ? unavailable : undefined), parts: [...textParts('ok now'), finishPart()] });
    const agent = new Agent({ id: 'a', model, errorProcessors: [new StreamErrorRetryProcessor({ delayMs: 0 })] });
    const chunks = await lastValueFrom(agent.stream$('x').pipe(toArray()));
    expect(model.calls).toHaveLength(2);
    expect(chunks.some((chunk) => chunk.type === 'error')).toBe(false);
    expect(streamedText(chunks)).toBe('ok now');
  });
});

describe('StructuredOutputProcessor in an Agent', () => {
  it('a second model structures the text: generate().object is set and the object chunk precedes finish', async () => {
    const structurer = judgeModel(() => '{"city": "Paris", "tempC": 21}');
    const agent = new Agent({
      id: 'a',
      model: mockModel({ parts: [...textParts('It is 21 degrees in Paris.'), finishPart()] }),
      outputProcessors: [new StructuredOutputProcessor({ schema: z.object({ city: z.string(), tempC: z.number() }), model: structurer })],
    });
    const chunks = await lastValueFrom(agent.stream$('weather?').pipe(toArray()));
    const objectIndex = chunks.findIndex((chunk) => chunk.type === 'object');
    expect(objectIndex).toBeGreaterThan(0);
    expect(objectIndex).toBeLessThan(chunks.findIndex((chunk) => chunk.type === 'finish'));
    const result = await agent.generate('weather?');
    expect(result.object).toEqual({ city: 'Paris', tempC: 21 });
  });
});

describe('prompt-shaping processors never touch stored history', () => {
  const toolLoop = () =>
    mockModel({
      parts: ({ callIndex }) =>
        callIndex % 2 === 0 ? [...toolCallParts('lookup', { n: callIndex }, { toolCallId: `c${callIndex}` }), finishPart('tool-calls')] : [...textParts(`answer ${callIndex}`), finishPart()],
    });
  const tools = { lookup: { inputSchema: z.object({ n: z.number() }), execute: async ({ n }: { n: number }) => ({ value: n * 2, padding: 'x'.repeat(400) }) } };

  async function storedHistory(inputProcessors: ConstructorParameters<typeof Agent>[0]['inputProcessors']): Promise<{ stored: string; lastPrompt: string }> {
    const storage = new InMemoryStorage();
    const model = toolLoop();
    let id = 0;
    let clock = Date.UTC(2026, 0, 1);
    const agent = new Agent({
      id: 'a',
      model,
      tools,
      memory: new Memory({ storage }),
      generateId: () => `id-${++id}`,
      now: () => new Date((clock += 1000)),
      ...(inputProcessors === undefined ? {} : { inputProcessors }),
    });
    for (const turn of ['first question', 'second question', 'third question']) {
      await agent.generate(turn, { memory: { thread: 'thread', resource: 'user' } });
    }
    return { stored: JSON.stringify(await storage.getMessages({ threadId: 'thread' })), lastPrompt: JSON.stringify(model.calls.at(-1)?.prompt) };
  }

  it('stored history after ToolCallFilter and TokenLimiterProcessor is byte-identical to the history without them', async () => {
    const plain = await storedHistory(undefined);
    const filtered = await storedHistory([new ToolCallFilter(), new TokenLimiterProcessor({ limit: 300 })]);
    expect(plain.stored).toContain('"state":"result"');
    // the processors did shape the prompt (older tool traffic gone from what the model saw)…
    expect(filtered.lastPrompt.length).toBeLessThan(plain.lastPrompt.length);
    expect(filtered.lastPrompt).not.toContain('"c0"');
    // …and the stored history is byte-identical
    expect(filtered.stored).toBe(plain.stored);
  });
});
