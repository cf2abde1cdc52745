/**
 * The Inspector's records: one column per pass of a chunk through the processors, outcomes (pass,
 * rewrite, drop, hold), attempts after a retry, how runs end, the caps, the live feed, many runs
 * at once, and the errors it throws for bad input.
 */
import { describe, expect, it } from 'vitest';
import { firstValueFrom, lastValueFrom, merge, take, toArray, type Observable } from 'rxjs';
import { Agent, type ChunkType, type Processor } from 'rxagent';
import { Inspector, InspectorError, type HookEvent, type InspectorEvent } from 'rxagent/devtools';
import { BatchPartsProcessor } from 'rxagent/processors';
import { scriptedModel } from 'rxagent/testing';

const shout: Processor = {
  id: 'shout',
  processOutputStream: ({ part }) => (part.type === 'text-delta' ? { ...part, payload: { ...part.payload, text: part.payload.text.toUpperCase() } } : part),
};
const copier: Processor = { id: 'copier', processOutputStream: ({ part }) => ({ ...part }) as ChunkType };
const dropReasoning: Processor = {
  id: 'drop-reasoning',
  processOutputStream: ({ part }) => (part.type.startsWith('reasoning-') ? null : part),
};
const curt: Processor = {
  id: 'curt',
  processOutputStep: ({ text, retryCount, abort }) => {
    if (retryCount === 0 && text.length < 20) abort('longer please', { retry: true });
  },
};

function agent(outputProcessors: Processor[], options: { text?: string; wordDelayMs?: number } = {}): Agent {
  return new Agent({
    id: 'inspected',
    model: scriptedModel({
      rules: [{ match: /longer please/, reply: { text: 'Here is a much longer and friendlier answer.' } }],
      fallback: { text: options.text ?? 'hello there world', reasoning: 'let me think' },
      wordDelayMs: options.wordDelayMs ?? 0,
    }),
    outputProcessors,
    maxProcessorRetries: 1,
  });
}

function traced(inspector: Inspector, subject: Agent, input = 'hi'): Observable<ChunkType> {
  return inspector.trace(({ tracingContext, runId }) => subject.stream$(input, { tracingContext, runId }), { agentId: subject.id, title: input });
}

async function record(subject: Agent, inspector = new Inspector()) {
  const chunks = await lastValueFrom(traced(inspector, subject).pipe(toArray()));
  const summary = inspector.runs().at(-1)!;
  return { inspector, chunks, summary, events: inspector.run(summary.runId).events };
}

const hooks = (events: InspectorEvent[], processorId: string) =>
  events.filter((event): event is HookEvent => event.type === 'hook' && event.processorId === processorId);

