import { describe, expect, it } from 'vitest';
import type { UIMessage, UIMessageChunk } from 'ai';
import { NEVER, concat, of, throwError } from 'rxjs';
import { z } from 'zod';
import { fromUIMessages, toUIMessageStream, toUIMessageStreamResponse } from '../../src/ai-sdk/index.js';
import { Agent } from '../../src/loop/agent.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, reasoningParts, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { assemble, readAll, sloppyThenCarefulAgent } from './ui-stream-helpers.js';
import { waitFor } from '../support/wait-for.js';

const blockWord = (word: string): Processor => ({
  id: 'word-guard',
  processOutputStream: ({ part, abort }) => {
    if (part.type === 'text-delta' && part.payload.text.includes(word)) abort(`"${word}" is not allowed`, { metadata: { word } });
    return part;
  },
});

describe('toUIMessageStream → readUIMessageStream', () => {
  it('assembles reasoning, text, tool input/output and reconciled data parts of a two-step run', async () => {
    const model = mockModel({
      parts: ({ callIndex }) =>
        callIndex === 0
          ? [...reasoningParts('Look it up.'), ...toolCallParts('lookupOrder', { orderId: '123' }, { chunkSize: 5 }), finishPart('tool-calls')]
          : [...textParts('Order 123 has shipped.'), finishPart('stop')],
    });
    const agent = new Agent({
      id: 'support',
      model,
      tools: {
        lookupOrder: {
          inputSchema: z.object({ orderId: z.string() }),
          execute: async ({ orderId }: { orderId: string }, { writer }: { writer: { custom: (chunk: ChunkType & { type: `data-${string}` }) => Promise<void> } }) => {
            await writer.custom({ type: 'data-progress', id: 'lookup', data: { percent: 10 } });
            await writer.custom({ type: 'data-progress', id: 'lookup', data: { percent: 100 } });
            await writer.custom({ type: 'data-ping', data: { at: 1 }, transient: true });
            return { orderId, status: 'shipped' };
          },
        },
      },
    });
    const { chunks, message } = await assemble(toUIMessageStream(agent.stream$('Where is order 123?'), { messageId: 'msg-1' }));

    expect(chunks[0]).toEqual({ type: 'start', messageId: 'msg-1' });
    expect(chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'stop' });
    expect(chunks.filter((c) => c.type === 'start-step')).toHaveLength(2);
    expect(chunks.filter((c) => c.type === 'finish-step')).toHaveLength(2);
    expect(chunks.filter((c) => c.type === 'tool-input-delta').length).toBeGreaterThan(1);
    expect(chunks).toContainEqual({ type: 'data-ping', data: { at: 1 }, transient: true });

    expect(message?.id).toBe('msg-1');
    const parts = message?.parts ?? [];
    expect(parts.map((part) => part.type)).toEqual(['step-start', 'reasoning', 'tool-lookupOrder', 'data-progress', 'step-start', 'text']);
    expect(parts[1]).toMatchObject({ type: 'reasoning', text: 'Look it up.', state: 'done' });
    expect(parts[2]).toMatchObject({
      type: 'tool-lookupOrder',
      toolCallId: 'call-lookupOrder',
      state: 'output-available',
      input: { orderId: '123' },
      output: { orderId: '123', status: 'shipped' },
    });
    // Two chunks with the same id became one part holding the latest data; the transient one is not a part.
    expect(parts[3]).toEqual({ type: 'data-progress', id: 'lookup', data: { percent: 100 } });
    expect(parts[5]).toMatchObject({ type: 'text', text: 'Order 123 has shipped.', state: 'done' });
  });

  it('surfaces a tripwire as a typed data-tripwire part plus an error and an other finish', async () => {
    const model = mockModel({ parts: [...textParts('The launch codes are 0000.'), finishPart('stop')] });
    const agent = new Agent({ id: 'a', model, outputProcessors: [blockWord('codes')] });
    const { chunks, message, errors } = await assemble(toUIMessageStream(agent.stream$('codes?')));

    const tail = chunks.slice(-5).map((c) => c.type);
    expect(tail).toEqual(['finish-step', 'reset-step', 'data-tripwire', 'error', 'finish']);
    expect(chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'other' });
    expect(chunks.at(-2)).toEqual({ type: 'error', errorText: '"codes" is not allowed' });
    expect(errors).toEqual(['"codes" is not allowed']);

    const tripwire = message?.parts.find((part) => part.type === 'data-tripwire');
    expect(tripwire).toMatchObject({
      type: 'data-tripwire',
      data: { reason: '"codes" is not allowed', retry: false, metadata: { word: 'codes' }, processorId: 'word-guard' },
    });
    // What streamed before the blocked chunk was closed, then removed with the step (issue 13 §2:
    // a tripwired run's final message holds no text of the blocked reply).
    expect(chunks.some((c) => c.type === 'text-end')).toBe(true);
    expect(message?.parts.find((part) => part.type === 'text')).toBeUndefined();
  });

  it('invalidates a rejected retry attempt: reset-step, a transient retry notice, one step in the message', async () => {
    const agent = sloppyThenCarefulAgent();
    const { chunks, message } = await assemble(toUIMessageStream(agent.stream$('Answer')));

    const resetAt = chunks.findIndex((c) => c.type === 'reset-step');
    expect(resetAt).toBeGreaterThan(0);
    expect(chunks[resetAt + 1]).toEqual({
      type: 'data-rxagent-retry',
      transient: true,
      data: { stepNumber: 0, cause: 'tripwire', reason: 'Be careful.', processorId: 'strict', discardedPartIds: ['text-1'] },
    });
    expect(chunks.filter((c) => c.type === 'start-step')).toHaveLength(1);
    expect(chunks.filter((c) => c.type === 'finish-step')).toHaveLength(1);
    expect(chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'stop' });

    expect(message?.parts.map((part) => part.type)).toEqual(['step-start', 'text']);
    expect(message?.parts[1]).toMatchObject({ type: 'text', text: 'A careful answer.' });
    expect(JSON.stringify(message)).not.toContain('sloppy');
  });

  it('masks errors by default and uses onError when given', async () => {
    const failing = () => new Agent({ id: 'a', model: mockModel({ error: new Error('secret upstream detail') }) });
    const masked = await readAll(toUIMessageStream(failing().stream$('hi')));
    expect(masked.slice(-2)).toEqual([
      { type: 'error', errorText: 'An error occurred.' },
      { type: 'finish', finishReason: 'error' },
    ]);
    const shown = await readAll(toUIMessageStream(failing().stream$('hi'), { onError: (error) => `failed: ${(error as Error).message}` }));
    expect(shown.at(-2)).toEqual({ type: 'error', errorText: 'failed: secret upstream detail' });
  });

  it('treats an error notification carrying a TripWire like the tripwire chunk', async () => {
    const source$ = concat(of<ChunkType[]>(chunk.start(), chunk.textStart(), chunk.textDelta('Hi')), throwError(() => new TripWire('nope', {}, 'guard')));
    const { chunks, message } = await assemble(toUIMessageStream(source$, { tripwireError: false }));
    expect(chunks.map((c) => c.type)).toEqual(['start', 'text-start', 'text-delta', 'text-end', 'reset-step', 'data-tripwire', 'finish']);
    expect(message?.parts.at(-1)).toMatchObject({ type: 'data-tripwire', data: { reason: 'nope', processorId: 'guard', retry: false, metadata: null } });
  });

  it('cancelling the stream unsubscribes the run and aborts the provider call', async () => {
    const model = mockModel({ stream: () => concat(of(...textParts('Hello', { id: 't' }).slice(0, 2)), NEVER) });
    const agent = new Agent({ id: 'a', model });
    const reader = toUIMessageStream(agent.stream$('hi')).getReader();
    const seen: string[] = [];
    while (!seen.includes('text-delta')) {
      const { value } = await reader.read();
      if (value) seen.push(value.type);
    }
    expect(model.abortSignals[0]?.aborted).toBe(false);
    await reader.cancel();
    expect(model.abortSignals[0]?.aborted).toBe(true);
  });
});

