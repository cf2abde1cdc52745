/**
 * What a new owner plans from the journal a dead owner left (DURABLE.md §6): nothing past the last
 * commit → go on; chunks past it → a marker closing what they opened and the open step (`retry`,
 * `takeover: { epoch }`); after a `model` commit with a marker, the step's chunks from its
 * `step-start` through the commit again, byte for byte.
 */
import { tap } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { ChunkType } from 'rxagent';
import { InMemoryRunJournal, type RunCommit, type RunLease } from 'rxagent/durable';
import { planTakeover } from '../../src/durable/internal/takeover.js';
import { generationJobIdOf, jobIdOf, queueNameOf } from '../../src/durable/internal/queues.js';
import { effectiveChunks, journalEntries } from './fixtures/matrix-checks.js';

const runId = 'run-1';
const chunk = (type: string, payload: Record<string, unknown> = {}): ChunkType => ({ type, runId, from: 'AGENT', payload }) as ChunkType;
const commit = (kind: RunCommit['kind'], step = 0): RunCommit => ({ kind, step, attempt: 0, state: { kind } });

async function setUp(): Promise<{ journal: InMemoryRunJournal; lease: RunLease }> {
  const journal = new InMemoryRunJournal();
  await journal.createRun({ runId, agentId: 'a', input: null });
  const { lease } = await journal.claim(runId, 'dead');
  await journal.append(lease, [chunk('start', { messageId: 'm1' })], commit('input'));
  return { journal, lease };
}

