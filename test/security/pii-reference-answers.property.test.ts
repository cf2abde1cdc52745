/**
 * `PIIDetector` reads the reference's whole answer, `PIIDetectionResult`: `detections` (or `null`
 * for none), `categories` (`[{type, score}]` or `null`) and `redacted_content` (a string or
 * `null`). Such an answer was unreadable (blocked) because the reader refused the keys.
 *
 * - A category is read through the same label mapping as a detection's type. One scored at or
 *   above `threshold` that no detection of that type places is a violation the guard cannot
 *   redact by value: `block` blocks, `redact` and `filter` drop the judged text. An unknown
 *   category is a violation (`unrecognizedTypes`), as an unknown detection type is.
 * - `redacted_content` is never written into the text: values are redacted where the guard finds
 *   them, by `redactionMethod`. A `redacted_content` that differs from the judged text while the
 *   answer names nothing (no detection, no category) says the judge redacted something it did not
 *   name: a violation, never "nothing found".
 * - A malformed reference field (a category with another key, a score outside 0–1, a
 *   `redacted_content` that is no string) makes the answer unreadable: blocked.
 *
 * Case counts: `RXAGENT_PROPERTY_RUNS / 5` (at least 100).
 */
import fc from 'fast-check';
import { lastValueFrom, of } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import { processInput } from '../../src/operators/process-input.js';
import { PIIDetector, type PIIDetectorOptions } from '../../src/processors/pii-detector.js';
import { contextWith, judgedContents, judgeModel, listWith, textMessage, textOf } from '../processors/support/harness.js';
import { checkProperty, PROPERTY_RUNS, PROPERTY_TIMEOUT_MS } from '../reliability/support/property.js';

const RUNS = Math.max(100, Math.floor(PROPERTY_RUNS / 5));

/** Runs the input hook on `text` with a judge answering `answer(judged)` (`judged`: the quoted text). */
async function inspect(options: Omit<PIIDetectorOptions, 'model'>, text: string, answer: (judged: string) => unknown) {
  const model = judgeModel(({ prompt }) => JSON.stringify(answer(judgedContents(prompt)[0] ?? '')));
  const list = listWith([textMessage('u1', 'user', text)]);
  const onViolation = vi.fn();
  const processor = new PIIDetector({ model, onViolation, ...options });
  const result = await lastValueFrom(of(list).pipe(processInput([processor], contextWith(list)))).catch((error: unknown) => error);
  return { result, texts: list.get.input.db().map(textOf), onViolation, calls: model.calls.length };
}

const lower = (min: number, max: number) => fc.stringMatching(new RegExp(`^[a-z]{${min},${max}}$`));
const emailSpellings = fc.constantFrom('email', 'EMAIL', 'Email', 'e-mail', 'email address', 'E-Mail Address', 'mail');
/** Words that are no PII type of ours, nor a synonym of one. */
const unknownType = fc.constantFrom('url', 'uuid', 'crypto-wallet', 'vehicle plate', 'employee id', 'medical record', 'zzz');
const sentence = fc.tuple(lower(3, 8), lower(3, 8), lower(3, 8)).map((words) => words.join(' '));

/** A reference answer's key order, generated: the reader must not depend on it. */
function ordered(entries: Array<[string, unknown]>, order: number[]): Record<string, unknown> {
  const sorted = entries.map((entry, index) => ({ entry, rank: order[index] ?? index })).sort((a, b) => a.rank - b.rank);
  return Object.fromEntries(sorted.map(({ entry }) => entry));
}

