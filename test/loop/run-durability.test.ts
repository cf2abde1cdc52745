/**
 * What durable execution plugs into a run (issue 22 §4, the footing of issue 25): the commit points
 * and their order, a restore at a `model` point (tools run, the model is not called again), the tool
 * ledger (run, answered, failed), `idempotencyKey`, `durableState` and the memory fence.
 */
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { DemandGate } from '../../src/contract/demand-gate.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { createRun } from '../../src/loop/run/create-run.js';
import { DurableStateError } from '../../src/loop/data/durable-state-error.js';
import type { LedgerToolCall, RunCommitPoint, RunDurability, ToolBegin } from '../../src/loop/data/run-durability.js';
import { isChunk } from '../../src/loop/run/run-events.js';
import type { RunSnapshot } from '../../src/loop/data/run-snapshot.js';
import { Memory } from '../../src/memory/memory.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import { InMemoryRunJournal } from '../../src/storage/journal/in-memory-run-journal.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { snapshotOf, tellCommitPoints } from '../support/commit-points.js';

/** A model that calls `charge` once, then answers. */
const toolThenText = () =>
  mockModel({
    parts: ({ callIndex }) =>
      callIndex === 0 ? [...toolCallParts('charge', { cents: 500 }), finishPart('tool-calls')] : [...textParts('Charged.'), finishPart('stop')],
  });

interface ChargeLog {
  executions: Array<{ cents: number; idempotencyKey: string }>;
}

function charge(log: ChargeLog, idempotent = false) {
  return {
    inputSchema: z.object({ cents: z.number() }),
    idempotent,
    execute: async ({ cents }: { cents: number }, { idempotencyKey }: { idempotencyKey: string }) => {
      log.executions.push({ cents, idempotencyKey });
      return { charged: cents };
    },
  };
}

/** A run with `durability`; with `tell`, its commit points (`commitPoints: true`) told to it. */
async function run(config: Parameters<typeof createRun>[0], durability: RunDurability, tell?: (point: RunCommitPoint) => void, runId = 'run-7'): Promise<ChunkType[]> {
  const wiring: RunDurability = tell === undefined ? durability : { ...durability, commitPoints: true };
  const items = await lastValueFrom(createRun(config, 'Charge me', { runId }, wiring).pipe(tellCommitPoints(tell ?? (() => undefined)), toArray()));
  return items.filter(isChunk);
}

describe('durable runs: commit points', () => {
  it('a run with a tool step commits at input, model (with the calls), step, step (last)', async () => {
    const log: ChargeLog = { executions: [] };
    const points: RunCommitPoint[] = [];
    await run({ id: 'a', model: toolThenText(), tools: { charge: charge(log) } }, {}, (point) => void points.push(point));
    expect(points.map((point) => [point.kind, point.stepNumber, point.last ?? null])).toEqual([
      ['input', 0, null],
      ['model', 0, null],
      ['step', 0, false],
      ['step', 1, true],
    ]);
    expect(points[1]?.toolCalls).toEqual([{ toolCallId: 'call-charge', toolName: 'charge', args: { cents: 500 } }]);
  });

  it("the run waits at a commit point while its demand gate is held: the point's consumer holds it with the commit, the release lets the run go on", async () => {
    const demand = new DemandGate();
    const log: ChargeLog = { executions: [] };
    const seen: string[] = [];
    const commits: object[] = [];
    const done = lastValueFrom(
      createRun({ id: 'a', model: toolThenText(), tools: { charge: charge(log) } }, 'Charge me', { runId: 'run-7' }, { demand, commitPoints: true }).pipe(
        tellCommitPoints((point) => {
          const commit = { kind: point.kind };
          commits.push(commit);
          seen.push(`commit ${point.kind}`);
          demand.hold(commit);
        }),
        toArray(),
      ),
    );
    for (const kind of ['input', 'model', 'step', 'step']) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(seen.at(-1)).toBe(`commit ${kind}`); // nothing past the point until its release
      if (kind === 'model') expect(log.executions).toEqual([]); // the tool waits for the model commit
      demand.release(commits.at(-1) as object);
    }
    const items = await done;
    expect(items.filter(isChunk).at(-1)?.type).toBe('finish');
    expect(log.executions).toHaveLength(1);
  });

  it('restored at the model point, the run executes the tools and goes on without calling the model for that step again', async () => {
    const log: ChargeLog = { executions: [] };
    let atModel: RunSnapshot | undefined;
    const whole = await run({ id: 'a', model: toolThenText(), tools: { charge: charge(log) } }, {}, (point) => {
      if (point.kind === 'model') atModel = JSON.parse(JSON.stringify(snapshotOf(point))) as RunSnapshot;
    });
    expect(atModel?.next.kind).toBe('tools');

    const model = mockModel({ parts: [...textParts('Charged.'), finishPart('stop')] });
    const restoredLog: ChargeLog = { executions: [] };
    const restored = await run({ id: 'a', model, tools: { charge: charge(restoredLog) } }, { restore: atModel as RunSnapshot });
    expect(model.calls).toHaveLength(1); // only the second step's
    expect(restoredLog.executions).toEqual([{ cents: 500, idempotencyKey: 'run-7:call-charge' }]);
    const types = (chunks: ChunkType[]) => chunks.map((chunk) => chunk.type);
    expect(types(restored).slice(1)).toEqual(types(whole).slice(types(whole).indexOf('tool-result')));
    expect(restored.at(-1)).toMatchObject({ type: 'finish' });
  });
});

