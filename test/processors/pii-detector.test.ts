import { describe, expect, it, vi } from 'vitest';
import { lastValueFrom, of } from 'rxjs';
import { processInput } from '../../src/operators/process-input.js';
import { processOutputResult } from '../../src/operators/process-output-result.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import { PIIDetector, type PIIDetectorOptions } from '../../src/processors/pii-detector.js';
import { chunk, testUsage } from '../../src/testing/chunk-builders.js';
import { proseOfTokens, streamedAnswer } from './support/answers.js';
import { contextWith, judgeFailures, judgeModel, listWith, runOutputStream, streamedText, textBlock, textMessage, textOf } from './support/harness.js';

const KNOWN = [
  { type: 'email', value: 'jane.doe@example.org' },
  { type: 'phone', value: '+1 555 010 9999' },
  { type: 'name', value: 'Jane Doe' },
];
/** Reports the known values present in the judged text. */
const detector = () =>
  judgeModel(({ prompt }) => JSON.stringify({ detections: KNOWN.filter((known) => prompt.includes(known.value)).map((known) => ({ ...known, confidence: 0.95 })) }));

async function inspectInput(options: PIIDetectorOptions, ...texts: string[]) {
  const processor = new PIIDetector(options);
  const list = listWith(texts.map((text, index) => textMessage(`u${index}`, 'user', text)));
  const result = await lastValueFrom(of(list).pipe(processInput([processor], contextWith(list)))).catch((error: unknown) => error);
  return { result, texts: () => list.get.input.db().map(textOf) };
}

describe('PIIDetector: input', () => {
  it('has the reference id', () => {
    expect(new PIIDetector({ model: detector() }).id).toBe('pii-detector');
  });

  it('redacts with a format-preserving mask by default and reports', async () => {
    const onViolation = vi.fn();
    const { texts } = await inspectInput({ model: detector(), onViolation }, 'I am Jane Doe, mail jane.doe@example.org');
    expect(texts()).toEqual(['I am **** ***, mail ****.***@*******.***']);
    expect(onViolation).toHaveBeenCalledWith(expect.objectContaining({ detail: expect.objectContaining({ types: ['email', 'name'], count: 2 }) }));
    expect(JSON.stringify(onViolation.mock.calls)).not.toContain('jane.doe');
  });

  it('redaction methods: placeholder, hash, remove, plain mask', () => {
    const value = 'jane.doe@example.org';
    expect(new PIIDetector({ model: detector(), redactionMethod: 'placeholder' }).redactValue(value, 'credit-card')).toBe('[CREDIT_CARD]');
    expect(new PIIDetector({ model: detector(), redactionMethod: 'hash' }).redactValue(value, 'email')).toMatch(/^\[HASH:[0-9a-f]{8}\]$/);
    expect(new PIIDetector({ model: detector(), redactionMethod: 'remove' }).redactValue(value, 'email')).toBe('');
    expect(new PIIDetector({ model: detector(), preserveFormat: false }).redactValue('a@b.c', 'email')).toBe('*****');
  });

  it('block aborts (the client sees types and a count; onViolation the detections when asked); warn keeps; filter drops', async () => {
    const onViolation = vi.fn();
    const blocked = await inspectInput({ model: detector(), strategy: 'block', includeDetections: true, onViolation }, 'call +1 555 010 9999');
    expect(TripWire.isInstance(blocked.result)).toBe(true);
    expect((blocked.result as TripWire).metadata).toEqual({ processorId: 'pii-detector', phase: 'input', types: ['phone'], count: 1 });
    expect(JSON.stringify(blocked.result)).not.toContain('555');
    expect(onViolation).toHaveBeenCalledTimes(1);
    expect(onViolation.mock.calls[0]?.[0].detail).toMatchObject({ detections: [{ type: 'phone', value: '+1 555 010 9999', confidence: 0.95 }] });
    expect((await inspectInput({ model: detector(), strategy: 'warn' }, 'call +1 555 010 9999')).texts()).toEqual(['call +1 555 010 9999']);
    expect((await inspectInput({ model: detector(), strategy: 'filter' }, 'hi', 'call +1 555 010 9999')).texts()).toEqual(['hi']);
  });

  it('ignores detections of other types, below the threshold, or not present in the text', async () => {
    const model = judgeModel(() =>
      JSON.stringify({
        detections: [
          { type: 'name', value: 'Jane Doe', confidence: 0.9 },
          { type: 'email', value: 'x@y.z', confidence: 0.3 },
          { type: 'email', value: 'not-in-text@example.org', confidence: 1 },
        ],
      }),
    );
    const { texts } = await inspectInput({ model, detectionTypes: ['email'] }, 'Jane Doe wrote x@y.z');
    expect(texts()).toEqual(['Jane Doe wrote x@y.z']);
  });

  describe('errorStrategy', () => {
    for (const [name, failure] of Object.entries(judgeFailures)) {
      if (failure.kind === 'content') {
        it(`default: fails closed on ${name} (the content can cause it); contentErrorStrategy 'warn' lets it through`, async () => {
          expect(TripWire.isInstance((await inspectInput({ model: failure.model() }, 'Jane Doe')).result)).toBe(true);
          const onError = vi.fn();
          const { texts } = await inspectInput({ model: failure.model(), onError, contentErrorStrategy: 'warn' }, 'Jane Doe');
          expect(texts()).toEqual(['Jane Doe']);
          expect(onError).toHaveBeenCalledTimes(1);
        });
        continue;
      }
      it(`fail-open fails open on ${name}`, async () => {
        const onError = vi.fn();
        const { texts } = await inspectInput({ model: failure.model(), onError, errorStrategy: 'fail-open', judgeDeadlineMs: 50 }, 'Jane Doe');
        expect(texts()).toEqual(['Jane Doe']);
        expect(onError).toHaveBeenCalledTimes(1);
      });
      it(`the default (strict) fails closed on ${name}`, async () => {
        const { result } = await inspectInput({ model: failure.model(), judgeDeadlineMs: 50 }, 'Jane Doe');
        expect(TripWire.isInstance(result)).toBe(true);
      });
    }
  });
});

