/**
 * What the built-ins put into a durable run's snapshot (issue 32 §2): the model-backed guards leave
 * their output gate out (step-scoped: `Map`s and pending verdicts, empty at every commit) and keep
 * the rest as JSON — redactions, judge calls spent; ToolCallFilter keeps its history ids as an
 * array. A run restored from a commit gets that state back and goes on as the uninterrupted run.
 */
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { createRun } from '../../src/loop/run/create-run.js';
import { isChunk } from '../../src/loop/run/run-events.js';
import type { RunSnapshot } from '../../src/loop/data/run-snapshot.js';
import { ModerationProcessor } from '../../src/processors/moderation.js';
import { PIIDetector } from '../../src/processors/pii-detector.js';
import { PromptInjectionDetector } from '../../src/processors/prompt-injection-detector.js';
import { SystemPromptScrubber } from '../../src/processors/system-prompt-scrubber.js';
import { ToolCallFilter } from '../../src/processors/tool-call-filter.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { judgeModel } from './support/harness.js';
import { snapshotOf, tellCommitPoints } from '../support/commit-points.js';

const EMAIL = 'ada@example.com';
const model = () =>
  mockModel({
    parts: ({ options }) =>
      options.prompt.some((message) => message.role === 'tool')
        ? [...textParts(`Write to ${EMAIL} about it. All is well here.`, { id: 't1', chunkSize: 5 }), finishPart('stop')]
        : [...textParts(`Looking for ${EMAIL}.`, { id: 't0', chunkSize: 5 }), ...toolCallParts('lookup', { q: 'a' }), finishPart('tool-calls')],
  });
const piiJudge = () => judgeModel(({ prompt }) => JSON.stringify({ detections: prompt.includes(EMAIL) ? [{ type: 'email', value: EMAIL, confidence: 0.9 }] : [] }));
const tools = { lookup: { inputSchema: z.object({ q: z.string() }), execute: async () => ({ ok: true }) } };
const text = (chunks: ChunkType[]) => chunks.map((chunk) => (chunk.type === 'text-delta' ? chunk.payload.text : '')).join('');

async function runWith(make: () => { inputProcessors?: Processor[]; outputProcessors?: Processor[] }, restore?: RunSnapshot) {
  const snapshots: RunSnapshot[] = [];
  const items = await lastValueFrom(
    createRun({ id: 'a', model: model(), tools, instructions: 'Be brief.', ...make() }, 'Find ada', { runId: 'r' }, restore === undefined ? { commitPoints: true } : { restore }).pipe(
      tellCommitPoints((point) => void (point.kind === 'step' && snapshots.push(JSON.parse(JSON.stringify(snapshotOf(point))) as RunSnapshot))),
      toArray(),
    ),
  );
  return { chunks: items.filter(isChunk), snapshots };
}

describe('built-in state in a run snapshot', () => {
  const guards: Array<[string, string, () => Processor]> = [
    ['pii-detector', 'piiHeld', () => new PIIDetector({ model: piiJudge(), streamMode: 'window', windowSchedule: [10], redactionMethod: 'placeholder' })],
    ['moderation', 'moderationHeld', () => new ModerationProcessor({ model: judgeModel(() => '{"categories": {}}'), streamMode: 'window', windowSchedule: [10] })],
    ['system-prompt-scrubber', 'scrubberHeld', () => new SystemPromptScrubber({ model: judgeModel(() => '{"detections": []}'), streamMode: 'window', windowSchedule: [10] })],
  ];

  it.each(guards)('%s: the gate (%s) is left out, the rest kept; restored from step 0 the run ends as the uninterrupted one', async (id, gateKey, make) => {
    const whole = await runWith(() => ({ outputProcessors: [make()] }));
    expect(whole.snapshots).toHaveLength(2);
    const states = whole.snapshots.map((snapshot) => snapshot.processorStates[id] as Record<string, unknown>);
    for (const state of states) {
      expect(state).not.toHaveProperty(gateKey);
      expect(state['rxagent.judgeCalls']).toBeGreaterThan(0);
    }
    const restored = await runWith(() => ({ outputProcessors: [make()] }), whole.snapshots[0]);
    expect(text(restored.chunks)).toBe(text(whole.chunks.slice(whole.chunks.findIndex((chunk) => chunk.type === 'step-start' && chunk.payload.stepNumber === 1))));
    expect(restored.chunks.at(-1)?.type).toBe('finish');
  });

  it('pii-detector: the redactions made in step 0 are in its snapshot (JSON pairs), so processOutputResult still has them after a takeover', async () => {
    const make = () => new PIIDetector({ model: piiJudge(), redactionMethod: 'placeholder' });
    const whole = await runWith(() => ({ outputProcessors: [make()] }));
    expect(whole.snapshots[0]?.processorStates['pii-detector']).toMatchObject({ redactions: [[EMAIL, '[EMAIL]']] });
    expect(text(whole.chunks)).not.toContain(EMAIL);
  });

  it('prompt-injection-detector (input side): the judge-call slots are left out, the calls spent kept', async () => {
    const guard = () => new PromptInjectionDetector({ model: judgeModel(() => '{"categories": {}}') });
    const whole = await runWith(() => ({ inputProcessors: [guard()] }));
    expect(whole.snapshots).toHaveLength(2);
    const state = whole.snapshots[0]?.processorStates['prompt-injection-detector'] as Record<string, unknown>;
    expect(state).not.toHaveProperty('rxagent.judgeSlots');
    expect(state['rxagent.judgeCalls']).toBeGreaterThan(0);
  });

  it('tool-call-filter: the history ids are a JSON array in the snapshot', async () => {
    const whole = await runWith(() => ({ inputProcessors: [new ToolCallFilter()] }));
    expect(whole.snapshots[0]?.processorStates['tool-call-filter']).toEqual({ 'toolCallFilter.historyIds': [] });
  });
});
