import { describe, expect, it, vi } from 'vitest';
import { lastValueFrom, of } from 'rxjs';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { MastraDBMessage } from '../../src/message-list/types.js';
import { processInputStep } from '../../src/operators/process-input-step.js';
import { createRunContext } from '../../src/operators/run-context.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import { TokenLimiterProcessor } from '../../src/processors/token-limiter.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { Agent } from '../../src/loop/agent.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { runProcessor } from '../../src/testing/run-processor.js';
import { contextWith, dbMessage, listWith, runOutputStream, streamedText, textBlock, textMessage } from './support/harness.js';
import { expectOptionError } from './support/option-error.js';

/** One token per word, so budgets are easy to read (each message also costs 4 tokens of framing). */
const words = (text: string): number => text.split(/\s+/).filter(Boolean).length;
const model: LanguageModelV4 = mockModel();

function toolTurn(id: string, toolCallId: string, toolName = 'lookup'): MastraDBMessage {
  return dbMessage(id, 'assistant', [
    { type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId, toolName, args: { q: 'x' }, result: { answer: 'forty two' } } },
  ]);
}

describe('TokenLimiterProcessor: input', () => {
  it('has the reference id and validates the limit', () => {
    expect(new TokenLimiterProcessor({ limit: 10 }).id).toBe('token-limiter');
    expectOptionError(() => new TokenLimiterProcessor({ limit: 0 }), 'token-limiter', 'limit');
  });

  it('leaves a prompt within the budget alone', async () => {
    const list = listWith([textMessage('u1', 'user', 'hello there')]);
    const ctx = contextWith(list);
    await lastValueFrom(of({ stepNumber: 0, model }).pipe(processInputStep([new TokenLimiterProcessor({ limit: 100, tokenCounter: words })], ctx)));
    expect(list.get.all.db().map((message) => message.id)).toEqual(['u1']);
  });

  it('drops the oldest messages first and keeps the latest user message and the current turn', async () => {
    const memory = [
      textMessage('m1', 'user', 'one two three four five six'),
      textMessage('m2', 'assistant', 'one two three four five six'),
      textMessage('m3', 'user', 'one two three four five six'),
      textMessage('m4', 'assistant', 'one two three four five six'),
    ];
    const list = listWith([textMessage('u1', 'user', 'latest question here')], { memory, system: ['be brief'] });
    list.add(toolTurn('a1', 'call-now'), 'response');
    const ctx = contextWith(list);
    // system 4+2, each memory message 4+6, u1 4+3, a1 (tool) 4+~8: 6 + 40 + 7 + a1. Budget 40 → drop m1..m3.
    const limiter = new TokenLimiterProcessor({ limit: 40, tokenCounter: words });
    await lastValueFrom(of({ stepNumber: 1, model }).pipe(processInputStep([limiter], ctx)));
    expect(list.get.all.db().map((message) => message.id)).toEqual(['m4', 'u1', 'a1']);
  });

  it('never separates a tool call from its result (messages sharing a tool call id go together)', async () => {
    const call = dbMessage('call', 'assistant', [
      { type: 'tool-invocation', toolInvocation: { state: 'call', toolCallId: 'c1', toolName: 'lookup', args: { q: 'a' } } },
    ]);
    const result = dbMessage('result', 'tool', [
      { type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: 'c1', toolName: 'lookup', args: { q: 'a' }, result: 'r' } },
    ]);
    const messages = [textMessage('old', 'user', 'a b'), call, textMessage('between', 'assistant', 'c d'), result, textMessage('latest', 'user', 'e f')];
    // Sizes: old 6, call 6, between 6, result 7, latest 6 = 31 tokens.
    const limiter = new TokenLimiterProcessor({ limit: 20, tokenCounter: words });
    const { result: stepResult } = await runProcessor(limiter, 'processInputStep', { messages, systemMessages: [], model });
    const kept = (stepResult as { messages?: MastraDBMessage[] }).messages?.map((message) => message.id);
    // Dropping "old" (→ 25) is not enough; the next oldest is the call, which takes its result with it (→ 12).
    expect(kept).toEqual(['between', 'latest']);
    expect(kept).not.toContain('result');
  });

  it('a tool call whose result is in the current turn is kept with it', async () => {
    const call = dbMessage('call', 'assistant', [
      { type: 'tool-invocation', toolInvocation: { state: 'call', toolCallId: 'c9', toolName: 'lookup', args: {} } },
    ]);
    const result = dbMessage('result', 'tool', [
      { type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: 'c9', toolName: 'lookup', args: {}, result: 'r' } },
    ]);
    const messages = [textMessage('old', 'user', 'a b c d e f g h'), call, textMessage('latest', 'user', 'q'), result];
    const limiter = new TokenLimiterProcessor({ limit: 10, tokenCounter: words });
    const { result: stepResult } = await runProcessor(limiter, 'processInputStep', { messages, systemMessages: [], model });
    expect((stepResult as { messages?: MastraDBMessage[] }).messages?.map((message) => message.id)).toEqual(['call', 'latest', 'result']);
  });

  it('never empties the input: an oversized latest message is sent as it is and reported', async () => {
    const onViolation = vi.fn();
    const list = listWith([textMessage('u1', 'user', 'this single message is far too long for the budget')]);
    const ctx = contextWith(list);
    const limiter = new TokenLimiterProcessor({ limit: 3, tokenCounter: words, onViolation });
    await lastValueFrom(of({ stepNumber: 0, model }).pipe(processInputStep([limiter], ctx)));
    expect(list.get.all.db().map((message) => message.id)).toEqual(['u1']);
    expect(onViolation).toHaveBeenCalledWith(expect.objectContaining({ processorId: 'token-limiter', detail: expect.objectContaining({ phase: 'input', limit: 3 }) }));
  });

  it('counts with o200k_base by default', async () => {
    const limiter = await new TokenLimiterProcessor({ limit: 100 }).ready();
    const text = 'Tokenizers split text into pieces.';
    expect(limiter.countMessage(textMessage('x', 'user', text))).toBe(4 + encode(text).length);
  });
});

