/**
 * `rxagent/loop` (issue 33 §3): a loop composed with `pipe()` from the public operators and the
 * run's phases does what `agent.stream$()` does — same chunks, same steps, same retries and
 * tripwires — and the phases refuse what would skip a guard.
 */
import { describe, expect, it } from 'vitest';
import { EMPTY, concat, expand, filter, fromEvent, lastValueFrom, map, take, takeUntil, toArray, type Observable } from 'rxjs';
import { z } from 'zod';
import { Agent, TripWire, type AgentCallOptions, type AgentConfig, type ChunkType, type Processor } from 'rxagent';
import {
  closeBrackets,
  endWithTerminal,
  isStepEnd,
  runCommit,
  runFailed,
  runInput,
  runStep,
  withAgentRun,
  type AgentRun,
} from 'rxagent/loop';
import { createTestScheduler, finishPart, mockModel, textParts, toolCallParts } from 'rxagent/testing';

/** The loop of docs/architecture.md ("Compose your own loop"). */
function composedLoop(agent: Agent, input: string, options?: AgentCallOptions): Observable<ChunkType> {
  return withAgentRun({ agent, input, ...(options === undefined ? {} : { options }) }, (run) =>
    concat(
      runInput(run),
      runStep(run, 0).pipe(
        expand((item) => (isStepEnd(item) && item.next.kind === 'step' ? runStep(run, item.next.stepNumber) : EMPTY)),
        filter((item): item is ChunkType => !isStepEnd(item)),
      ),
      runCommit(run),
    ).pipe(endWithTerminal({ runId: run.runId, onError: (error) => runFailed(run, error) }), closeBrackets()),
  );
}

/** A fresh agent per run (ids and clock restart, so two runs can be compared chunk for chunk). */
function agentOf(config: Omit<AgentConfig, 'id' | 'generateId' | 'now'>): () => Agent {
  return () => {
    let id = 0;
    return new Agent({ id: 'a', ...config, generateId: () => `id-${id++}`, now: () => new Date(0) });
  };
}

const toolModel = () =>
  mockModel({
    parts: ({ callIndex }) =>
      callIndex === 0 ? [...toolCallParts('add', { a: 1, b: 2 }), finishPart('tool-calls')] : [...textParts('It is 3.'), finishPart('stop')],
  });
const add = { description: 'adds', inputSchema: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }: { a: number; b: number }) => a + b };

const both = async (make: () => Agent, input: string, options?: AgentCallOptions) => ({
  agent: await lastValueFrom(make().stream$(input, options).pipe(toArray())),
  composed: await lastValueFrom(composedLoop(make(), input, options).pipe(toArray())),
});

describe('a loop composed from rxagent/loop', () => {
  it('gives the chunks agent.stream$() gives: a tool step, then the answer', async () => {
    // one model per agent: the second agent's model starts at call 0 again
    const make = () => agentOf({ instructions: 'Be brief.', model: toolModel(), tools: { add } })();
    const { agent, composed } = await both(make, 'What is 1 + 2?');
    expect(composed).toEqual(agent);
    expect(composed.map((chunk) => chunk.type)).toContain('tool-result');
    expect(composed.at(-1)).toMatchObject({ type: 'finish', payload: { output: { text: 'It is 3.' } } });
  });

  it('retries a step a processor rejects (retry: true), as the agent does', async () => {
    const guard: Processor = {
      id: 'guard',
      processOutputStep: ({ text, abort }) => {
        if (text.includes('short')) abort('too short', { retry: true });
      },
    };
    const model = () => mockModel({ parts: ({ callIndex }) => [...textParts(callIndex === 0 ? 'short' : 'a longer answer'), finishPart('stop')] });
    const make = () => agentOf({ model: model(), outputProcessors: [guard], maxProcessorRetries: 1 })();
    const { agent, composed } = await both(make, 'hi');
    expect(composed).toEqual(agent);
    const finishes = composed.filter((chunk) => chunk.type === 'step-finish');
    expect(finishes.map((chunk) => (chunk.type === 'step-finish' ? chunk.payload.stepResult.reason : undefined))).toEqual(['retry', 'stop']);
  });

  it('each StepEnd carries where the run goes on: the next step (a tripwire retry took a number), then the commit', async () => {
    const guard: Processor = {
      id: 'guard',
      processOutputStep: ({ text, abort }) => {
        if (text.includes('short')) abort('too short', { retry: true });
      },
    };
    const model = mockModel({
      parts: ({ callIndex }) =>
        callIndex === 0 ? [...textParts('short'), finishPart('stop')] : callIndex === 1 ? [...toolCallParts('add', { a: 1, b: 2 }), finishPart('tool-calls')] : [...textParts('It is 3.'), finishPart('stop')],
    });
    const agent = agentOf({ model, tools: { add }, outputProcessors: [guard], maxProcessorRetries: 1 })();
    const ends = await lastValueFrom(
      withAgentRun({ agent, input: 'hi' }, (run) =>
        concat(
          runInput(run),
          runStep(run, 0).pipe(expand((item) => (isStepEnd(item) && item.next.kind === 'step' ? runStep(run, item.next.stepNumber) : EMPTY))),
        ).pipe(filter(isStepEnd), toArray()),
      ),
    );
    // step 0 rejected and retried as step 1 (tool calls), then step 2 (the answer), then the commit
    expect(ends).toEqual([
      { kind: 'step-end', next: { kind: 'step', stepNumber: 2 } },
      { kind: 'step-end', next: { kind: 'commit' } },
    ]);
  });

  it('ends with the tripwire chunk the agent ends with (runFailed as onError)', async () => {
    const guard: Processor = {
      id: 'guard',
      processOutputStream: ({ part, abort }) => {
        if (part.type === 'text-delta' && part.payload.text.includes('secret')) abort('no secrets', { metadata: { n: 1 } });
        return part;
      },
    };
    const make = () => agentOf({ model: mockModel({ parts: [...textParts('the secret is'), finishPart('stop')] }), outputProcessors: [guard] })();
    const { agent, composed } = await both(make, 'hi');
    expect(composed).toEqual(agent);
    expect(composed.at(-1)).toMatchObject({ type: 'tripwire', payload: { reason: 'no secrets', processorId: 'guard', metadata: { n: 1 } } });
  });

  it('runs on virtual time with a marble model (the set-up is synchronous)', () => {
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      const parts = {
        s: { type: 'stream-start' as const, warnings: [] },
        t: { type: 'text-start' as const, id: 't' },
        d: { type: 'text-delta' as const, id: 't', delta: 'hi' },
        e: { type: 'text-end' as const, id: 't' },
        f: finishPart('stop'),
      };
      const agent = new Agent({ id: 'a', model: mockModel({ stream: cold('s-t-d-e-(f|)', parts) }) });
      const letters: Partial<Record<ChunkType['type'], string>> = { start: 'S', 'step-start': 'B', 'text-start': 's', 'text-delta': 'd', 'text-end': 'e', 'step-finish': 'E', finish: 'F' };
      const marbles = composedLoop(agent, 'hi').pipe(map((chunk) => letters[chunk.type] ?? '?'));
      // S and B in frame 0 (a group would take 4 frames): each chunk in the frame of its model part
      expectObservable(marbles.pipe(filter((letter) => letter !== 'S'))).toBe('B-s-d-e-(EF|)', { B: 'B', s: 's', d: 'd', e: 'e', E: 'E', F: 'F' });
      expectObservable(marbles.pipe(take(1))).toBe('(S|)', { S: 'S' });
    });
  });
});

