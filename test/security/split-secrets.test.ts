/**
 * Secrets split across deltas, text blocks and steps (issue 13 §4). A guard holds its tail across
 * block boundaries; the runtime sends `finish` through the output processors at the end of the last
 * step's output, before that step's message is built, so nothing held is lost or stored unchecked
 * (see docs/security.md).
 */
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { Memory } from '../../src/memory/memory.js';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import type { AgentTool } from '../../src/contract/tool-types.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { runOutputStream, streamedText, textBlock } from '../processors/support/harness.js';

const key = 'AKIAQWERTYUIOPASDFGH';
const filter = () => new RegexFilterProcessor({ presets: ['secrets'], strategy: 'redact' });
const noopTool: AgentTool = { description: 'does nothing', execute: () => 'ok' };

describe('a secret split across deltas', () => {
  it('is redacted whole whatever the split (every cut point)', async () => {
    const text = `key ${key} done`;
    for (let cut = 1; cut < text.length; cut++) {
      const output = await runOutputStream([filter()], [...textBlock([text.slice(0, cut), text.slice(cut)]), chunk.finish()]);
      expect(streamedText(output), `cut at ${cut}`).toBe('key [AWS_KEY] done');
    }
  });

  it('one character per delta', async () => {
    const output = await runOutputStream([filter()], [...textBlock([...`key ${key} done`]), chunk.finish()]);
    expect(streamedText(output)).toBe('key [AWS_KEY] done');
  });
});

describe('a secret split across text blocks of one step', () => {
  it('is redacted whole in the stream, and the stored reply matches the stream', async () => {
    const storage = new InMemoryStorage();
    const guard = filter();
    const agent = new Agent({
      id: 'a',
      model: mockModel({ parts: [...textParts('key AKIAQWER', { id: 'b1' }), ...textParts('TYUIOPASDFGH done', { id: 'b2' }), finishPart()] }),
      memory: new Memory({ storage }),
      outputProcessors: [guard],
    });
    const chunks = await lastValueFrom(agent.stream$('x', { memory: { thread: 't', resource: 'u' } }).pipe(toArray()));
    const streamed = streamedText(chunks);
    expect(JSON.stringify(chunks)).not.toMatch(/AKIAQWER|TYUIOPASDFGH/);
    expect(streamed).toBe('key [AWS_KEY] done');
    // the blocks stay bracketed, in order: the redaction lands in the block the secret started in
    const blocks = chunks.flatMap((part) => (part.type === 'text-start' || part.type === 'text-end' ? [`${part.type}:${part.payload.id}`] : []));
    expect(blocks).toEqual(['text-start:b1', 'text-end:b1', 'text-start:b2', 'text-end:b2']);
    const stored = (await storage.getMessages({ threadId: 't' })).filter((message) => message.role === 'assistant');
    const storedText = stored.flatMap((message) => message.content.parts.map((part) => (part.type === 'text' ? part.text : ''))).join('');
    expect(storedText).toBe(streamed);
  });

  it('the stored reply is matched as one joined text: a split no stream hook saw is redacted there', async () => {
    const storage = new InMemoryStorage();
    const guard = new RegexFilterProcessor({ presets: ['secrets'], strategy: 'redact', channels: ['reasoning'] });
    const agent = new Agent({
      id: 'a',
      model: mockModel({ parts: [...textParts('key AKIAQWER', { id: 'b1' }), ...textParts('TYUIOPASDFGH done', { id: 'b2' }), finishPart()] }),
      memory: new Memory({ storage }),
      outputProcessors: [guard],
    });
    await agent.generate('x', { memory: { thread: 't', resource: 'u' } });
    const stored = JSON.stringify(await storage.getMessages({ threadId: 't' }));
    expect(stored).not.toContain('AKIAQWER');
    expect(stored).not.toContain('TYUIOPASDFGH');
    expect(stored).toContain('[AWS_KEY]');
  });
});

describe('a secret split across steps (text before a tool call, continued after it)', () => {
  const twoSteps = () =>
    mockModel({
      parts: ({ callIndex }) =>
        callIndex === 0
          ? [...textParts('key AKIAQWER', { id: 'b1' }), ...toolCallParts('noop', {}), finishPart('tool-calls')]
          : [...textParts('TYUIOPASDFGH done', { id: 'b2' }), finishPart()],
    });

  it('the continuation is replaced in the stream; the stored reply keeps neither part', async () => {
    const storage = new InMemoryStorage();
    const agent = new Agent({ id: 'a', model: twoSteps(), tools: { noop: noopTool }, memory: new Memory({ storage }), outputProcessors: [filter()] });
    const chunks = await lastValueFrom(agent.stream$('x', { memory: { thread: 't', resource: 'u' } }).pipe(toArray()));
    // Documented limit: the text before a tool call is committed when the call is accepted, before
    // the next step exists, so its part of the secret has streamed; the rest is replaced.
    expect(streamedText(chunks)).toBe('key AKIAQWER[AWS_KEY] done');
    expect(JSON.stringify(chunks)).not.toContain('TYUIOPASDFGH');
    const stored = JSON.stringify(await storage.getMessages({ threadId: 't' }));
    expect(stored).not.toMatch(/AKIAQWER|TYUIOPASDFGH/);
    expect(stored).toContain('"text":"key "');
    expect(stored).toContain('[AWS_KEY] done');
  });
});
