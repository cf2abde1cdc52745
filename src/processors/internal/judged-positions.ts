/**
 * The reference's positioned detections (`start`, `end` beside the value), read on one strict path
 * by every guard that accepts them (`PIIDetector`, `SystemPromptScrubber`): a position is a whole
 * number, `start` and `end` come together, and `start ≤ end ≤` the judged text's length. A position
 * that cannot be in the text is an unreadable answer (a judge failure, blocked by default) — never a
 * detection read anyway. Positions are never used to redact: the value is searched in the text.
 */
import { z } from 'zod';

/** Where a detected value starts or ends in the judged text (UTF-16 index): a whole number from 0. */
export const judgedPosition = z.number().int().min(0);

/** A detection as far as its positions go; `null` (the reference's "none") is as left out. */
interface Positioned {
  start?: number | null | undefined;
  end?: number | null | undefined;
}

/**
 * `answer` with its detections' positions checked against `text` (the piece the judge was given):
 * both or neither, `start ≤ end ≤ text.length`; any other is an issue at `detections[i]`, so the
 * answer does not parse.
 *
 * @example
 * ```ts
 * const schema = positionsWithin(piiAnswer, piece); // {"detections": [{…, "start": 999, "end": 1000}]} on a short piece: unreadable
 * ```
 */
export function positionsWithin<T extends { detections?: readonly Positioned[] | null | undefined }>(answer: z.ZodType<T>, text: string): z.ZodType<T> {
  return answer.superRefine((parsed, context) => {
    (parsed.detections ?? []).forEach(({ start, end }, index) => {
      if (start == null && end == null) return;
      if (start == null || end == null) {
        context.addIssue({ code: 'custom', path: ['detections', index], message: 'start and end go together' });
      } else if (start > end || end > text.length) {
        context.addIssue({ code: 'custom', path: ['detections', index], message: `positions ${start}..${end} are not within the judged text (${text.length} characters)` });
      }
    });
  });
}
