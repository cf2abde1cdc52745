/**
 * Contract rules every operator shares: per-processor per-run state, processorIndex, skipping
 * processors without the hook, onViolation, an abort the processor catches still aborting,
 * processDataParts, and writer.custom.
 */
import { describe, expect, it, vi } from 'vitest';
import { firstValueFrom, of, Subject, toArray } from 'rxjs';
import { processInput } from '../../src/operators/process-input.js';
import { processOutputStep, type StepOutput } from '../../src/operators/process-output-step.js';
import { processOutputStream } from '../../src/operators/process-output-stream.js';
import { processOutputResult } from '../../src/operators/process-output-result.js';
import { assertDataChunk } from '../../src/operators/run-context.js';
import type { ChunkType, DataChunkType } from '../../src/contract/chunk-types.js';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import type { Processor, ProcessorViolation } from '../../src/contract/processor-types.js';
import { chunk, testUsage } from '../../src/testing/chunk-builders.js';
import { createTestScheduler } from '../../src/testing/test-scheduler.js';
import { flushMicrotasks, listWith, record, testContext, user } from './helpers.js';

const a = chunk.textDelta('a');
const b = chunk.textDelta('b');
const stepOutput: StepOutput = { stepNumber: 0, finishReason: 'stop', toolCalls: [], text: 'x', usage: testUsage() };

/** Counts the chunks it sees in its state. */
const counter = (id: string): Processor => ({
  id,
  processOutputStream: ({ part, state }) => {
    state.seen = ((state.seen as number | undefined) ?? 0) + 1;
    return part;
  },
  processOutputResult: ({ state }) => {
    state.finalSeen = state.seen;
  },
});

describe('state', () => {
  it('is one object per processor id per run, shared by all hooks of that processor', async () => {
    const ctx = testContext();
    const first = counter('first');
    const second = counter('second');
    await firstValueFrom(of(a, b).pipe(processOutputStream([first, second], ctx), toArray()));
    await firstValueFrom(of({ text: '', usage: testUsage(), finishReason: 'stop' as const, steps: [] }).pipe(processOutputResult([first, second], ctx)));
    expect(ctx.stateFor('first')).toEqual({ seen: 2, finalSeen: 2 });
    expect(ctx.stateFor('second')).toEqual({ seen: 2, finalSeen: 2 });
    expect(ctx.stateFor('first')).not.toBe(ctx.stateFor('second'));
  });

  it('starts empty for every run (each subscription without a context is a new run)', () => {
    const states: Array<Record<string, unknown>> = [];
    const recorder: Processor = {
      id: 'recorder',
      processOutputStream: ({ part, state }) => {
        state.seen = ((state.seen as number | undefined) ?? 0) + 1;
        if (!states.includes(state)) states.push(state);
        return part;
      },
    };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      const run$ = cold('-a-b|', { a, b }).pipe(processOutputStream([recorder]));
      expectObservable(run$).toBe('-a-b|', { a, b });
      expectObservable(run$).toBe('-a-b|', { a, b });
    });
    expect(states).toHaveLength(2);
    expect(states).toEqual([{ seen: 2 }, { seen: 2 }]);
  });

  it('is not shared between two run contexts', () => {
    const runOne = testContext();
    const runTwo = testContext();
    const processor = counter('p');
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-a-b|', { a, b }).pipe(processOutputStream([processor], runOne))).toBe('-a-b|', { a, b });
      expectObservable(cold('-a|', { a }).pipe(processOutputStream([processor], runTwo))).toBe('-a|', { a });
    });
    expect(runOne.stateFor('p')).toEqual({ seen: 2 });
    expect(runTwo.stateFor('p')).toEqual({ seen: 1 });
  });

  it('is shared by two processors with the same id (state is keyed by id, as in the reference)', async () => {
    const ctx = testContext();
    await firstValueFrom(of(a).pipe(processOutputStream([counter('same'), counter('same')], ctx), toArray()));
    expect(ctx.stateFor('same')).toEqual({ seen: 2 });
  });
});

