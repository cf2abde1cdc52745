/** DESIGN §5 through both `generate()` and `stream$()`. */
import { describe, expect, it } from 'vitest';
import { NEVER, Subject, concat, from, lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { createOpenAI } from '@ai-sdk/openai';
import { Agent } from '../../src/loop/agent.js';
import { ModelResolutionError } from '../../src/contract/errors/model-resolution-error.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { RequestContext } from '../../src/contract/request-context.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { mockModelV2, mockModelV3 } from '../../src/testing/mock-model-legacy.js';
import { waitFor } from '../support/wait-for.js';

const collect = (agent: Agent, input: string, options?: Parameters<Agent['stream$']>[1]) => lastValueFrom(agent.stream$(input, options).pipe(toArray()));
const textOf = (chunks: ChunkType[]) => chunks.map((chunk) => (chunk.type === 'text-delta' ? chunk.payload.text : '')).join('');
const promptText = (prompt: unknown) => JSON.stringify(prompt);

function toolThenText(text = 'done') {
  return ({ callIndex }: { callIndex: number }): LanguageModelV4StreamPart[] =>
    callIndex === 0
      ? [...toolCallParts('lookup', { id: 7 }), finishPart('tool-calls')]
      : [...textParts(text), finishPart('stop')];
}

describe('system messages', () => {
  it('reset at each step to what they were after processInput; processInputStep edits last one step', async () => {
    const seen: string[][] = [];
    const processor: Processor = {
      id: 'sys',
      processInput: ({ systemMessages }) => ({ messages: [], systemMessages: [...systemMessages, { role: 'system', content: 'from input' }] }),
      processInputStep: ({ stepNumber, systemMessages }) => {
        seen.push(systemMessages.map((message) => message.content));
        return { systemMessages: [...systemMessages, { role: 'system', content: `step ${stepNumber}` }] };
      },
    };
    const model = mockModel({ parts: toolThenText() });
    const agent = new Agent({ id: 'a', instructions: 'base', model, tools: { lookup: { execute: async () => 'ok' } }, inputProcessors: [processor] });
    await agent.generate('hi');
    expect(seen).toEqual([
      ['base', 'from input'],
      ['base', 'from input'],
    ]);
    expect(promptText(model.calls[1]?.prompt)).toContain('step 1');
    expect(promptText(model.calls[1]?.prompt)).not.toContain('step 0');
  });
});

describe('tripwires', () => {
  it('an abort in processInput ends the run before the model is called', async () => {
    const model = mockModel({ parts: [...textParts('never'), finishPart()] });
    const agent = new Agent({ id: 'a', model, inputProcessors: [{ id: 'block', processInput: ({ abort }) => abort('blocked input') }] });
    const chunks = await collect(agent, 'x');
    expect(chunks.map((chunk) => chunk.type)).toEqual(['start', 'tripwire']);
    const result = await agent.generate('x');
    expect(model.calls).toHaveLength(0);
    expect(result.tripwire).toEqual({ reason: 'blocked input', retry: false, processorId: 'block' });
    expect(result.finishReason).toBe('other');
  });

  it('an abort in processOutputResult blocks the reply: text is empty, nothing of it stays in the list', async () => {
    const model = mockModel({ parts: [...textParts('the reply'), finishPart()] });
    let listAfter: string[] = [];
    const blocker: Processor = {
      id: 'final-check',
      processOutputResult: ({ abort, messageList }) => {
        listAfter = messageList.get.all.db().map((message) => message.role);
        abort('not allowed');
      },
    };
    const agent = new Agent({ id: 'a', model, outputProcessors: [blocker] });
    const chunks = await collect(agent, 'x');
    expect(chunks.at(-1)?.type).toBe('tripwire');
    expect(listAfter).toEqual(['user', 'assistant']);
    const result = await agent.generate('x');
    expect(result.text).toBe('');
    expect(result.finishReason).toBe('other');
  });

  it('closes an open text part and step before the tripwire chunk', async () => {
    const model = mockModel({ parts: [...textParts('abcdef', { chunkSize: 2 }), finishPart()] });
    const guard: Processor = { id: 'g', processOutputStream: ({ part, abort }) => (part.type === 'text-delta' && part.payload.text === 'cd' ? abort() : part) };
    const chunks = await collect(new Agent({ id: 'a', model, outputProcessors: [guard] }), 'x');
    const types = chunks.map((chunk) => chunk.type);
    expect(types.slice(-3)).toEqual(['text-end', 'step-finish', 'tripwire']);
    expect(chunks.at(-1)).toMatchObject({ payload: { reason: 'Stream part blocked by g', processorId: 'g' } });
  });
});

describe('processor errors fail closed', () => {
  it('a throwing processOutputStream ends the run with an error chunk carrying a ProcessorError; the chunk never passes', async () => {
    const model = mockModel({ parts: [...textParts('abc', { chunkSize: 1 }), finishPart()] });
    const buggy: Processor = {
      id: 'buggy',
      processOutputStream: ({ part }) => {
        if (part.type === 'text-delta' && part.payload.text === 'b') throw new Error('boom');
        return part;
      },
    };
    const agent = new Agent({ id: 'a', model, outputProcessors: [buggy] });
    const chunks = await collect(agent, 'x');
    expect(textOf(chunks)).toBe('a');
    const last = chunks.at(-1);
    expect(last?.type).toBe('error');
    const error = last?.type === 'error' ? last.payload.error : undefined;
    expect(ProcessorError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ processorId: 'buggy', hook: 'processOutputStream' });
    await expect(agent.generate('x')).rejects.toSatisfy((thrown: unknown) => ProcessorError.isInstance(thrown));
  });
});