describe("the reference's PII answer (categories, detections, redacted_content) is read on one strict path (property)", () => {
  it(
    "a located detection with the reference's fields: redacted by redactionMethod, the judge's redacted_content never in the text",
    async () => {
      await checkProperty(
        'pii-reference-answer-redacts',
        fc.record({
          before: sentence,
          after: sentence,
          local: lower(3, 10),
          categorySpelling: emailSpellings,
          detectionSpelling: emailSpellings,
          score: fc.double({ min: 0.6, max: 1, noNaN: true }),
          categories: fc.constantFrom('listed', 'null', 'absent'),
          redacted: fc.oneof(fc.constant(null), fc.constant(undefined), lower(3, 10).map((tag) => `LEAKMARK${tag}`)),
          order: fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 3, maxLength: 3 }),
          method: fc.constantFrom<'mask' | 'placeholder' | 'remove' | 'hash'>('mask', 'placeholder', 'remove', 'hash'),
        }),
        async ({ before, after, local, categorySpelling, detectionSpelling, score, categories, redacted, order, method }) => {
          const email = `${local}@example.com`;
          const text = `${before} ${email} ${after}`;
          const { result, texts } = await inspect({ strategy: 'redact', redactionMethod: method }, text, (judged) => {
            const start = judged.indexOf(email);
            const detection = { type: detectionSpelling, value: email, confidence: score, start, end: start + email.length, redacted_value: redacted === undefined ? null : redacted };
            const entries: Array<[string, unknown]> = [['detections', [detection]]];
            if (categories !== 'absent') entries.push(['categories', categories === 'null' ? null : [{ type: categorySpelling, score }]]);
            if (redacted !== undefined) entries.push(['redacted_content', redacted === null ? null : `${before} ${redacted} ${after}`]);
            return ordered(entries, order);
          });
          if (TripWire.isInstance(result)) throw new Error(`blocked: ${String((result as TripWire).reason)}`);
          const seen = texts.join('\n');
          if (seen.includes(email)) throw new Error(`the value passed: ${seen}`);
          if (seen.includes('LEAKMARK')) throw new Error(`the judge's redacted_content was written into the text: ${seen}`);
          if (!seen.startsWith(before) || !seen.endsWith(after)) throw new Error(`the text around the value changed: ${seen}`);
          if (method === 'placeholder' && !seen.includes('[EMAIL]')) throw new Error(`not redacted by redactionMethod: ${seen}`);
        },
        RUNS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'a category at or above the threshold that no detection places: block blocks, redact and filter never let the text through',
    async () => {
      await checkProperty(
        'pii-reference-answer-category-only',
        fc.record({
          text: sentence,
          type: fc.oneof(emailSpellings, fc.constantFrom('phone number', 'SSN', 'credit card', 'name', 'Date of Birth'), unknownType),
          score: fc.double({ min: 0.5, max: 1, noNaN: true }),
          detections: fc.constantFrom<unknown>(null, []),
          redacted: fc.constantFrom<unknown>(undefined, null),
          strategy: fc.constantFrom<'block' | 'redact' | 'filter'>('block', 'redact', 'filter'),
        }),
        async ({ text, type, score, detections, redacted, strategy }) => {
          const { result, texts, onViolation } = await inspect({ strategy }, text, () => ({
            categories: [{ type, score }],
            detections,
            ...(redacted === undefined ? {} : { redacted_content: redacted }),
          }));
          const where = `${strategy} ${JSON.stringify(type)} ${score}`;
          if (strategy === 'block' && !TripWire.isInstance(result)) throw new Error(`${where}: not blocked`);
          if (!TripWire.isInstance(result) && texts.some((seen) => seen.includes(text))) throw new Error(`${where}: the text passed: ${JSON.stringify(texts)}`);
          // told of it (filter: also of the abort when no input message is left, as for any detection)
          if (!String((onViolation.mock.calls[0]?.[0] as { message?: string } | undefined)?.message).startsWith('PII detected in the input')) {
            throw new Error(`${where}: onViolation not told of the category: ${JSON.stringify(onViolation.mock.calls)}`);
          }
        },
        RUNS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'a category below the threshold, or a known type the guard was not asked for, changes nothing',
    async () => {
      await checkProperty(
        'pii-reference-answer-category-ignored',
        fc.record({
          text: sentence,
          below: fc.record({ type: fc.oneof(emailSpellings, unknownType), score: fc.double({ min: 0, max: 0.49, noNaN: true }) }),
          notAsked: fc.record({ type: fc.constantFrom('phone', 'phone number', 'ssn'), score: fc.double({ min: 0.5, max: 1, noNaN: true }) }),
          redacted: fc.constantFrom<'same' | 'null' | 'absent' | 'spaced'>('same', 'null', 'absent', 'spaced'),
        }),
        async ({ text, below, notAsked, redacted }) => {
          const { result, texts, onViolation } = await inspect({ strategy: 'block', detectionTypes: ['email', 'name'] }, text, (judged) => ({
            categories: [below, notAsked],
            detections: null,
            ...(redacted === 'absent' ? {} : { redacted_content: redacted === 'null' ? null : redacted === 'same' ? judged : ` ${judged.replace(/ /g, '  ')} ` }),
          }));
          if (TripWire.isInstance(result)) throw new Error(`blocked: ${String((result as TripWire).reason)}`);
          expect(texts).toEqual([text]);
          expect(onViolation).not.toHaveBeenCalled();
        },
        RUNS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'a redacted_content that differs from the judged text while nothing is named: a violation, never "nothing found"',
    async () => {
      await checkProperty(
        'pii-reference-answer-unnamed-redaction',
        fc.record({
          before: sentence,
          after: sentence,
          local: lower(3, 10),
          replacement: fc.constantFrom('[EMAIL]', '***', '', '[REDACTED]', 'j***@e******.com'),
          detections: fc.constantFrom<unknown>(null, []),
          categories: fc.constantFrom<unknown>(undefined, null, []),
          strategy: fc.constantFrom<'block' | 'redact' | 'filter'>('block', 'redact', 'filter'),
        }),
        async ({ before, after, local, replacement, detections, categories, strategy }) => {
          const email = `${local}@example.com`;
          const text = `${before} ${email} ${after}`;
          const { result, texts } = await inspect({ strategy }, text, (judged) => ({
            detections,
            ...(categories === undefined ? {} : { categories }),
            redacted_content: judged.replace(email, replacement),
          }));
          if (strategy === 'block' && !TripWire.isInstance(result)) throw new Error(`${strategy}: not blocked`);
          if (!TripWire.isInstance(result) && texts.some((seen) => seen.includes(email))) throw new Error(`${strategy}: the value passed: ${JSON.stringify(texts)}`);
        },
        RUNS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'a malformed reference field makes the answer unreadable: blocked',
    async () => {
      await checkProperty(
        'pii-reference-answer-malformed',
        fc.record({
          text: sentence,
          answer: fc.constantFrom<Record<string, unknown>>(
            { detections: [], categories: [{ type: 'email', score: 0.9, flagged: true }] },
            { detections: [], categories: [{ type: 'email', score: 1.5 }] },
            { detections: [], categories: [{ type: 'email', score: '0.9' }] },
            { detections: [], categories: [{ type: 'email' }] },
            { detections: [], categories: { email: 0.9 } },
            { detections: [], categories: ['email'] },
            { detections: [], redacted_content: true },
            { detections: [], redacted_content: 0 },
            { detections: [], redacted_content: ['x'] },
            { categories: [{ type: 'email', score: 0.9 }] },
            { categories: null, redacted_content: null },
          ),
          strategy: fc.constantFrom<'block' | 'redact' | 'warn'>('block', 'redact', 'warn'),
        }),
        async ({ text, answer, strategy }) => {
          const { result } = await inspect({ strategy }, text, () => answer);
          if (!TripWire.isInstance(result)) throw new Error(`${JSON.stringify(answer)} under ${strategy}: not blocked`);
          expect((result as TripWire).metadata).toMatchObject({ kind: 'content' });
        },
        Math.max(40, Math.floor(RUNS / 2)),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it("the reference's clean answers read as clean", async () => {
    for (const answer of [
      { categories: null, detections: null, redacted_content: null },
      { categories: [], detections: [] },
      { categories: null, detections: null },
      { detections: [], redacted_content: null },
    ]) {
      const { result, texts } = await inspect({ strategy: 'block' }, 'A plain sentence about spring.', () => answer);
      expect(TripWire.isInstance(result), JSON.stringify(answer)).toBe(false);
      expect(texts).toEqual(['A plain sentence about spring.']);
    }
  });

  it('an unknown category is reported as unrecognized, server side only', async () => {
    const { result, onViolation } = await inspect({ strategy: 'block' }, 'A plain sentence.', () => ({ categories: [{ type: 'vehicle plate', score: 0.9 }], detections: null }));
    expect(TripWire.isInstance(result)).toBe(true);
    expect((result as TripWire).metadata).toMatchObject({ processorId: 'pii-detector', types: ['unrecognized'], count: 1 });
    expect(JSON.stringify((result as TripWire).metadata)).not.toContain('vehicle');
    expect(onViolation.mock.calls[0]?.[0]).toMatchObject({ detail: { unrecognizedTypes: ['vehicle plate'] } });
  });
});
