/**
 * A run whose set-up is asynchronous (a dynamic `model`, processors as functions, memory) follows
 * the caller's `abortSignal` with a listener added when the set-up settles. A consumer that leaves
 * before that (an early unsubscribe) must not leave the listener behind: a long-lived signal (a
 * server's shutdown signal given to every run) would collect one per abandoned run.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { concat, lastValueFrom, toArray } from 'rxjs';
import { Agent } from 'rxagent';
import { runCommit, runInput, runStep, withAgentRun } from 'rxagent/loop';
import { finishPart, mockModel, textParts } from 'rxagent/testing';

const RUNS = 25;

/** An agent whose model is resolved by a promise: every run's set-up is asynchronous. */
function asyncSetUpAgent(): Agent {
  const model = mockModel({ parts: () => [...textParts('hi'), finishPart()] });
  return new Agent({ id: 'async-set-up', model: async () => model });
}

/** Lets the set-ups' promises settle (a few macrotask turns). */
async function settle(): Promise<void> {
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setTimeout(resolve, 0));
}

function abortListeners(signal: AbortSignal): number {
  return getEventListeners(signal, 'abort').length;
}

describe('the caller signal of a run whose set-up is asynchronous', () => {
  it('stream$(): unsubscribing before the set-up settles leaves no abort listener', async () => {
    const agent = asyncSetUpAgent();
    const caller = new AbortController();
    for (let run = 0; run < RUNS; run++) agent.stream$('hello', { abortSignal: caller.signal }).subscribe().unsubscribe();
    await settle();
    expect(abortListeners(caller.signal)).toBe(0);
  });

  it('stream$(): a run that ends releases its listener (and one listener at most while it runs)', async () => {
    const agent = asyncSetUpAgent();
    const caller = new AbortController();
    const chunks = await lastValueFrom(agent.stream$('hello', { abortSignal: caller.signal }).pipe(toArray()));
    expect(chunks.at(-1)?.type).toBe('finish');
    expect(abortListeners(caller.signal)).toBe(0);
  });

  it('stream$(): the caller aborting while the set-up is pending ends the run with `abort`, and leaves no listener', async () => {
    const agent = asyncSetUpAgent();
    const caller = new AbortController();
    const types: string[] = [];
    const done = new Promise<void>((resolve) => {
      agent.stream$('hello', { abortSignal: caller.signal }).subscribe({ next: (chunk) => types.push(chunk.type), complete: resolve });
    });
    caller.abort();
    await done;
    await settle();
    expect(types).toEqual(['start', 'abort']);
    expect(abortListeners(caller.signal)).toBe(0);
  });

  it.each([
    ['synchronous', (model: ReturnType<typeof mockModel>) => model],
    ['asynchronous', (model: ReturnType<typeof mockModel>) => async () => model],
  ])('stream$(): an invalid input (%s set-up) ends the run with `error` and leaves no listener', async (_name, modelOf) => {
    const agent = new Agent({ id: 'bad-input', model: modelOf(mockModel({ parts: () => [...textParts('hi'), finishPart()] })) });
    const caller = new AbortController();
    const chunks = await lastValueFrom(agent.stream$({ role: 'user', content: 42 } as never, { abortSignal: caller.signal }).pipe(toArray()));
    await settle();
    expect(chunks.map((chunk) => chunk.type)).toEqual(['start', 'error']);
    expect(abortListeners(caller.signal)).toBe(0);
  });

  it('withAgentRun(): unsubscribing before the set-up settles leaves no abort listener', async () => {
    const agent = asyncSetUpAgent();
    const caller = new AbortController();
    for (let run = 0; run < RUNS; run++) {
      withAgentRun({ agent, input: 'hello', options: { abortSignal: caller.signal } }, (agentRun) =>
        concat(runInput(agentRun), runStep(agentRun, 0), runCommit(agentRun)),
      )
        .subscribe()
        .unsubscribe();
    }
    await settle();
    expect(abortListeners(caller.signal)).toBe(0);
  });

  it('withAgentRun(): a run that completes releases its listener', async () => {
    const agent = asyncSetUpAgent();
    const caller = new AbortController();
    const items = await lastValueFrom(
      withAgentRun({ agent, input: 'hello', options: { abortSignal: caller.signal } }, (agentRun) => concat(runInput(agentRun), runCommit(agentRun))).pipe(
        toArray(),
      ),
    );
    expect(items.length).toBeGreaterThan(0);
    expect(abortListeners(caller.signal)).toBe(0);
  });
});