describe('processorIndex', () => {
  it('is set to each processor\'s position in the list it runs in', async () => {
    const first: Processor = { id: 'first', processInput: () => undefined };
    const withoutHook: Processor = { id: 'without', processOutputStream: ({ part }) => part };
    const third: Processor = { id: 'third', processInput: () => undefined };
    const list = listWith([user('u1', 'hi')]);
    await firstValueFrom(of(list).pipe(processInput([first, withoutHook, third], testContext())));
    expect(first.processorIndex).toBe(0);
    expect(third.processorIndex).toBe(2);
  });

  it('is visible to the hook itself', async () => {
    const seen: Array<number | undefined> = [];
    class Indexed implements Processor {
      readonly id = 'indexed';
      processorIndex?: number;
      processOutputStream({ part }: { part: ChunkType }): ChunkType {
        seen.push(this.processorIndex);
        return part;
      }
    }
    await firstValueFrom(of(a).pipe(processOutputStream([counter('zero'), new Indexed()], testContext()), toArray()));
    expect(seen).toEqual([1]);
  });
});

describe('skipping processors without the hook', () => {
  it('runs only processors that implement the hook, in order', async () => {
    const calls: string[] = [];
    const processors: Processor[] = [
      { id: 'input-only', processInput: () => void calls.push('input-only') },
      { id: 'step', processOutputStep: () => void calls.push('step') },
      { id: 'stream-only', processOutputStream: ({ part }) => part },
      { id: 'step-2', processOutputStep: () => void calls.push('step-2') },
    ];
    await firstValueFrom(of(stepOutput).pipe(processOutputStep(processors, testContext())));
    expect(calls).toEqual(['step', 'step-2']);
  });
});

describe('onViolation', () => {
  it('is called with { processorId, message, detail } when the processor aborts', () => {
    const violations: ProcessorViolation[] = [];
    const guard: Processor = {
      id: 'guard',
      onViolation: (violation) => void violations.push(violation),
      processOutputStream: ({ abort }) => abort('PII detected', { metadata: { kind: 'email' } }),
    };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-a|', { a }).pipe(processOutputStream([guard]))).toBe('-#', undefined, new TripWire('PII detected', { metadata: { kind: 'email' } }, 'guard'));
    });
    expect(violations).toEqual([{ processorId: 'guard', message: 'PII detected', detail: { kind: 'email' } }]);
  });

  it('gets the default reason as message when abort() had none', async () => {
    const violations: ProcessorViolation[] = [];
    const guard: Processor = { id: 'guard', onViolation: (violation) => void violations.push(violation), processOutputStep: ({ abort }) => abort() };
    await expect(firstValueFrom(of(stepOutput).pipe(processOutputStep([guard], testContext())))).rejects.toBeInstanceOf(TripWire);
    expect(violations).toEqual([{ processorId: 'guard', message: 'Tripwire triggered by guard', detail: undefined }]);
  });

  it('swallows a synchronous throw of onViolation: the run still ends with the TripWire', () => {
    const guard: Processor = {
      id: 'guard',
      onViolation: () => {
        throw new Error('alerting is down');
      },
      processOutputStream: ({ abort }) => abort('blocked'),
    };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-a|', { a }).pipe(processOutputStream([guard]))).toBe('-#', undefined, new TripWire('blocked', {}, 'guard'));
    });
  });

  it('swallows a rejection of an async onViolation (no unhandled rejection)', async () => {
    const unhandled = vi.fn();
    process.on('unhandledRejection', unhandled);
    try {
      const guard: Processor = {
        id: 'guard',
        onViolation: () => Promise.reject(new Error('webhook failed')),
        processOutputStream: ({ abort }) => abort('blocked'),
      };
      const subject = new Subject<ChunkType>();
      const recording = record(subject.pipe(processOutputStream([guard])));
      subject.next(a);
      await flushMicrotasks(10);
      expect(TripWire.isInstance(recording.error)).toBe(true);
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });

  it('is not called when the processor does not abort', async () => {
    const onViolation = vi.fn();
    const calm: Processor = { id: 'calm', onViolation, processOutputStream: ({ part }) => part };
    await firstValueFrom(of(a).pipe(processOutputStream([calm]), toArray()));
    expect(onViolation).not.toHaveBeenCalled();
  });
});

