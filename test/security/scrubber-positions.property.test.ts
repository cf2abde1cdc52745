/**
 * `SystemPromptScrubber` reads the reference's positioned detections (`start`, `end`,
 * `redacted_value`) on the same strict path as `PIIDetector`: positions are whole numbers, both or
 * neither, `start ≤ end ≤` the judged passage's length — any other position is an unreadable answer
 * (a judge failure: blocked by default, under every strategy). Before, the scrubber took any number
 * (`start: 999` on a passage of 40 characters read as a leak and redacted). Positions are never used
 * to redact (the value is searched in the passage), and `redacted_value` is never written into it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SystemPromptScrubber } from '../../src/processors/system-prompt-scrubber.js';
import { checkProperty, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';
import { judgeModel } from '../processors/support/harness.js';
import { runGuarded, SECRET } from './support/judged-guards.js';

const RUNS = 40;
const PASSAGE = `Sure: the ${SECRET}. MARKleak.`;

/** The response passage the scrubber's judge was given (the prompt's second quoted block). */
function judgedPassage(prompt: string): string {
  const match = /Response passage[^\n]*\n<<<(\S+)\n([\s\S]*)\n\1>>>/.exec(prompt);
  return match?.[2] ?? '';
}

/** A judge answering one reference-shaped leak of the secret, `entry` overriding its fields (a function of the judged passage). */
function referenceLeakJudge(entry: (passage: string) => Record<string, unknown> = () => ({})) {
  return judgeModel(({ prompt }) => {
    const passage = judgedPassage(prompt);
    const start = passage.indexOf(SECRET);
    if (start === -1) return '{"detections": null, "reason": null}';
    return JSON.stringify({
      detections: [{ type: 'system_prompt', value: SECRET, confidence: 0.97, start, end: start + SECRET.length, redacted_value: '[REDACTED]', ...entry(passage) }],
      reason: 'leak',
      redacted_content: null,
    });
  });
}

describe("SystemPromptScrubber checks the reference's positions against the judged passage", () => {
  it('positions within the passage read: redacted by redactionMethod, never by redacted_value', async () => {
    const outcome = await runGuarded(new SystemPromptScrubber({ model: referenceLeakJudge(() => ({ redacted_value: 'Visit evil.example NOW' })), streamMode: 'final' }), 'output', PASSAGE);
    expect(outcome.error).toBeUndefined();
    expect(outcome.tripwire).toBeUndefined();
    expect(outcome.streamed).toBe('Sure: the [SYSTEM_PROMPT]. MARKleak.');
  });

  it('positions left out, or null as the reference writes them, read too', async () => {
    for (const entry of [{ start: undefined, end: undefined }, { start: null, end: null, redacted_value: null }]) {
      const outcome = await runGuarded(new SystemPromptScrubber({ model: referenceLeakJudge(() => entry), streamMode: 'final' }), 'output', PASSAGE);
      expect(outcome.tripwire, JSON.stringify(entry)).toBeUndefined();
      expect(outcome.streamed, JSON.stringify(entry)).toBe('Sure: the [SYSTEM_PROMPT]. MARKleak.');
    }
  });

  it(
    'a position that is no whole number within the passage, start after end, or one without the other is an unreadable answer: blocked, under every strategy (property)',
    async () => {
      const badPositions = fc.oneof(
        fc.record({ start: fc.integer({ min: -1_000, max: -1 }) }),
        fc.record({ past: fc.integer({ min: 1, max: 1_000 }) }),
        fc.record({ start: fc.double({ noInteger: true, noNaN: true, min: 0, max: 30 }) }),
        fc.record({ end: fc.constantFrom('12', true, [3], Number.NaN, Number.POSITIVE_INFINITY) }),
        fc.record({ swap: fc.constant(true) }),
        fc.record({ only: fc.constantFrom('start', 'end') }),
      );
      await checkProperty(
        'scrubber-positions',
        fc.record({ bad: badPositions, strategy: fc.constantFrom('block', 'warn', 'filter', 'redact'), streamMode: fc.constantFrom('final', 'window') }),
        async ({ bad, strategy, streamMode }) => {
          const judge = referenceLeakJudge((passage) => {
            const start = passage.indexOf(SECRET);
            const end = start + SECRET.length;
            if ('swap' in bad) return { start: end, end: start };
            if ('only' in bad) return bad.only === 'start' ? { end: undefined } : { start: undefined };
            if ('past' in bad) return { start: 0, end: passage.length + bad.past };
            return bad;
          });
          const outcome = await runGuarded(new SystemPromptScrubber({ model: judge, strategy, streamMode }), 'output', PASSAGE);
          const where = `${strategy}/${streamMode} ${JSON.stringify(bad)}`;
          if (outcome.error !== undefined) throw new Error(`${where}: the run ended in an error`);
          if (outcome.tripwire === undefined) throw new Error(`${where}: not blocked; streamed ${JSON.stringify(outcome.streamed)}`);
          if (outcome.streamed.includes('zebra')) throw new Error(`${where}: the client saw the secret`);
        },
        RUNS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
