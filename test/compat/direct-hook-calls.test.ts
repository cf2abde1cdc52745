/**
 * Coming from the reference (issue 23 §10): its unit tests call a built-in's hooks directly, with
 * only the arguments that hook reads — no `abortSignal`, no `messageList`, messages whose `content`
 * is a string — and expect "no change" as the same array. Written from the contract: a built-in
 * called that way behaves as in a run. And `sendSignal` shows in the stream as a transient
 * `data-signal` chunk, as the reference emits one.
 */
import { describe, expect, it, vi } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { APICallError } from '@ai-sdk/provider';
import { Agent } from '../../src/loop/agent.js';
import { MessageList } from '../../src/message-list/index.js';
import type { MastraDBMessage } from '../../src/message-list/types.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { PrefillErrorHandler, RegexFilterProcessor, StreamErrorRetryProcessor, UnicodeNormalizer } from '../../src/processors/index.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';

const stored = (text: string, id = 'm1'): MastraDBMessage => ({ id, role: 'user', createdAt: new Date(), content: { format: 2, parts: [{ type: 'text', text }] } });
const withStringContent = (text: string, id = 'm1') => ({ id, role: 'user', createdAt: new Date(), content: text }) as unknown as MastraDBMessage;
const abort = (reason?: string): never => {
  throw new Error(`abort: ${reason}`);
};

describe('no abortSignal', () => {
  it('StreamErrorRetryProcessor waits its delay and retries (it read .aborted of undefined)', async () => {
    const processor = new StreamErrorRetryProcessor({ delayMs: 5 });
    const list = new MessageList();
    list.add({ role: 'user', content: 'hello' }, 'input');
    const error = new APICallError({ message: 'server failed', url: 'https://api.example/v1', requestBodyValues: {}, statusCode: 500, isRetryable: true });
    const args = { error, messages: list.get.all.db(), messageList: list, stepNumber: 0, steps: [], state: {}, retryCount: 0, abort };
    await expect(processor.processAPIError(args as never)).resolves.toEqual({ retry: true });
    expect(await processor.processAPIError({ ...args, error: new APICallError({ message: 'bad', url: 'u', requestBodyValues: {}, statusCode: 400, isRetryable: false }) } as never)).toBeUndefined();
  });
});

describe('string content', () => {
  it('UnicodeNormalizer normalises it into a stored message', () => {
    const [message] = new UnicodeNormalizer().processInput({ messages: [withStringContent('ｈｅｌｌｏ   world')] } as never);
    expect(message?.content.parts).toEqual([{ type: 'text', text: 'hello world' }]);
  });

  it('RegexFilterProcessor redacts it; an unchanged one comes back as it was given', () => {
    const filter = new RegexFilterProcessor({ presets: ['pii'], strategy: 'redact' });
    const [redacted] = filter.processInput({ messages: [withStringContent('mail jane@example.com')], abort } as never);
    expect(redacted?.content.parts).toEqual([{ type: 'text', text: 'mail [EMAIL]' }]);
    const untouched = [withStringContent('hello')];
    expect(filter.processInput({ messages: untouched, abort } as never)).toBe(untouched);
  });
});

describe('"no change" is the same array', () => {
  it('RegexFilterProcessor and UnicodeNormalizer return the messages they got when nothing matched', () => {
    const messages = [stored('hello there')];
    expect(new RegexFilterProcessor({ presets: ['pii'], strategy: 'redact' }).processInput({ messages, abort } as never)).toBe(messages);
    expect(new UnicodeNormalizer().processInput({ messages } as never)).toBe(messages);
    expect(new RegexFilterProcessor({ presets: ['pii'], phase: 'output' }).processInput({ messages, abort } as never)).toBe(messages);
  });

  it('in a run, a processor returning the same array changes nothing (and so does undefined)', async () => {
    const same: Processor = { id: 'same', processInput: ({ messages }) => messages };
    const nothing: Processor = { id: 'nothing', processInput: () => undefined };
    const model = mockModel({ parts: [...textParts('ok'), finishPart()] });
    await new Agent({ id: 'a', instructions: 'x', model, inputProcessors: [same, nothing] }).generate('hello');
    expect(JSON.stringify(model.calls[0]?.prompt.at(-1))).toContain('hello');
  });
});

