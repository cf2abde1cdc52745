/**
 * The hook contract at the operator level (issues 13 and 15): the first abort() of a call decides
 * the outcome, tripwires from another package are recognised by shape, processorTimeoutMs fails
 * closed on its scheduler, garbage results are ProcessorErrors naming the field, processorIndex
 * reaches every hook (frozen processors run), sendSignal and llmRequestStage.
 */
import { describe, expect, it } from 'vitest';
import { VirtualTimeScheduler, firstValueFrom, of } from 'rxjs';
import type { LanguageModelV4Prompt } from '@ai-sdk/provider';
import { processInput } from '../../src/operators/process-input.js';
import { processInputStep, type StepInput } from '../../src/operators/process-input-step.js';
import { processLLMRequest, type LLMRequest } from '../../src/operators/process-llm-request.js';
import { processOutputStream } from '../../src/operators/process-output-stream.js';
import { processOutputStep, type StepOutput } from '../../src/operators/process-output-step.js';
import { askProcessAPIError } from '../../src/operators/retry-on-api-error.js';
import { assignProcessorIndexes } from '../../src/operators/run-context.js';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import { TripWire, isForeignTripWire, toTripWire } from '../../src/contract/errors/trip-wire.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { testUsage } from '../../src/testing/chunk-builders.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { errorOf, flushMicrotasks, listWith, record, testContext, user } from './helpers.js';

const model = mockModel();
const stepInput: StepInput = { stepNumber: 0, model };
const stepOutput: StepOutput = { stepNumber: 0, finishReason: 'stop', toolCalls: [], text: '', usage: testUsage() };
const prompt: LanguageModelV4Prompt = [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }];

/** The reference implementation's TripWire, as its package defines it (an Error with options and processorId). */
class ForeignTripWire extends Error {
  constructor(
    reason: string,
    readonly options: { retry?: boolean; metadata?: unknown } = {},
    readonly processorId?: string,
  ) {
    super(reason);
  }
}
// Name it as the reference's class is named (its module scope holds `var TripWire = class …`).
Object.defineProperty(ForeignTripWire, 'name', { value: 'TripWire' });

function inputContext() {
  return testContext({ messageList: listWith([user('u1', 'hello')]) });
}

describe('the first abort() of a hook call decides the outcome', () => {
  it('whatever the hook throws afterwards (the reference processors re-wrap: "Moderation failed: …")', async () => {
    const processor: Processor = {
      id: 'moderation',
      processInput: ({ abort }) => {
        try {
          abort('Content flagged', { retry: false, metadata: { category: 'hate' } });
        } catch (error) {
          if (error instanceof ForeignTripWire) throw error; // never matches rxagent's TripWire
          throw new Error(`Moderation failed: ${(error as Error).message}`);
        }
      },
    };
    const ctx = inputContext();
    const error = await errorOf(of(ctx.messageList).pipe(processInput([processor], ctx)));
    expect(TripWire.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ reason: 'Content flagged', processorId: 'moderation', options: { retry: false, metadata: { category: 'hate' } } });
  });

  it('over a second abort, another TripWire thrown, or a normal return — sync and async', async () => {
    const variants: Processor[] = [
      {
        id: 'twice',
        processOutputStep: ({ abort }) => {
          try {
            abort('first');
          } catch {
            abort('second');
          }
        },
      },
      {
        id: 'throws-other',
        processOutputStep: async ({ abort }) => {
          try {
            abort('first', { retry: true });
          } catch {
            throw new TripWire('other', {}, 'someone-else');
          }
        },
      },
      {
        id: 'returns',
        processOutputStep: async ({ abort }) => {
          try {
            abort('first');
          } catch {
            return undefined;
          }
        },
      },
    ];
    for (const processor of variants) {
      const ctx = testContext();
      const error = await errorOf(of(stepOutput).pipe(processOutputStep([processor], ctx)));
      expect(TripWire.isInstance(error), processor.id).toBe(true);
      expect((error as TripWire).reason, processor.id).toBe('first');
      expect((error as TripWire).processorId, processor.id).toBe(processor.id);
    }
  });

  it('in processOutputStream too, and the next call starts clean', async () => {
    let calls = 0;
    const processor: Processor = {
      id: 'stream-guard',
      processOutputStream: async ({ part, abort }) => {
        calls++;
        if (calls === 2) {
          try {
            abort('second chunk blocked');
          } catch {
            throw new Error('wrapped');
          }
        }
        return part;
      },
    };
    const ctx = testContext();
    const chunks: ChunkType[] = [chunk.textDelta('a'), chunk.textDelta('b'), chunk.textDelta('c')];
    const recording = record(of(...chunks).pipe(processOutputStream([processor], ctx)));
    await flushMicrotasks();
    expect(recording.values).toHaveLength(1);
    expect(recording.error).toMatchObject({ reason: 'second chunk blocked', processorId: 'stream-guard' });
  });
});

