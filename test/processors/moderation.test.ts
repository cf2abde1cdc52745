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
import { APICallError } from '@ai-sdk/provider';
import { createProviderStreamError } from '@ai-sdk/provider-utils';
import {
  contextWith,
  failingModel,
  judgedContents,
  judgeModel,
  listWith,
  modelStreaming,
  promptText,
  runOutputStream,
  streamedText,
  textBlock,
  textMessage,
  textOf,
} from './support/harness.js';

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

  it('passes clean input; consecutive user messages are judged together in one call (up to maxJudgeInputChars)', async () => {
    const model = moderator();
    const { list } = await moderateInput(new ModerationProcessor({ model }), 'hello', 'how are you');
    expect(list.get.input.db().map(textOf)).toEqual(['hello', 'how are you']);
    expect(model.calls).toHaveLength(1);
    expect(judgedContents(promptText(model.calls[0]!))).toEqual(['hello\n\nhow are you']);
    const small = moderator();
    await moderateInput(new ModerationProcessor({ model: small, maxJudgeInputChars: 200 }), 'a'.repeat(150), 'b'.repeat(150));
    expect(small.calls).toHaveLength(2);
  });

  it("block: aborts with the flagged categories (never the judge's words); onViolation is called once, with the reason", async () => {
    const onViolation = vi.fn();
    const { result } = await moderateInput(new ModerationProcessor({ model: moderator(), onViolation }), 'I will KILL it');
    expect(TripWire.isInstance(result)).toBe(true);
    expect((result as TripWire).processorId).toBe('moderation');
    expect((result as TripWire).metadata).toEqual({ processorId: 'moderation', phase: 'input', categories: ['violence'] });
    expect((result as TripWire).reason).toBe('Content flagged for moderation. Categories: violence');
    expect(onViolation).toHaveBeenCalledTimes(1);
    expect(onViolation.mock.calls[0]?.[0]).toMatchObject({ processorId: 'moderation', detail: { reason: 'describes killing', categories: ['violence'] } });
  });

  it('revealJudgeReason: the client gets the reason too', async () => {
    const { result } = await moderateInput(new ModerationProcessor({ model: moderator(), revealJudgeReason: true }), 'I will KILL it');
    expect((result as TripWire).reason).toBe('Content flagged for moderation. Categories: violence. Reason: describes killing');
    expect((result as TripWire).metadata).toMatchObject({ reason: 'describes killing' });
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

  it('only the categories asked for count, at the threshold (a known category not asked for is left alone)', async () => {
    const model = judgeModel(() => '{"categories": {"violence": 0.6, "hate": 0.99}}');
    expect(TripWire.isInstance((await moderateInput(new ModerationProcessor({ model, categories: ['hate'] }), 'x')).result)).toBe(true);
    expect(TripWire.isInstance((await moderateInput(new ModerationProcessor({ model, categories: ['violence'], threshold: 0.7 }), 'x')).result)).toBe(false);
  });

  it('a category the judge flags that the guard cannot place is a violation, reported with what was not understood', async () => {
    const model = judgeModel(() => '{"categories": {"violence": 0.6, "spam": 0.99}}');
    const onViolation = vi.fn();
    const { result } = await moderateInput(new ModerationProcessor({ model, categories: ['violence'], threshold: 0.7, onViolation }), 'x');
    expect(TripWire.isInstance(result)).toBe(true);
    expect(onViolation).toHaveBeenCalledTimes(1);
    expect(JSON.stringify(onViolation.mock.calls[0]?.[0])).toContain('"unrecognized":["spam"]');
  });

  it('tolerates a ```json fence and prose around the answer', async () => {
    const model = judgeModel(() => 'Here you go:\n```json\n' + violent + '\n```\nThanks.');
    expect(TripWire.isInstance((await moderateInput(new ModerationProcessor({ model }), 'x')).result)).toBe(true);
  });

  describe('errorStrategy (infrastructure) and contentErrorStrategy (failures the content can cause)', () => {
    const contentFailures = {
      'a malformed answer': () => judgeModel(() => 'I think it is fine.'),
      'an answer of the wrong shape': () => judgeModel(() => '{"categories": {"violence": "high"}}'),
      'a rejected request (HTTP 400: context length exceeded)': () =>
        failingModel(new APICallError({ message: "This model's maximum context length is 8192 tokens", url: 'https://judge', requestBodyValues: {}, statusCode: 400 })),
      "a provider's bug (not an outage: it was let through under 'fail-open')": () => failingModel(new TypeError("Cannot read properties of undefined (reading 'choices')")),
      'an error stream part holding an unmarked object': () => modelStreaming([{ type: 'error', error: { message: 'overloaded' } }]),
      'a refusal (content filter)': () => modelStreaming([{ type: 'finish', finishReason: { unified: 'content-filter', raw: 'content_filter' }, usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 0, text: 0, reasoning: 0 } } }]),
    };
    const infrastructureFailures = {
      'a failing model': () => failingModel(),
      // as Anthropic's provider emits an overloaded stream (the AI SDK's marked stream error)
      'an error stream part': () => modelStreaming([{ type: 'error', error: createProviderStreamError({ message: 'Overloaded', type: 'overloaded_error', statusCode: 529, isRetryable: true, data: {} }) }]),
      'a 503': () => failingModel(new APICallError({ message: 'Service Unavailable', url: 'https://judge', requestBodyValues: {}, statusCode: 503 })),
    };
    for (const [name, makeModel] of Object.entries(contentFailures)) {
      it(`default: ${name} fails closed (the content could have caused it); the client is not told the judge's words`, async () => {
        const onError = vi.fn();
        const { result } = await moderateInput(new ModerationProcessor({ model: makeModel(), onError }), 'hello');
        expect(TripWire.isInstance(result)).toBe(true);
        expect((result as TripWire).reason).toMatch(/^moderation: the check could not be completed \(.*\); blocked because the content can cause this failure$/);
        expect((result as TripWire).metadata).toEqual({ processorId: 'moderation', kind: 'content' });
        expect(onError).toHaveBeenCalledTimes(1);
      });

      it(`contentErrorStrategy 'warn': ${name} lets the content through and tells onError`, async () => {
        const onError = vi.fn();
        const { list, result } = await moderateInput(new ModerationProcessor({ model: makeModel(), onError, contentErrorStrategy: 'warn' }), 'KILL');
        expect(TripWire.isInstance(result)).toBe(false);
        expect(list.get.input.db().map(textOf)).toEqual(['KILL']);
        expect(onError).toHaveBeenCalledTimes(1);
      });
    }
    for (const [name, makeModel] of Object.entries(infrastructureFailures)) {
      it(`'fail-open' fails open on ${name} and tells onError and onFailOpen`, async () => {
        const onError = vi.fn();
        const onFailOpen = vi.fn();
        const { list, result } = await moderateInput(new ModerationProcessor({ model: makeModel(), onError, onFailOpen, errorStrategy: 'fail-open', judgeDeadlineMs: 50 }), 'KILL');
        expect(TripWire.isInstance(result)).toBe(false);
        expect(list.get.input.db().map(textOf)).toEqual(['KILL']);
        expect(onError).toHaveBeenCalledTimes(1);
        expect(onFailOpen).toHaveBeenCalledTimes(1);
      });

      it(`the default (strict) fails closed on ${name}`, async () => {
        const { result } = await moderateInput(new ModerationProcessor({ model: makeModel(), judgeDeadlineMs: 50 }), 'hello');
        expect(TripWire.isInstance(result)).toBe(true);
        expect((result as TripWire).reason).toContain("errorStrategy is 'strict'");
      });
    }
  });
});

