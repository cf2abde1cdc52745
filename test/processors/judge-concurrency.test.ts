/**
 * Issue 31 §1: judge calls of one guard in one run run at most `maxConcurrentJudgeCalls` at once
 * (default 2), counted in the judge itself; a long posted message is judged in pieces within that
 * bound, never all at once. The slots are per run (processor state), not module-level.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { lastValueFrom, of } from 'rxjs';
import { processInput } from '../../src/operators/process-input.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import { ModerationProcessor, type ModerationOptions } from '../../src/processors/moderation.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { contextWith, listWith, runOutputStream, streamedText, textBlock, textMessage } from './support/harness.js';
import { faultJudge } from './support/fault-judge.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

async function settle<T>(promise: Promise<T>): Promise<T> {
  let settled = false;
  const done = promise.finally(() => {
    settled = true;
  });
  for (let step = 0; step < 500 && !settled; step++) await vi.advanceTimersByTimeAsync(20);
  return done;
}

const words = (count: number) => Array.from({ length: count }, (_, index) => `word${index}`).join(' ');

function judgeInput(processor: ModerationProcessor, text: string) {
  const list = listWith([textMessage('u1', 'user', text)]);
  return lastValueFrom(of(list).pipe(processInput([processor], contextWith(list)))).catch((error: unknown) => error);
}

describe('maxConcurrentJudgeCalls', () => {
  const cases: Array<[string, Partial<ModerationOptions>, number]> = [
    ['default', {}, 2],
    ['1', { maxConcurrentJudgeCalls: 1 }, 1],
    ['4', { maxConcurrentJudgeCalls: 4 }, 4],
  ];
  for (const [name, options, bound] of cases) {
    it(`${name}: a posted 3,000-character message (≈ 15 pieces) is judged at most ${bound} calls at a time, all pieces judged`, async () => {
      const model = faultJudge([{ kind: 'ok' }], '{"categories": {}}', 100);
      const result = await settle(judgeInput(new ModerationProcessor({ model, maxJudgeInputChars: 200, ...options }), words(330)));
      expect(TripWire.isInstance(result)).toBe(false);
      expect(model.starts.length).toBeGreaterThanOrEqual(15);
      expect(model.peak).toBe(bound);
    });
  }

  it('streamed output: many windows in flight in the gate, never more than 2 judge calls at once', async () => {
    const model = faultJudge([{ kind: 'ok' }], '{"categories": {}}', 150);
    const text = words(600);
    const pieces = text.match(/.{1,7}/gs) ?? [];
    const chunks = await settle(runOutputStream([new ModerationProcessor({ model, windowSchedule: [40] })], [...textBlock(pieces), chunk.finish()]));
    expect(streamedText(chunks)).toBe(text);
    expect(model.starts.length).toBeGreaterThan(20);
    expect(model.peak).toBe(2);
  });

  it('the slots are per run: two runs of one processor each get their own 2 (4 at once in the judge)', async () => {
    const model = faultJudge([{ kind: 'ok' }], '{"categories": {}}', 100);
    const processor = new ModerationProcessor({ model, maxJudgeInputChars: 200 });
    const both = Promise.all([judgeInput(processor, words(200)), judgeInput(processor, words(200))]);
    const results = await settle(both);
    expect(results.some((result) => TripWire.isInstance(result))).toBe(false);
    expect(model.peak).toBe(4);
  });
});
