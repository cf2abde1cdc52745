/**
 * A hostile or careless consumer of `agent.stream()` and of `stream$(input, { demand })`: both web
 * streams read at once at different speeds, one never read, either cancelled, tee'd, released and
 * re-read, broken out of; promises asked before, during and after the end, an error or a cancel;
 * readers that stop, gates held forever, shared or misused. Every promise must settle, no rejection
 * may go unhandled, a reader that stops must bound the provider reads, one nobody reads must not.
 */
import { NEVER, concat, finalize, from, lastValueFrom, toArray } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, DemandGate, RunAbortedError } from '../../src/index.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { Processor } from '../../src/contract/processor-types.js';
import type { AgentOutput } from '../../src/loop/consumers/agent-output.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts, toolCallParts } from '../../src/testing/model-parts.js';
import { countingModel, settle } from './support/counting-model.js';
import { waitFor } from '../support/wait-for.js';

const TOTAL = 200;
const ALL_PULLS = TOTAL + 4; // text-start, the deltas, text-end, finish, the close
const TEXT = 'x'.repeat(TOTAL);

const PROMISES = ['result', 'text', 'finishReason', 'usage', 'steps', 'toolCalls', 'toolResults', 'tripwire', 'object'] as const;
type PromiseName = (typeof PROMISES)[number];

