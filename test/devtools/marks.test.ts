/**
 * The marks mean what they say (issue 34 §4): a hook whose output equals its input is `pass`,
 * never `rewrite` (every hook, not only the stream); a chunk a processor has not passed on is
 * `hold` while its step streams — as the live feed sends it — and becomes `drop` only when the
 * step ends without its release.
 */
import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { Agent, type Processor } from 'rxagent';
import { Inspector, type HookEvent, type InspectorEvent } from 'rxagent/devtools';
import { BatchPartsProcessor } from 'rxagent/processors';
import { scriptedModel } from 'rxagent/testing';
import { hookOutcome } from '../../src/devtools/internal/hook-outcome.js';

function agent(options: { inputProcessors?: Processor[]; outputProcessors?: Processor[]; text?: string; wordDelayMs?: number }): Agent {
  return new Agent({
    id: 'marked',
    instructions: 'Be brief.',
    model: scriptedModel({ rules: [], fallback: { text: options.text ?? 'hello there world', reasoning: 'let me think' }, wordDelayMs: options.wordDelayMs ?? 0 }),
    inputProcessors: options.inputProcessors ?? [],
    outputProcessors: options.outputProcessors ?? [],
  });
}

/** Runs `subject` traced; `live` holds each event as the feed sent it (a copy taken at once). */
async function record(subject: Agent) {
  const inspector = new Inspector();
  const live: InspectorEvent[] = [];
  const feed = inspector.events().subscribe((event) => live.push(structuredClone(event)));
  await lastValueFrom(inspector.trace(({ tracingContext, runId }) => subject.stream$('hi', { tracingContext, runId })).pipe(toArray()));
  feed.unsubscribe();
  const { events } = inspector.run(inspector.runs()[0]!.runId);
  return { events, live };
}

const hooksOf = (events: InspectorEvent[], processorId: string) => events.filter((event): event is HookEvent => event.type === 'hook' && event.processorId === processorId);

describe('a hook that returns what it got is passed', () => {
  const identity: Processor = {
    id: 'identity',
    processInput: ({ messageList }) => messageList,
    processInputStep: ({ messages, systemMessages }) => ({ messages: messages.map((message) => ({ ...message })), systemMessages }),
    processLLMRequest: ({ prompt }) => ({ prompt: structuredClone(prompt) }),
  };
  const echo: Processor = {
    id: 'echo',
    processOutputStep: ({ messages }) => [...messages],
    processOutputResult: ({ messageList }) => messageList,
  };

  it('for every hook, whether it returns the list, an equal array or an equal partial result', async () => {
    const { events } = await record(agent({ inputProcessors: [identity], outputProcessors: [echo] }));
    const outcomes = [...hooksOf(events, 'identity'), ...hooksOf(events, 'echo')].map((event) => [event.hook, event.outcome]);
    expect(outcomes).toEqual([
      ['processInput', 'pass'],
      ['processInputStep', 'pass'],
      ['processLLMRequest', 'pass'],
      ['processOutputStep', 'pass'],
      ['processOutputResult', 'pass'],
    ]);
  });

  it('and rewritten when it changed something, in place or in what it returned', async () => {
    const adds: Processor = {
      id: 'adds',
      processInput: ({ messageList }) => messageList.add({ role: 'user', content: 'and one more thing' }, 'input'),
      processInputStep: ({ systemMessages }) => ({ systemMessages: [...systemMessages, { role: 'system', content: 'Be kind.' }] }),
    };
    const trims: Processor = { id: 'trims', processOutputStep: ({ messages }) => messages.slice(0, -1) };
    const { events } = await record(agent({ inputProcessors: [adds], outputProcessors: [trims] }));
    expect([...hooksOf(events, 'adds'), ...hooksOf(events, 'trims')].map((event) => [event.hook, event.outcome])).toEqual([
      ['processInput', 'rewrite'],
      ['processInputStep', 'rewrite'],
      ['processOutputStep', 'rewrite'],
    ]);
  });

  it('compares values, not key order or identity (hookOutcome)', () => {
    const part = { type: 'text-delta', runId: 'r', from: 'AGENT', payload: { id: 't', text: 'hi' } };
    expect(hookOutcome('processOutputStream', part, { from: 'AGENT', payload: { text: 'hi', id: 't' }, runId: 'r', type: 'text-delta' })).toBe('pass');
    expect(hookOutcome('processOutputStream', part, { ...part, payload: { id: 't', text: 'HI' } })).toBe('rewrite');
    expect(hookOutcome('processLLMRequest', { prompt: [{ role: 'user' }] }, { prompt: [{ role: 'user' }] })).toBe('pass');
    expect(hookOutcome('processLLMRequest', { prompt: [{ role: 'user' }] }, { response: { chunks: [] } })).toBe('rewrite');
    expect(hookOutcome('processOutputStep', { messages: [{ id: 'a' }] }, [{ id: 'a' }, { id: 'b' }])).toBe('rewrite');
    expect(hookOutcome('processOutputStep', { messages: [] }, 'text')).toBe('rewrite');
    expect(hookOutcome('processOutputStep', { messages: [] }, undefined)).toBe('pass');
  });
});

describe('a chunk not passed on is held while its step streams', () => {
  it('a batched delta goes out on the feed as held, and stays held once released', async () => {
    const { events, live } = await record(agent({ outputProcessors: [new BatchPartsProcessor({ batchSize: 3 })], text: 'one two three four five six seven', wordDelayMs: 2 }));
    const sent = hooksOf(live, 'batch-parts').filter((event) => (event.input as { type?: string }).type === 'text-delta');
    const notPassed = hooksOf(events, 'batch-parts').filter((event) => event.outcome === 'hold');
    expect(notPassed.length).toBeGreaterThanOrEqual(2);
    // as the feed sent them, while the step streamed: held, never dropped
    for (const event of notPassed) expect(sent.find((candidate) => candidate.seq === event.seq)?.outcome).toBe('hold');
    expect(live.some((event) => event.type === 'hook' && event.outcome === 'drop')).toBe(false);
  });

  it('what is never released is held until the step ends, then dropped', async () => {
    const dropReasoning: Processor = { id: 'drop-reasoning', processOutputStream: ({ part }) => (part.type.startsWith('reasoning-') ? null : part) };
    const { events, live } = await record(agent({ outputProcessors: [dropReasoning], wordDelayMs: 2 }));
    const dropped = hooksOf(events, 'drop-reasoning').filter((event) => event.outcome === 'drop');
    expect(dropped).toHaveLength(5); // reasoning-start, 3 deltas ('let me think'), reasoning-end
    for (const event of dropped) expect(hooksOf(live, 'drop-reasoning').find((candidate) => candidate.seq === event.seq)?.outcome).toBe('hold');
    const settled = live.find((event) => event.type === 'revised' && event.outcome === 'drop');
    const stepFinish = live.find((event) => event.type === 'chunk' && event.chunkType === 'step-finish');
    expect(settled).toMatchObject({ seqs: dropped.map((event) => event.seq) });
    expect(settled!.seq).toBeLessThan(stepFinish!.seq + 2); // settled with the step's end, not later
  });
});