describe('a TripWire from another package is recognised by shape', () => {
  it('keeps reason, options (retry, metadata) and processor id', async () => {
    const processor: Processor = {
      id: 'regex-filter',
      processInput: () => {
        throw new ForeignTripWire('Blocked by pattern', { retry: true, metadata: { pattern: 'secret' } }, 'their-id');
      },
    };
    const ctx = inputContext();
    const error = await errorOf(of(ctx.messageList).pipe(processInput([processor], ctx)));
    expect(TripWire.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ reason: 'Blocked by pattern', retry: true, metadata: { pattern: 'secret' }, processorId: 'their-id' });
  });

  it('reports it to onViolation once, as an abort is', async () => {
    const reported: Array<{ message: string; detail: unknown }> = [];
    const processor: Processor = {
      id: 'regex-filter',
      onViolation: ({ message, detail }) => void reported.push({ message, detail }),
      processOutputStream: async () => {
        throw new ForeignTripWire('Blocked', { metadata: { rule: 1 } });
      },
    };
    const error = await errorOf(of(chunk.textDelta('a')).pipe(processOutputStream([processor], testContext({ tracingContext: { onHook: () => undefined } }))));
    expect(error).toMatchObject({ reason: 'Blocked', processorId: 'regex-filter' });
    expect(reported).toEqual([{ message: 'Blocked', detail: { rule: 1 } }]);
  });

  it('takes the processor id from the processor when the foreign TripWire has none (sync and async)', async () => {
    for (const asyncHook of [false, true]) {
      const processor: Processor = {
        id: 'token-limiter',
        processLLMRequest: () => {
          const tripwire = new ForeignTripWire('Too many tokens', { retry: false });
          if (asyncHook) return Promise.reject(tripwire);
          throw tripwire;
        },
      };
      const ctx = testContext();
      const error = await errorOf(of<LLMRequest>({ prompt, model, stepNumber: 0 }).pipe(processLLMRequest([processor], ctx)));
      expect(error).toMatchObject({ reason: 'Too many tokens', retry: false, processorId: 'token-limiter' });
      expect(TripWire.isInstance(error)).toBe(true);
    }
  });

  it('does not take ordinary errors, or look-alikes with the wrong shape, for tripwires', () => {
    expect(isForeignTripWire(new Error('x'))).toBe(false);
    expect(isForeignTripWire({ name: 'TripWire', message: 'not an Error' })).toBe(false);
    const badOptions = Object.assign(new Error('x'), { name: 'TripWire', options: 'retry' });
    expect(isForeignTripWire(badOptions)).toBe(false);
    const named = Object.assign(new Error('by name'), { name: 'TripWire' });
    expect(toTripWire(named)).toMatchObject({ reason: 'by name', retry: false });
    expect(toTripWire(new ForeignTripWire('r', { metadata: 1 }, 'p'))).toMatchObject({ reason: 'r', metadata: 1, processorId: 'p' });
  });
});