describe('toUIMessageStreamResponse', () => {
  it('is an SSE response with the UI message stream header and a [DONE] event', async () => {
    const agent = new Agent({ id: 'a', model: mockModel({ parts: [...textParts('Hi there'), finishPart('stop')] }) });
    const response = toUIMessageStreamResponse(agent.stream$('hi'), { status: 201, headers: { 'x-demo': '1' } });
    expect(response.status).toBe(201);
    expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('x-demo')).toBe('1');
    const body = await response.text();
    const events = body.split('\n\n').filter((event) => event.length > 0);
    expect(events.every((event) => event.startsWith('data: '))).toBe(true);
    expect(events.at(-1)).toBe('data: [DONE]');
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event.slice('data: '.length)) as UIMessageChunk);
    expect(chunks.map((c) => c.type)).toEqual(['start', 'start-step', 'text-start', 'text-delta', 'text-delta', 'text-end', 'finish-step', 'finish']);
  });

  it('cancelling the response body cancels the run', async () => {
    const model = mockModel({ stream: () => concat(of(...textParts('Hello', { id: 't' }).slice(0, 2)), NEVER) });
    const response = toUIMessageStreamResponse(new Agent({ id: 'a', model }).stream$('hi'));
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    while (!text.includes('text-delta')) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    await waitFor(() => model.abortSignals[0]?.aborted === true, 'the run to be cancelled');
    expect(model.abortSignals[0]?.aborted).toBe(true);
  });
});

describe('fromUIMessages', () => {
  const history: UIMessage[] = [
    { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'What are the launch codes?' }] },
    {
      id: 'a1',
      role: 'assistant',
      parts: [
        { type: 'step-start' },
        { type: 'text', text: 'The launch', state: 'done' },
        { type: 'data-tripwire', id: 'tripwire-r', data: { reason: 'blocked', retry: false, metadata: null, processorId: 'guard' } },
      ],
    },
    { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'Fine. Hello then.' }] },
  ];

  it('drops tripwired replies and rxagent-only parts; the rest feeds an agent run', async () => {
    const cleaned = fromUIMessages(history);
    expect(cleaned.map((message) => message.id)).toEqual(['u1', 'u2']);
    const kept = fromUIMessages(history, { keepTripwiredMessages: true });
    expect(kept[1]?.parts.map((part) => part.type)).toEqual(['step-start', 'text']);

    const model = mockModel({ parts: [...textParts('Hello!'), finishPart('stop')] });
    const result = await new Agent({ id: 'a', model }).generate(cleaned);
    expect(result.text).toBe('Hello!');
    const prompt = JSON.stringify(model.calls[0]?.prompt);
    expect(prompt).toContain('Fine. Hello then.');
    expect(prompt).not.toContain('The launch');
  });

  it('rejects a non-array (client input: an InvalidMessageError at the root)', () => {
    expect(() => fromUIMessages('hi' as unknown as UIMessage[])).toThrow(/^Invalid message at \(root\): messages must be an array/);
  });
});