/** Watches the output's promises: which have settled, and how. */
function watch(output: AgentOutput, names: readonly PromiseName[] = PROMISES): Map<PromiseName, 'pending' | 'resolved' | 'rejected'> {
  const states = new Map<PromiseName, 'pending' | 'resolved' | 'rejected'>();
  for (const name of names) {
    states.set(name, 'pending');
    (output[name] as Promise<unknown>).then(
      () => states.set(name, 'resolved'),
      () => states.set(name, 'rejected'),
    );
  }
  return states;
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

async function readAll<T>(stream: ReadableStream<T>): Promise<T[]> {
  const values: T[] = [];
  for await (const value of stream) values.push(value);
  return values;
}

/** A model whose stream stays open after `text` (only the run's cancellation ends it). */
function openEndedModel(text: string): { model: ReturnType<typeof mockModel>; stopped: () => boolean } {
  let stopped = false;
  const model = mockModel({ stream: concat(from(textParts(text)), NEVER).pipe(finalize(() => (stopped = true))) });
  return { model, stopped: () => stopped };
}

let unhandled: unknown[] = [];
const onUnhandled = (error: unknown): void => void unhandled.push(error);
beforeEach(() => {
  unhandled = [];
  process.on('unhandledRejection', onUnhandled);
});
afterEach(async () => {
  await nextTurn();
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

describe('both streams of one run', () => {
  it('fullStream and textStream read at once, at different speeds, both get the whole run', async () => {
    const { model, pulls } = countingModel(TOTAL);
    const output = await new Agent({ id: 'a', model }).stream('Hi');
    const text = (async () => {
      let all = '';
      for await (const piece of output.textStream) {
        all += piece;
        await settle(1); // slow
      }
      return all;
    })();
    const full = readAll(output.fullStream);
    expect(await text).toBe(TEXT);
    const chunks = await full;
    expect(chunks.filter((chunk) => chunk.type === 'text-delta')).toHaveLength(TOTAL);
    expect(chunks.at(-1)?.type).toBe('finish');
    expect(pulls()).toBe(ALL_PULLS);
    expect(await output.text).toBe(TEXT);
  });

  it('a textStream reader that stops holds the run when fullStream is not read; fullStream alone read fast does not stop it', async () => {
    const { model, pulls } = countingModel(TOTAL);
    const output = await new Agent({ id: 'a', model }).stream('Hi');
    const textReader = output.textStream.getReader();
    expect(await textReader.read()).toEqual({ done: false, value: 'x' });
    await settle();
    const held = pulls();
    expect(held).toBeLessThan(20);
    await settle();
    expect(pulls()).toBe(held);
    // fullStream read now: the text reader is full, the full reader is not — the run goes on
    const chunks = await readAll(output.fullStream);
    expect(chunks.at(-1)?.type).toBe('finish');
    expect(pulls()).toBe(ALL_PULLS);
    let rest = 'x';
    for (;;) {
      const next = await textReader.read();
      if (next.done) break;
      rest += next.value;
    }
    expect(rest).toBe(TEXT);
  });

  it('cancelling textStream only: the run goes on for fullStream', async () => {
    const { model, pulls } = countingModel(TOTAL);
    const output = await new Agent({ id: 'a', model }).stream('Hi');
    const textReader = output.textStream.getReader();
    await textReader.read();
    await textReader.cancel();
    const chunks = await readAll(output.fullStream);
    expect(chunks.filter((chunk) => chunk.type === 'text-delta')).toHaveLength(TOTAL);
    expect(pulls()).toBe(ALL_PULLS);
    expect(await output.text).toBe(TEXT);
  });

  it('cancelling fullStream while textStream is read: the run stops, textStream ends and every promise settles', async () => {
    const { model, stopped } = openEndedModel('one two three four five six');
    const output = await new Agent({ id: 'a', model }).stream('Hi');
    const states = watch(output);
    const textReader = output.textStream.getReader();
    expect((await textReader.read()).value).toBe('one');
    let textEnd: 'pending' | 'closed' | unknown = 'pending';
    void (async () => {
      for (;;) if ((await textReader.read()).done) return 'closed';
    })().then(
      (end) => (textEnd = end),
      (error: unknown) => (textEnd = error),
    );
    await output.fullStream.cancel('enough');
    await waitFor(stopped, 'the provider stream stopped');
    await nextTurn();
    expect(RunAbortedError.isInstance(textEnd)).toBe(true);
    expect([...states].filter(([, state]) => state !== 'rejected')).toEqual([]);
    const error = await rejection(output.result);
    expect(RunAbortedError.isInstance(error) && error.reason).toBe('enough');
  });
});

describe('stopping the run from the consumer side', () => {
  it('output.cancel() while fullStream is read: the reader is not left hanging, the promises reject', async () => {
    const { model, stopped } = openEndedModel('one two three');
    const output = await new Agent({ id: 'a', model }).stream('Hi');
    const reader = output.fullStream.getReader();
    let end: 'pending' | 'closed' | unknown = 'pending';
    void (async () => {
      for (;;) if ((await reader.read()).done) return 'closed';
    })().then(
      (value) => (end = value),
      (error: unknown) => (end = error),
    );
    await waitFor(() => model.calls.length === 1, 'the model call');
    output.cancel();
    await waitFor(stopped, 'the provider stream stopped');
    await nextTurn();
    expect(end).not.toBe('pending');
    expect(RunAbortedError.isInstance(await rejection(output.text))).toBe(true);
  });

  it('for await with break cancels the run: the provider request is aborted, a running tool is stopped', async () => {
    let toolSignal: AbortSignal | undefined;
    let toolStarted = false;
    const model = mockModel({
      parts: ({ callIndex }) => (callIndex === 0 ? [...toolCallParts('wait', {}), finishPart('tool-calls')] : [...textParts('never'), finishPart('stop')]),
    });
    const agent = new Agent({
      id: 'a',
      model,
      tools: {
        wait: {
          inputSchema: z.object({}),
          execute: (_input: unknown, { abortSignal }: { abortSignal: AbortSignal }) => {
            toolSignal = abortSignal;
            toolStarted = true;
            return new Promise((resolve) => abortSignal.addEventListener('abort', () => resolve('stopped')));
          },
        },
      },
    });
    const output = await agent.stream('Hi');
    const states = watch(output);
    for await (const chunk of output.fullStream) {
      if (chunk.type === 'tool-call') {
        await waitFor(() => toolStarted, 'the tool started');
        break;
      }
    }
    expect(toolSignal?.aborted).toBe(true);
    expect(model.calls).toHaveLength(1);
    await nextTurn();
    expect([...states].filter(([, state]) => state !== 'rejected')).toEqual([]);
  });

  it('for await with break mid-reply aborts the provider request', async () => {
    const { model, stopped } = openEndedModel('one two three four');
    const output = await new Agent({ id: 'a', model }).stream('Hi');
    const states = watch(output, ['result']);
    for await (const chunk of output.fullStream) if (chunk.type === 'text-delta') break;
    expect(stopped()).toBe(true);
    expect(model.abortSignals[0]?.aborted).toBe(true);
    await nextTurn();
    expect(states.get('result')).toBe('rejected');
    expect(RunAbortedError.isInstance(await rejection(output.result))).toBe(true);
    // a text stream taken afterwards errors with the cancel (as for any run that did not finish)
    expect(RunAbortedError.isInstance(await rejection(output.textStream.getReader().read()))).toBe(true);
  });
});

describe('tee, release, re-read', () => {
  it('fullStream tee()d with one branch read: the run ends, the read branch gets every chunk', async () => {
    const { model, pulls } = countingModel(TOTAL);
    const output = await new Agent({ id: 'a', model }).stream('Hi');
    const [read] = output.fullStream.tee();
    const chunks = await readAll(read);
    expect(chunks.filter((chunk) => chunk.type === 'text-delta')).toHaveLength(TOTAL);
    expect(pulls()).toBe(ALL_PULLS);
    expect(await output.text).toBe(TEXT);
  });

  it('getReader(), a few reads, releaseLock(), then for await: the rest of the run, in order', async () => {
    const { model, pulls } = countingModel(TOTAL);
    const output = await new Agent({ id: 'a', model }).stream('Hi');
    const reader = output.fullStream.getReader();
    const first: ChunkType[] = [];
    for (let read = 0; read < 3; read++) first.push((await reader.read()).value as ChunkType);
    await settle();
    reader.releaseLock();
    const rest = await readAll(output.fullStream);
    const all = [...first, ...rest];
    expect(all[0]?.type).toBe('start');
    expect(all.filter((chunk) => chunk.type === 'text-delta')).toHaveLength(TOTAL);
    expect(all.at(-1)?.type).toBe('finish');
    expect(pulls()).toBe(ALL_PULLS);
  });

  it('a reader released while the run was held: nobody reads any more, so the run is no longer held', async () => {
    const { model, pulls } = countingModel(TOTAL);
    const output = await new Agent({ id: 'a', model }).stream('Hi');
    const reader = output.fullStream.getReader();
    await reader.read();
    await settle();
    expect(pulls()).toBeLessThan(20); // held by the reader
    reader.releaseLock();
    await waitFor(() => pulls() === ALL_PULLS, 'the run reading on once the reader was released');
    expect(await output.text).toBe(TEXT);
    // a reader taken again reads everything that was buffered meanwhile
    const rest = await readAll(output.fullStream);
    expect(rest.filter((chunk) => chunk.type === 'text-delta').length).toBeGreaterThan(TOTAL - 10);
    expect(rest.at(-1)?.type).toBe('finish');
  });

  it('a textStream reader released while it held the run: the run reads on', async () => {
    const { model, pulls } = countingModel(TOTAL);
    const output = await new Agent({ id: 'a', model }).stream('Hi');
    const reader = output.textStream.getReader();
    await reader.read();
    await settle();
    expect(pulls()).toBeLessThan(20);
    reader.releaseLock();
    await waitFor(() => pulls() === ALL_PULLS, 'the run reading on once the text reader was released');
    expect(await output.text).toBe(TEXT);
  });

  it('values({ preventCancel: true }) left by break while the run was held: the stream is unread, the run reads on', async () => {
    const { model, pulls } = countingModel(TOTAL);
    const output = await new Agent({ id: 'a', model }).stream('Hi');
    for await (const chunk of output.fullStream.values({ preventCancel: true })) {
      if (chunk.type === 'start') break;
    }
    await settle();
    expect(output.fullStream.locked).toBe(false);
    await waitFor(() => pulls() === ALL_PULLS, 'the run reading on once the iterator let go');
    expect(await output.text).toBe(TEXT);
    expect((await readAll(output.fullStream)).at(-1)?.type).toBe('finish');
  });

  it('pipeTo(…, { preventCancel: true }) into a sink that errors while the run was held: the run reads on', async () => {
    const { model, pulls } = countingModel(TOTAL);
    const output = await new Agent({ id: 'a', model }).stream('Hi');
    let written = 0;
    const sink = new WritableStream<ChunkType>({
      write: () => {
        if (++written === 2) throw new Error('sink gone');
      },
    });
    await expect(output.fullStream.pipeTo(sink, { preventCancel: true })).rejects.toThrow('sink gone');
    expect(output.fullStream.locked).toBe(false);
    await waitFor(() => pulls() === ALL_PULLS, 'the run reading on once the pipe let go');
    expect(await output.text).toBe(TEXT);
  });
});

describe('late readers and promises', () => {
  it('textStream taken after the run ended replays the text from the start', async () => {
    const model = mockModel({ parts: [...textParts('one two three'), finishPart('stop')] });
    const output = await new Agent({ id: 'a', model }).stream('Hi');
    expect(await output.text).toBe('one two three');
    expect((await readAll(output.textStream)).join('')).toBe('one two three');
    expect((await readAll(output.fullStream)).at(-1)?.type).toBe('finish');
  });

  it('a failed run: a late textStream errors, every promise rejects (asked before, during and after)', async () => {
    const failure = new Error('provider down');
    const model = mockModel({ stream: concat(from(textParts('one two')), from(Promise.reject(failure))) });
    const output = await new Agent({ id: 'a', model }).stream('Hi');
    const before = watch(output, ['text', 'usage']);
    const chunks = await readAll(output.fullStream);
    expect(chunks.at(-1)?.type).toBe('error');
    const after = watch(output);
    await nextTurn();
    expect([...before, ...after].filter(([, state]) => state !== 'rejected')).toEqual([]);
    const lateError = await rejection(readAll(output.textStream));
    const last = chunks.at(-1);
    expect(lateError).toBe(last?.type === 'error' ? last.payload.error : 'no error chunk');
  });

  it('promises asked during the run resolve with the run; asked after the end, the same values', async () => {
    const { model } = countingModel(TOTAL);
    const output = await new Agent({ id: 'a', model }).stream('Hi');
    const reader = output.fullStream.getReader();
    await reader.read();
    const during = output.text;
    const usage = output.usage;
    for (;;) if ((await reader.read()).done) break;
    expect(await during).toBe(TEXT);
    expect(await output.text).toBe(TEXT);
    expect((await usage).outputTokens).toBe(TOTAL);
    expect(output.result).toBe(output.result);
  });
});

describe('backpressure', () => {
  it('streams nobody reads (textStream made, neither locked) never hold the run', async () => {
    const { model, pulls } = countingModel(TOTAL);
    const output = await new Agent({ id: 'a', model }).stream('Hi');
    void output.textStream;
    await waitFor(() => pulls() === ALL_PULLS, 'the whole reply read');
    expect((await readAll(output.textStream)).join('')).toBe(TEXT);
    expect((await readAll(output.fullStream)).length).toBeGreaterThan(TOTAL);
  });

  it('a slow fullStream reader bounds how far the provider is read ahead of it', async () => {
    const { model, pulls } = countingModel(TOTAL);
    const output = await new Agent({ id: 'a', model }).stream('Hi');
    const reader = output.fullStream.getReader();
    let read = 0;
    let most = 0;
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      read++;
      if (read % 20 === 0) {
        await settle(5); // let the run run ahead as far as it may
        most = Math.max(most, pulls() - read);
      }
    }
    expect(pulls()).toBe(ALL_PULLS);
    // 4 unread chunks, plus what is in flight: nowhere near the whole reply
    expect(most).toBeLessThan(10);
  });

  it('a slow textStream reader (fullStream never read) bounds the provider reads too', async () => {
    const { model, pulls } = countingModel(TOTAL);
    const output = await new Agent({ id: 'a', model }).stream('Hi');
    const reader = output.textStream.getReader();
    let read = 0;
    let most = 0;
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      read++;
      if (read % 20 === 0) {
        await settle(5);
        most = Math.max(most, pulls() - read);
      }
    }
    expect(read).toBe(TOTAL);
    expect(most).toBeLessThan(10);
  });

  it('a reader that stopped reading holds the run; output.cancel() still ends it', async () => {
    const { model, pulls } = countingModel(TOTAL);
    const output = await new Agent({ id: 'a', model }).stream('Hi');
    const states = watch(output);
    const reader = output.fullStream.getReader();
    await reader.read();
    await settle();
    const held = pulls();
    expect(held).toBeLessThan(20);
    output.cancel();
    await nextTurn();
    expect([...states].filter(([, state]) => state !== 'rejected')).toEqual([]);
    expect(pulls()).toBe(held);
  });

  it('a reader that stopped reading holds the run; the abortSignal still ends it with an abort chunk', async () => {
    const { model, pulls } = countingModel(TOTAL);
    const controller = new AbortController();
    const output = await new Agent({ id: 'a', model }).stream('Hi', { abortSignal: controller.signal });
    const reader = output.fullStream.getReader();
    await reader.read();
    await settle();
    const held = pulls();
    expect(held).toBeLessThan(20);
    controller.abort('user left');
    const error = await rejection(output.result);
    expect(RunAbortedError.isInstance(error) && error.reason).toBe('user left');
    const rest: ChunkType[] = [];
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      rest.push(next.value);
    }
    expect(rest.at(-1)?.type).toBe('abort');
    expect(pulls()).toBeLessThan(held + 2);
  });
});

