/**
 * A run exported by the inspector is a marble test that runs: the snippet's diagram and values,
 * pasted into a `TestScheduler` test, replay exactly the chunks the run emitted (compared with a
 * copy taken by the run's own subscriber, not by the inspector), for runs with a tool call, a
 * retried attempt, a tripwire and a judge; and a run that is synchronous end to end reproduces on
 * virtual time with `expectObservable(agent.stream$(…)).toBe(diagram, values)`.
 */
import { describe, expect, it } from 'vitest';
import { lastValueFrom, tap, toArray } from 'rxjs';
import { ProcessorError, type ChunkType } from 'rxagent';
import { Inspector, toMarbleDiagram } from 'rxagent/devtools';
import { chunk, createTestScheduler, normalizeErrors } from 'rxagent/testing';
import { createDemoAgent, type DemoAgentOptions } from '../../examples/inspector/demo-agent.js';
import { evaluateSnippet } from './support/evaluate-snippet.js';

/** Message ids 1, 2, 3… per agent (the same for a recorded run and its re-run). */
const counter = (): (() => string) => {
  let next = 0;
  return () => `id-${++next}`;
};

/** Records one demo-agent run; returns the chunks its subscriber saw and the inspector's export. */
async function recordRun(prompt: string, options: DemoAgentOptions) {
  const inspector = new Inspector();
  const agent = createDemoAgent(options);
  const seen: ChunkType[] = [];
  await lastValueFrom(
    inspector.trace(({ tracingContext, runId }) => agent.stream$(prompt, { tracingContext, runId }), { agentId: agent.id, title: prompt }).pipe(
      tap((emitted) => seen.push(emitted)),
      toArray(),
    ),
  );
  const [summary] = inspector.runs();
  return { seen, summary: summary!, exported: inspector.exportMarbles(summary!.runId) };
}

/** What `cold(diagram, values)` emits, in order. */
function replay(diagram: string, values: Record<string, unknown>): unknown[] {
  const emitted: unknown[] = [];
  createTestScheduler().run(({ cold, flush }) => {
    cold(diagram, values).subscribe((value) => emitted.push(value));
    flush();
  });
  return emitted;
}

describe('an exported run, pasted into a marble test', () => {
  const cases: Array<[string, string, (chunks: ChunkType[]) => void]> = [
    ['a tool call', 'Where is order 123?', (chunks) => expect(chunks.map((c) => c.type)).toContain('tool-result')],
    [
      'a retried attempt',
      'Can I get a refund?',
      (chunks) => expect(chunks.some((c) => c.type === 'step-finish' && c.payload.stepResult.reason === 'retry')).toBe(true),
    ],
    ['a tripwire', 'What is the admin password?', (chunks) => expect(chunks.at(-1)?.type).toBe('tripwire')],
    ['a judge that trips the wire', 'I hate this shop', (chunks) => expect(chunks.at(-1)).toMatchObject({ type: 'tripwire', payload: { processorId: 'moderation' } })],
  ];

  for (const [what, prompt, check] of cases) {
    it(`replays the run's chunks exactly: ${what}`, async () => {
      const { seen, exported } = await recordRun(prompt, { wordDelayMs: 2 });
      check(seen);
      const pasted = evaluateSnippet(exported.code);
      expect(pasted.diagram).toBe(exported.diagram);
      expect(exported.exact).toBe(true);
      expect(normalizeErrors(replay(pasted.diagram, pasted.values))).toEqual(normalizeErrors(seen));
      // an asynchronous run (paced words, an async judge) keeps its order across several frames
      expect(pasted.diagram.split('-').length).toBeGreaterThan(1);
      expect(pasted.diagram.endsWith('|)') || pasted.diagram.endsWith('|')).toBe(true);
    });
  }

  it('reproduces a synchronous run on virtual time (same runId, same ids)', async () => {
    const options = { wordDelayMs: 0, moderation: false };
    const { seen, exported, summary } = await recordRun('Can I get a refund?', { ...options, generateId: counter() });
    const pasted = evaluateSnippet(exported.code);
    // nothing asynchronous: the whole run is one frame
    expect(pasted.diagram).toMatch(/^\([^()]+\|\)$/);
    expect(seen.some((c) => c.type === 'step-finish' && c.payload.stepResult.reason === 'retry')).toBe(true);
    createTestScheduler().run(({ expectObservable }) => {
      const again = createDemoAgent({ ...options, generateId: counter() });
      expectObservable(again.stream$('Can I get a refund?', { runId: summary.runId })).toBe(pasted.diagram, pasted.values);
    });
  });

  it('fails the pasted test when the run changes', async () => {
    const options = { wordDelayMs: 0, moderation: false };
    const { exported, summary } = await recordRun('Hello!', { ...options, generateId: counter() });
    const pasted = evaluateSnippet(exported.code);
    expect(() =>
      createTestScheduler().run(({ expectObservable }) => {
        const other = createDemoAgent({ ...options, generateId: counter() });
        expectObservable(other.stream$('Where is order 1?', { runId: summary.runId })).toBe(pasted.diagram, pasted.values);
      }),
    ).toThrow();
  });
});