describe('TokenLimiterProcessor: output', () => {
  it('truncate (cumulative): cuts the delta at the budget, drops later text, keeps the stream well-formed, reports once', async () => {
    const onViolation = vi.fn();
    const limiter = new TokenLimiterProcessor({ limit: 1000, outputLimit: 5, tokenCounter: words, onViolation });
    const output = await runOutputStream([limiter], [...textBlock(['one two ', 'three four ', 'five six seven', ' eight']), chunk.finish()]);
    // The longest prefix within 5 words (a custom counter has no token boundaries to cut at).
    expect(streamedText(output)).toBe('one two three four five ');
    expect(output.map((part) => part.type)).toEqual(['text-start', 'text-delta', 'text-delta', 'text-delta', 'text-end', 'finish']);
    expect(onViolation).toHaveBeenCalledTimes(1);
  });

  it('truncates exactly at a token boundary with the default tokenizer', async () => {
    const limiter = new TokenLimiterProcessor({ limit: 1000, outputLimit: 3 });
    const output = await runOutputStream([limiter], textBlock(['Hello brave new world of tokens']));
    expect(encode(streamedText(output)).length).toBe(3);
    expect('Hello brave new world of tokens'.startsWith(streamedText(output))).toBe(true);
  });

  it('part mode limits each delta on its own', async () => {
    const limiter = new TokenLimiterProcessor({ limit: 2, countMode: 'part', tokenCounter: words });
    const output = await runOutputStream([limiter], textBlock(['a b c', ' d', ' e f g']));
    expect(output.filter((part) => part.type === 'text-delta').map((part) => (part.type === 'text-delta' ? part.payload.text : ''))).toEqual([
      'a b ',
      ' d',
      ' e f ',
    ]);
  });

  it('abort strategy ends the run with a TripWire', async () => {
    const limiter = new TokenLimiterProcessor({ limit: 3, strategy: 'abort', tokenCounter: words });
    const error = await runOutputStream([limiter], textBlock(['a b', ' c d'])).catch((caught: unknown) => caught);
    expect(TripWire.isInstance(error)).toBe(true);
    expect((error as TripWire).metadata).toEqual({ limit: 3, tokens: 4, countMode: 'cumulative' });
  });

  it('cumulative: the tokens of a rejected attempt are taken back, so the retried answer gets the whole budget (conformance kit, retried mode)', async () => {
    const answer = mockModel({ parts: [...textParts('aaa bbb ccc ddd eee', { chunkSize: 4 }), finishPart('stop')] });
    const rejectFirst: Processor = {
      id: 'reject-first',
      processOutputStep: ({ retryCount, abort }) => {
        if (retryCount === 0) abort('Answer again.', { retry: true });
      },
    };
    const limiter = new TokenLimiterProcessor({ limit: 1000, outputLimit: 3, tokenCounter: words });
    const agent = new Agent({ id: 'limited', model: answer, outputProcessors: [limiter, rejectFirst], maxProcessorRetries: 1 });
    const result = await agent.generate('Hi');
    expect(answer.calls).toHaveLength(2);
    expect(result.text).toBe('aaa bbb ccc ');
  });

  it('counts per run: a new run context starts from zero', async () => {
    const limiter = new TokenLimiterProcessor({ limit: 2, tokenCounter: words });
    expect(streamedText(await runOutputStream([limiter], textBlock(['a b c']), createRunContext()))).toBe('a b ');
    expect(streamedText(await runOutputStream([limiter], textBlock(['x y z']), createRunContext()))).toBe('x y ');
  });
});