describe('durable runs: the tool ledger', () => {
  it('asks before each client call (with the tool\'s idempotent flag) and is told the outcome', async () => {
    const log: ChargeLog = { executions: [] };
    const asked: Array<[LedgerToolCall, boolean]> = [];
    const told: unknown[] = [];
    await run({ id: 'a', model: toolThenText(), tools: { charge: charge(log, true) } }, {
      tools: {
        begin: (call, tool) => {
          asked.push([call, tool.idempotent]);
          return { kind: 'execute' };
        },
        end: async (_call, outcome) => void told.push(outcome),
      },
    });
    expect(asked).toEqual([[{ toolCallId: 'call-charge', toolName: 'charge', args: { cents: 500 } }, true]]);
    expect(told).toEqual([{ result: { charged: 500 } }]);
    expect(log.executions).toEqual([{ cents: 500, idempotencyKey: 'run-7:call-charge' }]);
  });

  it('a result the ledger already holds answers the call: execute does not run', async () => {
    const log: ChargeLog = { executions: [] };
    const chunks = await run({ id: 'a', model: toolThenText(), tools: { charge: charge(log) } }, {
      tools: { begin: async (): Promise<ToolBegin> => ({ kind: 'result', result: { charged: 500, from: 'ledger' } }), end: () => undefined },
    });
    expect(log.executions).toEqual([]);
    expect(chunks.find((chunk) => chunk.type === 'tool-result')).toMatchObject({ payload: { result: { charged: 500, from: 'ledger' } } });
  });

  it('an outcome nobody knows is a tool error the model is told, not a second execution', async () => {
    const log: ChargeLog = { executions: [] };
    const model = toolThenText();
    const chunks = await run({ id: 'a', model, tools: { charge: charge(log) } }, {
      tools: { begin: () => ({ kind: 'error', error: new Error('the owner died while charge ran') }), end: () => undefined },
    });
    expect(log.executions).toEqual([]);
    expect(chunks.find((chunk) => chunk.type === 'tool-error')).toMatchObject({ payload: { toolCallId: 'call-charge' } });
    expect(JSON.stringify(model.calls[1]?.prompt)).toContain('the owner died while charge ran');
  });

  it('a ledger whose begin throws ends the run with that error; the tool never runs', async () => {
    const log: ChargeLog = { executions: [] };
    const chunks = await run({ id: 'a', model: toolThenText(), tools: { charge: charge(log) } }, {
      tools: {
        begin: () => {
          throw new Error('ledger unreachable');
        },
        end: () => undefined,
      },
    });
    expect(log.executions).toEqual([]);
    expect(chunks.at(-1)).toMatchObject({ type: 'error', payload: { error: { message: 'ledger unreachable' } } });
  });
});

