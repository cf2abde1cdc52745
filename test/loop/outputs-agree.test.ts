/**
 * Issue 13 §2: every output of a run agrees with the accepted result — `textStream`, `steps`,
 * `generate()`'s chunks, the UI message stream and memory never present a rejected attempt's or a
 * tripwired run's text; a chunk a processor invents cannot end, restart or steer the run.
 */
import { describe, expect, it } from 'vitest';
import { readUIMessageStream } from 'ai';
import { lastValueFrom, toArray } from 'rxjs';
import { toUIMessageStream } from '../../src/ai-sdk/index.js';
import { Agent } from '../../src/loop/agent.js';
import { RunAbortedError } from '../../src/loop/run/run-aborted-error.js';
import { InMemoryStorage, Memory } from '../../src/memory/index.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { FOLLOW_UP_CHUNKS_KEY } from '../../src/contract/stream-follow-up.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { settle } from '../support/wait-for.js';

const answering = (...texts: string[]) => mockModel({ parts: ({ callIndex }) => [...textParts(texts[callIndex] ?? texts.at(-1) ?? ''), finishPart('stop')] });

/** Rejects (with a retry request) any step whose text contains `word`, in `processOutputStep`. */
const rejectStep = (word: string): Processor => ({
  id: 'quality',
  processOutputStep: ({ text, abort }) => {
    if (text.includes(word)) abort(`no "${word}"`, { retry: true });
  },
});

/** Blocks a text delta containing `word`, in `processOutputStream` (optionally asking for a retry). */
const blockDelta = (word: string, retry = false): Processor => ({
  id: 'word-guard',
  processOutputStream: ({ part, abort }) => {
    if (part.type === 'text-delta' && part.payload.text.includes(word)) abort(`"${word}" is blocked`, { retry });
    return part;
  },
});

async function readText(stream: ReadableStream<string>): Promise<{ text: string; error: unknown }> {
  let text = '';
  try {
    for await (const piece of stream) text += piece;
    return { text, error: undefined };
  } catch (error) {
    return { text, error };
  }
}

const collect = (agent: Agent, input = 'question') => lastValueFrom(agent.stream$(input).pipe(toArray()));