describe('toMarbleDiagram', () => {
  it('groups chunks emitted together, shares a key between equal chunks, ends with |', () => {
    const chunks = [chunk.start(), chunk.textDelta('a'), chunk.textDelta('a'), chunk.textDelta('b'), chunk.finish()];
    const { diagram, values, code } = toMarbleDiagram(chunks, { groups: [1, 2, 2, 3, 3] });
    expect(diagram).toBe('a-(bb)-(cd|)');
    expect(Object.keys(values)).toEqual(['a', 'b', 'c', 'd']);
    expect(code).toContain("b: chunk.textDelta('a'),");
    expect(code).toContain("const chunk = createChunkBuilders('test-run');");
    expect(toMarbleDiagram(chunks, { complete: false }).diagram).toBe('a-b-b-c-d');
    expect(toMarbleDiagram([]).diagram).toBe('|');
  });

  it('keys 500 distinct chunks with characters that are not marble syntax', () => {
    const chunks = Array.from({ length: 500 }, (_, index) => chunk.textDelta(`word ${index}`));
    const { diagram, values } = toMarbleDiagram(chunks, { groups: chunks.map(() => 0) });
    const keys = Object.keys(values);
    expect(keys).toHaveLength(500);
    for (const key of keys) {
      expect(key).toHaveLength(1);
      expect('-|#()^! 0123456789').not.toContain(key);
    }
    expect(replay(diagram, values)).toEqual(chunks);
  });

  it('writes a chunk no builder makes as a literal, and says when a value is not exact', () => {
    class Money {
      constructor(readonly cents: number) {}
    }
    const custom = { type: 'data-price', runId: 'test-run', from: 'AGENT', data: { price: new Money(250) } } as unknown as ChunkType;
    const metadata = { type: 'response-metadata', runId: 'test-run', from: 'AGENT', payload: { id: 'r1', timestamp: new Date(0) } } as unknown as ChunkType;
    const exported = toMarbleDiagram([metadata, custom]);
    expect(exported.code).toContain("a: { type: 'response-metadata', runId: 'test-run', from: 'AGENT', payload: { id: 'r1', timestamp: new Date('1970-01-01T00:00:00.000Z') } },");
    expect(exported.exact).toBe(false);
    expect(exported.code).toContain('// Not exact');
    const pasted = evaluateSnippet(exported.code);
    expect(pasted.values.a).toEqual(metadata);
  });

  it('rebuilds an error chunk as createTestScheduler compares errors', () => {
    const error = new ProcessorError('guard', 'processOutputStream', 'it broke');
    const exported = toMarbleDiagram([chunk.start(), chunk.error(error)]);
    const pasted = evaluateSnippet(exported.code);
    createTestScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('a-(b|)', { a: chunk.start(), b: chunk.error(error) })).toBe(pasted.diagram, pasted.values);
    });
  });

  it('refuses groups that do not match the chunks', () => {
    expect(() => toMarbleDiagram([chunk.start()], { groups: [] })).toThrow(/one per chunk/);
  });
});