describe('durable runs: processor state', () => {
  const stateful = (durableState: Processor['durableState']): Processor => ({
    id: 'seen',
    durableState,
    processOutputStream: ({ part, state }) => {
      const seen = (state['seen'] as Set<string> | undefined) ?? new Set<string>();
      seen.add(part.type);
      state['seen'] = seen;
      return part;
    },
  });

  async function snapshotWith(processor: Processor): Promise<{ snapshot?: RunSnapshot; error?: unknown }> {
    let taken: { snapshot?: RunSnapshot; error?: unknown } = {};
    await run({ id: 'a', model: mockModel({ parts: [...textParts('Hi'), finishPart()] }), outputProcessors: [processor] }, {}, (point) => {
      // every point's snapshot is taken (the first that fails ends the run); the step's is kept
      if (point.kind !== 'step' && point.failed === undefined) return;
      try {
        taken = { snapshot: JSON.parse(JSON.stringify(snapshotOf(point))) as RunSnapshot };
      } catch (error) {
        taken = { error };
      }
    });
    return taken;
  }

  it("'reset' leaves the state out of the snapshot", async () => {
    const { snapshot } = await snapshotWith(stateful('reset'));
    expect(snapshot?.processorStates).toEqual({});
  });

  it('{ snapshot, restore } carries a state that is not JSON (a Set) across', async () => {
    const own: Processor['durableState'] = {
      snapshot: (state) => ({ seen: [...((state['seen'] as Set<string> | undefined) ?? [])] }),
      restore: (json) => ({ seen: new Set((json as { seen: string[] }).seen) }),
    };
    const { snapshot } = await snapshotWith(stateful(own));
    expect(snapshot?.processorStates['seen']).toEqual({ seen: expect.arrayContaining(['text-delta', 'step-start']) });
    let restoredSeen: unknown;
    const reader: Processor = {
      ...stateful(own),
      processOutputResult: ({ state }) => void (restoredSeen = state['seen']),
    };
    await run({ id: 'a', model: mockModel({ parts: [...textParts('Hi'), finishPart()] }), outputProcessors: [reader] }, { restore: snapshot as RunSnapshot });
    expect(restoredSeen).toBeInstanceOf(Set);
    expect([...(restoredSeen as Set<string>)]).toEqual(expect.arrayContaining(['text-delta', 'step-start']));
  });

  it('false refuses the snapshot with a DurableStateError naming the processor', async () => {
    const { error } = await snapshotWith(stateful(false));
    expect(DurableStateError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ processorId: 'seen' });
  });
});

describe('durable runs: the memory fence', () => {
  const memoryRun = (storage: InMemoryStorage, epoch: number) =>
    lastValueFrom(
      createRun(
        { id: 'a', model: mockModel({ parts: [...textParts('Hi'), finishPart()] }), memory: new Memory({ storage }) },
        'hello',
        { runId: 'run-7', memory: { thread: 't1', resource: 'u1' } },
        { memoryFence: { runId: 'run-7', epoch } },
      ).pipe(toArray()),
    ).then((items) => items.filter(isChunk));

  it("memory's save carries the run's fence: the owner's epoch saves, a stale one saves nothing", async () => {
    const runJournal = new InMemoryRunJournal();
    const storage = new InMemoryStorage({ runJournal });
    await runJournal.createRun({ runId: 'run-7', agentId: 'a', input: { messages: [] } });
    const { lease: first } = await runJournal.claim('run-7', 'worker-1');
    expect((await memoryRun(storage, first.epoch)).at(-1)?.type).toBe('finish');
    expect(await storage.getMessages({ threadId: 't1' })).toHaveLength(2);

    await runJournal.claim('run-7', 'worker-2'); // the run has another owner now
    const stale = await memoryRun(storage, first.epoch);
    expect(stale.at(-1)).toMatchObject({ type: 'error' });
    expect(await storage.getMessages({ threadId: 't1' })).toHaveLength(2); // nothing more stored
  });
});