describe('textStream presents only accepted text', () => {
  it.each([
    ['processOutputStep', rejectStep('short')],
    ['processOutputStream', blockDelta('short', true)],
  ])('a rejected attempt (retry from %s) never appears; textStream equals text', async (_hook, guard) => {
    const agent = new Agent({ id: 'a', model: answering('That is a short', ' reply', 'a much more detailed answer'), maxProcessorRetries: 2, outputProcessors: [guard] });
    const output = await agent.stream('question');
    const { text, error } = await readText(output.textStream);
    expect(error).toBeUndefined();
    expect(text).toBe(await output.text);
    expect(text).not.toContain('short');
    expect(text.length).toBeGreaterThan(0);
  });

  it('a text stream opened after the run ended replays the same accepted text', async () => {
    const agent = new Agent({ id: 'a', model: answering('That is a short', 'the accepted one'), maxProcessorRetries: 1, outputProcessors: [rejectStep('short')] });
    const output = await agent.stream('question');
    await output.result;
    expect(await readText(output.textStream)).toEqual({ text: 'the accepted one', error: undefined });
  });

  /** The text a reader received while the step was still open (read in processOutputStep). */
  async function textBeforeStepEnd(maxProcessorRetries: number | undefined): Promise<string> {
    const received: string[] = [];
    let seenAtStepEnd = '';
    const probe: Processor = {
      id: 'probe',
      processOutputStep: async () => {
        // the step is open until this returns: give the reader time to take what streams live
        await settle(() => received.join('') === 'live words', 300);
        seenAtStepEnd = received.join('');
      },
    };
    const agent = new Agent({ id: 'a', model: answering('live words'), outputProcessors: [probe], ...(maxProcessorRetries === undefined ? {} : { maxProcessorRetries }) });
    const output = await agent.stream('question');
    for await (const piece of output.textStream) received.push(piece);
    expect(received.join('')).toBe('live words');
    return seenAtStepEnd;
  }

  it('streams live when no retry is possible, and holds an attempt while one is', async () => {
    expect(await textBeforeStepEnd(undefined)).toBe('live words');
    expect(await textBeforeStepEnd(0)).toBe('live words');
    expect(await textBeforeStepEnd(2)).toBe('');
  });

  it('streams the last attempt live once the retry budget is spent', async () => {
    const received: string[] = [];
    const seen: string[] = [];
    const guard: Processor = {
      id: 'guard',
      processOutputStep: async ({ text, abort }) => {
        await settle(() => received.join('') === text, 300);
        seen.push(received.join(''));
        if (text === 'first') abort('again', { retry: true });
      },
    };
    const agent = new Agent({ id: 'a', model: answering('first', 'second'), maxProcessorRetries: 1, outputProcessors: [guard] });
    const output = await agent.stream('question');
    for await (const piece of output.textStream) received.push(piece);
    expect(seen).toEqual(['', 'second']);
    expect(received.join('')).toBe('second');
  });

  it('a tripwired run errors the text stream with the TripWire (live and late readers alike)', async () => {
    const agent = new Agent({ id: 'a', model: answering('fine words then secret'), outputProcessors: [blockDelta('secret')] });
    const output = await agent.stream('question');
    const live = await readText(output.textStream);
    expect(TripWire.isInstance(live.error)).toBe(true);
    expect((live.error as TripWire).reason).toBe('"secret" is blocked');
    expect((live.error as TripWire).processorId).toBe('word-guard');
    expect(live.text).not.toContain('secret');

    const late = await agent.stream('question');
    await late.result;
    const replay = await readText(late.textStream);
    expect(TripWire.isInstance(replay.error)).toBe(true);
  });

  it('a processOutputResult tripwire errors the text stream too (with retries set, nothing was shown)', async () => {
    const judge: Processor = { id: 'judge', processOutputResult: ({ abort }) => abort('final answer rejected') };
    const agent = new Agent({ id: 'a', model: answering('blocked reply'), maxProcessorRetries: 1, outputProcessors: [judge] });
    const output = await agent.stream('question');
    const { error } = await readText(output.textStream);
    expect(TripWire.isInstance(error)).toBe(true);
    expect(await output.text).toBe('');
  });

  it('an aborted run errors the text stream with a RunAbortedError; an error run with its error', async () => {
    const controller = new AbortController();
    const stopper: Processor = {
      id: 'stopper',
      processOutputStream: ({ part }) => {
        if (part.type === 'text-delta') controller.abort('user left');
        return part;
      },
    };
    const aborted = await new Agent({ id: 'a', model: answering('abc'), outputProcessors: [stopper] }).stream('q', { abortSignal: controller.signal });
    const abortedRead = await readText(aborted.textStream);
    expect(abortedRead.error).toBeInstanceOf(RunAbortedError);

    const failing = mockModel({ parts: () => [...textParts('partial'), { type: 'error', error: new Error('provider down') }] });
    const errored = await new Agent({ id: 'a', model: failing }).stream('q');
    const erroredRead = await readText(errored.textStream);
    expect((erroredRead.error as Error).message).toContain('provider down');
  });
});

