/**
 * Boundaries are boundaries (issue 24 §7): the hold-back does not join texts across a step, across
 * two text blocks, or across a rejected attempt — an e-mail address ending one plus "Done!"
 * starting the next is an address and a word, in the stream and in memory. A secret split across
 * a boundary is still caught (test/security/split-secrets.test.ts), and so is a secret split across
 * the deltas of one block while another block interleaves with it.
 */
import { lastValueFrom, of, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { Agent } from '../../src/loop/agent.js';
import { Memory } from '../../src/memory/memory.js';
import { processInput } from '../../src/operators/process-input.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { contextWith, listWith, runOutputStream, streamedText, textMessage, textOf } from '../processors/support/harness.js';

const pii = () => new RegexFilterProcessor({ presets: ['pii'], strategy: 'redact' });

/** Runs an agent with memory; returns the streamed text per text block and the stored assistant text parts. */
async function runAgent(model: ReturnType<typeof mockModel>, processors: Processor[], options: { retries?: number } = {}) {
  const storage = new InMemoryStorage();
  const agent = new Agent({
    id: 'a',
    model,
    memory: new Memory({ storage }),
    tools: { noop: { description: 'does nothing', execute: () => 'ok' } },
    outputProcessors: processors,
    ...(options.retries === undefined ? {} : { maxProcessorRetries: options.retries }),
  });
  const chunks = await lastValueFrom(agent.stream$('x', { memory: { thread: 't', resource: 'u' } }).pipe(toArray()));
  const stored = (await storage.getMessages({ threadId: 't' }))
    .filter((message) => message.role === 'assistant')
    .flatMap((message) => message.content.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])));
  return { chunks, text: streamedText(chunks), stored };
}

/** Rejects the first attempt of the first step (a retry with feedback). */
const rejectFirstDraft: Processor = {
  id: 'reject-first-draft',
  processOutputStep: ({ abort, retryCount }) => {
    if (retryCount === 0) abort('try again', { retry: true });
    return undefined as never;
  },
};

describe('an e-mail address at the end of one text and "Done!" at the start of the next', () => {
  it('two text blocks of one step: "Done" is not redacted, in the stream or in memory', async () => {
    const model = mockModel({ parts: [...textParts('mail ada@example.com', { id: 'b1' }), ...textParts('Done!', { id: 'b2' }), finishPart()] });
    const { text, stored } = await runAgent(model, [pii()]);
    expect(text).toBe('mail [EMAIL]Done!');
    expect(stored).toEqual(['mail [EMAIL]', 'Done!']);
  });

  it('two steps (a tool call between): "Done" is not redacted, in the stream or in memory', async () => {
    const model = mockModel({
      parts: ({ callIndex }) =>
        callIndex === 0
          ? [...textParts('mail ada@example.com', { id: 'b1' }), ...toolCallParts('noop', {}), finishPart('tool-calls')]
          : [...textParts('Done!', { id: 'b1' }), finishPart()],
    });
    const { text, stored } = await runAgent(model, [pii()]);
    expect(text).toBe('mail [EMAIL]Done!');
    expect(stored).toEqual(['mail [EMAIL]', 'Done!']);
  });

  it('a rejected attempt leaves no context: the retried attempt streams and is stored as if alone', async () => {
    for (const draft of ['mail ada@example.com', 'mail ada@', 'mail ada@exam']) {
      const model = mockModel({
        parts: ({ callIndex }) => (callIndex === 0 ? [...textParts(draft, { id: 'b1' }), finishPart()] : [...textParts('example.com is our domain. Done!', { id: 'b1' }), finishPart()]),
      });
      const { chunks, stored } = await runAgent(model, [pii(), rejectFirstDraft], { retries: 1 });
      const accepted = chunks.slice(chunks.findLastIndex((part) => part.type === 'step-start'));
      expect(streamedText(accepted), draft).toBe('example.com is our domain. Done!');
      expect(stored, draft).toEqual(['example.com is our domain. Done!']);
    }
  });

  it('the stored reply alone (no stream hook for text) keeps the boundary too', async () => {
    const model = mockModel({ parts: [...textParts('mail ada@example.com', { id: 'b1' }), ...textParts('Done!', { id: 'b2' }), finishPart()] });
    const { stored } = await runAgent(model, [new RegexFilterProcessor({ presets: ['pii'], strategy: 'redact', channels: ['reasoning'] })]);
    expect(stored).toEqual(['mail [EMAIL]', 'Done!']);
  });

  it('input messages: the last word of one message and the first of the next are not joined', async () => {
    const list = listWith([textMessage('m1', 'user', 'write to ada@example.com'), textMessage('m2', 'user', 'Done, thanks')]);
    const processed = await lastValueFrom(of(list).pipe(processInput([pii()], contextWith(list))));
    expect(processed.get.input.db().map(textOf)).toEqual(['write to [EMAIL]', 'Done, thanks']);
  });

  it('other shapes that a join would extend: an IPv4 address before digits, a key before letters', async () => {
    const secrets = new RegexFilterProcessor({ presets: ['pii', 'secrets'], strategy: 'redact' });
    const cases: Array<[string, string, string]> = [
      ['host 10.0.0.1', '5 replicas', 'host [IP_ADDRESS]5 replicas'],
      ['key AKIAQWERTYUIOPASDFGH', 'XYZ is next', 'key [AWS_KEY]XYZ is next'],
      ['mail ada@example.co', 'mpany policy', 'mail [EMAIL]mpany policy'],
    ];
    for (const [first, second, expected] of cases) {
      const output = await runOutputStream([secrets], [...blockOf(first, 'b1'), ...blockOf(second, 'b2'), chunk.finish()]);
      expect(streamedText(output), first).toBe(expected);
    }
  });
});