describe('tools', () => {
  it('invalid input becomes a tool-error chunk and an error result the model sees', async () => {
    const model = mockModel({ parts: toolThenText('sorry') });
    let executed = false;
    const agent = new Agent({
      id: 'a',
      model,
      tools: {
        lookup: {
          inputSchema: z.object({ id: z.string() }),
          execute: async () => {
            executed = true;
            return 'x';
          },
        },
      },
    });
    const chunks = await collect(agent, 'x');
    const toolError = chunks.find((chunk) => chunk.type === 'tool-error');
    expect(toolError?.type === 'tool-error' && String(toolError.payload.error)).toContain('Invalid input for tool "lookup"');
    expect(executed).toBe(false);
    expect(promptText(model.calls[1]?.prompt)).toContain('error-text');
  });

  it('runs the calls of one step concurrently (bounded) and emits results in call order', async () => {
    let running = 0;
    let peak = 0;
    const delays = [30, 5, 15, 1];
    const calls = delays.map((_, index) => toolCallParts('slow', { index }, { toolCallId: `c${index}` })).flat();
    const model = mockModel({ parts: ({ callIndex }) => (callIndex === 0 ? [...calls, finishPart('tool-calls')] : [...textParts('ok'), finishPart()]) });
    const agent = new Agent({
      id: 'a',
      model,
      toolConcurrency: 2,
      tools: {
        slow: {
          inputSchema: z.object({ index: z.number() }),
          execute: async ({ index }: { index: number }) => {
            running++;
            peak = Math.max(peak, running);
            await new Promise((resolve) => setTimeout(resolve, delays[index]));
            running--;
            return index;
          },
        },
      },
    });
    const chunks = await collect(agent, 'go');
    const results = chunks.flatMap((chunk) => (chunk.type === 'tool-result' ? [chunk.payload.result] : []));
    expect(results).toEqual([0, 1, 2, 3]);
    expect(peak).toBe(2);
  });

  it('a tool writer puts data chunks into the stream; processToolResult rewrites what the stream and the next prompt carry', async () => {
    const model = mockModel({ parts: toolThenText() });
    const redact: Processor = {
      id: 'redact',
      processToolResult: ({ toolCallId, toolName, args, result, messageList }) => {
        messageList.updateToolInvocation({
          type: 'tool-invocation',
          toolInvocation: { state: 'result', toolCallId, toolName, args, result: { ...(result as object), ssn: '[REDACTED]' } },
        });
      },
    };
    const agent = new Agent({
      id: 'a',
      model,
      outputProcessors: [redact],
      tools: {
        lookup: {
          execute: async (_input: unknown, { writer }) => {
            await writer.custom({ type: 'data-progress', data: { pct: 50 } });
            return { name: 'Ada', ssn: '123-45-6789' };
          },
        },
      },
    });
    const chunks = await collect(agent, 'x');
    expect(chunks.some((chunk) => chunk.type === 'data-progress')).toBe(true);
    const toolResult = chunks.find((chunk) => chunk.type === 'tool-result');
    expect(toolResult?.type === 'tool-result' && toolResult.payload.result).toEqual({ name: 'Ada', ssn: '[REDACTED]' });
    expect(promptText(model.calls[1]?.prompt)).not.toContain('123-45-6789');
  });
});