describe('ModerationProcessor: output stream', () => {
  it('window mode: a ~500-token answer costs about one call per window, and only judged text is streamed', async () => {
    const text = proseOfTokens(500);
    expect(encode(text).length).toBeGreaterThanOrEqual(500);
    const model = moderator();
    const windowSize = 200;
    const output = await runOutputStream([new ModerationProcessor({ model, windowSize })], streamedAnswer(text));
    expect(streamedText(output)).toBe(text);
    // windows end at a boundary past half the size: at most 2 × characters / size calls, in practice about one per window
    expect(model.calls.length).toBeLessThanOrEqual(Math.ceil((2 * text.length) / windowSize) + 1);
    expect(model.calls.length).toBeGreaterThan(1);
    // every character streamed was judged, each exactly once, in order
    expect(model.calls.flatMap((call) => judgedContents(promptText(call))).join('')).toBe(text);
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
    const output = await runOutputStream([new ModerationProcessor({ model: moderator(), strategy: 'filter', windowSize: 10 })], [...textBlock([text]), chunk.finish()]);
    expect(streamedText(output)).toBe('A calm sentence. Another calm sentence.');
  });

  it('a block is never swallowed by the fail-open path (#18760): a failing window, then a flagged one', async () => {
    const model = judgeModel(({ index }) => (index === 0 ? 'not json' : violent));
    const error = await runOutputStream([new ModerationProcessor({ model, windowSize: 10, contentErrorStrategy: 'warn' })], [...textBlock(['First sentence here. ', 'Second sentence here.']), chunk.finish()]).catch(
      (caught: unknown) => caught,
    );
    expect(TripWire.isInstance(error)).toBe(true);
    expect((error as TripWire).reason).toBe('Content flagged for moderation. Categories: violence');
    expect(model.calls.length).toBeGreaterThanOrEqual(2);
  });
});
