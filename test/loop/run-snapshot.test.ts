/** Run snapshots: what cannot be snapshotted or restored is a named error, and nothing half-happens. */
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { Processor } from '../../src/contract/processor-types.js';
import { createRun } from '../../src/loop/run/create-run.js';
import type { RunCommitPoint } from '../../src/loop/data/run-durability.js';
import { DurableStateError } from '../../src/loop/data/durable-state-error.js';
import { isChunk } from '../../src/loop/run/run-events.js';
import { RunSnapshotError } from '../../src/loop/data/run-snapshot-error.js';
import type { RunSnapshot } from '../../src/loop/data/run-snapshot.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { snapshotOf, tellCommitPoints } from '../support/commit-points.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';

const model = () => mockModel({ parts: [...textParts('Hi'), finishPart()] });

async function snapshotAtStep(processors: Processor[]): Promise<{ snapshot?: RunSnapshot; error?: unknown }> {
  let taken: { snapshot?: RunSnapshot; error?: unknown } = {};
  await lastValueFrom(
    createRun({ id: 'a', model: model(), outputProcessors: processors }, 'hello', {}, { commitPoints: true }).pipe(
      tellCommitPoints((point: RunCommitPoint) => {
        if (point.kind !== 'step') return;
        try {
          taken = { snapshot: snapshotOf(point) };
        } catch (error) {
          taken = { error };
        }
      }),
      toArray(),
    ),
  );
  return taken;
}

const keepsASet: Processor = {
  id: 'dedupe',
  processOutputStream: ({ part, state }) => {
    state['seen'] = { ids: new Set(['a']) };
    return part;
  },
};

describe('run snapshots', () => {
  it('a processor state that is not JSON fails the snapshot, naming processor, path and type', async () => {
    const { error } = await snapshotAtStep([keepsASet]);
    expect(DurableStateError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ name: 'DurableStateError', processorId: 'dedupe', path: '$.seen.ids', type: 'Set' });
  });

  it('a snapshot that cannot be taken: the point carries its error, then the run ends with it (the run does not go on unsaved)', async () => {
    const points: RunCommitPoint[] = [];
    const items = await lastValueFrom(
      createRun({ id: 'a', model: model(), outputProcessors: [keepsASet] }, 'hello', {}, { commitPoints: true }).pipe(
        tellCommitPoints((point: RunCommitPoint) => void points.push(point)),
        toArray(),
      ),
    );
    expect(points.map((point) => [point.kind, point.failed === undefined])).toEqual([
      ['input', true],
      ['step', false],
    ]);
    const chunks = items.filter(isChunk);
    expect(chunks.at(-1)).toMatchObject({ type: 'error', payload: { error: { name: 'DurableStateError', path: '$.seen.ids' } } });
    expect(chunks.map((chunk) => chunk.type)).not.toContain('finish');
  });

  it('a snapshot of a newer format is refused before anything runs', async () => {
    const { snapshot } = await snapshotAtStep([]);
    const model2 = mockModel({ parts: [...textParts('Hi'), finishPart()] });
    const items = await lastValueFrom(
      createRun({ id: 'a', model: model2 }, 'hello', {}, { restore: { ...(snapshot as RunSnapshot), format: 99 } }).pipe(toArray()),
    );
    const last = items.filter(isChunk).at(-1);
    expect(last?.type).toBe('error');
    expect(RunSnapshotError.isInstance(last?.type === 'error' ? last.payload.error : undefined)).toBe(true);
    expect(model2.calls).toHaveLength(0);
  });

  it('a snapshot restored into a run with other output processors is refused', async () => {
    const counter: Processor = { id: 'counter', processOutputStream: ({ part }) => part };
    const { snapshot } = await snapshotAtStep([counter]);
    const other: Processor = { id: 'other', processOutputStream: ({ part }) => part };
    const model2 = mockModel({ parts: [...textParts('Hi'), finishPart()] });
    const items = await lastValueFrom(createRun({ id: 'a', model: model2, outputProcessors: [other] }, 'hello', {}, { restore: snapshot as RunSnapshot }).pipe(toArray()));
    const last = items.filter(isChunk).at(-1);
    expect(last?.type === 'error' ? last.payload.error : undefined).toSatisfy((error: unknown) => RunSnapshotError.isInstance(error));
    expect(model2.calls).toHaveLength(0);
  });
});
