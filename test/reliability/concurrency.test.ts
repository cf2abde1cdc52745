/**
 * 1,000 concurrent runs of one Agent — stateful input and output processors (some hooks async),
 * a tool, memory on one InMemoryStorage — interleaved on the microtask queue: every run's
 * processor state, text, tool results and stored messages are its own, checked exactly.
 */
import { describe, expect, it } from 'vitest';
import { asapScheduler, from, lastValueFrom, observeOn, toArray } from 'rxjs';
import { z } from 'zod';
import type { LanguageModelV4Prompt, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { Agent } from '../../src/loop/agent.js';
import { Memory } from '../../src/memory/memory.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { Processor, ProcessorState } from '../../src/contract/processor-types.js';
import { InMemoryStorage } from '../../src/storage/in-memory-storage.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { checkBracketing, checkLifecycle } from './support/invariants.js';

const RUNS = 1000;

/** The run number a prompt belongs to (from its last user message, "question <n>"). */
function runOf(prompt: LanguageModelV4Prompt): number {
  const users = prompt.filter((message) => message.role === 'user');
  const last = users[users.length - 1];
  const text = last?.role === 'user' ? last.content.map((part) => (part.type === 'text' ? part.text : '')).join('') : '';
  const match = /question (\d+)/.exec(text);
  if (match === null) throw new Error(`no question in the prompt: ${text}`);
  return Number(match[1]);
}

const usesTool = (run: number) => run % 3 === 0;
const expectedText = (run: number) => (usesTool(run) ? `answer ${run} (tool said ${run * 2})` : `answer ${run}`);

/** What each processor recorded per run, from its own state. */
interface Seen {
  runId: string;
  input?: string;
  steps?: number;
  streamed?: string;
  toolResults?: unknown[];
  stateObjects: Set<ProcessorState>;
}

describe('concurrency', () => {
  it(`${RUNS} concurrent runs of one Agent: state, text, tool results and stored messages are each run's own`, async () => {
    const model = mockModel({
      stream: ({ options }) => {
        const run = runOf(options.prompt);
        const hasToolResult = options.prompt.some((message) => message.role === 'tool');
        const parts: LanguageModelV4StreamPart[] =
          usesTool(run) && !hasToolResult
            ? [...toolCallParts('double', { n: run }, { toolCallId: `call-${run}` }), finishPart('tool-calls')]
            : [...textParts(expectedText(run)), finishPart('stop')];
        // one part per microtask: the runs interleave part by part
        return from(parts).pipe(observeOn(asapScheduler));
      },
    });
    const seenByRun = new Map<number, Seen>();
    const record = (run: number, runId: string, state: ProcessorState): Seen => {
      const seen = seenByRun.get(run) ?? { runId, stateObjects: new Set<ProcessorState>() };
      seenByRun.set(run, seen);
      seen.stateObjects.add(state);
      expect(seen.runId).toBe(runId);
      return seen;
    };
    const runNumber = (state: ProcessorState): number => state.run as number;
    let active = 0;
    let mostActive = 0;

    const tagger: Processor = {
      id: 'tagger',
      processInput: async ({ messages, state, runId }) => {
        const text = JSON.stringify(messages[messages.length - 1]?.content.parts);
        state.run = Number(/question (\d+)/.exec(text)?.[1]);
        state.input = `question ${state.run}`;
        state.steps = 0;
        mostActive = Math.max(mostActive, ++active);
        record(runNumber(state), runId, state).input = state.input as string;
        return undefined;
      },
      processInputStep: ({ state, runId }) => {
        state.steps = (state.steps as number) + 1;
        record(runNumber(state), runId, state).steps = state.steps as number;
        return undefined;
      },
    };
    const counter: Processor = {
      id: 'counter',
      processOutputStream: ({ part, state, runId }) => {
        if (part.type === 'step-start' && state.text === undefined) {
          state.text = '';
          state.results = [];
        }
        if (part.type === 'text-delta') state.text = `${state.text as string}${part.payload.text}`;
        // every other chunk through a promise: async hooks interleave with other runs' chunks
        return (state.flip = !state.flip) ? Promise.resolve(part) : part;
      },
      processToolResult: async ({ result, state }) => {
        (state.results as unknown[]).push(result);
        return undefined;
      },
      processOutputResult: ({ result, state, runId }) => {
        const run = Number(/answer (\d+)/.exec(result.text)?.[1]);
        state.run = run;
        const seen = record(run, runId, state);
        seen.streamed = state.text as string;
        seen.toolResults = state.results as unknown[];
        active--;
        return undefined;
      },
    };

    const storage = new InMemoryStorage();
    const agent = new Agent({
      id: 'concurrent',
      instructions: 'Answer the question.',
      model,
      memory: new Memory({ storage }),
      inputProcessors: [tagger],
      outputProcessors: [counter],
      tools: { double: { inputSchema: z.object({ n: z.number() }), execute: async ({ n }: { n: number }) => ({ doubled: n * 2 }) } },
    });

    const runs = Array.from({ length: RUNS }, (_, run) =>
      lastValueFrom(agent.stream$(`question ${run}`, { memory: { thread: `thread-${run}`, resource: `user-${run % 10}` } }).pipe(toArray())),
    );
    const results = await Promise.all(runs);

    // the runs really overlapped (all of them were between processInput and processOutputResult at once)
    expect(mostActive).toBe(RUNS);
    expect(active).toBe(0);
    const runIds = new Set<string>();
    results.forEach((chunks: ChunkType[], run) => {
      expect(checkLifecycle(chunks, true)).toEqual([]);
      expect(checkBracketing(chunks, true)).toEqual([]);
      const runId = (chunks[0] as { runId: string }).runId;
      runIds.add(runId);
      const text = chunks.map((chunk) => (chunk.type === 'text-delta' ? chunk.payload.text : '')).join('');
      expect(text).toBe(expectedText(run));
      expect(chunks.at(-1)).toMatchObject({ type: 'finish', payload: { output: { text: expectedText(run) } } });
      const toolResults = chunks.filter((chunk) => chunk.type === 'tool-result').map((chunk) => (chunk as { payload: { result: unknown } }).payload.result);
      expect(toolResults).toEqual(usesTool(run) ? [{ doubled: run * 2 }] : []);

      const seen = seenByRun.get(run);
      expect(seen?.runId).toBe(runId);
      expect(seen?.input).toBe(`question ${run}`);
      expect(seen?.steps).toBe(usesTool(run) ? 2 : 1);
      expect(seen?.streamed).toBe(expectedText(run));
      expect(seen?.toolResults).toEqual(usesTool(run) ? [{ doubled: run * 2 }] : []);
      expect(seen?.stateObjects.size).toBe(2); // tagger's and counter's: one each, this run's only
    });
    expect(runIds.size).toBe(RUNS);
    const allStates = [...seenByRun.values()].flatMap((seen) => [...seen.stateObjects]);
    expect(new Set(allStates).size).toBe(RUNS * 2);

    for (let run = 0; run < RUNS; run++) {
      const stored = await storage.getMessages({ threadId: `thread-${run}` });
      const thread = await storage.getThread(`thread-${run}`);
      expect(thread?.resourceId).toBe(`user-${run % 10}`);
      const texts = stored.map((message) => `${message.role}:${message.content.parts.map((part) => (part.type === 'text' ? part.text : part.type === 'tool-invocation' ? `[${part.toolInvocation.toolName} ${JSON.stringify(part.toolInvocation.state === 'result' ? part.toolInvocation.result : null)}]` : '')).join('')}`);
      expect(texts).toEqual(
        usesTool(run)
          ? [`user:question ${run}`, `assistant:[double ${JSON.stringify({ doubled: run * 2 })}]${expectedText(run)}`] // both steps in one assistant message
          : [`user:question ${run}`, `assistant:${expectedText(run)}`],
      );
      expect(stored.every((message) => message.threadId === `thread-${run}`)).toBe(true);
    }
    expect(model.calls).toHaveLength(RUNS + Math.ceil(RUNS / 3));
  }, 60_000);
});