describe('processorTimeoutMs', () => {
  it('fails an async hook that does not settle in time closed, on the context scheduler, naming processor, hook and timeout', async () => {
    const scheduler = new VirtualTimeScheduler();
    const ctx = testContext({ messageList: listWith([user('u1', 'hello')]), processorTimeoutMs: 50, scheduler });
    const hanging: Processor = { id: 'hangs', processInput: () => new Promise<undefined>(() => undefined) };
    const recording = record(of(ctx.messageList).pipe(processInput([hanging], ctx)));
    await flushMicrotasks();
    expect(recording.error).toBeUndefined();
    scheduler.flush(); // virtual time passes the 50 ms
    await flushMicrotasks();
    expect(ProcessorError.isInstance(recording.error)).toBe(true);
    expect(recording.error).toMatchObject({ processorId: 'hangs', hook: 'processInput' });
    expect((recording.error as Error).message).toContain('processorTimeoutMs (50 ms)');
  });

  it('lets an async hook that settles in time pass and cancels its timer; a sync hook schedules nothing', async () => {
    const scheduler = new VirtualTimeScheduler();
    const ctx = testContext({ processorTimeoutMs: 50, scheduler });
    const quick: Processor = { id: 'quick', processOutputStream: async ({ part }) => part };
    const sync: Processor = { id: 'sync', processOutputStream: ({ part }) => part };
    const syncRecording = record(of(chunk.textDelta('a')).pipe(processOutputStream([sync], ctx)));
    expect(syncRecording.completed).toBe(true); // synchronous: no microtask, no timer
    expect(scheduler.actions).toHaveLength(0);
    const recording = record(of(chunk.textDelta('a')).pipe(processOutputStream([quick], testContext({ processorTimeoutMs: 50, scheduler }))));
    await flushMicrotasks();
    expect(recording.completed).toBe(true);
    expect(recording.error).toBeUndefined();
    scheduler.flush();
    await flushMicrotasks();
    expect(recording.error).toBeUndefined();
  });

  it('times out a stream hook, and an abort() it makes after the timeout is late (ignored, reported)', async () => {
    const scheduler = new VirtualTimeScheduler();
    const ctx = testContext({ processorTimeoutMs: 10, scheduler });
    const violations: string[] = [];
    let release: (() => void) | undefined;
    const slow: Processor = {
      id: 'slow',
      onViolation: ({ message }) => void violations.push(message),
      processOutputStream: async ({ part, abort }) => {
        await new Promise<void>((resolve) => (release = resolve));
        abort('too slow to matter');
        return part;
      },
    };
    const recording = record(of(chunk.textDelta('a')).pipe(processOutputStream([slow], ctx)));
    await flushMicrotasks();
    scheduler.flush();
    await flushMicrotasks();
    expect(recording.error).toMatchObject({ processorId: 'slow', hook: 'processOutputStream' });
    release?.();
    await flushMicrotasks();
    expect(violations).toEqual(['abort() called after processOutputStream returned (ignored): too slow to matter']);
  });
});

