/**
 * `generate()` answered through the provider's `doGenerate` when nothing reads the stream
 * (`generateWith`, default `'doGenerate'`): which method a run calls, and that the results, hooks,
 * retries and memory equal those of the same answer streamed.
 */
import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { createOpenAI } from '@ai-sdk/openai';
import { z } from 'zod';
import {
  APICallError,
  type LanguageModelV2,
  type LanguageModelV3,
  type LanguageModelV4,
  type LanguageModelV4Content,
  type LanguageModelV4FinishReason,
  type LanguageModelV4StreamPart,
} from '@ai-sdk/provider';
import { Agent } from '../../src/loop/agent.js';
import type { AgentCallOptions, AgentConfig, GenerateResult } from '../../src/loop/agent-types.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { InMemoryStorage, Memory } from '../../src/memory/index.js';
import { RunAbortedError } from '../../src/loop/run/run-aborted-error.js';
import { InvalidModelResponseError } from '../../src/model/errors/invalid-model-response-error.js';
import { finishPart, reasoningParts, splitText, textParts, toolCallParts, usage } from '../../src/testing/model-parts.js';
import { mockModelV2, mockModelV3 } from '../../src/testing/mock-model-legacy.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { OBSERVABLE_STREAM } from '../../src/model/observable-stream.js';

/** One answer of the model, and how it streams (text in 3-character deltas, tool input streamed). */
interface Answer {
  content: LanguageModelV4Content[];
  finish?: LanguageModelV4FinishReason['unified'];
  response?: { id: string; modelId: string };
}

function streamOf(answer: Answer): LanguageModelV4StreamPart[] {
  const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  if (answer.response) parts.push({ type: 'response-metadata', ...answer.response });
  answer.content.forEach((content, index) => {
    if (content.type === 'text' || content.type === 'reasoning') {
      const id = `b${index}`;
      const kind = content.type;
      parts.push({ type: `${kind}-start`, id });
      for (const delta of splitText(content.text, 3)) parts.push({ type: `${kind}-delta`, id, delta });
      parts.push({ type: `${kind}-end`, id, ...(content.providerMetadata ? { providerMetadata: content.providerMetadata } : {}) });
    } else if (content.type === 'tool-call' && content.providerExecuted !== true) {
      parts.push({ type: 'tool-input-start', id: content.toolCallId, toolName: content.toolName });
      for (const delta of splitText(content.input, 4)) parts.push({ type: 'tool-input-delta', id: content.toolCallId, delta });
      parts.push({ type: 'tool-input-end', id: content.toolCallId }, content);
    } else parts.push(content);
  });
  parts.push({ type: 'finish', finishReason: { unified: answer.finish ?? 'stop', raw: answer.finish ?? 'stop' }, usage: usage({ inputTokens: 5, outputTokens: 4 }) });
  return parts;
}

/** A model that answers `answers[callIndex]` through either method, and counts which was called. */
function dualModel(answers: Answer[] | ((callIndex: number) => Answer | Error)) {
  const methods: Array<'doGenerate' | 'doStream'> = [];
  const answerOf = (): Answer => {
    const index = methods.length - 1;
    const answer = typeof answers === 'function' ? answers(index) : answers[Math.min(index, answers.length - 1)];
    if (answer instanceof Error) throw answer;
    return answer as Answer;
  };
  const model: LanguageModelV4 = {
    specificationVersion: 'v4',
    provider: 'dual',
    modelId: 'dual-1',
    supportedUrls: {},
    async doGenerate() {
      methods.push('doGenerate');
      const answer = answerOf();
      return {
        content: answer.content,
        finishReason: { unified: answer.finish ?? 'stop', raw: answer.finish ?? 'stop' },
        usage: usage({ inputTokens: 5, outputTokens: 4 }),
        warnings: [],
        ...(answer.response ? { response: answer.response } : {}),
      };
    },
    async doStream() {
      methods.push('doStream');
      const parts = streamOf(answerOf());
      return { stream: new ReadableStream({ start: (controller) => (parts.forEach((part) => controller.enqueue(part)), controller.close()) }) };
    },
  };
  return { model, methods };
}

/** Deterministic ids and clock, so two runs can be compared field by field. */
function deterministic(): Pick<AgentConfig, 'generateId' | 'now'> {
  let id = 0;
  return { generateId: () => `id-${++id}`, now: () => new Date(Date.UTC(2026, 0, 1)) };
}