describe('cancellation', () => {
  it('unsubscribing mid-stream aborts the provider signal and the running tools', async () => {
    const parts$ = new Subject<LanguageModelV4StreamPart>();
    const model = mockModel({ stream: parts$ });
    const agent = new Agent({ id: 'a', model });
    const received: ChunkType[] = [];
    const subscription = agent.stream$('x').subscribe((chunk) => received.push(chunk));
    await waitFor(() => parts$.observed, 'the model stream to be read');
    parts$.next({ type: 'text-start', id: 't' });
    parts$.next({ type: 'text-delta', id: 't', delta: 'hel' });
    expect(textOf(received)).toBe('hel');
    const signal = model.abortSignals[0];
    expect(signal?.aborted).toBe(false);
    subscription.unsubscribe();
    expect(signal?.aborted).toBe(true);
  });

  it('aborts tools on unsubscribe', async () => {
    let toolSignal: AbortSignal | undefined;
    const model = mockModel({ parts: toolThenText() });
    const agent = new Agent({
      id: 'a',
      model,
      tools: {
        lookup: {
          execute: (_input: unknown, { abortSignal }) => {
            toolSignal = abortSignal;
            return new Promise(() => undefined);
          },
        },
      },
    });
    const subscription = agent.stream$('x').subscribe();
    await waitFor(() => toolSignal !== undefined, 'the tool to start');
    expect(toolSignal?.aborted).toBe(false);
    subscription.unsubscribe();
    expect(toolSignal?.aborted).toBe(true);
  });

  it("the call's abortSignal ends the run with an abort chunk", async () => {
    const model = mockModel({ stream: concat(from(textParts('partial')), NEVER) });
    const controller = new AbortController();
    const agent = new Agent({ id: 'a', model });
    const chunks$ = agent.stream$('x', { abortSignal: controller.signal });
    const done = lastValueFrom(chunks$.pipe(toArray()));
    setTimeout(() => controller.abort('user left'), 10);
    const chunks = await done;
    expect(chunks.at(-1)).toMatchObject({ type: 'abort', payload: { reason: 'user left' } });
    expect(chunks.map((chunk) => chunk.type).filter((type) => type === 'abort')).toHaveLength(1);
    expect(model.abortSignals[0]?.aborted).toBe(true);
  });
});

