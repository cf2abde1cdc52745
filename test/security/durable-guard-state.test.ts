/**
 * RegexFilterProcessor's stream state (held text, block segments, fragments) is plain data at every
 * commit point, so a durable run snapshots it (no DurableStateError) and a run restored from the
 * step boundary goes on as the uninterrupted one: a secret split around a tool call is still caught
 * after the restore, and an address ending step 1 is still not joined with step 2's first word.
 */
import { lastValueFrom, toArray, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { createRun } from '../../src/loop/run/create-run.js';
import type { RunCommitPoint } from '../../src/loop/data/run-durability.js';
import { isChunk, type RunItem } from '../../src/loop/run/run-events.js';
import type { RunSnapshot } from '../../src/loop/data/run-snapshot.js';
import { RegexFilterProcessor } from '../../src/processors/regex-filter.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { streamedText } from '../processors/support/harness.js';
import { snapshotOf, tellCommitPoints } from '../support/commit-points.js';

const stepOne = (text: string): LanguageModelV4StreamPart[] => [...textParts(text, { id: 'b1' }), ...toolCallParts('noop', {}), finishPart('tool-calls')];
const stepTwo = (text: string): LanguageModelV4StreamPart[] => [...textParts(text, { id: 'b1' }), finishPart()];
const config = (parts: (callIndex: number) => LanguageModelV4StreamPart[]) => ({
  id: 'a',
  model: mockModel({ parts: ({ callIndex }) => parts(callIndex) }),
  tools: { noop: { description: 'does nothing', execute: () => 'ok' } },
  outputProcessors: [new RegexFilterProcessor({ presets: ['pii', 'secrets'], strategy: 'redact' })],
});

async function chunksOf(run: Observable<RunItem>) {
  return (await lastValueFrom(run.pipe(toArray()))).filter(isChunk);
}

describe('RegexFilterProcessor state in a durable run', () => {
  for (const [first, second, expected] of [
    ['key AKIAQWER', 'TYUIOPASDFGH done', '[AWS_KEY] done'],
    ['mail ada@example.com', 'Done!', 'Done!'],
  ] as const) {
    it(`snapshots at each step and goes on from it: ${JSON.stringify([first, second])}`, async () => {
      const snapshots: RunSnapshot[] = [];
      const whole = await chunksOf(
        createRun(config((index) => (index === 0 ? stepOne(first) : stepTwo(second))), 'x', {}, { commitPoints: true }).pipe(
          tellCommitPoints((point: RunCommitPoint) => {
            if (point.kind === 'step') snapshots.push(JSON.parse(JSON.stringify(snapshotOf(point))) as RunSnapshot);
          }),
        ),
      );
      expect(snapshots.length).toBe(2);
      const restored = await chunksOf(createRun(config(() => stepTwo(second)), 'x', {}, { restore: snapshots[0] as RunSnapshot }));
      const afterStepOne = (chunks: typeof whole) => streamedText(chunks.slice(chunks.findLastIndex((chunk) => chunk.type === 'step-start')));
      expect(afterStepOne(whole)).toBe(expected);
      expect(afterStepOne(restored)).toBe(expected);
    });
  }
});