describe('planTakeover', () => {
  it('nothing past the last commit: no marker, no replay', async () => {
    const { journal, lease } = await setUp();
    await journal.append(lease, [chunk('step-start', { stepNumber: 0 }), chunk('text-start', { id: 't' }), chunk('text-end', { id: 't' }), chunk('step-finish', { stepNumber: 0, stepResult: { reason: 'stop', isContinued: false } })], commit('step'));
    const claim = await journal.claim(runId, 'next');
    const plan = await planTakeover(journal, claim);
    expect(plan).toMatchObject({ marker: [], replay: [], started: true });
    expect(plan.commit?.kind).toBe('step');
  });

  it('a dead attempt mid-stream: its open text closed, then step-finish retry with the new epoch', async () => {
    const { journal, lease } = await setUp();
    await journal.append(lease, [chunk('step-start', { stepNumber: 0, messageId: 'm1' }), chunk('reasoning-start', { id: 'r' }), chunk('reasoning-end', { id: 'r' }), chunk('text-start', { id: 't' }), chunk('text-delta', { id: 't', text: 'Hel' })]);
    const claim = await journal.claim(runId, 'next');
    const plan = await planTakeover(journal, claim);
    expect(plan.commit?.kind).toBe('input');
    expect(plan.replay).toEqual([]);
    expect(plan.marker.map((marker) => [marker.type, (marker as { payload?: unknown }).payload])).toEqual([
      ['text-end', { id: 't' }],
      ['step-finish', { stepNumber: 0, messageId: 'm1', stepResult: { reason: 'retry', isContinued: true, takeover: { epoch: 2 } }, output: expect.objectContaining({ text: '', toolCalls: [] }) }],
    ]);
  });

  it('after a model commit, with tool chunks past it: marker, then the step from its step-start through the commit, byte for byte', async () => {
    const { journal, lease } = await setUp();
    const step = [chunk('step-start', { stepNumber: 0 }), chunk('text-start', { id: 't' }), chunk('text-delta', { id: 't', text: 'Looking' }), chunk('text-end', { id: 't' }), chunk('tool-call', { toolCallId: 'c1', toolName: 'lookup', args: { q: 1 } })];
    await journal.append(lease, step, commit('model'));
    await journal.append(lease, [chunk('tool-result', { toolCallId: 'c1', toolName: 'lookup', result: 7 })]);
    const claim = await journal.claim(runId, 'next');
    const plan = await planTakeover(journal, claim);
    expect(plan.marker.map((marker) => marker.type)).toEqual(['step-finish']);
    const journaled = (await new Promise<string[]>((resolve) => {
      const texts: string[] = [];
      journal.read$(runId, { after: 1, live: false }).subscribe({ next: (entry) => texts.push(entry.json), complete: () => resolve(texts) });
    })).slice(0, step.length);
    expect(plan.replay.map((entry) => entry.json)).toEqual(journaled);
    expect(plan.replay.map((entry) => entry.type)).toEqual(step.map((item) => item.type));
  });

  it('a second takeover after the same model commit (the first one\'s replay and a tool result past it): the step is replayed again, from the commit\'s own step-start, so readers keep it', async () => {
    const { journal, lease } = await setUp();
    const step = [chunk('step-start', { stepNumber: 0 }), chunk('text-start', { id: 't' }), chunk('text-delta', { id: 't', text: 'Looking' }), chunk('text-end', { id: 't' }), chunk('tool-call', { toolCallId: 'c1', toolName: 'lookup', args: { q: 1 } })];
    await journal.append(lease, step, commit('model'));
    await journal.append(lease, [chunk('tool-result', { toolCallId: 'c1', toolName: 'lookup', result: 7 })]);
    // the first successor writes its marker and replay, and a tool result, then dies too
    const second = await journal.claim(runId, 'second');
    const first = await planTakeover(journal, second);
    await journal.appendEncoded(second.lease, [...first.marker.map((item) => ({ type: item.type, json: JSON.stringify(item) })), ...first.replay]);
    await journal.append(second.lease, [chunk('tool-result', { toolCallId: 'c1', toolName: 'lookup', result: 7 })]);
    const third = await journal.claim(runId, 'third');
    const plan = await planTakeover(journal, third);
    expect(plan.marker.map((marker) => marker.type)).toEqual(['step-finish']);
    expect(plan.replay.map((entry) => entry.type)).toEqual(step.map((item) => item.type));
    await journal.appendEncoded(third.lease, [...plan.marker.map((item) => ({ type: item.type, json: JSON.stringify(item) })), ...plan.replay]);
    // what a reader keeps: the start, then the committed step (once), ready for the tool phase
    expect(effectiveChunks(await journalEntries(journal, runId)).map((item) => item.type)).toEqual(['start', ...step.map((item) => item.type)]);
  });

  it('after a model commit with nothing past it: no marker, no replay (the tool phase goes on)', async () => {
    const { journal, lease } = await setUp();
    await journal.append(lease, [chunk('step-start', { stepNumber: 0 }), chunk('tool-call', { toolCallId: 'c1', toolName: 'lookup', args: {} })], commit('model'));
    const plan = await planTakeover(journal, await journal.claim(runId, 'next'));
    expect(plan).toMatchObject({ marker: [], replay: [] });
  });

  it('a dead retried attempt after a rejected commit is rolled back the same way', async () => {
    const { journal, lease } = await setUp();
    await journal.append(lease, [chunk('step-start', { stepNumber: 1 }), chunk('text-start', { id: 'a' }), chunk('text-end', { id: 'a' }), chunk('step-finish', { stepNumber: 1, stepResult: { reason: 'retry', isContinued: true } })], commit('rejected', 1));
    await journal.append(lease, [chunk('step-start', { stepNumber: 2 }), chunk('tool-call-input-streaming-start', { toolCallId: 'c9', toolName: 'x' })]);
    const plan = await planTakeover(journal, await journal.claim(runId, 'next'));
    expect(plan.marker.map((marker) => [marker.type, ((marker as { payload?: { stepNumber?: number; toolCallId?: string } }).payload?.stepNumber ?? (marker as { payload?: { toolCallId?: string } }).payload?.toolCallId)])).toEqual([
      ['tool-call-input-streaming-end', 'c9'],
      ['step-finish', 2],
    ]);
  });

  it('a takeover inside a long open step reads its structure, not its deltas (entries read do not grow with the step)', async () => {
    // counts every entry the planner gets from the journal, through either read
    class CountingJournal extends InMemoryRunJournal {
      read = 0;
      override read$(...args: Parameters<InMemoryRunJournal['read$']>): ReturnType<InMemoryRunJournal['read$']> {
        return super.read$(...args).pipe(tap(() => (this.read += 1)));
      }
      override async readStructure(...args: Parameters<InMemoryRunJournal['readStructure']>): ReturnType<InMemoryRunJournal['readStructure']> {
        const entries = await super.readStructure(...args);
        this.read += entries.length;
        return entries;
      }
    }
    const journal = new CountingJournal();
    await journal.createRun({ runId, agentId: 'a', input: null });
    const { lease } = await journal.claim(runId, 'dead');
    await journal.append(lease, [chunk('start', { messageId: 'm1' })], commit('input'));
    await journal.append(lease, [chunk('step-start', { stepNumber: 0 }), chunk('text-start', { id: 'a' }), chunk('text-end', { id: 'a' }), chunk('text-start', { id: 't' })]);
    const deltas = 10_000;
    for (let sent = 0; sent < deltas; sent += 1000) await journal.append(lease, Array.from({ length: 1000 }, (_, index) => chunk('text-delta', { id: 't', text: `${sent + index} ` })));
    journal.read = 0;
    const plan = await planTakeover(journal, await journal.claim(runId, 'next'));
    expect(plan.marker.map((marker) => marker.type)).toEqual(['text-end', 'step-finish']);
    expect((plan.marker[0] as { payload: { id: string } }).payload.id).toBe('t');
    // step-start, text-start a, text-end a, text-start t: 4 entries, not the step's 10,004
    expect(journal.read).toBe(4);
  });

  it('a fresh run (never committed): nothing to roll back, no start journaled yet', async () => {
    const journal = new InMemoryRunJournal();
    await journal.createRun({ runId, agentId: 'a', input: null });
    expect(await planTakeover(journal, await journal.claim(runId, 'w'))).toEqual({ commit: undefined, marker: [], replay: [], started: false });
  });
});

