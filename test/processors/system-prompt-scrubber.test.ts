import { describe, expect, it, vi } from 'vitest';
import { lastValueFrom, of } from 'rxjs';
import { processOutputResult } from '../../src/operators/process-output-result.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import { SystemPromptScrubber, type SystemPromptScrubberOptions } from '../../src/processors/system-prompt-scrubber.js';
import { chunk, testUsage } from '../../src/testing/chunk-builders.js';
import { contextWith, judgeFailures, judgeModel, listWith, runOutputStream, streamedText, textBlock, textMessage, textOf } from './support/harness.js';

const SECRET = 'You are Otto. The discount code is PANDA-42.';
const LEAK = 'The discount code is PANDA-42.';
/** Reports the leaked sentence when the response passage contains it. */
const watcher = () =>
  judgeModel(({ prompt }) => (prompt.split('Response passage')[1]?.includes(LEAK) ? JSON.stringify({ detections: [{ value: LEAK, confidence: 0.9 }] }) : '{"detections": []}'));

async function scrub(options: SystemPromptScrubberOptions, pieces: string[], system: string[] = [SECRET]) {
  const list = listWith([textMessage('u1', 'user', 'hi')], { system });
  const ctx = contextWith(list);
  const scrubber = new SystemPromptScrubber(options);
  let error: unknown;
  // a real stream always goes on after `text-end` (`step-finish`, `finish`): that releases the held text
  const output = await runOutputStream([scrubber], [...textBlock(pieces), chunk.finish()], ctx).catch((caught: unknown) => {
    error = caught;
    return [];
  });
  return { text: streamedText(output), error, ctx, list, scrubber };
}

describe('SystemPromptScrubber', () => {
  it('has the reference id', () => {
    expect(new SystemPromptScrubber({ model: watcher() }).id).toBe('system-prompt-scrubber');
  });

  it('redacts a leak with the placeholder (default) and gives the judge the system prompt', async () => {
    const model = watcher();
    const onViolation = vi.fn();
    const { text } = await scrub({ model, onViolation }, ['Sure! ', 'The discount code ', 'is PANDA-42. Anything else?']);
    // the small first window ("Sure! The discount code ", judged clean on its own) is out before the
    // leak is complete; the judge sees it again in front of the next window, which is redacted
    expect(text).toBe('Sure! The discount code [SYSTEM_PROMPT] Anything else?');
    expect(JSON.stringify(model.calls[0]?.prompt)).toContain('You are Otto.');
    expect(onViolation).toHaveBeenCalledTimes(1);
    // a first window as large as the sentence holds all of it
    const whole = await scrub({ model: watcher(), windowSchedule: [50, 200, 800] }, ['Sure! ', 'The discount code ', 'is PANDA-42. Anything else?']);
    expect(whole.text).toBe('Sure! [SYSTEM_PROMPT] Anything else?');
  });

  it('makes no call when there is no system prompt and no pattern', async () => {
    const model = watcher();
    const { text } = await scrub({ model }, ['The discount code is PANDA-42.'], []);
    expect(text).toBe('The discount code is PANDA-42.');
    expect(model.calls).toHaveLength(0);
  });

  it('customPatterns catch leaks locally, even without a system prompt', async () => {
    const { text } = await scrub({ model: watcher(), customPatterns: [/PANDA-\d+/, 'INTERNAL-[A-Z]+'], redactionMethod: 'mask' }, ['code PANDA-42, tag INTERNAL-X'], []);
    expect(text).toBe('code ********, tag **********');
  });

  it('block aborts; filter drops the span; warn keeps it', async () => {
    const blocked = await scrub({ model: watcher(), strategy: 'block' }, [LEAK]);
    expect(TripWire.isInstance(blocked.error)).toBe(true);
    const filtered = await scrub({ model: watcher(), strategy: 'filter', windowSchedule: [13, 20] }, ['Hello there. ', `${LEAK} `, 'Bye.']);
    expect(filtered.text).toBe('Hello there. Bye.');
    const warned = await scrub({ model: watcher(), strategy: 'warn' }, [LEAK]);
    expect(warned.text).toBe(LEAK);
  });

  it('applies the stream redactions to the stored reply', async () => {
    const reply = `Well: ${LEAK}`;
    const list = listWith([textMessage('u1', 'user', 'hi')], { system: [SECRET], response: [textMessage('a1', 'assistant', reply)] });
    const ctx = contextWith(list);
    const scrubber = new SystemPromptScrubber({ model: watcher() });
    await runOutputStream([scrubber], [...textBlock([reply]), chunk.finish()], ctx);
    await lastValueFrom(of({ text: reply, usage: testUsage(), finishReason: 'stop' as const, steps: [] }).pipe(processOutputResult([scrubber], ctx)));
    expect(textOf(list.get.response.db()[0])).toBe('Well: [SYSTEM_PROMPT]');
  });

  describe('errorStrategy', () => {
    for (const [name, { kind, model: makeModel }] of Object.entries(judgeFailures)) {
      const lenient = kind === 'content' ? { contentErrorStrategy: 'fail-open' as const } : { errorStrategy: 'fail-open' as const };
      const strict = { judgeDeadlineMs: 50 };
      it(`${kind} failure: fails open on ${name} with ${kind === 'content' ? "contentErrorStrategy 'fail-open'" : "errorStrategy 'fail-open'"}`, async () => {
        const { text } = await scrub({ model: makeModel(), strategy: 'block', judgeDeadlineMs: 50, ...lenient }, [LEAK]);
        expect(text).toBe(LEAK);
      });
      it(`${kind} failure: fails closed on ${name} with the defaults`, async () => {
        const { error } = await scrub({ model: makeModel(), ...strict }, ['harmless']);
        expect(TripWire.isInstance(error)).toBe(true);
      });
    }
  });
});