const tools: AgentConfig['tools'] = { lookup: { description: 'Looks up an order.', execute: async (input: unknown) => ({ found: input }) } };

const scripts: Record<string, Answer[]> = {
  'plain text': [{ content: [{ type: 'text', text: 'Hello there, how are you?' }], response: { id: 'resp_1', modelId: 'dual-1-2026' } }],
  'reasoning with a signature, then text with provider metadata': [
    {
      content: [
        { type: 'reasoning', text: 'The user greets me.', providerMetadata: { anthropic: { signature: 'sig-1' } } },
        { type: 'text', text: 'Hi!', providerMetadata: { openai: { itemId: 'msg_1' } } },
      ],
    },
  ],
  'a tool call, its result, then the answer': [
    { content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'lookup', input: '{"order":42}' }], finish: 'tool-calls' },
    { content: [{ type: 'text', text: 'Order 42 is on its way.' }] },
  ],
  'a provider-executed search, a source, the text; cut at the length limit': [
    {
      content: [
        { type: 'tool-call', toolCallId: 'ws1', toolName: 'web_search', input: '{"q":"rx"}', providerExecuted: true },
        { type: 'tool-result', toolCallId: 'ws1', toolName: 'web_search', result: { hits: 1 } },
        { type: 'source', sourceType: 'url', id: 'src1', url: 'https://rxjs.dev', title: 'RxJS' },
        { type: 'text', text: 'RxJS is a library for' },
      ],
      finish: 'length',
    },
  ],
};

/**
 * What a run's chunks say, whatever the granularity: consecutive deltas of one block merged, and
 * no tool-input streaming (a non-streamed answer has its tool calls whole).
 */
function merged(chunks: readonly ChunkType[]): unknown[] {
  const out: Array<{ type: string; payload: unknown }> = [];
  for (const chunk of chunks) {
    if (chunk.type === 'tool-call-input-streaming-start' || chunk.type === 'tool-call-delta' || chunk.type === 'tool-call-input-streaming-end') continue;
    const last = out[out.length - 1];
    const delta = chunk.type === 'text-delta' || chunk.type === 'reasoning-delta';
    if (delta && last?.type === chunk.type) (last.payload as { text: string }).text += chunk.payload.text;
    else if (delta) out.push({ type: chunk.type, payload: { text: chunk.payload.text } });
    else out.push({ type: chunk.type, payload: chunk.type.endsWith('-start') || chunk.type.endsWith('-end') ? {} : (chunk as { payload?: unknown }).payload });
  }
  return out;
}

async function generateBoth(answers: Answer[], config: Partial<AgentConfig> = {}, options: AgentCallOptions = {}) {
  const run = async (generateWith: 'doGenerate' | 'doStream') => {
    const { model, methods } = dualModel(answers);
    const storage = new InMemoryStorage();
    const agent = new Agent({ id: 'a', instructions: 'Be brief.', model, tools, memory: new Memory({ storage }), ...deterministic(), ...config });
    const result = await agent.generate('Where is my order?', { ...options, generateWith, memory: { thread: 't1', resource: 'u1' } });
    return { result, methods, stored: await storage.getMessages({ threadId: 't1' }) };
  };
  return { generated: await run('doGenerate'), streamed: await run('doStream') };
}

const withoutChunks = ({ chunks: _chunks, ...rest }: GenerateResult) => rest;