describe('a tripwired run reports no blocked text anywhere', () => {
  it('generate(): text, steps (text, reasoning, tool calls) and chunks carry no blocked word', async () => {
    const agent = new Agent({ id: 'a', model: answering('a secret plan'), outputProcessors: [rejectStep('secret')] });
    const result = await agent.generate('question');
    expect(result.tripwire).toMatchObject({ processorId: 'quality' });
    expect(result.steps.map((step) => step.text)).toEqual(['']);
    expect(JSON.stringify(result)).not.toContain('secret plan');
  });

  it('processOutputResult tripwire: every step blanked, also after an accepted tool step', async () => {
    const model = mockModel({
      parts: ({ callIndex }) =>
        callIndex === 0
          ? [...textParts('looking it up'), ...toolCallParts('lookup', { id: 1 }, { toolCallId: 'c1' }), finishPart('tool-calls')]
          : [...textParts('the forbidden answer'), finishPart('stop')],
    });
    const judge: Processor = { id: 'judge', processOutputResult: ({ result, abort }) => (result.text.includes('forbidden') ? abort('blocked') : undefined) };
    const agent = new Agent({ id: 'a', model, outputProcessors: [judge], tools: { lookup: { execute: async () => 'row' } } });
    const result = await agent.generate('question');
    expect(result.tripwire?.processorId).toBe('judge');
    expect(result.steps.map((step) => step.text)).toEqual(['', '']);
    expect(JSON.stringify(result)).not.toContain('forbidden');
    expect(JSON.stringify(result)).not.toContain('looking it up');
  });

  it('the UI message stream’s final message holds no blocked text', async () => {
    const agent = new Agent({ id: 'a', model: answering('a secret plan'), outputProcessors: [rejectStep('secret')] });
    let message: unknown;
    for await (const snapshot of readUIMessageStream({ stream: toUIMessageStream(agent.stream$('question'), { messageId: 'm1' }) })) message = snapshot;
    expect(JSON.stringify(message)).not.toContain('secret plan');
  });

  it.each(['nothing', 'input'] as const)('memory (saveOnTripwire: %s) stores none of the blocked reply', async (saveOnTripwire) => {
    const storage = new InMemoryStorage();
    const agent = new Agent({ id: 'a', model: answering('a secret plan'), memory: new Memory({ storage, saveOnTripwire }), outputProcessors: [rejectStep('secret')] });
    const result = await agent.generate('my question', { memory: { thread: 't1', resource: 'u1' } });
    expect(result.tripwire).toBeDefined();
    const stored = await storage.getMessages({ threadId: 't1' });
    expect(JSON.stringify(stored)).not.toContain('secret plan');
    expect(stored.length).toBe(saveOnTripwire === 'input' ? 1 : 0);
  });
});

describe('step numbers after a retry', () => {
  it('each attempt is a step of its own: distinct numbers, the same in steps, chunks and hooks', async () => {
    const numbersSeen: number[] = [];
    const counter: Processor = {
      id: 'counter',
      processInputStep: ({ stepNumber }) => {
        numbersSeen.push(stepNumber);
      },
    };
    const model = mockModel({
      parts: ({ callIndex }) =>
        callIndex === 0
          ? [...toolCallParts('lookup', { id: 1 }, { toolCallId: 'c1' }), finishPart('tool-calls')]
          : [...textParts(callIndex === 1 ? 'That is a short' : 'a much more detailed answer'), finishPart('stop')],
    });
    const agent = new Agent({
      id: 'a',
      model,
      maxProcessorRetries: 2,
      inputProcessors: [counter],
      outputProcessors: [rejectStep('short')],
      tools: { lookup: { execute: async () => 'row' } },
    });
    const output = await agent.stream('question');
    const result = await output.result;
    expect(result.steps.map((step) => step.stepNumber)).toEqual([0, 1, 2]);
    expect(result.steps.map((step) => step.text)).toEqual(['', '', 'a much more detailed answer']);
    expect(result.steps[1]?.tripwire?.processorId).toBe('quality');
    expect(numbersSeen).toEqual([0, 1, 2]);
    const starts = result.chunks.flatMap((chunk) => (chunk.type === 'step-start' ? [chunk.payload.stepNumber] : []));
    const finishes = result.chunks.flatMap((chunk) => (chunk.type === 'step-finish' ? [chunk.payload.stepNumber] : []));
    expect(starts).toEqual([0, 1, 2]);
    expect(finishes).toEqual([0, 1, 2]);
    expect(result.text).toBe('a much more detailed answer');
  });

  it('a retry counts against maxSteps: at the last step a retry request ends the run with the tripwire', async () => {
    const model = answering('short', 'long enough');
    const agent = new Agent({ id: 'a', model, maxSteps: 1, maxProcessorRetries: 3, outputProcessors: [rejectStep('short')] });
    const result = await agent.generate('question');
    expect(model.calls).toHaveLength(1);
    expect(result.tripwire).toMatchObject({ processorId: 'quality', retry: true });
  });
});

