/**
 * The restore check (`run-snapshot-check.ts`) refuses what the loop cannot read; it must never
 * refuse what a real run writes. Runs with every part kind a model streams (reasoning, text, a
 * tool call run here, a provider-executed one, a source, a file), a `data-*` chunk a processor
 * wrote, memory, and a provider error recovered by `processAPIError`: every commit point's snapshot,
 * through JSON as a journal row gives it back, restores and runs to the same end as the run that
 * was never interrupted.
 */
import { APICallError, type LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { lastValueFrom, tap, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { encodeJson } from '../../src/contract/json-codec.js';
import type { Processor } from '../../src/contract/processor-types.js';
import type { AgentConfig } from '../../src/loop/agent-types.js';
import { checkRunSnapshot } from '../../src/loop/data/run-snapshot-check.js';
import type { RunSnapshot } from '../../src/loop/data/run-snapshot-types.js';
import { createRun } from '../../src/loop/run/create-run.js';
import { isChunk } from '../../src/loop/run/run-events.js';
import { Memory } from '../../src/memory/memory.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, reasoningParts, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { snapshotOf, tellCommitPoints } from '../support/commit-points.js';
import { Sequence } from './support/snapshot-scenario.js';

/** The first step: every part kind, ending in tool calls. */
const firstStep: LanguageModelV4StreamPart[] = [
  { type: 'response-metadata', id: 'resp-1', modelId: 'mock', timestamp: new Date(0) },
  ...reasoningParts('Let me think.'),
  ...textParts('Looking it up.'),
  ...toolCallParts('weather', { city: 'Paris' }, { toolCallId: 'call-1' }),
  ...toolCallParts('web_search', { query: 'rxjs' }, { toolCallId: 'call-2', providerExecuted: true }),
  { type: 'tool-result', toolCallId: 'call-2', toolName: 'web_search', result: { hits: ['https://rxjs.dev'] } },
  { type: 'source', sourceType: 'url', id: 'src-1', url: 'https://rxjs.dev', title: 'RxJS' },
  { type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'iVBORw0KGgo=' } },
  finishPart('tool-calls'),
];

const answer: LanguageModelV4StreamPart[] = [...reasoningParts('Done.'), ...textParts('Sunny in Paris.'), finishPart('stop')];

const rateLimited = () =>
  new APICallError({ message: 'rate limited', url: 'https://api.example/v1', requestBodyValues: {}, statusCode: 429, isRetryable: true });

/**
 * One agent configuration, fresh per run (its ids from `ids`, its memory in `storage`); its model
 * goes on from call `firstCall` (a resumed run's model has served the calls before the snapshot).
 */
function config(ids: Sequence, storage: InMemoryStorage, firstCall = 0): AgentConfig & { model: ReturnType<typeof mockModel> } {
  const notes: Processor = {
    id: 'notes',
    processOutputStep: ({ stepNumber, writer, state }) => {
      state['steps'] = ((state['steps'] as number | undefined) ?? 0) + 1;
      void writer?.custom({ type: 'data-note', data: { stepNumber } });
    },
  };
  const recover: Processor = { id: 'recover', processAPIError: ({ retryCount }) => (retryCount === 0 ? { retry: true } : undefined) };
  return {
    id: 'parts-agent',
    instructions: 'Be brief.',
    // call 0: a 429, recovered; call 1: every part kind; call 2: the answer
    model: mockModel({
      error: ({ callIndex }: { callIndex: number }) => (firstCall + callIndex === 0 ? rateLimited() : undefined),
      parts: ({ callIndex }) => (firstCall + callIndex <= 1 ? firstStep : answer),
    }),
    tools: {
      weather: { description: 'Weather of a city.', inputSchema: z.object({ city: z.string() }), execute: ({ city }: { city: string }) => ({ city, sky: 'sunny' }) },
    },
    errorProcessors: [recover],
    outputProcessors: [notes],
    maxSteps: 5,
    generateId: ids.generateId,
    now: ids.now,
    memory: new Memory({ storage }),
  };
}

const options = { runId: 'run-parts', memory: { thread: 'thread-1', resource: 'user-1' } };

describe('the restore check on snapshots of real runs', () => {
  it('every commit point of a run with every part kind, a data chunk, memory and a recovered 429 passes the check and restores to the same end', async () => {
    const ids = new Sequence();
    const storage = new InMemoryStorage();
    const chunks: ChunkType[] = [];
    const points: Array<{ kind: string; at: number; snapshot: RunSnapshot; idNext: number; calls: number }> = [];
    const uninterrupted = config(ids, storage);
    await lastValueFrom(
      createRun(uninterrupted, 'Weather in Paris?', options, { commitPoints: true }).pipe(
        tellCommitPoints((point) => {
          const snapshot = JSON.parse(JSON.stringify(snapshotOf(point))) as RunSnapshot;
          points.push({ kind: point.kind, at: chunks.length, snapshot, idNext: ids.next, calls: uninterrupted.model.calls.length });
        }),
        tap((item) => {
          if (isChunk(item)) chunks.push(item);
        }),
        toArray(),
      ),
    );
    const types = new Set(chunks.map((chunk) => chunk.type));
    for (const type of ['reasoning-delta', 'text-delta', 'tool-call', 'tool-result', 'source', 'file', 'data-note', 'finish']) expect(types).toContain(type);
    expect(uninterrupted.model.calls).toHaveLength(3); // the 429, the tool step, the answer
    expect(points.map((point) => point.kind)).toEqual(expect.arrayContaining(['input', 'rejected', 'step']));
    expect(points.length).toBeGreaterThanOrEqual(4);
    const memory = encodeJson(await storage.getMessages({ threadId: 'thread-1' }));

    for (const point of points) {
      expect(() => checkRunSnapshot(point.snapshot), `${point.kind} at chunk ${point.at}`).not.toThrow();
      const resumedStorage = new InMemoryStorage();
      const resumed = await lastValueFrom(createRun(config(new Sequence(point.idNext), resumedStorage, point.calls), 'Weather in Paris?', options, { restore: point.snapshot }).pipe(toArray()));
      const resumedChunks = resumed.filter(isChunk);
      // the resumed run goes on where the snapshot was taken: the same chunks as the rest of the uninterrupted run
      expect(resumedChunks.slice(1).map((chunk) => encodeJson(chunk)), `${point.kind} at chunk ${point.at}`).toEqual(chunks.slice(point.at).map((chunk) => encodeJson(chunk)));
      if (point.kind === 'input') expect(encodeJson(await resumedStorage.getMessages({ threadId: 'thread-1' }))).toBe(memory);
    }
  });
});