describe('DemandGate misuse', () => {
  it('holding twice by one holder needs one release; releasing a stranger, or more than held, changes nothing', async () => {
    const gate = new DemandGate();
    const a = {};
    const b = {};
    gate.release(a); // never held
    expect(gate.open).toBe(true);
    gate.hold(a);
    gate.hold(a);
    gate.hold(b);
    gate.release(b);
    gate.release(b); // more than held
    expect(gate.open).toBe(false);
    let woken = false;
    const waiting = gate.whenOpen().then(() => (woken = true));
    await nextTurn();
    expect(woken).toBe(false);
    gate.release(a);
    expect(gate.open).toBe(true);
    await waiting;
    expect(woken).toBe(true);
  });

  it('one gate given to two runs at once: held, neither reads on; released, both finish', async () => {
    const first = countingModel(TOTAL);
    const second = countingModel(TOTAL);
    const gate = new DemandGate();
    const holder = {};
    gate.hold(holder);
    const runs = [first, second].map(({ model }) => lastValueFrom(new Agent({ id: 'a', model }).stream$('Hi', { demand: gate }).pipe(toArray())));
    await settle();
    const held = [first.pulls(), second.pulls()];
    expect(Math.max(...held)).toBeLessThan(5);
    await settle();
    expect([first.pulls(), second.pulls()]).toEqual(held);
    gate.release(holder);
    for (const chunks of await Promise.all(runs)) expect(chunks.at(-1)?.type).toBe('finish');
    expect([first.pulls(), second.pulls()]).toEqual([ALL_PULLS, ALL_PULLS]);
  });

  it('a gate held forever: the abortSignal ends the run with an abort chunk', async () => {
    const { model, pulls } = countingModel(TOTAL);
    const gate = new DemandGate();
    gate.hold({});
    const controller = new AbortController();
    const done = lastValueFrom(new Agent({ id: 'a', model }).stream$('Hi', { demand: gate, abortSignal: controller.signal }).pipe(toArray()));
    await settle();
    const held = pulls();
    controller.abort('bye');
    const chunks = await done;
    expect(chunks.at(-1)?.type).toBe('abort');
    expect(pulls()).toBe(held);
  });

  it('a look-alike object as demand: a TypeError naming the option', async () => {
    const { model, pulls } = countingModel(TOTAL);
    const lookAlike = { open: true, hold: () => undefined, release: () => undefined, whenOpen: () => Promise.resolve() };
    for (const demand of [lookAlike, null]) {
      const chunks = await lastValueFrom(new Agent({ id: 'a', model }).stream$('Hi', { demand: demand as unknown as DemandGate }).pipe(toArray()));
      const last = chunks.at(-1);
      const error = last?.type === 'error' ? last.payload.error : undefined;
      expect(error).toBeInstanceOf(TypeError);
      expect(String(error)).toContain('options.demand must be a DemandGate');
    }
    expect(pulls()).toBe(0);
  });
});

