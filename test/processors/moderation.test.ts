import { describe, expect, it, vi } from 'vitest';
import { from, lastValueFrom, of } from 'rxjs';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { processInput } from '../../src/operators/process-input.js';
import { processOutputStream } from '../../src/operators/process-output-stream.js';
import { createRunContext } from '../../src/operators/run-context.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import { ModerationProcessor } from '../../src/processors/moderation.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { proseOfTokens, streamedAnswer } from './support/answers.js';
import { contextWith, failingModel, judgeModel, listWith, modelStreaming, runOutputStream, streamedText, textBlock, textMessage, textOf } from './support/harness.js';

const clean = '{"categories": {"violence": 0.02, "hate": 0}}';
const violent = '{"categories": {"violence": 0.93, "hate": 0.1}, "reason": "describes killing"}';
/** Flags any text containing "KILL". */
const moderator = () => judgeModel(({ prompt }) => (prompt.includes('KILL') ? violent : clean));

async function moderateInput(processor: ModerationProcessor, ...texts: string[]) {
  const list = listWith(texts.map((text, index) => textMessage(`u${index}`, 'user', text)));
  const result = await lastValueFrom(of(list).pipe(processInput([processor], contextWith(list)))).catch((error: unknown) => error);
  return { list, result };
}

describe('ModerationProcessor: input', () => {
  it('has the reference id', () => {
    expect(new ModerationProcessor({ model: moderator() }).id).toBe('moderation');
  });

  it('passes clean input, one call per user message', async () => {
    const model = moderator();
    const { list } = await moderateInput(new ModerationProcessor({ model }), 'hello', 'how are you');
    expect(list.get.input.db().map(textOf)).toEqual(['hello', 'how are you']);
    expect(model.calls).toHaveLength(2);
  });

  it('block: aborts with the flagged categories; onViolation is called once', async () => {
    const onViolation = vi.fn();
    const { result } = await moderateInput(new ModerationProcessor({ model: moderator(), onViolation }), 'I will KILL it');
    expect(TripWire.isInstance(result)).toBe(true);
    expect((result as TripWire).processorId).toBe('moderation');
    expect((result as TripWire).metadata).toEqual({ phase: 'input', categories: ['violence'], reason: 'describes killing' });
    expect(onViolation).toHaveBeenCalledTimes(1);
  });

  it('warn: lets the message through and reports it (with scores when asked)', async () => {
    const onViolation = vi.fn();
    const { list } = await moderateInput(new ModerationProcessor({ model: moderator(), strategy: 'warn', includeScores: true, onViolation }), 'KILL');
    expect(list.get.input.db().map(textOf)).toEqual(['KILL']);
    expect(onViolation).toHaveBeenCalledWith(
      expect.objectContaining({ detail: expect.objectContaining({ strategy: 'warn', scores: { violence: 0.93, hate: 0.1 } }) }),
    );
  });

  it('filter: removes flagged messages, and aborts when nothing would be left', async () => {
    const { list } = await moderateInput(new ModerationProcessor({ model: moderator(), strategy: 'filter' }), 'KILL', 'fine');
    expect(list.get.input.db().map(textOf)).toEqual(['fine']);
    const { result } = await moderateInput(new ModerationProcessor({ model: moderator(), strategy: 'filter' }), 'KILL');
    expect(TripWire.isInstance(result)).toBe(true);
  });

  it('only the categories asked for count, at the threshold', async () => {
    const model = judgeModel(() => '{"categories": {"violence": 0.6, "spam": 0.99}}');
    expect(TripWire.isInstance((await moderateInput(new ModerationProcessor({ model, categories: ['spam'] }), 'x')).result)).toBe(true);
    expect(TripWire.isInstance((await moderateInput(new ModerationProcessor({ model, categories: ['violence'], threshold: 0.7 }), 'x')).result)).toBe(false);
  });

  it('tolerates a ```json fence and prose around the answer', async () => {
    const model = judgeModel(() => 'Here you go:\n```json\n' + violent + '\n```\nThanks.');
    expect(TripWire.isInstance((await moderateInput(new ModerationProcessor({ model }), 'x')).result)).toBe(true);
  });

  describe('errorStrategy', () => {
    const failures = {
      'a malformed answer': () => judgeModel(() => 'I think it is fine.'),
      'an answer of the wrong shape': () => judgeModel(() => '{"categories": {"violence": "high"}}'),
      'a failing model': () => failingModel(),
      'an error stream part': () => modelStreaming([{ type: 'error', error: new Error('overloaded') }]),
    };
    for (const [name, makeModel] of Object.entries(failures)) {
      it(`warn (default) fails open on ${name} and tells onError`, async () => {
        const onError = vi.fn();
        const { list, result } = await moderateInput(new ModerationProcessor({ model: makeModel(), onError }), 'KILL');
        expect(TripWire.isInstance(result)).toBe(false);
        expect(list.get.input.db().map(textOf)).toEqual(['KILL']);
        expect(onError).toHaveBeenCalledTimes(1);
      });

      it(`strict fails closed on ${name}`, async () => {
        const { result } = await moderateInput(new ModerationProcessor({ model: makeModel(), errorStrategy: 'strict' }), 'hello');
        expect(TripWire.isInstance(result)).toBe(true);
        expect((result as TripWire).reason).toContain("errorStrategy is 'strict'");
      });
    }
  });
});

