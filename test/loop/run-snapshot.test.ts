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
import { finishPart, textParts } from '../../src/testing/model-parts.js';

const model = () => mockModel({ parts: [...textParts('Hi'), finishPart()] });

async function snapshotOf(processors: Processor[]): Promise<{ snapshot?: RunSnapshot; error?: unknown }> {
  let taken: { snapshot?: RunSnapshot; error?: unknown } = {};
  await lastValueFrom(
    createRun({ id: 'a', model: model(), outputProcessors: processors }, 'hello', {}, {
      checkpoint: (point: RunCommitPoint) => {
        if (point.kind !== 'step') return;
        try {
          taken = { snapshot: point.snapshot() };
        } catch (error) {
          taken = { error };
        }
      },
    }).pipe(toArray()),
  );
  return taken;
}

describe('run snapshots', () => {
  it('a processor state that is not JSON fails the snapshot, naming processor, path and type', async () => {
    const keepsASet: Processor = {
      id: 'dedupe',
      processOutputStream: ({ part, state }) => {
        state['seen'] = { ids: new Set(['a']) };
        return part;
      },
    };
    const { error } = await snapshotOf([keepsASet]);
    expect(DurableStateError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ name: 'DurableStateError', processorId: 'dedupe', path: '$.seen.ids', type: 'Set' });
  });

  it('a checkpoint that throws ends the run with its error (the run does not go on unsaved)', async () => {
    const items = await lastValueFrom(
      createRun({ id: 'a', model: model() }, 'hello', {}, {
        checkpoint: () => {
          throw new Error('journal down');
        },
      }).pipe(toArray()),
    );
    const chunks = items.filter(isChunk);
    expect(chunks.at(-1)).toMatchObject({ type: 'error', payload: { error: { message: 'journal down' } } });
    expect(chunks.map((chunk) => chunk.type)).not.toContain('step-start');
  });

  it('a snapshot of a newer format is refused before anything runs', async () => {
    const { snapshot } = await snapshotOf([]);
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
    const { snapshot } = await snapshotOf([counter]);
    const other: Processor = { id: 'other', processOutputStream: ({ part }) => part };
    const model2 = mockModel({ parts: [...textParts('Hi'), finishPart()] });
    const items = await lastValueFrom(createRun({ id: 'a', model: model2, outputProcessors: [other] }, 'hello', {}, { restore: snapshot as RunSnapshot }).pipe(toArray()));
    const last = items.filter(isChunk).at(-1);
    expect(last?.type === 'error' ? last.payload.error : undefined).toSatisfy((error: unknown) => RunSnapshotError.isInstance(error));
    expect(model2.calls).toHaveLength(0);
  });
});