describe('an abort the processor catches itself (fail-open catch, reference issue #18760)', () => {
  it('still aborts in processOutputStream, with the first abort\'s reason', () => {
    const failOpen: Processor = {
      id: 'fail-open',
      processOutputStream: ({ part, abort }) => {
        try {
          if (part.type === 'text-delta' && part.payload.text === 'b') abort('b is blocked');
          return part;
        } catch {
          return part; // "if the check fails, let it through"
        }
      },
    };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-a-b-a|', { a, b }).pipe(processOutputStream([failOpen]))).toBe(
        '-a-#',
        { a },
        new TripWire('b is blocked', {}, 'fail-open'),
      );
    });
  });

  it('still aborts when the catch happens in an async hook', async () => {
    const failOpen: Processor = {
      id: 'fail-open',
      processOutputStream: async ({ part, abort }) => {
        await Promise.resolve();
        try {
          abort('async block');
        } catch {
          // swallowed by the processor
        }
        return part;
      },
    };
    const subject = new Subject<ChunkType>();
    const recording = record(subject.pipe(processOutputStream([failOpen])));
    subject.next(a);
    await flushMicrotasks();
    expect(recording.values).toEqual([]);
    expect((recording.error as TripWire).reason).toBe('async block');
  });

  it('does not leak into the next chunk once reported', () => {
    let calls = 0;
    const onceOnly: Processor = {
      id: 'once',
      processOutputStream: ({ part, abort }) => {
        calls++;
        return part === b ? abort('b') : part;
      },
    };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-a-a|', { a }).pipe(processOutputStream([onceOnly]))).toBe('-a-a|', { a });
    });
    expect(calls).toBe(2);
  });
});

describe('a TripWire thrown without abort()', () => {
  it('gets the id of the processor that threw it', () => {
    const thrower: Processor = {
      id: 'thrower',
      processOutputStream: () => {
        throw new TripWire('raw');
      },
    };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-a|', { a }).pipe(processOutputStream([thrower]))).toBe('-#', undefined, new TripWire('raw', {}, 'thrower'));
    });
  });

  it('keeps the id it already carries (e.g. from a nested processor)', () => {
    const wrapper: Processor = {
      id: 'wrapper',
      processOutputStream: () => {
        throw new TripWire('inner said no', {}, 'inner');
      },
    };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-a|', { a }).pipe(processOutputStream([wrapper]))).toBe('-#', undefined, new TripWire('inner said no', {}, 'inner'));
    });
  });
});

describe('processDataParts', () => {
  const progress = chunk.data('data-progress', { pct: 50 });

  it('data-* chunks skip processors without processDataParts and reach those with it', () => {
    const plainSeen: string[] = [];
    const optedInSeen: string[] = [];
    const plain: Processor = { id: 'plain', processOutputStream: ({ part }) => (plainSeen.push(part.type), part) };
    const optedIn: Processor = { id: 'opted-in', processDataParts: true, processOutputStream: ({ part }) => (optedInSeen.push(part.type), part) };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-a-d-b|', { a, d: progress, b }).pipe(processOutputStream([plain, optedIn]))).toBe('-a-d-b|', { a, d: progress, b });
    });
    expect(plainSeen).toEqual(['text-delta', 'text-delta']);
    expect(optedInSeen).toEqual(['text-delta', 'data-progress', 'text-delta']);
  });

  it('lets an opted-in processor rewrite or drop a data chunk', () => {
    const rewrite: Processor = {
      id: 'rewrite',
      processDataParts: true,
      processOutputStream: ({ part }) => (part.type === 'data-progress' ? { ...part, transient: true } : part),
    };
    const dropData: Processor = {
      id: 'drop',
      processDataParts: true,
      processOutputStream: ({ part }) => (part.type === 'data-secret' ? null : part),
    };
    const secret = chunk.data('data-secret', { key: 'x' });
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-d-s|', { d: progress, s: secret }).pipe(processOutputStream([rewrite, dropData]))).toBe('-t--|', {
        t: { ...progress, transient: true },
      });
    });
  });

  it('passes a data chunk untouched when no processor opted in', () => {
    const upper: Processor = { id: 'upper', processOutputStream: () => chunk.textDelta('REPLACED') };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-d|', { d: progress }).pipe(processOutputStream([upper]))).toBe('-d|', { d: progress });
    });
  });
});