describe('garbage from hooks is a ProcessorError naming the field', () => {
  const cases: Array<[string, Processor, RegExp]> = [
    ['processInput { nope: 1 }', { id: 'p', processInput: () => ({ nope: 1 }) as never }, /unknown field "nope"/],
    ['processInput {}', { id: 'p', processInput: () => ({}) as never }, /without messages/],
    ['processInput messages: "x"', { id: 'p', processInput: () => ({ messages: 'x', systemMessages: [] }) as never }, /messages = string/],
    ['processInput systemMessages: [1]', { id: 'p', processInput: () => ({ messages: [], systemMessages: [1] }) as never }, /systemMessages\[0\]/],
    ['processInput a number', { id: 'p', processInput: () => 42 as never }, /returned number/],
  ];
  it.each(cases)('%s', async (_name, processor, message) => {
    const ctx = inputContext();
    const error = await errorOf(of(ctx.messageList).pipe(processInput([processor], ctx)));
    expect(ProcessorError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(message);
    expect(ctx.messageList.get.input.db()).toHaveLength(1); // nothing stored was lost
  });

  const stepCases: Array<[string, unknown, RegExp]> = [
    ['unknown field', { tolChoice: 'auto' }, /unknown field "tolChoice"/],
    ['toolChoice', { toolChoice: 'sometimes' }, /toolChoice = string/],
    ['toolChoice object', { toolChoice: { type: 'tool' } }, /toolChoice = object/],
    ['activeTools', { activeTools: 'search' }, /activeTools = string/],
    ['activeTools entries', { activeTools: ['a', 1] }, /activeTools = an array/],
    ['tools', { tools: ['x'] }, /tools = an array/],
    ['tools entry', { tools: { search: null } }, /tools\.search = null/],
    ['providerOptions', { providerOptions: { openai: 1 } }, /providerOptions\.openai = number/],
    ['modelSettings', { modelSettings: { temperature: 'hot' } }, /modelSettings\.temperature = string/],
    ['stopSequences', { modelSettings: { stopSequences: [1] } }, /modelSettings\.stopSequences/],
    ['structuredOutput', { structuredOutput: {} }, /structuredOutput = object/],
    ['systemMessages', { systemMessages: 'be nice' }, /systemMessages = string/],
    ['messages', { messages: { id: 'x' } }, /messages = object/],
    ['messageList', { messageList: {} }, /messageList that is not a MessageList/],
    ['model', { model: 7 }, /model = number/],
    ['messageId', { messageId: 3 }, /messageId = number/],
  ];
  it.each(stepCases)('processInputStep: %s', async (_name, result, message) => {
    const ctx = inputContext();
    const processor: Processor = { id: 'step', processInputStep: () => result as never };
    const error = await errorOf(of(stepInput).pipe(processInputStep([processor], ctx)));
    expect(ProcessorError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ processorId: 'step', hook: 'processInputStep' });
    expect((error as Error).message).toMatch(message);
  });

  it('processInputStep: the reference fields messageId and retryCount are accepted, {} changes nothing', async () => {
    const ctx = inputContext();
    const processor: Processor = { id: 'step', processInputStep: ({ stepNumber }) => (stepNumber === 0 ? { messageId: 'm', retryCount: 0 } : {}) };
    const result = await firstValueFrom(of(stepInput).pipe(processInputStep([processor], ctx)));
    expect(result.model).toBe(model);
  });

  const requestCases: Array<[string, unknown, RegExp]> = [
    ['unknown field', { promt: [] }, /unknown field "promt"/],
    ['an array', [], /the result = an array/],
    ['prompt not an array', { prompt: 'hi' }, /prompt = string/],
    ['prompt entry', { prompt: [null] }, /prompt\[0\] = null/],
    ['prompt role', { prompt: [{ role: 'robot', content: [] }] }, /prompt\[0\]\.role/],
    ['system content', { prompt: [{ role: 'system', content: [] }] }, /prompt\[0\]\.content = an array/],
    ['user content', { prompt: [{ role: 'user', content: 'hi' }] }, /prompt\[0\]\.content = string/],
    ['text part', { prompt: [{ role: 'user', content: [{ type: 'text' }] }] }, /prompt\[0\]\.content\[0\]\.text = undefined/],
    ['response', { response: { chunks: 'x' } }, /response\.chunks = string/],
    ['response chunk', { response: { chunks: [{ payload: {} }] } }, /response\.chunks\[0\]/],
    ['response text-delta', { response: { chunks: [{ type: 'text-delta', payload: {} }] } }, /response\.chunks\[0\]\.payload\.text/],
  ];
  it.each(requestCases)('processLLMRequest: %s', async (_name, result, message) => {
    const processor: Processor = { id: 'req', processLLMRequest: () => result as never };
    const error = await errorOf(of<LLMRequest>({ prompt, model, stepNumber: 0 }).pipe(processLLMRequest([processor], testContext())));
    expect(ProcessorError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ processorId: 'req', hook: 'processLLMRequest' });
    expect((error as Error).message).toMatch(message);
  });

  it('processOutputStream: a text-delta without text is an error, never "undefined" in the text', async () => {
    const processor: Processor = {
      id: 'mangler',
      processOutputStream: ({ part }) => (part.type === 'text-delta' ? ({ type: 'text-delta', payload: { id: 't' } } as unknown as ChunkType) : part),
    };
    const error = await errorOf(of(chunk.textDelta('a')).pipe(processOutputStream([processor], testContext())));
    expect(ProcessorError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/payload\.text = undefined/);
  });
});

