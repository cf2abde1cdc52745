/**
 * A marble export pasted by hand, as a user would: `npm run inspect`-style recording of the demo
 * agent (synchronous: no judge, no word delay) answering a refund question — a curt draft that
 * `curt-reply-guard` sent back, then the retried answer. Below the paste, the test that pins the
 * run down on virtual time. Everything from the `// Run …` comment to the values is the export's
 * text, unedited (regenerate it from the page's "Export marbles" if the demo agent changes).
 */
import { it } from 'vitest';
import { createTestScheduler } from 'rxagent/testing';
import { createDemoAgent } from '../../examples/inspector/demo-agent.js';

// Run run-y47uii-1 of agent "support-desk" ("Can I get a refund?"): 14 chunks, exported by the rxagent inspector.
// Replay it with cold(diagram, values), or pin a run down with expectObservable(run$).toBe(diagram, values).
// Chunks in ( ) were emitted together; the frames keep the run's order, not its timing.
import type { ChunkType } from 'rxagent';
import { createChunkBuilders, testUsage } from 'rxagent/testing';

const chunk = createChunkBuilders('run-y47uii-1');
const diagram = '(abcdefghijklmn|)';
const values = {
  a: chunk.start(),
  b: { type: 'step-start', runId: 'run-y47uii-1', from: 'AGENT', payload: { stepNumber: 0, messageId: 'id-2' } },
  c: chunk.textStart('t0'),
  d: chunk.textDelta('Refunds? Absolutely not, everything we sell is final.', 't0'),
  e: chunk.textEnd('t0'),
  f: { type: 'step-finish', runId: 'run-y47uii-1', from: 'AGENT', payload: { stepNumber: 0, messageId: 'id-2', stepResult: { reason: 'retry', isContinued: true, tripwire: { reason: 'That answer was too curt: explain it in a full, friendly sentence.', retry: true, metadata: { words: 8 }, processorId: 'curt-reply-guard' } }, output: { text: '', toolCalls: [], usage: testUsage({ inputTokens: 20, outputTokens: 14 }) } } },
  g: { type: 'step-start', runId: 'run-y47uii-1', from: 'AGENT', payload: { stepNumber: 1, messageId: 'id-3' } },
  h: chunk.textStart('t1'),
  i: chunk.textDelta('Sorry for the short answer! You can ', 't1'),
  j: chunk.textDelta('get a full refund within 30 days: tell me t', 't1'),
  k: chunk.textDelta('he order number and I\'ll start it.', 't1'),
  l: chunk.textEnd('t1'),
  m: { type: 'step-finish', runId: 'run-y47uii-1', from: 'AGENT', payload: { stepNumber: 1, messageId: 'id-3', stepResult: { reason: 'stop', isContinued: false, warnings: [] }, output: { text: 'Sorry for the short answer! You can get a full refund within 30 days: tell me the order number and I\'ll start it.', toolCalls: [], usage: testUsage({ inputTokens: 20, outputTokens: 29 }) }, response: {} } },
  n: chunk.finish('stop', { text: 'Sorry for the short answer! You can get a full refund within 30 days: tell me the order number and I\'ll start it.', usage: testUsage({ inputTokens: 40, outputTokens: 43 }) }),
} satisfies Record<string, ChunkType>;

it('the pasted export reproduces the run on virtual time', () => {
  let next = 0;
  const agent = createDemoAgent({ wordDelayMs: 0, moderation: false, generateId: () => `id-${++next}` });
  createTestScheduler().run(({ expectObservable }) => {
    expectObservable(agent.stream$('Can I get a refund?', { runId: chunk.runId })).toBe(diagram, values);
  });
});
