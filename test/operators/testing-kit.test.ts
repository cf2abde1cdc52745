/** The first part of rxagent/testing: createTestScheduler, the chunk builders and runProcessor. */
import { describe, expect, it, vi } from 'vitest';
import { MessageList } from '../../src/message-list/message-list.js';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import type { Processor, ProcessorContext, ProcessorViolation } from '../../src/contract/processor-types.js';
import { RequestContext } from '../../src/contract/request-context.js';
import { chunk, createChunkBuilders, testUsage } from '../../src/testing/chunk-builders.js';
import { runProcessor } from '../../src/testing/run-processor.js';
import { createTestScheduler, normalizeErrors } from '../../src/testing/test-scheduler.js';
import { ContentFilter, LowercaseProcessor, QualityGuardrail, WordCounterV2 } from '../fixtures/spec-processors.js';
import { listWith, user } from './helpers.js';
import { processOutputStream } from '../../src/operators/process-output-stream.js';

describe('createTestScheduler', () => {
  it('compares errors by name, message, processorId and a TripWire\'s options, not identity', () => {
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      const thrown = new TripWire('no', { retry: true, metadata: { kind: 'email', at: [1, 2] } }, 'guard');
      const expected = new TripWire('no', { retry: true, metadata: { kind: 'email', at: [1, 2] } }, 'guard');
      expectObservable(cold('-#', undefined, thrown)).toBe('-#', undefined, expected);
    });
  });

  it.each([
    ['another processorId', new TripWire('no', {}, 'other')],
    ['another message', new TripWire('nope', {}, 'guard')],
    ['another name', new Error('no')],
    ['retry: true expected, the guard does not retry', new TripWire('no', { retry: true }, 'guard')],
    ['metadata expected, the guard gives none', new TripWire('no', { metadata: { kind: 'email' } }, 'guard')],
  ])('fails for %s', (_label, expected) => {
    expect(() =>
      createTestScheduler(expect).run(({ cold, expectObservable }) => {
        expectObservable(cold('-#', undefined, new TripWire('no', {}, 'guard'))).toBe('-#', undefined, expected);
      }),
    ).toThrow();
  });

  it.each([
    ['no retry expected, the guard retries', new TripWire('no', {}, 'guard')],
    ['other metadata expected', new TripWire('no', { retry: true, metadata: { kind: 'phone' } }, 'guard')],
    ['no metadata expected, the guard gives some', new TripWire('no', { retry: true }, 'guard')],
  ])('fails for %s (against a retrying guard with metadata)', (_label, expected) => {
    expect(() =>
      createTestScheduler(expect).run(({ cold, expectObservable }) => {
        expectObservable(cold('-#', undefined, new TripWire('no', { retry: true, metadata: { kind: 'email' } }, 'guard'))).toBe('-#', undefined, expected);
      }),
    ).toThrow();
  });

  it('tells a guard that retries from one that does not, through the operator (both directions)', () => {
    const retrying: Processor = { id: 'polite', processOutputStream: ({ part, abort }) => (part.type === 'text-delta' ? abort('Say please.', { retry: true }) : part) };
    const blocking: Processor = { id: 'polite', processOutputStream: ({ part, abort }) => (part.type === 'text-delta' ? abort('Say please.') : part) };
    const wantsRetry = new TripWire('Say please.', { retry: true }, 'polite');
    const wantsBlock = new TripWire('Say please.', {}, 'polite');
    const outcome = (guard: Processor, expected: TripWire): 'pass' | 'fail' => {
      try {
        createTestScheduler(expect).run(({ cold, expectObservable }) => {
          expectObservable(cold('-a|', { a: chunk.textDelta('hi') }).pipe(processOutputStream([guard]))).toBe('-#', undefined, expected);
        });
        return 'pass';
      } catch {
        return 'fail';
      }
    };
    expect([outcome(retrying, wantsRetry), outcome(blocking, wantsRetry), outcome(blocking, wantsBlock), outcome(retrying, wantsBlock)]).toEqual(['pass', 'fail', 'pass', 'fail']);
  });

  it('reads another package\'s TripWire (and a pasted inspector export) by its options', () => {
    class ForeignTripWire extends Error {
      constructor(reason: string, readonly options: { retry?: boolean; metadata?: unknown } = {}, readonly processorId?: string) {
        super(reason);
        this.name = 'TripWire';
      }
    }
    const pasted = Object.assign(new Error('no'), { reason: 'no', options: { retry: true }, processorId: 'guard', name: 'TripWire' });
    expect(normalizeErrors([new ForeignTripWire('no', { retry: true }, 'guard'), pasted])).toEqual([
      { name: 'TripWire', message: 'no', processorId: 'guard', retry: true },
      { name: 'TripWire', message: 'no', processorId: 'guard', retry: true },
    ]);
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-#', undefined, new TripWire('no', { retry: true }, 'guard'))).toBe('-#', undefined, pasted);
    });
  });

  it('normalises errors inside metadata, and metadata that holds its own tripwire', () => {
    const metadata: Record<string, unknown> = { cause: new ProcessorError('judge', 'processOutputStep', 'timeout') };
    const tripwire = new TripWire('no', { metadata }, 'guard');
    metadata['self'] = tripwire;
    const normalised = normalizeErrors(tripwire) as { metadata: { cause: unknown; self: unknown } };
    expect(normalised.metadata.cause).toEqual({ name: 'ProcessorError', message: 'Processor "judge" failed in processOutputStep: timeout', processorId: 'judge' });
    expect(normalised.metadata.self).toBe(normalised);
  });

  it('gives the assertion function the normalised notifications', () => {
    const calls: Array<[unknown, unknown]> = [];
    const recordingExpect = (actual: unknown) => ({ toEqual: (expected: unknown) => void calls.push([actual, expected]) });
    createTestScheduler(recordingExpect).run(({ cold, expectObservable }) => {
      expectObservable(cold('a#', { a: 1 }, new ProcessorError('p', 'processInput', 'x'))).toBe('a#', { a: 1 }, new Error('ignored'));
    });
    expect(calls).toHaveLength(1);
    const [actual] = calls[0] as [unknown, unknown];
    expect(actual).toEqual([
      { frame: 0, notification: { kind: 'N', value: 1, error: undefined } },
      { frame: 1, notification: { kind: 'E', value: undefined, error: { name: 'ProcessorError', message: 'Processor "p" failed in processInput: x', processorId: 'p' } } },
    ]);
  });

  it('falls back to the global expect, and says so clearly when there is none', () => {
    const global = globalThis as { expect?: unknown; [key: symbol]: unknown };
    const vitestExpect = Symbol.for('expect-global'); // vitest's own global expect (no `globals: true` needed)
    const previous = global.expect;
    const previousVitest = global[vitestExpect];
    try {
      global.expect = expect;
      delete global[vitestExpect];
      createTestScheduler().run(({ cold, expectObservable }) => {
        expectObservable(cold('-a|')).toBe('-a|');
      });
      delete global.expect;
      expect(() =>
        createTestScheduler().run(({ cold, expectObservable }) => {
          expectObservable(cold('-a|')).toBe('-a|');
        }),
      ).toThrow(/createTestScheduler\(\): no expect function found.*Pass one: createTestScheduler\(expect\)/);
      global[vitestExpect] = previousVitest;
      expect(() =>
        createTestScheduler().run(({ cold, expectObservable }) => {
          expectObservable(cold('-a|')).toBe('-b|');
        }),
      ).toThrow(/expected/);
    } finally {
      if (previous === undefined) delete global.expect;
      else global.expect = previous;
      global[vitestExpect] = previousVitest;
    }
  });

  it('normalizeErrors walks arrays and plain objects, keeps class instances and survives cycles', () => {
    const list = new MessageList();
    const cyclic: Record<string, unknown> = { error: new TypeError('bad') };
    cyclic.self = cyclic;
    const normalised = normalizeErrors([chunk.error(new Error('down')), { list }, cyclic]) as unknown[];
    expect(normalised[0]).toEqual({ ...chunk.error(undefined), payload: { error: { name: 'Error', message: 'down' } } });
    expect((normalised[1] as { list: unknown }).list).toBe(list);
    expect((normalised[2] as Record<string, unknown>).error).toEqual({ name: 'TypeError', message: 'bad' });
    expect((normalised[2] as Record<string, unknown>).self).toBe(normalised[2]);
  });
});

