/**
 * Values split across the text blocks of one step, against the model-backed guards (issue 13 §4):
 * PIIDetector, ModerationProcessor and SystemPromptScrubber hold a block boundary with their text,
 * judge the joined text and release it re-split into its blocks, so a value cut in two by a block
 * boundary is judged whole — in the stream and in the stored reply.
 */
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { Memory } from '../../src/memory/memory.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { Processor } from '../../src/contract/processor-types.js';
import type { StreamMode } from '../../src/processors/internal/checked-stream.js';
import { ModerationProcessor } from '../../src/processors/moderation.js';
import { PIIDetector } from '../../src/processors/pii-detector.js';
import { SystemPromptScrubber } from '../../src/processors/system-prompt-scrubber.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { judgeModel, streamedText } from '../processors/support/harness.js';

const EMAIL = 'jane.doe@example.org';
/** Reports the e-mail address when the judged text holds it whole. */
const piiJudge = () =>
  judgeModel(({ prompt }) => JSON.stringify({ detections: prompt.includes(EMAIL) ? [{ type: 'email', value: EMAIL, confidence: 0.95 }] : [] }));

/** A model answering with two text blocks of one step. */
const twoBlocks = (first: string, second: string) =>
  mockModel({ parts: [...textParts(first, { id: 'b1', chunkSize: 4 }), ...textParts(second, { id: 'b2', chunkSize: 4 }), finishPart()] });

async function streamRun(model: ReturnType<typeof mockModel>, guard: Processor, instructions?: string) {
  const storage = new InMemoryStorage();
  const agent = new Agent({ id: 'a', model, memory: new Memory({ storage }), outputProcessors: [guard], ...(instructions === undefined ? {} : { instructions }) });
  const chunks = await lastValueFrom(agent.stream$('Who do I write to?', { memory: { thread: 't', resource: 'u' } }).pipe(toArray()));
  const stored = (await storage.getMessages({ threadId: 't' })).filter((message) => message.role === 'assistant');
  const storedText = stored.flatMap((message) => message.content.parts.map((part) => (part.type === 'text' ? part.text : ''))).join('');
  return { chunks, stored: JSON.stringify(stored), storedText };
}

const blocksOf = (chunks: readonly ChunkType[]): string[] =>
  chunks.flatMap((part) => (part.type === 'text-start' || part.type === 'text-end' ? [`${part.type}:${part.payload.id}`] : []));

describe('PIIDetector: an e-mail address split across two text blocks of one step', () => {
  for (const streamMode of ['final', 'window'] satisfies StreamMode[]) {
    it(`${streamMode}: nothing of it in any streamed chunk nor in the stored messages`, async () => {
      const judge = piiJudge();
      const guard = new PIIDetector({ model: judge, streamMode, redactionMethod: 'placeholder' });
      const { chunks, stored, storedText } = await streamRun(twoBlocks('Write to jane.doe@exa', 'mple.org today.'), guard);
      // every piece of the value, as the model streamed it
      for (const piece of ['jane.doe@exa', 'jane', 'mple.org', 'doe@']) {
        expect(JSON.stringify(chunks)).not.toContain(piece);
        expect(stored).not.toContain(piece);
      }
      expect(streamedText(chunks)).toBe('Write to [EMAIL] today.');
      expect(storedText).toBe('Write to [EMAIL] today.');
      // the redaction lands in the block the value started in; the blocks stay bracketed, in order
      const deltas = chunks.flatMap((part) => (part.type === 'text-delta' ? [`${part.payload.id}:${part.payload.text}`] : []));
      expect(deltas).toEqual(['b1:Write to [EMAIL]', 'b2: today.']);
      expect(blocksOf(chunks)).toEqual(['text-start:b1', 'text-end:b1', 'text-start:b2', 'text-end:b2']);
      expect(chunks.at(-1)?.type).toBe('finish');
      // never one judge call per block or token: one for the run of blocks in 'final'; in 'window' the
      // small first window ("Write to "), then the rest with that window in front of it
      expect(judge.calls).toHaveLength(streamMode === 'final' ? 1 : 2);
    });
  }

  it('generate(): the result text and steps are redacted whole too', async () => {
    const agent = new Agent({
      id: 'a',
      model: twoBlocks('Write to jane.doe@exa', 'mple.org today.'),
      outputProcessors: [new PIIDetector({ model: piiJudge(), streamMode: 'final', redactionMethod: 'placeholder' })],
    });
    const result = await agent.generate('Who do I write to?');
    expect(result.text).toBe('Write to [EMAIL] today.');
    expect(JSON.stringify(result.steps)).not.toMatch(/jane|mple\.org/);
  });
});

describe('ModerationProcessor (block): a flagged sentence split across two text blocks', () => {
  /** Flags any text holding "KILL" whole. */
  const moderator = () =>
    judgeModel(({ prompt }) => (prompt.includes('KILL') ? '{"categories": {"violence": 0.93}, "reason": "a threat"}' : '{"categories": {"violence": 0.01}}'));

  for (const streamMode of ['final', 'window'] satisfies StreamMode[]) {
    it(`${streamMode}: trips the run before any of it streams; nothing of it is stored`, async () => {
      const guard = new ModerationProcessor({ model: moderator(), strategy: 'block', streamMode });
      const { chunks, stored } = await streamRun(twoBlocks('Fine. Then I will KI', 'LL everyone.'), guard);
      expect(chunks.some((part) => part.type === 'tripwire')).toBe(true);
      expect(chunks.filter((part) => part.type === 'text-delta')).toEqual([]);
      expect(JSON.stringify(chunks)).not.toMatch(/will KI|LL everyone/);
      expect(stored).not.toMatch(/will KI|LL everyone/);
    });
  }

  it('window: at most the clean window before it streams; the window spanning the boundary trips the run', async () => {
    const guard = new ModerationProcessor({ model: moderator(), strategy: 'block', windowSize: 20 });
    const { chunks } = await streamRun(twoBlocks('A calm sentence here. Then I will KI', 'LL everyone. Calm again.'), guard);
    expect(chunks.some((part) => part.type === 'tripwire')).toBe(true);
    // the mock model streams faster than the judge answers: the block may arrive before the clean window was released
    expect(['', 'A calm sentence here.']).toContain(streamedText(chunks));
    expect(JSON.stringify(chunks)).not.toMatch(/will KI|LL everyone/);
  });
});

describe('SystemPromptScrubber: a leaked sentence split across two text blocks', () => {
  const LEAK = 'The discount code is PANDA-42.';
  const watcher = () =>
    judgeModel(({ prompt }) =>
      prompt.split('Response passage')[1]?.includes(LEAK) ? JSON.stringify({ detections: [{ value: LEAK, confidence: 0.9 }] }) : '{"detections": []}',
    );

  it('is redacted whole in the stream and in the stored reply', async () => {
    const guard = new SystemPromptScrubber({ model: watcher(), streamMode: 'final' });
    const { chunks, stored, storedText } = await streamRun(twoBlocks('Sure. The discount code', ' is PANDA-42. Bye.'), guard, `You are Otto. ${LEAK}`);
    expect(JSON.stringify(chunks)).not.toMatch(/PANDA|discount code/);
    expect(stored).not.toMatch(/PANDA|discount code/);
    expect(streamedText(chunks)).toBe('Sure. [SYSTEM_PROMPT] Bye.');
    expect(storedText).toBe('Sure. [SYSTEM_PROMPT] Bye.');
  });
});