describe('processorIndex', () => {
  it('reaches every hook in its arguments, and a frozen processor runs', async () => {
    const seen: Array<[string, number]> = [];
    const spec: Processor = {
      id: 'frozen',
      processInput: ({ processorIndex }) => void seen.push(['processInput', processorIndex]),
      processOutputStep: ({ processorIndex }) => void seen.push(['processOutputStep', processorIndex]),
      processAPIError: ({ processorIndex }) => {
        seen.push(['processAPIError', processorIndex]);
        return undefined;
      },
    };
    const frozen = Object.freeze(spec);
    const other: Processor = { id: 'other', processInput: () => undefined };
    const ctx = inputContext();
    assignProcessorIndexes(ctx, [[other, frozen]]);
    await firstValueFrom(of(ctx.messageList).pipe(processInput([other, frozen], ctx)));
    await firstValueFrom(of(stepOutput).pipe(processOutputStep([frozen], ctx)));
    await askProcessAPIError([other, frozen], ctx, new Error('x'));
    expect(seen).toEqual([
      ['processInput', 1],
      ['processOutputStep', 1],
      ['processAPIError', 1],
    ]);
    expect(Object.isFrozen(frozen)).toBe(true);
    expect(other.processorIndex).toBe(0);
  });

  it('is exact per run when one instance sits at different positions in two runs at once', async () => {
    const seen: Record<string, number[]> = { a: [], b: [] };
    const shared: Processor = {
      id: 'shared',
      processOutputStream: async ({ part, processorIndex, runId }) => {
        await Promise.resolve();
        seen[runId === 'run-a' ? 'a' : 'b']?.push(processorIndex);
        return part;
      },
    };
    const filler: Processor = { id: 'filler', processOutputStream: ({ part }) => part };
    const ctxA = testContext({ runId: 'run-a' });
    const ctxB = testContext({ runId: 'run-b' });
    assignProcessorIndexes(ctxA, [[shared]]);
    assignProcessorIndexes(ctxB, [[filler, filler, shared]]);
    const a = record(of(chunk.textDelta('1'), chunk.textDelta('2')).pipe(processOutputStream([shared], ctxA)));
    const b = record(of(chunk.textDelta('1'), chunk.textDelta('2')).pipe(processOutputStream([filler, filler, shared], ctxB)));
    await flushMicrotasks();
    expect(a.completed && b.completed).toBe(true);
    expect(seen).toEqual({ a: [0, 0], b: [2, 2] });
  });
});