describe('chunk builders', () => {
  const usage = testUsage();

  it('stamp runId test-run and from AGENT, with matching default ids', () => {
    expect(chunk.start()).toEqual({ type: 'start', runId: 'test-run', from: 'AGENT', payload: {} });
    expect(chunk.stepStart()).toEqual({ type: 'step-start', runId: 'test-run', from: 'AGENT', payload: { stepNumber: 0 } });
    expect(chunk.textStart()).toEqual({ type: 'text-start', runId: 'test-run', from: 'AGENT', payload: { id: 'text-1' } });
    expect(chunk.textDelta('hi')).toEqual({ type: 'text-delta', runId: 'test-run', from: 'AGENT', payload: { id: 'text-1', text: 'hi' } });
    expect(chunk.textDelta('hi', 't2').payload.id).toBe('t2');
    expect(chunk.textEnd()).toEqual({ type: 'text-end', runId: 'test-run', from: 'AGENT', payload: { id: 'text-1' } });
    expect(chunk.reasoningStart().payload).toEqual({ id: 'reasoning-1' });
    expect(chunk.reasoningDelta('hmm').payload).toEqual({ id: 'reasoning-1', text: 'hmm' });
    expect(chunk.reasoningEnd('r2').payload).toEqual({ id: 'r2' });
  });

  it('build tool, step, finish, data, tripwire, error and abort chunks', () => {
    expect(chunk.toolCall({ toolCallId: 'c1', toolName: 'search', args: { q: 'x' } }).payload).toEqual({ toolCallId: 'c1', toolName: 'search', args: { q: 'x' } });
    expect(chunk.toolResult({ toolCallId: 'c1', toolName: 'search', result: 'found' })).toMatchObject({ type: 'tool-result', payload: { result: 'found' } });
    expect(chunk.toolError({ toolCallId: 'c1', toolName: 'search', error: 'boom' }).type).toBe('tool-error');
    expect(chunk.stepFinish({ stepNumber: 2, reason: 'tool-calls', isContinued: true, text: 'x' }).payload).toEqual({
      stepNumber: 2,
      stepResult: { reason: 'tool-calls', isContinued: true },
      output: { text: 'x', toolCalls: [], usage },
    });
    expect(chunk.finish().payload).toEqual({ stepResult: { reason: 'stop' }, output: { usage, text: '' } });
    expect(chunk.finish('length', { text: 'abc' }).payload.stepResult.reason).toBe('length');
    expect(chunk.data('data-x', { n: 1 }, { transient: true })).toEqual({ type: 'data-x', data: { n: 1 }, runId: 'test-run', from: 'AGENT', transient: true });
    expect(chunk.data('data-x', 1)).not.toHaveProperty('transient');
    expect(chunk.tripwire({ reason: 'no', processorId: 'p' }).payload).toEqual({ reason: 'no', processorId: 'p' });
    const failure = new Error('down');
    expect(chunk.error(failure).payload.error).toBe(failure);
    expect(chunk.abort().payload).toEqual({});
  });

  it('createChunkBuilders stamps another run id', () => {
    expect(createChunkBuilders('run-9').textDelta('x').runId).toBe('run-9');
  });

  it('testUsage sums input and output tokens unless a total is given', () => {
    expect(testUsage({ inputTokens: 3, outputTokens: 5 }).totalTokens).toBe(8);
    expect(testUsage({ totalTokens: 1 }).totalTokens).toBe(1);
    expect(testUsage().totalTokens).toBeUndefined();
  });
});