describe('the run and its phases', () => {
  const plain = () => new Agent({ id: 'a', model: mockModel({ parts: [...textParts('ok'), finishPart('stop')] }) });

  it('withAgentRun exposes the run id, the message list and the steps, read live', async () => {
    let seen: AgentRun | undefined;
    const chunks = await lastValueFrom(
      withAgentRun({ agent: plain(), input: 'hello', options: { runId: 'run-7' } }, (run) => {
        seen = run;
        return concat(runInput(run), runStep(run, 0).pipe(filter((item): item is ChunkType => !isStepEnd(item))), runCommit(run));
      }).pipe(toArray()),
    );
    expect(seen?.runId).toBe('run-7');
    expect(chunks.every((chunk) => chunk.runId === 'run-7')).toBe(true);
    expect(seen?.steps).toHaveLength(1);
    expect(seen?.messageList.get.all.db().map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(seen?.abortSignal).toBeUndefined();
  });

  it('runStep before runInput errors (the input processors would be skipped)', async () => {
    let inputs = 0;
    const counting: Processor = { id: 'input', processInput: ({ messages }) => (inputs++, messages) };
    const agent = new Agent({ id: 'a', model: mockModel({ parts: [...textParts('ok'), finishPart('stop')] }), inputProcessors: [counting] });
    await expect(lastValueFrom(withAgentRun({ agent, input: 'hi' }, (run) => runStep(run, 0)))).rejects.toThrow(/runInput\(run\) first/);
    expect(inputs).toBe(0);
  });

  it('a phase refuses a run withAgentRun did not make', async () => {
    const fake: AgentRun = { runId: 'r', messageList: undefined as never, steps: [], abortSignal: undefined };
    await expect(lastValueFrom(runCommit(fake))).rejects.toThrow(/not a run made by withAgentRun/);
  });

  it('invalid call options error the result before anything runs', async () => {
    await expect(lastValueFrom(withAgentRun({ agent: plain(), input: [] }, () => EMPTY))).rejects.toThrow(/must not be empty/);
  });

  it('the run is over when the result ends: hooks and tools see its signal aborted', async () => {
    const signals: AbortSignal[] = [];
    const probe: Processor = { id: 'probe', processInput: ({ messages, abortSignal }) => (signals.push(abortSignal), messages) };
    const agent = new Agent({ id: 'a', model: mockModel({ parts: [...textParts('ok'), finishPart('stop')] }), inputProcessors: [probe] });
    await lastValueFrom(withAgentRun({ agent, input: 'hi' }, (run) => runInput(run)), { defaultValue: undefined });
    expect(signals).toHaveLength(1);
    expect(signals[0]?.aborted).toBe(true);
  });

  it('the caller’s abort, given to takeUntil and endWithTerminal, ends the stream with abort', async () => {
    const controller = new AbortController();
    const stop: Processor = { id: 'stop', processInput: ({ messages }) => (controller.abort('enough'), messages) };
    const agent = new Agent({ id: 'a', model: mockModel({ parts: [...textParts('ok'), finishPart('stop')] }), inputProcessors: [stop] });
    const aborted$ = fromEvent(controller.signal, 'abort');
    const chunks = await lastValueFrom(
      withAgentRun({ agent, input: 'hi', options: { abortSignal: controller.signal } }, (run) =>
        concat(runInput(run), runStep(run, 0).pipe(filter((item): item is ChunkType => !isStepEnd(item))), runCommit(run)).pipe(
          takeUntil(aborted$),
          endWithTerminal({ runId: run.runId, abortSignal: run.abortSignal }),
        ),
      ).pipe(toArray()),
    );
    expect(chunks.map((chunk) => chunk.type)).toEqual(['start', 'abort']);
    expect(chunks.at(-1)).toMatchObject({ payload: { reason: 'enough' } });
    expect(TripWire.isInstance(chunks.at(-1))).toBe(false);
  });
});