describe('Inspector records', () => {
  it('puts a chunk and its way through every processor in one column', async () => {
    const { events, chunks } = await record(agent([dropReasoning, shout]));
    const delta = chunks.find((emitted) => emitted.type === 'text-delta')!;
    const chunkEvent = events.find((event) => event.type === 'chunk' && event.index === chunks.indexOf(delta))!;
    const inColumn = events.filter((event) => event.column === chunkEvent.column);
    expect(inColumn.map((event) => (event.type === 'hook' ? event.processorId : event.type))).toEqual(['drop-reasoning', 'shout', 'chunk']);
    expect(hooks(inColumn, 'drop-reasoning')[0]?.outcome).toBe('pass');
    expect(hooks(inColumn, 'shout')[0]?.outcome).toBe('rewrite');
    expect(hooks(events, 'drop-reasoning').filter((event) => event.outcome === 'drop')).toHaveLength(5); // reasoning-start, 3 deltas ('let me think'), reasoning-end
    // columns only grow, and every event is stamped with the run's id and an increasing seq
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index));
    expect(new Set(events.map((event) => event.runId))).toEqual(new Set([chunks[0]?.runId]));
  });

  it('counts an equal copy as passed, not rewritten', async () => {
    const { events } = await record(agent([copier]));
    expect(hooks(events, 'copier').every((event) => event.outcome === 'pass')).toBe(true);
  });

  it('turns drops into holds when the processor releases them later, and says by which call', async () => {
    const { events } = await record(agent([new BatchPartsProcessor({ batchSize: 3 })], { text: 'one two three four five six seven' }));
    const batch = hooks(events, 'batch-parts');
    const held = batch.filter((event) => event.outcome === 'hold');
    expect(held.length).toBeGreaterThanOrEqual(2);
    for (const event of held) {
      const release = batch.find((candidate) => candidate.seq === event.releasedBy);
      expect(release?.outcome).toBe('rewrite');
      expect(release!.seq).toBeGreaterThan(event.seq);
    }
    expect(events.filter((event) => event.type === 'revised' && event.outcome === 'hold').length).toBeGreaterThan(0);
    expect(batch.some((event) => event.outcome === 'drop')).toBe(false);
  });

  it('keeps a drop a drop when the processor only rewrites another stream', async () => {
    const both: Processor = {
      id: 'both',
      processOutputStream: (args) => dropReasoning.processOutputStream!(args) && shout.processOutputStream!(args),
    };
    const { events } = await record(agent([both]));
    expect(hooks(events, 'both').filter((event) => event.outcome === 'drop')).toHaveLength(5); // reasoning-start, 3 deltas ('let me think'), reasoning-end
    expect(hooks(events, 'both').some((event) => event.outcome === 'hold')).toBe(false);
  });

  it('numbers attempts: a retried step starts attempt 2', async () => {
    const { events, summary } = await record(agent([curt], { text: 'no.' }));
    expect(summary.status).toBe('finish');
    const retry = hooks(events, 'curt').find((event) => event.outcome === 'retry')!;
    expect(retry.attempt).toBe(1);
    expect(retry.error).toMatchObject({ name: 'TripWire', reason: 'longer please', retry: true });
    const retryFinish = events.find((event) => event.type === 'chunk' && event.chunkType === 'step-finish')!;
    expect(retryFinish.attempt).toBe(1);
    const after = events.filter((event) => event.seq > retryFinish.seq);
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((event) => event.attempt === 2)).toBe(true);
  });

  it('ends a run by its terminal chunk, an error notification or an unsubscription', async () => {
    const broken: Processor = {
      id: 'broken',
      processOutputStream: () => {
        throw new Error('bug');
      },
    };
    expect((await record(agent([broken]))).summary.status).toBe('error');
    const guard: Processor = { id: 'guard', processOutputStream: ({ abort }) => abort('no') };
    expect((await record(agent([guard]))).summary).toMatchObject({ status: 'tripwire', truncated: false });

    const inspector = new Inspector();
    await firstValueFrom(traced(inspector, agent([], { wordDelayMs: 5 })).pipe(take(3)));
    expect(inspector.runs()[0]?.status).toBe('cancelled');
    expect(inspector.run(inspector.runs()[0]!.runId).events.at(-1)).toMatchObject({ type: 'run-end', status: 'cancelled' });
    expect(() => inspector.exportMarbles(inspector.runs()[0]!.runId)).not.toThrow();
    expect(inspector.exportMarbles(inspector.runs()[0]!.runId).diagram).not.toContain('|');

    const failing = inspector.trace(() => {
      throw new Error('could not start');
    });
    await expect(lastValueFrom(failing)).rejects.toThrow('could not start');
    expect(inspector.runs().at(-1)?.status).toBe('error');
  });

  it('records many runs at once, each in its own record', async () => {
    const inspector = new Inspector();
    const feed: InspectorEvent[] = [];
    const subscription = inspector.events().subscribe((event) => feed.push(event));
    const runs = ['one', 'two', 'three'].map((text) => traced(inspector, agent([shout], { text: `${text} a b c`, wordDelayMs: 3 }), text));
    const all = await lastValueFrom(merge(...runs).pipe(toArray()));
    subscription.unsubscribe();
    const summaries = inspector.runs();
    expect(summaries.map((summary) => summary.status)).toEqual(['finish', 'finish', 'finish']);
    for (const summary of summaries) {
      const own = all.filter((emitted) => emitted.runId === summary.runId);
      expect(summary.chunkCount).toBe(own.length);
      const fromFeed = feed.filter((event) => event.runId === summary.runId);
      expect(fromFeed).toEqual(inspector.run(summary.runId).events);
    }
    // the runs overlapped in time: the feed interleaves them
    const order = feed.map((event) => event.runId);
    expect(order.findIndex((runId) => runId === summaries[1]!.runId)).toBeLessThan(order.lastIndexOf(summaries[0]!.runId));
    // after unsubscribing, the feed gets nothing
    await record(agent([]), inspector);
    expect(feed.length).toBe(order.length);
  });

  it('keeps two inspectors apart', async () => {
    const first = new Inspector();
    const second = new Inspector();
    await record(agent([]), first);
    expect(first.runs()).toHaveLength(1);
    expect(second.runs()).toEqual([]);
  });
});

describe('Inspector caps and errors', () => {
  it('keeps at most maxEventsPerRun events, counts the rest, and still ends the run', async () => {
    const { inspector, summary, events } = await record(agent([shout]), new Inspector({ maxEventsPerRun: 10 }));
    expect(events).toHaveLength(11);
    expect(events.at(-1)).toMatchObject({ type: 'run-end', status: 'finish' });
    expect((events.at(-1) as { droppedEvents: number }).droppedEvents).toBeGreaterThan(0);
    expect(summary.truncated).toBe(true);
    expect(() => inspector.exportMarbles(summary.runId)).not.toThrow(); // chunks are kept apart from events
  });

  it('refuses to export a run past maxChunksPerRun', async () => {
    const { inspector, summary } = await record(agent([]), new Inspector({ maxChunksPerRun: 3 }));
    expect(summary.truncated).toBe(true);
    expect(() => inspector.exportMarbles(summary.runId)).toThrow(expect.objectContaining({ name: 'InspectorError', reason: 'run-truncated' }));
  });

  it('forgets the oldest ended run past maxRuns', async () => {
    const inspector = new Inspector({ maxRuns: 2 });
    const { summary: oldest } = await record(agent([]), inspector);
    await record(agent([]), inspector);
    await record(agent([]), inspector);
    expect(inspector.runs()).toHaveLength(2);
    const error = (() => {
      try {
        inspector.run(oldest.runId);
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(InspectorError.isInstance(error) && error.reason).toBe('unknown-run');
  });

  it('will not export a run that is still going', async () => {
    const inspector = new Inspector();
    const subscription = traced(inspector, agent([], { wordDelayMs: 50 })).subscribe();
    try {
      expect(() => inspector.exportMarbles(inspector.runs()[0]!.runId)).toThrow(/has not ended yet/);
    } finally {
      subscription.unsubscribe();
    }
  });

  it('names the bad option', () => {
    for (const bad of [{ maxRuns: 0 }, { maxChunksPerRun: 1.5 }, { maxEventsPerRun: Number.NaN }, { maxRuns: '3' as unknown as number }]) {
      expect(() => new Inspector(bad)).toThrow(expect.objectContaining({ reason: 'invalid-option', message: expect.stringContaining(Object.keys(bad)[0]!) }));
    }
    expect(() => new Inspector().trace('agent' as never)).toThrow(/expected a function/);
  });
});