function blockOf(text: string, id: string): ChunkType[] {
  return [chunk.textStart(id), chunk.textDelta(text, id), chunk.textEnd(id)];
}

describe('interleaved text blocks (two ids open at once)', () => {
  it('a secret split across the deltas of one block is caught whole; the other block is left alone', async () => {
    const output = await runOutputStream(
      [new RegexFilterProcessor({ presets: ['secrets'], strategy: 'redact' })],
      [
        chunk.textStart('b1'),
        chunk.textStart('b2'),
        chunk.textDelta('key AKIAQWER', 'b1'),
        chunk.textDelta('hello ', 'b2'),
        chunk.textDelta('TYUIOPASDFGH done', 'b1'),
        chunk.textDelta('world', 'b2'),
        chunk.textEnd('b1'),
        chunk.textEnd('b2'),
        chunk.finish(),
      ],
    );
    const perBlock = (id: string) => output.map((part) => (part.type === 'text-delta' && part.payload.id === id ? part.payload.text : '')).join('');
    expect(perBlock('b1')).toBe('key [AWS_KEY] done');
    expect(perBlock('b2')).toBe('hello world');
    expect(JSON.stringify(output)).not.toMatch(/AKIAQWER|TYUIOPASDFGH/);
  });

  it('deltas of two blocks are not read as one text (no match made of both)', async () => {
    const output = await runOutputStream(
      [pii()],
      [chunk.textStart('b1'), chunk.textStart('b2'), chunk.textDelta('write to ada', 'b1'), chunk.textDelta('@example.com', 'b2'), chunk.textEnd('b1'), chunk.textEnd('b2'), chunk.finish()],
    );
    expect(streamedText(output)).toBe('write to ada@example.com');
  });
});

describe('the model sends the chunks of a provider that reuses block ids in every step', () => {
  it('block ids repeated across steps are still two blocks', async () => {
    const parts = (text: string): LanguageModelV4StreamPart[] => [...textParts(text, { id: '0' })];
    const model = mockModel({
      parts: ({ callIndex }) => (callIndex === 0 ? [...parts('mail ada@example.com'), ...toolCallParts('noop', {}), finishPart('tool-calls')] : [...parts('Done!'), finishPart()]),
    });
    const { text, stored } = await runAgent(model, [pii()]);
    expect(text).toBe('mail [EMAIL]Done!');
    expect(stored).toEqual(['mail [EMAIL]', 'Done!']);
  });
});