describe('which provider method a run calls', () => {
  it('generate() calls doGenerate; stream(), stream$() and generateWith: doStream call doStream', async () => {
    const { model, methods } = dualModel(scripts['plain text'] as Answer[]);
    const agent = new Agent({ id: 'a', model });
    expect((await agent.generate('Hi')).text).toBe('Hello there, how are you?');
    await (await agent.stream('Hi')).text;
    await lastValueFrom(agent.stream$('Hi').pipe(toArray()));
    await agent.generate('Hi', { generateWith: 'doStream' });
    await new Agent({ id: 'b', model, defaultOptions: { generateWith: 'doStream' } }).generate('Hi');
    expect(methods).toEqual(['doGenerate', 'doStream', 'doStream', 'doStream', 'doStream']);
  });

  it('an output processor that reads the stream makes generate() stream; processors of other hooks do not', async () => {
    const { model, methods } = dualModel(scripts['plain text'] as Answer[]);
    const seen: string[] = [];
    const reader: Processor = { id: 'reader', processOutputStream: ({ part }) => (seen.push(part.type), part) };
    const stepOnly: Processor = { id: 'step-only', processOutputStep: () => undefined, processOutputResult: ({ messages }) => messages };
    await new Agent({ id: 'a', model, outputProcessors: [reader] }).generate('Hi');
    await new Agent({ id: 'a', model, outputProcessors: [stepOnly] }).generate('Hi');
    await new Agent({ id: 'a', model }).generate('Hi', { outputProcessors: [reader] });
    expect(methods).toEqual(['doStream', 'doGenerate', 'doStream']);
    expect(seen.filter((type) => type === 'text-delta').length).toBeGreaterThan(1);
  });

  it('a model without doGenerate streams', async () => {
    const { model, methods } = dualModel(scripts['plain text'] as Answer[]);
    const { doGenerate: _none, ...streamOnly } = model;
    expect((await new Agent({ id: 'a', model: streamOnly as LanguageModelV4 }).generate('Hi')).text).toBe('Hello there, how are you?');
    expect(methods).toEqual(['doStream']);
  });

  it('an unknown generateWith is a TypeError naming the option, and nothing is called', async () => {
    const { model, methods } = dualModel(scripts['plain text'] as Answer[]);
    const error = await new Agent({ id: 'a', model }).generate('Hi', { generateWith: 'fast' as never }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(/options\.generateWith must be 'doGenerate' or 'doStream' \(got the string "fast"\)/);
    expect(methods).toEqual([]);
  });
});

describe('the same answer through doGenerate and through doStream', () => {
  for (const [name, answers] of Object.entries(scripts)) {
    it(`${name}: equal results, steps, stored messages and chunks (deltas merged)`, async () => {
      const { generated, streamed } = await generateBoth(answers);
      expect(generated.methods.every((method) => method === 'doGenerate')).toBe(true);
      expect(streamed.methods.every((method) => method === 'doStream')).toBe(true);
      expect(withoutChunks(generated.result)).toEqual(withoutChunks(streamed.result));
      expect(generated.stored).toEqual(streamed.stored);
      expect(merged(generated.result.chunks)).toEqual(merged(streamed.result.chunks));
      expect(generated.result.chunks.filter((chunk) => chunk.type === 'text-delta').length).toBeLessThanOrEqual(answers.length);
    });
  }

  it('every hook sees the same arguments (processLLMResponse: the same chunks, deltas merged)', async () => {
    const run = async (generateWith: 'doGenerate' | 'doStream') => {
      const log: unknown[] = [];
      const spy: Processor = {
        id: 'spy',
        processInputStep: ({ stepNumber, messages }) => void log.push(['inputStep', stepNumber, messages.length]),
        processLLMRequest: ({ prompt, stepNumber }) => void log.push(['request', stepNumber, prompt]),
        processLLMResponse: ({ chunks, stepNumber, fromCache }) => void log.push(['response', stepNumber, fromCache, merged(chunks as ChunkType[])]),
        processOutputStep: ({ text, finishReason, toolCalls, usage: used }) => void log.push(['outputStep', text, finishReason, toolCalls, used]),
        processToolResult: ({ toolName, args, result }) => void log.push(['toolResult', toolName, args, result]),
        processOutputResult: ({ messages }) => (log.push(['outputResult', messages.map((message) => message.content)]), messages),
      };
      const { model, methods } = dualModel(scripts['a tool call, its result, then the answer'] as Answer[]);
      const result = await new Agent({ id: 'a', model, tools, inputProcessors: [spy], outputProcessors: [spy], ...deterministic() }).generate('Where?', { generateWith });
      return { log, methods, result };
    };
    const generated = await run('doGenerate');
    const streamed = await run('doStream');
    expect(generated.methods).toEqual(['doGenerate', 'doGenerate']);
    expect(generated.result.text).toBe('Order 42 is on its way.');
    expect(generated.log.map((entry) => (entry as unknown[])[0])).toEqual([
      'inputStep', 'request', 'response', 'outputStep', 'toolResult', 'inputStep', 'request', 'response', 'outputStep', 'outputResult',
    ]);
    expect(generated.log).toEqual(streamed.log);
  });
});

describe('retries, errors and aborts through doGenerate', () => {
  it('a processOutputStep tripwire with retry asks doGenerate again with the feedback; the second answer is the result', async () => {
    const { model, methods } = dualModel((index) => ({ content: [{ type: 'text', text: index === 0 ? 'short' : 'a longer answer' }] }));
    const quality: Processor = {
      id: 'quality',
      processOutputStep: ({ text, abort }) => {
        if (text === 'short') abort('Too short.', { retry: true });
      },
    };
    const result = await new Agent({ id: 'a', model, outputProcessors: [quality], maxProcessorRetries: 1 }).generate('Hi');
    expect(result.text).toBe('a longer answer');
    expect(methods).toEqual(['doGenerate', 'doGenerate']);
    expect(result.steps[0]?.tripwire?.processorId).toBe('quality');
  });

  it('an APICallError from doGenerate goes to processAPIError; a retry calls doGenerate again', async () => {
    const overloaded = new APICallError({ message: 'overloaded', url: 'https://dual', requestBodyValues: {}, statusCode: 529, isRetryable: true });
    const { model, methods } = dualModel((index) => (index === 0 ? overloaded : { content: [{ type: 'text', text: 'recovered' }] }));
    const seen: unknown[] = [];
    const recover: Processor = { id: 'recover', processAPIError: ({ error }) => (seen.push(error), { retry: true }) };
    const result = await new Agent({ id: 'a', model, errorProcessors: [recover] }).generate('Hi');
    expect(result.text).toBe('recovered');
    expect(seen).toEqual([overloaded]);
    expect(methods).toEqual(['doGenerate', 'doGenerate']);
  });

  it('an unrecovered APICallError rejects generate() with it as the cause', async () => {
    const denied = new APICallError({ message: 'denied', url: 'https://dual', requestBodyValues: {}, statusCode: 401, isRetryable: false });
    const { model } = dualModel(() => denied);
    const error = await new Agent({ id: 'a', model }).generate('Hi').catch((caught: unknown) => caught);
    expect((error as Error).cause).toBe(denied);
  });

  it('a malformed doGenerate answer rejects with the InvalidModelResponseError naming the provider; memory keeps only the input', async () => {
    const { model } = dualModel(scripts['plain text'] as Answer[]);
    const broken: LanguageModelV4 = { ...model, doGenerate: async () => ({ content: null }) as never };
    const storage = new InMemoryStorage();
    const error = await new Agent({ id: 'a', model: broken, memory: new Memory({ storage }) })
      .generate('Hi', { memory: { thread: 't1', resource: 'u1' } })
      .catch((caught: unknown) => caught);
    expect(InvalidModelResponseError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/dual.*dual-1.*content array/);
    expect(JSON.stringify(await storage.getMessages({ threadId: 't1' }))).not.toContain('Hello there');
  });

  it('the caller’s abort while doGenerate is pending aborts the provider’s signal and rejects with RunAbortedError', async () => {
    let signal: AbortSignal | undefined;
    const { model } = dualModel(scripts['plain text'] as Answer[]);
    const pending: LanguageModelV4 = { ...model, doGenerate: (options) => ((signal = options.abortSignal), new Promise(() => undefined)) };
    const controller = new AbortController();
    const running = new Agent({ id: 'a', model: pending }).generate('Hi', { abortSignal: controller.signal }).catch((caught: unknown) => caught);
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort(new Error('user left'));
    const error = await running;
    expect(RunAbortedError.isInstance(error)).toBe(true);
    expect(signal?.aborted).toBe(true);
  });
});

describe('a real provider package answering without a stream', () => {
  const completion = (message: Record<string, unknown>, finish: string) =>
    JSON.stringify({
      id: 'chatcmpl-9',
      object: 'chat.completion',
      created: 1767225600,
      model: 'gpt-4.1-nano-2025-04-14',
      choices: [{ index: 0, message: { role: 'assistant', refusal: null, annotations: [], ...message }, logprobs: null, finish_reason: finish }],
      usage: { prompt_tokens: 19, completion_tokens: 10, total_tokens: 29 },
    });

  it('OpenAI chat: a non-streamed request, the tool call run, the answer, usage summed over the steps', async () => {
    const bodies: Array<Record<string, unknown>> = [];
    const answers = [
      completion({ content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"order":42}' } }] }, 'tool_calls'),
      completion({ content: 'Order 42 ships today.' }, 'stop'),
    ];
    const fetch = (async (_url: RequestInfo | URL, init?: RequestInit) => {
      bodies.push(JSON.parse(String(init?.body)) as Record<string, unknown>);
      return new Response(answers[bodies.length - 1], { status: 200, headers: { 'content-type': 'application/json', 'x-request-id': `req_${bodies.length}` } });
    }) as typeof globalThis.fetch;
    const model = createOpenAI({ apiKey: 'test', fetch }).chat('gpt-4.1-nano');
    const result = await new Agent({ id: 'a', model, tools }).generate('Where is order 42?');
    expect(bodies).toHaveLength(2);
    expect(bodies.every((body) => body.stream === undefined)).toBe(true);
    expect(result.text).toBe('Order 42 ships today.');
    expect(result.toolResults[0]?.result).toEqual({ found: { order: 42 } });
    expect(result.usage.inputTokens).toBe(38);
    expect(result.steps[1]?.response?.modelId).toBe('gpt-4.1-nano-2025-04-14');
  });
});

describe('the testing models answer doGenerate like their streams', () => {
  it('scriptedModel without its virtual-time path: generate() through doGenerate runs the same tool loop and answer', async () => {
    const make = () =>
      scriptedModel({
        rules: [
          { match: /order (\d+)/, reply: ({ userText }) => ({ toolCalls: [{ toolName: 'lookup', args: { order: Number(/order (\d+)/.exec(userText)?.[1]) } }] }) },
          { match: ({ toolResults }) => toolResults.length > 0, reply: ({ toolResults }) => ({ text: `Found: ${JSON.stringify(toolResults[0]?.output)}` }) },
        ],
      });
    const viaStream = await new Agent({ id: 'a', model: make(), tools, ...deterministic() }).generate('Where is order 7?');
    const { [OBSERVABLE_STREAM]: _fast, ...generating } = make() as LanguageModelV4 & { [OBSERVABLE_STREAM]?: unknown };
    const viaGenerate = await new Agent({ id: 'a', model: generating as LanguageModelV4, tools, ...deterministic() }).generate('Where is order 7?');
    expect(viaGenerate.text).toBe('Found: {"found":{"order":7}}');
    expect(withoutChunks(viaGenerate)).toEqual(withoutChunks(viaStream));
  });
});

describe('older-spec models and structured output through doGenerate', () => {
  const legacyParts = (callIndex: number): LanguageModelV4StreamPart[] =>
    callIndex === 0
      ? [...reasoningParts('Look it up.'), ...toolCallParts('lookup', { order: 5 }, { toolCallId: 'c5' }), finishPart('tool-calls', { inputTokens: 4, outputTokens: 2 })]
      : [...textParts('Order 5 is packed.'), finishPart('stop', { inputTokens: 9, outputTokens: 5 })];
  const withoutFastPath = (model: object): LanguageModelV3 | LanguageModelV2 => {
    const { [OBSERVABLE_STREAM]: _fast, ...plain } = model as Record<string | symbol, unknown>;
    return plain as unknown as LanguageModelV3;
  };

  it.each([
    ['V3', () => withoutFastPath(mockModelV3({ parts: ({ callIndex }) => legacyParts(callIndex) }))],
    ['V2', () => withoutFastPath(mockModelV2({ parts: ({ callIndex }) => legacyParts(callIndex) }))],
  ])('a %s model: the adapted doGenerate gives the streamed run’s results', async (_spec, make) => {
    let generateCalls = 0;
    const run = (generateWith: 'doGenerate' | 'doStream') => {
      const model = make();
      const doGenerate = model.doGenerate.bind(model) as (options: never) => Promise<never>;
      Object.assign(model, { doGenerate: (options: never) => (generateCalls++, doGenerate(options)) });
      return new Agent({ id: 'a', model: model as never, tools, ...deterministic() }).generate('Where is order 5?', { generateWith });
    };
    const [generated, streamed] = [await run('doGenerate'), await run('doStream')];
    expect(generateCalls).toBe(2);
    expect(generated.text).toBe('Order 5 is packed.');
    expect(generated.usage.inputTokens).toBe(13);
    expect(withoutChunks(generated)).toEqual(withoutChunks(streamed));
  });

  it('structuredOutput: the JSON answer of doGenerate is parsed and validated into result.object', async () => {
    const { model, methods } = dualModel([{ content: [{ type: 'text', text: '{"city":"Paris","tempC":21}' }] }]);
    const result = await new Agent({ id: 'a', model }).generate('Weather?', { structuredOutput: { schema: z.object({ city: z.string(), tempC: z.number() }) } });
    expect(methods).toEqual(['doGenerate']);
    expect(result.object).toEqual({ city: 'Paris', tempC: 21 });
  });
});
