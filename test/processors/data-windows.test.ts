/**
 * `data-*` chunks judged in windows (issue 31 §1, last bullet): the call budget counts judged
 * windows, not chunks. A tool reporting progress 1,000 times costs a handful of calls, every part is
 * released in order with the verdict of its window, and a part written again with the same id while
 * pending replaces the pending one (only its latest version is judged and released).
 */
import { from, lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import { ModerationProcessor } from '../../src/processors/moderation.js';
import { PIIDetector } from '../../src/processors/pii-detector.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { Agent } from '../../src/loop/agent.js';
import { createRunContext } from '../../src/operators/run-context.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { judgedContents, judgeModel, outputStream, promptText, runOutputStream } from './support/harness.js';

const VALUE = 'Ada Lovelace';
const FLAGGED_PART = 517;

/** Reports `VALUE` as a name whenever the judged content holds it. */
const detector = () =>
  judgeModel(({ prompt }) => {
    const found = judgedContents(prompt).join('\n').includes(VALUE);
    return JSON.stringify({ detections: found ? [{ type: 'name', value: VALUE, confidence: 0.99 }] : [] });
  });

const progress = (index: number, note: string, id = `progress-${index}`) =>
  ({ type: 'data-progress', id, data: { done: index, note } }) as unknown as ChunkType;

/** 1,000 progress parts, part 517 naming `VALUE`. */
const thousandParts = () =>
  Array.from({ length: 1_000 }, (_, index) => progress(index, index === FLAGGED_PART ? `looked up ${VALUE}` : `row ${index} loaded`));

const dataOf = (part: ChunkType | undefined) => (part as unknown as { data: { done: number; note: string } } | undefined)?.data;

describe('data chunks judged in windows', () => {
  it('1,000 progress parts cost at most 12 judge calls, are all released in order, and the flagged value in part 517 is redacted', async () => {
    const model = detector();
    const guard = new PIIDetector({ model, redactionMethod: 'placeholder' });
    const output = await runOutputStream([guard], [...thousandParts(), chunk.finish()]);
    expect(model.calls.length).toBeLessThanOrEqual(12);
    expect(output).toHaveLength(1_001);
    expect(output.at(-1)?.type).toBe('finish');
    expect(output.slice(0, -1).map((part) => dataOf(part)?.done)).toEqual(Array.from({ length: 1_000 }, (_, index) => index));
    expect(dataOf(output[FLAGGED_PART])?.note).toBe('looked up [NAME]');
    expect(dataOf(output[FLAGGED_PART + 1])?.note).toBe(`row ${FLAGGED_PART + 1} loaded`);
    expect(JSON.stringify(output)).not.toContain(VALUE);
    // every part was judged exactly once
    const judged = model.calls.flatMap((call) => judgedContents(promptText(call))).join('\n');
    expect(judged.match(/row \d+ loaded|looked up/g)).toHaveLength(1_000);
  });

  it('a block verdict on the window holding part 517 ends the run before that window is released', async () => {
    const model = judgeModel(({ prompt }) =>
      JSON.stringify({ categories: { violence: judgedContents(prompt).join('\n').includes(VALUE) ? 0.99 : 0 } }),
    );
    const guard = new ModerationProcessor({ model, channels: ['data'] });
    const released: ChunkType[] = [];
    const error = await new Promise<unknown>((resolve) => {
      from([...thousandParts(), chunk.finish()])
        .pipe(outputStream([guard], createRunContext()))
        .subscribe({ next: (part) => released.push(part), error: resolve, complete: () => resolve(undefined) });
    });
    expect(TripWire.isInstance(error)).toBe(true);
    expect(model.calls.length).toBeLessThanOrEqual(12);
    // what was released is a prefix of the parts, in order, ending before the flagged part
    expect(released.map((part) => dataOf(part)?.done)).toEqual(Array.from({ length: released.length }, (_, index) => index));
    expect(released.length).toBeLessThan(FLAGGED_PART);
    expect(JSON.stringify(released)).not.toContain(VALUE);
  });

  it('a part written again with the same id while pending is judged once, as its latest version, and released once', async () => {
    const model = detector();
    const guard = new PIIDetector({ model, redactionMethod: 'placeholder', streamMode: 'final' });
    const rewrites = Array.from({ length: 50 }, (_, index) => progress(index, index === 3 ? `looked up ${VALUE}` : `step ${index}`, 'job'));
    const output = await runOutputStream([guard], [...rewrites, progress(99, 'other part'), chunk.finish()]);
    expect(output.map((part) => dataOf(part)?.note)).toEqual(['step 49', 'other part', undefined]);
    expect(model.calls).toHaveLength(1);
    const judged = judgedContents(promptText(model.calls[0] as Parameters<typeof promptText>[0]));
    expect(judged.join('\n')).not.toContain(VALUE);
    expect(judged.join('\n')).toContain('step 49');
    expect(judged.join('\n')).not.toContain('step 48');
  });

  it('a part whose earlier version was already sent to the judge is a new part: both are released, each judged once', async () => {
    const model = detector();
    const guard = new PIIDetector({ model, redactionMethod: 'placeholder', windowSchedule: [10] });
    // the first part fills its 10-character window and is sent to the judge at once; the second comes after
    const output = await runOutputStream([guard], [progress(0, 'first version', 'job'), progress(1, 'second version', 'job'), chunk.finish()]);
    expect(output.map((part) => dataOf(part)?.note)).toEqual(['first version', 'second version', undefined]);
    expect(model.calls).toHaveLength(2);
  });

  it('a chunk that is not data judges the pending window first and keeps its place behind it', async () => {
    const model = detector();
    const guard = new PIIDetector({ model, redactionMethod: 'placeholder' });
    const output = await runOutputStream(
      [guard],
      [progress(0, 'start'), progress(1, `found ${VALUE}`), chunk.textStart('t'), chunk.textDelta('Done.', 't'), chunk.textEnd('t'), progress(2, 'end'), chunk.finish()],
    );
    expect(output.map((part) => dataOf(part)?.note ?? part.type)).toEqual(['start', 'found [NAME]', 'text-start', 'text-delta', 'text-end', 'end', 'finish']);
  });

  it('in an Agent: a tool writing 1,000 progress parts through writer.custom costs at most 12 judge calls; all reach the client in order, part 517 redacted', async () => {
    const judge = detector();
    const model = mockModel({
      parts: ({ options }) =>
        options.prompt.some((message) => message.role === 'tool')
          ? [...textParts('All rows loaded.'), finishPart('stop')]
          : [...toolCallParts('load', { rows: 1_000 }), finishPart('tool-calls')],
    });
    type Writer = { custom: (part: ChunkType & { type: `data-${string}` }) => Promise<void> };
    const agent = new Agent({
      id: 'a',
      model,
      instructions: 'Load the rows.',
      outputProcessors: [new PIIDetector({ model: judge, redactionMethod: 'placeholder', channels: ['data'] })],
      tools: {
        load: {
          inputSchema: z.object({ rows: z.number() }),
          execute: async ({ rows }: { rows: number }, { writer }: { writer: Writer }) => {
            for (const part of thousandParts().slice(0, rows)) await writer.custom(part as ChunkType & { type: `data-${string}` });
            return { loaded: rows };
          },
        },
      },
    });
    const chunks = await lastValueFrom(agent.stream$('go').pipe(toArray()));
    const parts = chunks.filter((part) => part.type === 'data-progress');
    expect(parts.map((part) => dataOf(part)?.done)).toEqual(Array.from({ length: 1_000 }, (_, index) => index));
    expect(dataOf(parts[FLAGGED_PART])?.note).toBe('looked up [NAME]');
    expect(JSON.stringify(chunks)).not.toContain(VALUE);
    expect(chunks.at(-1)?.type).toBe('finish');
    expect(judge.calls.length).toBeLessThanOrEqual(12);
  });
});