describe('a processor that throws while the consumer is paused', () => {
  for (const kind of ['sync', 'async'] as const) {
    it(`${kind} throw in processOutputStream: fullStream ends with the error, every promise rejects, the provider stops`, async () => {
      const { model, stopped } = openEndedModel('a b c d e f g h i j k l');
      let seen = 0;
      let thrown = false;
      const breaker: Processor = {
        id: 'breaker',
        processOutputStream: ({ part }) => {
          if (part.type !== 'text-delta' || ++seen < 3) return part;
          thrown = true;
          if (kind === 'sync') throw new Error('processor broke');
          return Promise.reject(new Error('processor broke'));
        },
      };
      const output = await new Agent({ id: 'a', model, outputProcessors: [breaker] }).stream('Hi');
      const states = watch(output);
      const reader = output.fullStream.getReader();
      await reader.read(); // then paused
      await waitFor(() => thrown, 'the processor threw');
      await waitFor(stopped, 'the provider stream stopped');
      await nextTurn();
      expect([...states].filter(([, state]) => state !== 'rejected')).toEqual([]);
      const rest: ChunkType[] = [];
      for (;;) {
        const next = await reader.read();
        if (next.done) break;
        rest.push(next.value);
      }
      expect(rest.at(-1)?.type).toBe('error');
      expect(String(await rejection(readAll(output.textStream)))).toContain('processor broke');
    });
  }
});
