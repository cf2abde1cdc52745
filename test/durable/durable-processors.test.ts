/**
 * The rule `submit()` applies to processors (issue 32 §2): a processor runs durably unless it says
 * it cannot — `durableState: false`, `{ notDurable: why }` — or its `durableState` is none of the
 * documented forms; each refusal is a `NotDurableError` naming the processor and why. And a
 * `{ notDurable }` processor that reaches a snapshot anyway (a run made without the worker) fails it
 * with a `DurableStateError` naming it.
 */
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { Processor } from 'rxagent';
import { NotDurableError } from 'rxagent/durable';
import { PIIDetector } from 'rxagent/processors';
import { mockModel } from 'rxagent/testing';
import { assertDurableProcessor } from '../../src/durable/internal/durable-processors.js';
import { createRun } from '../../src/loop/run/create-run.js';
import { DurableStateError } from '../../src/loop/data/durable-state-error.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { snapshotOf, tellCommitPoints } from '../support/commit-points.js';

const withState = (durableState: unknown): Processor => ({ id: 'p', durableState, processOutputStream: ({ part }) => part }) as Processor;

function refusal(processor: Processor): NotDurableError | undefined {
  try {
    assertDurableProcessor(processor);
    return undefined;
  } catch (error) {
    if (NotDurableError.isInstance(error)) return error;
    throw error;
  }
}

describe('assertDurableProcessor (the submit rule)', () => {
  it('accepts no durableState, json, reset and { snapshot, restore }', () => {
    for (const durableState of [undefined, 'json', 'reset', { snapshot: () => null, restore: () => ({}) }]) expect(refusal(withState(durableState))).toBeUndefined();
  });

  it('refuses false and { notDurable } with the processor and the reason', () => {
    expect(refusal(withState(false))).toMatchObject({ what: 'processor "p"', message: expect.stringContaining('durableState: false') });
    expect(refusal(withState({ notDurable: 'it holds a socket' }))).toMatchObject({ what: 'processor "p"', message: 'processor "p": it holds a socket' });
  });

  it('refuses a durableState of no documented form, saying what it got', () => {
    expect(refusal(withState('snapshot'))?.message).toMatch(/processor "p": its durableState is not one of .* \(got "snapshot"\)/);
    expect(refusal(withState({ snapshot: () => null }))?.message).toContain('(got an object with "snapshot")');
    expect(refusal(withState(true))?.message).toContain('(got true)');
  });

  it("PIIDetector: 'hash' without a hashKey is refused naming hashKey; with one, and every other method, it is durable", () => {
    const model = mockModel();
    expect(refusal(new PIIDetector({ model, redactionMethod: 'hash' }))?.message).toMatch(/pii-detector.*hashKey/);
    expect(refusal(new PIIDetector({ model, redactionMethod: 'hash', hashKey: 'k' }))).toBeUndefined();
    for (const redactionMethod of ['mask', 'placeholder', 'remove'] as const) expect(refusal(new PIIDetector({ model, redactionMethod }))).toBeUndefined();
  });
});

describe('a { notDurable } processor at a commit', () => {
  it('fails the snapshot with a DurableStateError naming the processor and the reason', async () => {
    let error: unknown;
    await lastValueFrom(
      createRun({ id: 'a', model: mockModel({ parts: [...textParts('Hi'), finishPart()] }), outputProcessors: [withState({ notDurable: 'it holds a socket' })] }, 'Hi', { runId: 'r' }, { commitPoints: true }).pipe(
        tellCommitPoints((point) => {
          try {
            snapshotOf(point);
          } catch (caught) {
            error ??= caught;
          }
        }),
        toArray(),
      ),
    );
    expect(DurableStateError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ processorId: 'p', type: 'not durable: it holds a socket' });
  });
});