describe('PrefillErrorHandler: sendSignal, or an appended user message', () => {
  const prefill = () => new Error('This model does not support assistant message prefill.');
  const listWithReply = () => {
    const list = new MessageList({ threadId: 't' });
    list.add({ role: 'user', content: 'Write a poem' }, 'input');
    list.add({ role: 'assistant', content: 'Roses are' }, 'response');
    return list;
  };

  it('with sendSignal (every run gives one): sends the reference’s signal, adds nothing to the list', () => {
    const list = listWithReply();
    const sendSignal = vi.fn(async (signal: unknown) => signal);
    const result = new PrefillErrorHandler().processAPIError({ error: prefill(), retryCount: 0, messageList: list, sendSignal } as never);
    expect(result).toEqual({ retry: true });
    expect(sendSignal).toHaveBeenCalledWith({
      type: 'reactive',
      tagName: 'system-reminder',
      contents: 'continue',
      attributes: { type: 'anthropic-prefill-processor-retry' },
      metadata: { message: 'Continuing after prefill error' },
    });
    expect(list.get.all.db()).toHaveLength(2);
  });

  it('without sendSignal (a direct call): appends the continuation user turn, marked as the reference marks it', () => {
    const list = listWithReply();
    const result = new PrefillErrorHandler().processAPIError({ error: prefill(), retryCount: 0, messageList: list, messages: list.get.all.db(), stepNumber: 0, steps: [], state: {}, abort } as never);
    expect(result).toEqual({ retry: true });
    const last = list.get.all.db().at(-1)!;
    expect(last.role).toBe('user');
    expect(last.content.parts).toEqual([expect.objectContaining({ type: 'text', text: '<system-reminder>continue</system-reminder>' })]);
    expect(last.content.metadata).toMatchObject({ systemReminder: { type: 'anthropic-prefill-processor-retry' } });
    expect(new PrefillErrorHandler().processAPIError({ error: prefill(), retryCount: 1, messageList: list } as never)).toBeUndefined();
  });
});

describe('a signal is in the stream: a transient data-signal chunk', () => {
  it('PrefillErrorHandler in a run: the retried request ends with the signal turn; the stream shows it; memory would not keep it', async () => {
    const model = mockModel({
      error: ({ callIndex }: { callIndex: number }) => (callIndex === 0 ? new APICallError({ message: 'This model does not support assistant message prefill.', url: 'u', requestBodyValues: {}, statusCode: 400 }) : undefined),
      parts: [...textParts('continued'), finishPart()],
    });
    const agent = new Agent({ id: 'a', instructions: 'x', model, errorProcessors: [new PrefillErrorHandler()] });
    const chunks = await lastValueFrom(agent.stream$([{ role: 'user', content: 'Write a poem' }, { role: 'assistant', content: 'Roses are' }]).pipe(toArray()));
    const signal = chunks.find((chunk) => chunk.type === 'data-signal') as Extract<ChunkType, { type: `data-${string}` }> | undefined;
    expect(signal).toMatchObject({
      type: 'data-signal',
      transient: true,
      data: { type: 'reactive', tagName: 'system-reminder', contents: 'continue', attributes: { type: 'anthropic-prefill-processor-retry' } },
    });
    expect(typeof (signal?.data as { id?: unknown }).id).toBe('string');
    expect(chunks.at(-1)?.type).toBe('finish');
    const last = model.calls[1]?.prompt.at(-1);
    expect(last?.role).toBe('user');
    expect(JSON.stringify(last)).toContain('<system-reminder type=\\"anthropic-prefill-processor-retry\\">continue</system-reminder>');
  });

  it('a user signal is a data-user-message chunk', async () => {
    const sender: Processor = {
      id: 'sender',
      processInputStep: async ({ sendSignal, stepNumber }) => {
        if (stepNumber === 0) await sendSignal({ type: 'user', contents: 'Also: be brief.' });
      },
    };
    const model = mockModel({ parts: [...textParts('ok'), finishPart()] });
    const chunks = await lastValueFrom(new Agent({ id: 'a', instructions: 'x', model, inputProcessors: [sender] }).stream$('hi').pipe(toArray()));
    expect(chunks.filter((chunk) => chunk.type.startsWith('data-'))).toEqual([
      expect.objectContaining({ type: 'data-user-message', transient: true, data: expect.objectContaining({ type: 'user', contents: 'Also: be brief.' }) }),
    ]);
    expect(JSON.stringify(model.calls[0]?.prompt.at(-1))).toContain('Also: be brief.');
  });
});
