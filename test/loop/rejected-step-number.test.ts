/**
 * While a rejected attempt's closing chunks pass the output chain (and its `rejected` commit point
 * is taken), the run context's `stepNumber` is that attempt's: it used to read 0 there, because
 * the number was read off the attempt under way, which the rejection had cleared.
 */
import { concat, lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { DemandGate } from '../../src/contract/demand-gate.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { Processor } from '../../src/contract/processor-types.js';
import type { RunContext } from '../../src/operators/run-context.js';
import { createEnvironment, type RunSetUp } from '../../src/loop/run/run-environment.js';
import { inputPhase } from '../../src/loop/run/run-input.js';
import { modelStep } from '../../src/loop/step/model-step.js';
import { stepAt } from '../../src/loop/data/run-position.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { tellCommitPoints } from '../support/commit-points.js';

describe('the run context\'s stepNumber while a rejected attempt closes', () => {
  it('is the rejected attempt\'s number (step 1 here), for its closing step-finish and its rejected commit point', async () => {
    let ctx: RunContext | undefined;
    const seen: Array<{ chunk: string; reason: string | undefined; chunkStep: number; ctxStep: number | undefined }> = [];
    const commits: Array<{ kind: string; ctxStep: number | undefined }> = [];
    const retryOnce: Processor = {
      id: 'retry-once',
      processOutputStream: ({ part }) => {
        if (part.type === 'step-finish') {
          seen.push({ chunk: part.type, reason: part.payload.stepResult.reason, chunkStep: part.payload.stepNumber, ctxStep: ctx?.stepNumber });
        }
        return part;
      },
      processOutputStep: ({ state, toolCalls, abort }) => {
        if (toolCalls.length === 0 && state['retried'] !== true) {
          state['retried'] = true;
          abort('once more', { retry: true });
        }
      },
    };
    const model = mockModel({
      parts: ({ callIndex }) => (callIndex === 0 ? [...toolCallParts('echo', { n: 1 }), finishPart('tool-calls')] : [...textParts('Done'), finishPart()]),
    });
    const made = createEnvironment(
      {
        id: 'a',
        model,
        tools: { echo: { description: 'echo', inputSchema: z.object({ n: z.number() }), execute: (input: { n: number }) => input } },
        outputProcessors: [retryOnce],
        maxProcessorRetries: 1,
      },
      'hello',
      {},
      new DemandGate(),
      { commitPoints: true },
    ) as RunSetUp;
    const { env, state } = made;
    ctx = env.ctx;
    const chunks: ChunkType[] = (await lastValueFrom(concat(inputPhase(env, state), modelStep(env, state, stepAt(0)), modelStep(env, state, stepAt(1))).pipe(
          tellCommitPoints((point) => commits.push({ kind: point.kind, ctxStep: ctx?.stepNumber })),
          toArray(),
        ),
      )).filter(
      (item): item is ChunkType => 'type' in item,
    );
    expect(chunks.filter((chunk) => chunk.type === 'step-finish')).toHaveLength(3);
    expect(seen).toEqual([
      { chunk: 'step-finish', reason: 'tool-calls', chunkStep: 0, ctxStep: 0 },
      { chunk: 'step-finish', reason: 'retry', chunkStep: 1, ctxStep: 1 },
      { chunk: 'step-finish', reason: 'stop', chunkStep: 2, ctxStep: 2 },
    ]);
    expect(commits).toContainEqual({ kind: 'rejected', ctxStep: 1 });
  });
});