describe('ModerationProcessor: output stream', () => {
  it('window mode: a ~500-token answer costs at most ceil(characters / windowSize) + 1 calls, and only judged text is streamed', async () => {
    const text = proseOfTokens(500);
    expect(encode(text).length).toBeGreaterThanOrEqual(500);
    const model = moderator();
    const windowSize = 200;
    const output = await runOutputStream([new ModerationProcessor({ model, windowSize })], streamedAnswer(text));
    expect(streamedText(output)).toBe(text);
    expect(model.calls.length).toBeLessThanOrEqual(Math.ceil(text.length / windowSize) + 1);
    expect(model.calls.length).toBeGreaterThan(1);
    const judged = model.calls.map((call) => JSON.stringify(call.prompt));
    for (const part of output) {
      if (part.type === 'text-delta') expect(judged.some((prompt) => prompt.includes(JSON.stringify(part.payload.text).slice(1, -1)))).toBe(true);
    }
    expect(output.map((part) => part.type).filter((type) => type !== 'text-delta')).toEqual(['step-start', 'text-start', 'text-end', 'step-finish', 'finish']);
  });

  it('window mode holds text until its window is judged (no delta passes unjudged)', async () => {
    const model = moderator();
    const ctx = createRunContext();
    const emitted: ChunkType[] = [];
    const deltas = ['One sentence here. ', 'Another one. ', 'And more text.'];
    from([chunk.textStart(), ...deltas.map((text) => chunk.textDelta(text))])
      .pipe(processOutputStream([new ModerationProcessor({ model, windowSize: 1000 })], ctx))
      .subscribe((part) => emitted.push(part));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(emitted.map((part) => part.type)).toEqual(['text-start']);
    expect(model.calls).toHaveLength(0);
  });

  it('final mode: one call per text block, at its end', async () => {
    const model = moderator();
    const text = proseOfTokens(300);
    const output = await runOutputStream([new ModerationProcessor({ model, streamMode: 'final' })], streamedAnswer(text));
    expect(model.calls).toHaveLength(1);
    expect(streamedText(output)).toBe(text);
    expect(output.filter((part) => part.type === 'text-delta')).toHaveLength(1);
  });

  it('block: aborts before the flagged window reaches the client', async () => {
    const model = moderator();
    const text = proseOfTokens(300, { at: 12, text: 'Then I will KILL everyone in the room.' });
    const emitted: string[] = [];
    const ctx = createRunContext();
    const error = await new Promise<unknown>((resolve) => {
      from(streamedAnswer(text))
        .pipe(processOutputStream([new ModerationProcessor({ model, windowSize: 200 })], ctx))
        .subscribe({ next: (part) => (part.type === 'text-delta' ? emitted.push(part.payload.text) : undefined), error: resolve, complete: () => resolve(undefined) });
    });
    expect(TripWire.isInstance(error)).toBe(true);
    expect(emitted.join('')).not.toContain('KILL');
    expect(text.startsWith(emitted.join(''))).toBe(true);
  });

  it('filter: drops the flagged window and keeps the rest', async () => {
    const text = 'A calm sentence. I will KILL it. Another calm sentence.';
    const output = await runOutputStream([new ModerationProcessor({ model: moderator(), strategy: 'filter', windowSize: 10 })], textBlock([text]));
    expect(streamedText(output)).toBe('A calm sentence. Another calm sentence.');
  });

  it('a block is never swallowed by the fail-open path (#18760): a failing window, then a flagged one', async () => {
    const model = judgeModel(({ index }) => (index === 0 ? 'not json' : violent));
    const error = await runOutputStream([new ModerationProcessor({ model, windowSize: 10 })], textBlock(['First sentence here. ', 'Second sentence here.'])).catch(
      (caught: unknown) => caught,
    );
    expect(TripWire.isInstance(error)).toBe(true);
    expect(model.calls).toHaveLength(2);
  });
});