describe('runProcessor', () => {
  it('fills every context field and the hook\'s defaults', async () => {
    let seen: (ProcessorContext & Record<string, unknown>) | undefined;
    const spy: Processor = { id: 'spy', processOutputStep: (args) => void (seen = args as unknown as ProcessorContext & Record<string, unknown>) };
    const outcome = await runProcessor(spy, 'processOutputStep');
    expect(seen).toBeDefined();
    const args = seen as ProcessorContext & Record<string, unknown>;
    expect(args.messageList).toBeInstanceOf(MessageList);
    expect(args.messageList).toBe(outcome.messageList);
    expect(args.state).toEqual({});
    expect(args.state).toBe(outcome.state);
    expect(args.retryCount).toBe(0);
    expect(args.requestContext).toBeInstanceOf(RequestContext);
    expect(args.tracingContext).toEqual({});
    expect(args.abortSignal.aborted).toBe(false);
    expect(args.runId).toBe('test-run');
    expect([args.messages, args.systemMessages, args.stepNumber, args.steps, args.text, args.toolCalls, args.finishReason]).toEqual([[], [], 0, [], '', [], 'stop']);
    expect(outcome).toMatchObject({ result: undefined, customChunks: [] });
    expect(outcome.tripwire).toBeUndefined();
    expect(outcome.error).toBeUndefined();
  });

  it('returns what the hook returned, using the list it was given', async () => {
    const messageList = listWith([user('u1', 'HELLO')]);
    const { result, messageList: used } = await runProcessor(new LowercaseProcessor(), 'processInput', { messageList });
    expect(used).toBe(messageList);
    expect(result?.map((message) => message.content.parts)).toEqual([[{ type: 'text', text: 'hello' }]]);
  });

  it('reports an abort as tripwire (never throws), with the hook\'s default reason', async () => {
    const guard: Processor = { id: 'guard', processOutputStream: ({ abort }) => abort(), processOutputStep: ({ abort }) => abort() };
    const streamed = await runProcessor(guard, 'processOutputStream', { part: chunk.textDelta('x') });
    const stepped = await runProcessor(guard, 'processOutputStep');
    expect([streamed.tripwire?.reason, streamed.tripwire?.processorId]).toEqual(['Stream part blocked by guard', 'guard']);
    expect(stepped.tripwire?.reason).toBe('Tripwire triggered by guard');
    expect(streamed.result).toBeUndefined();
  });

  it('reports the abort of the specification\'s ContentFilter with its reason', async () => {
    const { tripwire } = await runProcessor(new ContentFilter(['secret']), 'processOutputStream', { part: chunk.textDelta('a secret') });
    expect(tripwire?.reason).toBe('Blocked content detected in output');
  });

  it('reports retry and metadata, and the retryCount it was given', async () => {
    const { tripwire } = await runProcessor(new QualityGuardrail(async () => 0.1), 'processOutputStep', { text: 'meh', retryCount: 1 });
    expect([tripwire?.retry, tripwire?.metadata]).toEqual([true, { qualityScore: 0.1 }]);
    const blocked = await runProcessor(new QualityGuardrail(async () => 0.1), 'processOutputStep', { text: 'meh', retryCount: 3 });
    expect([blocked.tripwire?.reason, blocked.tripwire?.retry]).toEqual(['Response quality too low after multiple attempts.', false]);
  });

  it('reports an abort the processor caught itself', async () => {
    const failOpen: Processor = {
      id: 'fail-open',
      processOutputStream: ({ part, abort }) => {
        try {
          abort('blocked');
        } catch {
          // fail open
        }
        return part;
      },
    };
    const outcome = await runProcessor(failOpen, 'processOutputStream', { part: chunk.textDelta('x') });
    expect(outcome.tripwire?.reason).toBe('blocked');
    expect(outcome.result).toEqual(chunk.textDelta('x'));
  });

  it('reports any other throw as error, as thrown (sync and async)', async () => {
    const failure = new RangeError('bug');
    const syncThrower: Processor = {
      id: 'sync',
      processOutputStep: () => {
        throw failure;
      },
    };
    const asyncThrower: Processor = { id: 'async', processOutputStep: async () => Promise.reject(failure) };
    expect((await runProcessor(syncThrower, 'processOutputStep')).error).toBe(failure);
    expect((await runProcessor(asyncThrower, 'processOutputStep')).error).toBe(failure);
  });

  it('records writer.custom chunks and rejects non-data chunks', async () => {
    const writer: Processor = {
      id: 'writer',
      processOutputResult: async ({ writer: out }) => {
        await out.custom({ type: 'data-audit', data: { ok: true }, transient: true });
      },
      processOutputStep: async ({ writer: out }) => {
        await out.custom({ type: 'text-delta', data: 'x' } as never);
      },
    };
    expect((await runProcessor(writer, 'processOutputResult')).customChunks).toEqual([{ type: 'data-audit', data: { ok: true }, transient: true }]);
    const bad = await runProcessor(writer, 'processOutputStep');
    expect((bad.error as Error).message).toMatch(/must start with "data-"/);
  });

  it('shares state across calls when given the previous state', async () => {
    const counter = new WordCounterV2();
    const first = await runProcessor(counter, 'processOutputStream', { part: chunk.textDelta('one two') });
    const second = await runProcessor(counter, 'processOutputStream', { part: chunk.textDelta('three'), state: first.state });
    expect(second.state).toBe(first.state);
    expect(second.state).toEqual({ wordCount: 3 });
  });

  it('calls onViolation like a run does, swallowing its failures', async () => {
    const violations: ProcessorViolation[] = [];
    const guard: Processor = {
      id: 'guard',
      onViolation: (violation) => {
        violations.push(violation);
        throw new Error('ignored');
      },
      processOutputStep: ({ abort }) => abort('no', { metadata: 1 }),
    };
    const { tripwire, error } = await runProcessor(guard, 'processOutputStep');
    expect(tripwire?.reason).toBe('no');
    expect(error).toBeUndefined();
    expect(violations).toEqual([{ processorId: 'guard', message: 'no', detail: 1 }]);
  });

  it('uses a given abort instead of its own', async () => {
    const abort = vi.fn(() => {
      throw new TripWire('custom', {}, 'mine');
    }) as unknown as ProcessorContext['abort'];
    const guard: Processor = { id: 'guard', processOutputStep: ({ abort: stop }) => stop() };
    const { tripwire } = await runProcessor(guard, 'processOutputStep', { abort });
    expect([tripwire?.reason, tripwire?.processorId]).toEqual(['custom', 'mine']);
  });

  it('gives processInput the input view and processOutputResult the response view', async () => {
    const messageList = listWith([user('u1', 'in')], { response: [{ ...user('a1', 'out'), role: 'assistant' }] });
    const inputIds: string[] = [];
    const outputIds: string[] = [];
    const spy: Processor = {
      id: 'spy',
      processInput: ({ messages }) => void inputIds.push(...messages.map((message) => message.id)),
      processOutputResult: ({ messages }) => void outputIds.push(...messages.map((message) => message.id)),
    };
    await runProcessor(spy, 'processInput', { messageList });
    await runProcessor(spy, 'processOutputResult', { messageList });
    expect([inputIds, outputIds]).toEqual([['u1'], ['a1']]);
  });

  it('throws a TypeError when the processor lacks the hook', async () => {
    await expect(runProcessor({ id: 'empty' } as Processor, 'processInput')).rejects.toThrow('runProcessor: processor "empty" has no processInput hook.');
  });
});