describe('pg-boss names', () => {
  it('one UUID per run id and incarnation: stable, distinct, version 8', () => {
    const runs: Array<[string, string?]> = [['r1'], ['r2'], ['thread/with/slashes'], ['é'], ['r1', '1'], ['r1', '2'], ['r2', '1'], ['1:1:r1'], ['r1', '1:1']];
    const ids = runs.map(([runId, incarnation]) => jobIdOf(runId, incarnation));
    const handovers = runs.map(([runId, incarnation]) => generationJobIdOf(runId, 1, incarnation));
    for (const id of [...ids, ...handovers]) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // a run created again under an id (another incarnation) has jobs of its own; no id and incarnation spell another pair
    expect(new Set([...ids, ...handovers]).size).toBe(ids.length * 2);
    expect(jobIdOf('r1', '1')).toBe(ids[4]);
    expect(generationJobIdOf('r1', 0, '1')).toBe(ids[4]);
    // without an incarnation (a run stored before the journal kept one, a job an earlier build sent): the id made from the run id alone, as before
    expect(jobIdOf('r1')).toBe('08e48ff9-7c63-893c-b906-20fa2bc8bc8f');
  });

  it('a queue per agent; an id pg-boss would refuse is made safe and kept distinct', () => {
    expect(queueNameOf('rxagent.runs.', 'support')).toBe('rxagent.runs.support');
    const odd = queueNameOf('rxagent.runs.', 'support agent!');
    expect(odd).toMatch(/^rxagent\.runs\.support_agent_\.[0-9a-f]{12}$/);
    expect(queueNameOf('rxagent.runs.', 'support agent?')).not.toBe(odd);
  });
});