describe('sendSignal and llmRequestStage', () => {
  it('a signal reaches the next model request only, after the history, as a tagged user turn', async () => {
    const ctx = inputContext();
    const created = await ctx.sendSignal({
      type: 'reactive',
      tagName: 'system-reminder',
      contents: 'continue <now> & "then"',
      attributes: { type: 'prefill-retry', skipped: undefined },
      metadata: { message: 'Continuing after prefill error' },
    });
    expect(created).toMatchObject({ type: 'reactive', tagName: 'system-reminder', metadata: { message: 'Continuing after prefill error' } });
    const seenByHook: LanguageModelV4Prompt[] = [];
    const observer: Processor = { id: 'observer', processLLMRequest: ({ prompt: current }) => void seenByHook.push(current) };
    const first = await firstValueFrom(of<LLMRequest>({ prompt, model, stepNumber: 0 }).pipe(processLLMRequest([observer], ctx)));
    expect(first.prompt).toHaveLength(2);
    expect(first.prompt[1]).toEqual({
      role: 'user',
      content: [{ type: 'text', text: '<system-reminder type="prefill-retry">continue &#60;now&#62; &#38; &#34;then&#34;</system-reminder>' }],
    });
    expect(seenByHook[0]).toEqual(first.prompt);
    const second = await firstValueFrom(of<LLMRequest>({ prompt, model, stepNumber: 1 }).pipe(processLLMRequest([], ctx)));
    expect(second.prompt).toEqual(prompt);
    expect(ctx.messageList.get.all.db()).toHaveLength(1); // not in the list, so never in memory
  });

  it('sendSignal and writer.custom called detached: the signal is queued and shown in the outlet; after the outlet closes writes are dropped', async () => {
    const ctx = testContext();
    const { sendSignal, writer } = ctx;
    const { custom } = writer;
    const seen: string[] = [];
    ctx.custom$.subscribe((written) => seen.push(written.type));
    const created = await sendSignal({ type: 'user-message', contents: [{ type: 'text', text: 'hi' }] });
    await custom({ type: 'data-progress', data: { done: 1 } } as never);
    expect(seen).toEqual([expect.stringMatching(/^data-/), 'data-progress']);
    expect(ctx.pendingSignals).toEqual([created]);
    expect(() => custom({ type: 'progress' } as never)).toThrow(/data chunks only/);
    ctx.custom$.complete();
    await expect(custom({ type: 'data-late', data: {} } as never)).resolves.toBeUndefined();
    expect(seen).toHaveLength(2);
  });

  it('a user signal is a plain user turn; bad signals are TypeErrors naming the field', async () => {
    const ctx = testContext();
    await ctx.sendSignal({ type: 'user-message', contents: [{ type: 'text', text: 'hello' }] });
    const request = await firstValueFrom(of<LLMRequest>({ prompt: [], model, stepNumber: 0 }).pipe(processLLMRequest([], ctx)));
    expect(request.prompt).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hello' }] }]);
    expect(() => ctx.sendSignal({ type: 'shout' as never, contents: 'x' })).toThrow(/unknown signal type "shout"/);
    expect(() => ctx.sendSignal({ type: 'reactive', tagName: 'bad tag', contents: 'x' })).toThrow(/tagName/);
    expect(() => ctx.sendSignal({ type: 'reactive', contents: 'x', attributes: { 'a b': 1 } })).toThrow(/attribute name/);
    expect(() => ctx.sendSignal({ type: 'reactive', contents: [{ type: 'file' } as never] })).toThrow(/contents\[0\]/);
  });

  it('processInputStep gets llmRequestStage: true only for processors whose processLLMRequest will run', async () => {
    const seen: Record<string, unknown> = {};
    const both: Processor = {
      id: 'both',
      processInputStep: ({ llmRequestStage }) => void (seen.both = llmRequestStage),
      processLLMRequest: () => undefined,
    };
    const stepOnly: Processor = { id: 'step-only', processInputStep: ({ llmRequestStage }) => void (seen.stepOnly = llmRequestStage) };
    await firstValueFrom(of(stepInput).pipe(processInputStep([both, stepOnly], inputContext())));
    expect(seen).toEqual({ both: true, stepOnly: undefined });
    await firstValueFrom(of(stepInput).pipe(processInputStep([both], testContext({ llmRequestStage: false }))));
    expect(seen.both).toBeUndefined();
  });
});