describe('writer.custom', () => {
  const note = (text: string): DataChunkType<'data-note'> => ({ type: 'data-note', data: { text } });

  it('emits the chunk in stream order, right after the chunk being processed', () => {
    const writerProcessor: Processor = {
      id: 'writer',
      processOutputStream: ({ part, writer }) => {
        if (part === a) void writer.custom(note('after a'));
        return part;
      },
    };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-a----b|', { a, b }).pipe(processOutputStream([writerProcessor]))).toBe('-(an)-b|', { a, n: note('after a'), b });
    });
  });

  it('sends the chunk through the opted-in processors after the writer, not through the writer or those before it', () => {
    const seenBy: Record<string, string[]> = { before: [], writer: [], after: [], afterPlain: [] };
    const spy = (id: string, processDataParts: boolean): Processor => ({
      id,
      processDataParts,
      processOutputStream: ({ part }) => {
        seenBy[id]?.push(part.type);
        return part.type === 'data-note' ? { ...part, data: { text: `${(part.data as { text: string }).text} (seen by ${id})` } } : part;
      },
    });
    const writerProcessor: Processor = {
      id: 'writer',
      processDataParts: true,
      processOutputStream: ({ part, writer }) => {
        seenBy.writer?.push(part.type);
        if (part === a) void writer.custom(note('hi'));
        return part;
      },
    };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      const result = cold('-a----|', { a }).pipe(processOutputStream([spy('before', true), writerProcessor, spy('afterPlain', false), spy('after', true)]));
      expectObservable(result).toBe('-(an)-|', { a, n: note('hi (seen by after)') });
    });
    expect(seenBy).toEqual({ before: ['text-delta'], writer: ['text-delta'], afterPlain: ['text-delta'], after: ['text-delta', 'data-note'] });
  });

  it('still emits the custom chunk when the writer drops the chunk it was processing', () => {
    const replaceWithNote: Processor = {
      id: 'replace',
      processOutputStream: ({ part, writer }) => {
        void writer.custom(note(part.type));
        return null;
      },
    };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-a|', { a }).pipe(processOutputStream([replaceWithNote]))).toBe('-n|', { n: note('text-delta') });
    });
  });

  it('rejects a chunk whose type does not start with data- with a clear error', () => {
    const bad: Processor = {
      id: 'bad-writer',
      processOutputStream: ({ part, writer }) => {
        void writer.custom({ type: 'text-delta', data: 'x' } as unknown as DataChunkType);
        return part;
      },
    };
    const subject = new Subject<ChunkType>();
    const recording = record(subject.pipe(processOutputStream([bad])));
    subject.next(a);
    expect(ProcessorError.isInstance(recording.error)).toBe(true);
    const error = recording.error as ProcessorError;
    expect(error.processorId).toBe('bad-writer');
    expect((error.cause as Error).message).toBe('writer.custom() takes data chunks only: chunk.type must start with "data-" (got "text-delta").');
    expect(() => assertDataChunk({ type: 'data-ok', data: 1 })).not.toThrow();
  });

  it('sends chunks written from other hooks to the run context\'s custom$ outlet', async () => {
    const ctx = testContext();
    const written: DataChunkType[] = [];
    ctx.custom$.subscribe((custom) => written.push(custom));
    const stepWriter: Processor = { id: 'step-writer', processOutputStep: ({ writer }) => void writer.custom(note('from step')) };
    await firstValueFrom(of(stepOutput).pipe(processOutputStep([stepWriter], ctx)));
    expect(written).toEqual([note('from step')]);
  });
});
