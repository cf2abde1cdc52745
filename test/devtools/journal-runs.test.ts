/**
 * The inspector opens a journaled run after the fact (issue 34 §4): an `InMemoryRunJournal` run
 * written by an owner that died mid-step and the one that took it over (the journal written as a
 * takeover writes it: `planTakeover`'s marker, then the new owner's chunks). The record holds the
 * journal's chunks on virtual time, a takeover event where the epoch changes, no hook events, and
 * exports as marbles that replay exactly the journaled chunks. Bad input is a named error.
 */
import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import type { ChunkType } from 'rxagent';
import { InMemoryRunJournal } from 'rxagent/durable';
import { Inspector, InspectorError } from 'rxagent/devtools';
import { createTestScheduler } from 'rxagent/testing';
import { planTakeover } from '../../src/durable/internal/takeover.js';
import { evaluateSnippet } from './support/evaluate-snippet.js';

const runId = 'journaled-1';
const chunk = (type: string, payload: Record<string, unknown> = {}): ChunkType => ({ type, runId, from: 'AGENT', payload }) as ChunkType;

async function takenOverRun(): Promise<InMemoryRunJournal> {
  const journal = new InMemoryRunJournal();
  await journal.createRun({ runId, agentId: 'support', input: { messages: [] } });
  const first = await journal.claim(runId, 'instance-a');
  await journal.append(first.lease, [chunk('start', { messageId: 'm1' })], { kind: 'input', step: 0, attempt: 0, state: {} });
  await journal.append(first.lease, [chunk('step-start', { stepNumber: 0, messageId: 'm1' }), chunk('text-start', { id: 't' }), chunk('text-delta', { id: 't', text: 'Hel' })]);
  // instance-a dies; instance-b claims the run and writes what a takeover writes, then the step again
  const second = await journal.claim(runId, 'instance-b');
  const plan = await planTakeover(journal, second);
  await journal.append(second.lease, plan.marker);
  await journal.append(
    second.lease,
    [
      chunk('step-start', { stepNumber: 0, messageId: 'm2' }),
      chunk('text-start', { id: 't' }),
      chunk('text-delta', { id: 't', text: 'Hello again' }),
      chunk('text-end', { id: 't' }),
      chunk('step-finish', { stepNumber: 0, messageId: 'm2', stepResult: { reason: 'stop', isContinued: false } }),
      chunk('finish', { stepResult: { reason: 'stop' }, output: { text: 'Hello again' } }),
    ],
    { kind: 'final', step: 0, attempt: 1, state: {} },
  );
  return journal;
}

describe('Inspector.openJournalRun', () => {
  it('shows a taken-over run from the journal: its chunks on virtual time, the takeover, no hook events', async () => {
    const journal = await takenOverRun();
    const inspector = new Inspector();
    const record = await inspector.openJournalRun(journal, runId);
    const journaled = await lastValueFrom(journal.read$(runId, { live: false }).pipe(toArray()));
    expect(record).toMatchObject({ runId, agentId: 'support', status: 'finish', source: 'journal', journal: { status: 'completed', epoch: 2, owner: 'instance-b' } });
    expect(record.events.some((event) => event.type === 'hook' || event.type === 'judge')).toBe(false);
    const chunks = record.events.filter((event) => event.type === 'chunk');
    expect(chunks.map((event) => event.chunkType)).toEqual(journaled.map((entry) => entry.chunk.type));
    // virtual time: entry n at frame n
    expect(chunks.map((event) => event.t)).toEqual(journaled.map((entry) => entry.seq));
    // the takeover, right before the first chunk the new owner wrote (its marker closing the dead attempt)
    const takeover = record.events.find((event) => event.type === 'takeover');
    expect(takeover).toMatchObject({ epoch: 2, previousEpoch: 1 });
    const after = record.events[record.events.indexOf(takeover!) + 1];
    expect(after).toMatchObject({ type: 'chunk', chunkType: 'text-end' });
    const marker = chunks.find((event) => event.chunkType === 'step-finish');
    expect(marker?.chunk).toMatchObject({ payload: { stepResult: { reason: 'retry', takeover: { epoch: 2 } } } });
    expect(inspector.runs().map((summary) => summary.runId)).toEqual([runId]);
  });

  it('exports the journaled run as marbles that replay its chunks, one frame per entry', async () => {
    const journal = await takenOverRun();
    const inspector = new Inspector();
    await inspector.openJournalRun(journal, runId);
    const exported = inspector.exportMarbles(runId);
    const journaled = (await lastValueFrom(journal.read$(runId, { live: false }).pipe(toArray()))).map((entry) => entry.chunk);
    expect(exported.diagram.split('-')).toHaveLength(journaled.length);
    const { diagram, values } = evaluateSnippet(exported.code);
    createTestScheduler().run(({ cold, expectObservable }) => expectObservable(cold(diagram, values)).toBe(exported.diagram, Object.fromEntries(Object.entries(exported.values))));
    const replayed: unknown[] = [];
    createTestScheduler().run(({ cold, flush }) => {
      cold(diagram, values).subscribe((value) => replayed.push(value));
      flush();
    });
    expect(replayed).toEqual(journaled);
  });

  it('lists the journal runs, newest first, and names what is wrong', async () => {
    const journal = await takenOverRun();
    await journal.createRun({ runId: 'queued-1', agentId: 'support', input: null });
    const inspector = new Inspector();
    expect((await inspector.journalRuns(journal)).map((run) => [run.runId, run.status])).toEqual([
      ['queued-1', 'queued'],
      [runId, 'completed'],
    ]);
    await expect(journal.listRuns({ limit: 0 })).rejects.toThrow('InMemoryRunJournal.listRuns: limit must be an integer from 1 to 1000 (got 0)');
    const queued = await inspector.openJournalRun(journal, 'queued-1');
    expect(queued).toMatchObject({ status: 'running', chunkCount: 0, journal: { status: 'queued', epoch: 0 } });
    const reasonOf = async (promise: Promise<unknown>) => promise.then(() => 'resolved', (error: unknown) => (InspectorError.isInstance(error) ? `${error.reason}: ${error.message}` : String(error)));
    expect(await reasonOf(inspector.openJournalRun(journal, 'nope'))).toBe('unknown-run: The journal has no run "nope".');
    expect(await reasonOf(inspector.openJournalRun({} as never, runId))).toMatch(/^invalid-option: .*expected a RunJournal/);
    expect(await reasonOf(inspector.journalRuns({ getRun: () => null, read$: () => null } as never))).toMatch(/^invalid-option: .*no listRuns/);
  });
});