describe('configuration', () => {
  it('resolves function-form processor arrays with the call requestContext; per-call arrays replace them', async () => {
    const seen: string[] = [];
    const tagger = (tag: string): Processor => ({ id: `tag-${tag}`, processInput: () => void seen.push(tag) });
    const agent = new Agent({
      id: 'a',
      model: mockModel({ parts: [...textParts('x'), finishPart()] }),
      inputProcessors: ({ requestContext }) => [tagger(String(requestContext.get('tier')))],
    });
    await agent.generate('x', { requestContext: new RequestContext({ tier: 'pro' }) });
    await agent.generate('x', { inputProcessors: [tagger('override')] });
    expect(seen).toEqual(['pro', 'override']);
  });

  it('V2, V3 and V4 models give the same run', async () => {
    const parts = [...textParts('same answer', { chunkSize: 4 }), finishPart('stop', { inputTokens: 3, outputTokens: 2 })];
    const runs = await Promise.all(
      [mockModel({ parts }), mockModelV3({ parts }), mockModelV2({ parts })].map(async (model) => {
        const chunks = await collect(new Agent({ id: 'a', model, generateId: (() => { let n = 0; return () => `id${n++}`; })() }), 'x', { runId: 'r' });
        return chunks.map((chunk) => ({ type: chunk.type, text: chunk.type === 'text-delta' ? chunk.payload.text : undefined }));
      }),
    );
    expect(runs[1]).toEqual(runs[0]);
    expect(runs[2]).toEqual(runs[0]);
    expect(runs[0]?.map((chunk) => chunk.type)).toContain('text-delta');
  });

  it('generate() and stream$() agree on text, finish reason and tripwire', async () => {
    const model = mockModel({ parts: [...textParts('agreed text'), finishPart('length')] });
    const agent = new Agent({ id: 'a', model });
    const chunks = await collect(agent, 'x');
    const result = await agent.generate('x');
    expect(result.text).toBe(textOf(chunks));
    const finish = chunks.at(-1);
    expect(finish?.type === 'finish' && finish.payload.stepResult.reason).toBe(result.finishReason);
    expect(result.finishReason).toBe('length');
  });

  it('stream() exposes fullStream, textStream and result promises', async () => {
    const agent = new Agent({ id: 'a', model: mockModel({ parts: [...textParts('streamed'), finishPart()] }) });
    const output = await agent.stream('x');
    const pieces: string[] = [];
    for await (const piece of output.textStream) pieces.push(piece);
    expect(pieces.join('')).toBe('streamed');
    expect(await output.text).toBe('streamed');
    expect(await output.finishReason).toBe('stop');
    expect(await output.tripwire).toBeUndefined();
  });
});

describe('models and instructions', () => {
  it("resolves 'provider/model' ids through the agent's providers; an unknown id is a ModelResolutionError", async () => {
    const model = mockModel({ parts: [...textParts('via registry'), finishPart()] });
    const agent = new Agent({ id: 'a', model: 'local/tiny', providers: { local: () => model } });
    expect((await agent.generate('x')).text).toBe('via registry');
    const unknown = new Agent({ id: 'a', model: 'nowhere/tiny', providers: { local: () => model } });
    const chunks = await collect(unknown, 'x');
    expect(chunks.map((chunk) => chunk.type)).toEqual(['start', 'error']);
    const error = await unknown.generate('x').catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ name: 'ModelResolutionError' });
    expect(String((error as Error).message)).toContain('local');
  });

  it("a provider given as the model (openai for openai('gpt-4o')) is a ModelResolutionError when the agent is built", () => {
    const openai = createOpenAI({ apiKey: 'test' });
    let error: unknown;
    try {
      new Agent({ id: 'a', instructions: 'x', model: openai as never });
    } catch (thrown) {
      error = thrown;
    }
    expect(ModelResolutionError.isInstance(error)).toBe(true);
    const message = (error as Error).message;
    expect(message).toContain('new Agent({ id: "a" }): config.model: A function (provider) with keys specificationVersion, languageModel');
    expect(message).toContain("openai('gpt-4o'), not openai");
    expect(() => new Agent({ id: 'a', model: { specificationVersion: 'v9', provider: 'p', modelId: 'm', doStream: () => undefined } as never })).toThrow(
      /config\.model: An object \(specificationVersion 'v9', provider 'p', modelId 'm'\) implements language model specification 'v9'/,
    );
  });

  it('a function of { requestContext } stays a dynamic model; one that returns a provider fails the run with a ModelResolutionError', async () => {
    const openai = createOpenAI({ apiKey: 'test' });
    const model = mockModel({ parts: [...textParts('dynamic'), finishPart()] });
    expect((await new Agent({ id: 'a', model: () => model }).generate('x')).text).toBe('dynamic');
    const error = await new Agent({ id: 'a', model: () => openai as never }).generate('x').catch((thrown: unknown) => thrown);
    expect(ModelResolutionError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('is a provider, not a language model');
  });

  it('per-call instructions replace the agent instructions', async () => {
    const model = mockModel({ parts: [...textParts('ok'), finishPart()] });
    const agent = new Agent({ id: 'a', model, instructions: 'agent default' });
    await agent.generate('x', { instructions: 'call specific' });
    expect(promptText(model.calls[0]?.prompt)).toContain('call specific');
    expect(promptText(model.calls[0]?.prompt)).not.toContain('agent default');
  });
});
