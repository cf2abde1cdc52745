/**
 * The run's state and its snapshot are one value: the environment's objects (the run's request
 * context, the custom-chunk outlet, the output chain's `streamParts`) read and write `RunState`,
 * `snapshotRun` needs the state and the position alone (and the processors' `durableState`
 * declarations), and `restoreRun` gives back a fresh state the run is set up over.
 */
import { concat, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { DemandGate } from '../../src/contract/demand-gate.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { RequestContext } from '../../src/contract/request-context.js';
import { createEnvironment, type RunSetUp } from '../../src/loop/run/run-environment.js';
import { inputPhase } from '../../src/loop/run/run-input.js';
import { modelStep } from '../../src/loop/step/model-step.js';
import { COMMIT, stepAt } from '../../src/loop/data/run-position.js';
import { restoreRun, snapshotRun, type RunSnapshot } from '../../src/loop/data/run-snapshot.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';

const caller = new RequestContext([
  ['tenant', 'acme'],
  ['drop-me', true],
]);

const writer: Processor = {
  id: 'writer',
  processInput: ({ requestContext, writer: streamWriter }) => {
    requestContext.set('seen', 1);
    requestContext.delete('drop-me');
    void streamWriter.custom({ type: 'data-note', data: { at: 'input' } });
  },
};
const reader: Processor = {
  id: 'reader',
  processOutputStream: ({ part, state, streamParts }) => {
    state['parts'] = streamParts.length;
    return part.type === 'text-delta' ? { ...part, payload: { ...part.payload, text: part.payload.text.toUpperCase() } } : part;
  },
};

function setUp(restore?: RunSnapshot): RunSetUp {
  return createEnvironment(
    { id: 'a', model: mockModel({ parts: [...textParts('Hi'), finishPart()] }), inputProcessors: [writer], outputProcessors: [reader] },
    'hello',
    { requestContext: caller, runId: 'run-views' },
    new DemandGate(),
    restore === undefined ? {} : { restore },
  ) as RunSetUp;
}

describe('the run\'s state holds what the environment shows', () => {
  it('request-context writes and deletes, custom chunks waiting, streamParts: in RunState, the caller\'s context untouched', async () => {
    const { env, state } = setUp();
    await lastValueFrom(inputPhase(env, state).pipe(toArray()));
    expect([...(state.requestContext.values ?? [])]).toEqual([['seen', 1]]);
    expect([...(state.requestContext.deleted ?? [])]).toEqual(['drop-me']);
    expect(env.ctx.requestContext.has('drop-me')).toBe(false);
    expect(caller.has('drop-me')).toBe(true);
    expect(caller.has('seen')).toBe(false);
    expect(state.customChunks).toEqual([{ type: 'data-note', data: { at: 'input' } }]);
    expect(state.streamParts).toEqual([]);

    const snapshotAtInput = snapshotRun(state, stepAt(0), env.apiErrorProcessors);
    expect(snapshotAtInput.customChunks).toEqual([{ type: 'data-note', data: { at: 'input' } }]);
    expect(snapshotAtInput.requestContext).toEqual({ values: [['seen', 1]], deleted: ['drop-me'] });
    expect(snapshotAtInput.streamParts).toBeNull();

    await lastValueFrom(modelStep(env, state, stepAt(0)).pipe(toArray()));
    expect(state.customChunks).toEqual([]); // drained into the step, after its step-start
    expect(state.streamParts).toHaveLength(1);
    expect(state.streamParts[0]?.processors).toEqual(['reader']);
    expect(state.streamParts[0]?.entered.length).toBeGreaterThan(3);
    const snapshot = snapshotRun(state, COMMIT, env.apiErrorProcessors);
    expect((snapshot.streamParts as { entered: unknown[] }).entered).toHaveLength(state.streamParts[0]?.entered.length ?? -1);
    expect(state.processorStates['reader']?.['parts']).toBeGreaterThan(3);
    expect(snapshot.processorStates).toEqual({ writer: {}, reader: { parts: state.processorStates['reader']?.['parts'] } });
  });

  it('restoreRun gives a fresh state; the run set up over it reads its overlay, its custom chunks and its streamParts', async () => {
    const first = setUp();
    await lastValueFrom(concat(inputPhase(first.env, first.state), modelStep(first.env, first.state, stepAt(0))).pipe(toArray()));
    const snapshot = JSON.parse(JSON.stringify(snapshotRun(first.state, COMMIT, first.env.apiErrorProcessors))) as RunSnapshot;

    const { state, position } = restoreRun(snapshot, first.env);
    expect(state).not.toBe(first.state);
    expect(position).toEqual(COMMIT);
    expect(state.runId).toBe('run-views');
    expect(state.streamParts[0]?.entered.length).toBe(first.state.streamParts[0]?.entered.length);

    const restored = setUp(snapshot);
    expect(restored.position).toEqual(COMMIT);
    expect(restored.env.ctx.requestContext.get('seen')).toBe(1);
    expect(restored.env.ctx.requestContext.has('drop-me')).toBe(false);
    expect(restored.env.ctx.requestContext.get('tenant')).toBe('acme');
    restored.env.ctx.requestContext.set('later', 2);
    expect(restored.state.requestContext.values?.get('later')).toBe(2);
    expect(restored.env.ctx.processorStates).toEqual(first.state.processorStates);
    expect(restored.state.processorStates).toBe(restored.env.ctx.processorStates);
  });
});