describe('processOutputStream cannot invent run-level chunks or tool executions', () => {
  const inventing = (invented: (part: ChunkType) => ChunkType[]): Processor => ({
    id: 'inventor',
    processOutputStream: ({ part, state }) => {
      const extra = invented(part);
      if (extra.length > 0) state[FOLLOW_UP_CHUNKS_KEY] = extra;
      return part;
    },
  });
  const forged = (type: string, payload: unknown = {}) => ({ type, runId: 'forged', from: 'AGENT', payload }) as ChunkType;

  it('invented start / finish / tripwire / error / abort chunks are dropped: one start, one terminal, last', async () => {
    const processor = inventing((part) =>
      part.type === 'text-delta' || part.type === 'finish'
        ? [
            forged('start'),
            forged('finish', { stepResult: { reason: 'stop' }, output: { usage: {}, text: 'forged' } }),
            forged('tripwire', { reason: 'forged' }),
            forged('error', { error: new Error('forged') }),
            forged('abort', {}),
          ]
        : [],
    );
    const agent = new Agent({ id: 'a', model: answering('hello'), outputProcessors: [processor] });
    const chunks = await collect(agent);
    const runLevel = chunks.filter((chunk) => ['start', 'finish', 'tripwire', 'error', 'abort'].includes(chunk.type));
    expect(runLevel.map((chunk) => chunk.type)).toEqual(['start', 'finish']);
    expect(chunks[0]?.type).toBe('start');
    expect(chunks.at(-1)?.type).toBe('finish');
    expect(chunks.some((chunk) => chunk.runId === 'forged')).toBe(false);
    const result = await agent.generate('question');
    expect(result.text).toBe('hello');
  });

  it('a text-delta rewritten into a finish does not end the run', async () => {
    const rewriter: Processor = {
      id: 'rewriter',
      processOutputStream: ({ part }) => (part.type === 'text-delta' && part.payload.text.includes('b') ? forged('finish', { stepResult: { reason: 'stop' }, output: { text: '' } }) : part),
    };
    const chunks = await collect(new Agent({ id: 'a', model: answering('a b c'), outputProcessors: [rewriter] }));
    expect(chunks.filter((chunk) => chunk.type === 'finish')).toHaveLength(1);
    expect(chunks.at(-1)?.type).toBe('finish');
  });

  it('an invented tool-call is neither executed nor streamed nor stored; a rewritten one runs with its new input', async () => {
    const executed: Array<[string, unknown]> = [];
    const model = mockModel({
      parts: ({ callIndex }) =>
        callIndex === 0 ? [...toolCallParts('lookup', { id: 'original' }, { toolCallId: 'c1' }), finishPart('tool-calls')] : [...textParts('done'), finishPart('stop')],
    });
    const processor: Processor = {
      id: 'rewriter',
      processOutputStream: ({ part, state }) => {
        if (part.type !== 'tool-call') return part;
        state[FOLLOW_UP_CHUNKS_KEY] = [
          { ...part, payload: { ...part.payload, toolCallId: 'invented', toolName: 'wipe', args: {} } },
          { ...part, payload: { ...part.payload, args: { id: 'duplicate' } } },
        ];
        return { ...part, payload: { ...part.payload, args: { id: 'rewritten' } } };
      },
    };
    const agent = new Agent({
      id: 'a',
      model,
      outputProcessors: [processor],
      tools: {
        lookup: { execute: async (args: unknown) => (executed.push(['lookup', args]), 'row') },
        wipe: { execute: async (args: unknown) => (executed.push(['wipe', args]), 'wiped') },
      },
    });
    const chunks = await collect(agent);
    expect(executed).toEqual([['lookup', { id: 'rewritten' }]]);
    const calls = chunks.filter((chunk): chunk is Extract<ChunkType, { type: 'tool-call' }> => chunk.type === 'tool-call');
    expect(calls.map((chunk) => [chunk.payload.toolCallId, chunk.payload.args])).toEqual([['c1', { id: 'rewritten' }]]);
    expect(JSON.stringify(model.calls[1]?.prompt)).not.toContain('invented');
    expect(chunks.at(-1)?.type).toBe('finish');
  });

  it('a tool-call renamed to another tool is dropped: not executed', async () => {
    const executed: string[] = [];
    const model = mockModel({
      parts: ({ callIndex }) =>
        callIndex === 0 ? [...toolCallParts('lookup', { id: 1 }, { toolCallId: 'c1' }), finishPart('tool-calls')] : [...textParts('done'), finishPart('stop')],
    });
    const renamer: Processor = {
      id: 'renamer',
      processOutputStream: ({ part }) => (part.type === 'tool-call' ? { ...part, payload: { ...part.payload, toolName: 'wipe' } } : part),
    };
    const agent = new Agent({
      id: 'a',
      model,
      outputProcessors: [renamer],
      tools: { lookup: { execute: async () => (executed.push('lookup'), 'row') }, wipe: { execute: async () => (executed.push('wipe'), 'wiped') } },
    });
    const result = await agent.generate('question');
    expect(executed).toEqual([]);
    expect(result.toolCalls).toEqual([]);
  });
});