describe('PIIDetector: output', () => {
  it('window mode redacts the stream window by window, within the call bound', async () => {
    const model = detector();
    const text = proseOfTokens(500, { at: 20, text: 'Contact Jane Doe at jane.doe@example.org today.' });
    const output = await runOutputStream([new PIIDetector({ model, redactionMethod: 'placeholder' })], streamedAnswer(text));
    expect(streamedText(output)).toBe(text.replace('Jane Doe', '[NAME]').replace('jane.doe@example.org', '[EMAIL]'));
    expect(model.calls.length).toBeLessThanOrEqual(Math.ceil(text.length / 200) + 1);
  });

  it('the stored reply gets the same redactions without another model call', async () => {
    const model = detector();
    const pii = new PIIDetector({ model, streamMode: 'final', redactionMethod: 'placeholder' });
    const reply = 'Reach Jane Doe on +1 555 010 9999.';
    const list = listWith([textMessage('u1', 'user', 'who?')], { response: [textMessage('a1', 'assistant', reply)] });
    const ctx = contextWith(list);
    const output = await runOutputStream([pii], [...textBlock([reply]), chunk.finish()], ctx);
    expect(streamedText(output)).toBe('Reach [NAME] on [PHONE].');
    await lastValueFrom(of({ text: reply, usage: testUsage(), finishReason: 'stop' as const, steps: [] }).pipe(processOutputResult([pii], ctx)));
    expect(textOf(list.get.response.db()[0])).toBe('Reach [NAME] on [PHONE].');
    expect(model.calls).toHaveLength(1);
  });

  it('block aborts before the window reaches the client; filter drops it', async () => {
    const blocked = await runOutputStream([new PIIDetector({ model: detector(), strategy: 'block' })], [...textBlock(['Mail jane.doe@example.org']), chunk.finish()]).catch(
      (error: unknown) => error,
    );
    expect(TripWire.isInstance(blocked)).toBe(true);
    const filtered = await runOutputStream([new PIIDetector({ model: detector(), strategy: 'filter', windowSchedule: [5, 20] })], [...textBlock(['Fine. ', 'Mail Jane Doe. ', 'Bye.']), chunk.finish()]);
    expect(streamedText(filtered)).toBe('Fine. Bye.');
  });
});
