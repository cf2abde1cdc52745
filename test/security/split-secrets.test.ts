/**
 * Secrets split across deltas, text blocks and steps (issue 13 §4), and what the stream can and
 * cannot hold back (the runtime builds a step's message from what passed before the model stream
 * ended, so a guard releases its held text at each block end — see docs/security.md).
 */
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { Memory } from '../../src/memory/memory.js';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { runOutputStream, streamedText, textBlock } from '../processors/support/harness.js';

const key = 'AKIAQWERTYUIOPASDFGH';
const filter = () => new RegexFilterProcessor({ presets: ['secrets'], strategy: 'redact' });

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
  it('the continuation in the next block is redacted in the stream, and the stored reply matches the stream', async () => {
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
    expect(streamed).not.toContain('TYUIOPASDFGH');
    expect(streamed).toBe('key AKIAQWER[AWS_KEY] done');
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