describe('an abort during the memory save', () => {
  /** A store whose saves wait for `release()`: before the real save, or after it committed. */
  function slowStorage(hold: 'before' | 'after-commit') {
    const storage = new InMemoryStorage();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let saving!: () => void;
    const savingStarted = new Promise<void>((resolve) => (saving = resolve));
    const save = storage.saveMessages.bind(storage);
    storage.saveMessages = async (options) => {
      if (hold === 'after-commit') {
        const saved = await save(options);
        saving();
        await released;
        return saved;
      }
      saving();
      await released;
      return save(options);
    };
    return { storage, release, savingStarted };
  }

  it('arriving while the save runs, after its commit: the run reports finish and the exchange is stored', async () => {
    const { storage, release, savingStarted } = slowStorage('after-commit');
    const controller = new AbortController();
    const agent = new Agent({ id: 'a', model: answering('kept reply'), memory: new Memory({ storage }) });
    const run = lastValueFrom(agent.stream$('question', { memory: { thread: 't1', resource: 'u1' }, abortSignal: controller.signal }).pipe(toArray()));
    await savingStarted;
    controller.abort('late');
    release();
    const first = await run;
    expect(first.at(-1)?.type).toBe('finish');
    expect((await storage.getMessages({ threadId: 't1' })).length).toBe(2);
  });

  it('arriving while the save runs, before its commit: the store refuses (with the abort reason), nothing is stored, the run reports abort', async () => {
    const { storage, release, savingStarted } = slowStorage('before');
    const controller = new AbortController();
    const agent = new Agent({ id: 'a', model: answering('dropped reply'), memory: new Memory({ storage }) });
    const run = lastValueFrom(agent.stream$('question', { memory: { thread: 't1', resource: 'u1' }, abortSignal: controller.signal }).pipe(toArray()));
    await savingStarted;
    controller.abort('late');
    release();
    const chunks = await run;
    expect(chunks.at(-1)).toMatchObject({ type: 'abort', payload: { reason: 'late' } });
    expect(chunks.filter((chunk) => chunk.type === 'finish' || chunk.type === 'error')).toEqual([]);
    expect(await storage.getMessages({ threadId: 't1' })).toEqual([]);
  });

  it('arriving before the save: the run reports abort and nothing is stored', async () => {
    const { storage, release } = slowStorage('before');
    release();
    const controller = new AbortController();
    const stopper: Processor = {
      id: 'stopper',
      processOutputStep: () => {
        controller.abort('user left');
      },
    };
    const agent = new Agent({ id: 'a', model: answering('reply'), memory: new Memory({ storage }), outputProcessors: [stopper] });
    const chunks = await lastValueFrom(agent.stream$('question', { memory: { thread: 't1', resource: 'u1' }, abortSignal: controller.signal }).pipe(toArray()));
    expect(chunks.at(-1)?.type).toBe('abort');
    expect(await storage.getMessages({ threadId: 't1' })).toEqual([]);
  });

  it('a save that fails because of the abort reports abort, not error', async () => {
    const storage = new InMemoryStorage();
    const controller = new AbortController();
    storage.saveMessages = async () => {
      controller.abort('user left');
      throw new DOMException('aborted', 'AbortError');
    };
    const agent = new Agent({ id: 'a', model: answering('reply'), memory: new Memory({ storage }) });
    const chunks = await lastValueFrom(agent.stream$('question', { memory: { thread: 't1', resource: 'u1' }, abortSignal: controller.signal }).pipe(toArray()));
    expect(chunks.at(-1)?.type).toBe('abort');
  });
});
