import { describe, expect, it } from 'vitest';
import { of, Subject, take } from 'rxjs';
import { processOutputStream } from '../../src/operators/process-output-stream.js';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { Processor, ProcessOutputStreamArgs } from '../../src/contract/processor-types.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { createTestScheduler } from '../../src/testing/test-scheduler.js';
import { deferred, flushMicrotasks, record, testContext } from './helpers.js';

const upperText = (part: ChunkType): ChunkType =>
  part.type === 'text-delta' ? { ...part, payload: { ...part.payload, text: part.payload.text.toUpperCase() } } : part;

/** Upper-cases text deltas, synchronously. */
const upper: Processor = { id: 'upper', processOutputStream: ({ part }) => upperText(part) };

const a = chunk.textDelta('a');
const b = chunk.textDelta('b');
const c = chunk.textDelta('c');
const A = chunk.textDelta('A');
const B = chunk.textDelta('B');
const C = chunk.textDelta('C');

describe('processOutputStream (marbles)', () => {
  it('completes on an empty source', () => {
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold<ChunkType>('|').pipe(processOutputStream([upper]))).toBe('|');
    });
  });

  it('never emits for a never source', () => {
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold<ChunkType>('-').pipe(processOutputStream([upper]))).toBe('-');
    });
  });

  it('processes one value', () => {
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-a|', { a }).pipe(processOutputStream([upper]))).toBe('-A|', { A });
    });
  });

  it('processes many values in order, a synchronous hook adding no frames', () => {
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      const source = cold('a-b--(c|)', { a, b, c });
      expectObservable(source.pipe(processOutputStream([upper]))).toBe('A-B--(C|)', { A, B, C });
    });
  });

  it('chains processors in array order', () => {
    const exclaim: Processor = {
      id: 'exclaim',
      processOutputStream: ({ part }) => (part.type === 'text-delta' ? { ...part, payload: { ...part.payload, text: `${part.payload.text}!` } } : part),
    };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-a-b|', { a, b }).pipe(processOutputStream([upper, exclaim]))).toBe('-x-y|', {
        x: chunk.textDelta('A!'),
        y: chunk.textDelta('B!'),
      });
    });
  });

  it('passes chunks through untouched with no processor implementing the hook', () => {
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      const inputOnly: Processor = { id: 'input-only', processInput: ({ messages }) => messages };
      expectObservable(cold('-a-b|', { a, b }).pipe(processOutputStream([inputOnly]))).toBe('-a-b|', { a, b });
    });
  });

  it('forwards a source error after the values before it', () => {
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      const failure = new Error('provider down');
      expectObservable(cold('-a-#', { a }, failure).pipe(processOutputStream([upper]))).toBe('-A-#', { A }, failure);
    });
  });

  it('errors with a ProcessorError when a hook throws', () => {
    const thrower: Processor = {
      id: 'thrower',
      processOutputStream: ({ part }) => {
        if (part.type === 'text-delta' && part.payload.text === 'b') throw new Error('boom');
        return part;
      },
    };
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-b-c|', { a, b, c });
      expectObservable(source.pipe(processOutputStream([thrower]))).toBe(
        '-a-#',
        { a },
        new ProcessorError('thrower', 'processOutputStream', 'boom'),
      );
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('wraps the thrown value as cause, naming processor and hook', () => {
    const cause = new RangeError('bad chunk');
    const thrower: Processor = {
      id: 'thrower',
      processOutputStream: () => {
        throw cause;
      },
    };
    const subject = new Subject<ChunkType>();
    const recording = record(subject.pipe(processOutputStream([thrower])));
    subject.next(a);
    expect(ProcessorError.isInstance(recording.error)).toBe(true);
    const processorError = recording.error as ProcessorError;
    expect(processorError.processorId).toBe('thrower');
    expect(processorError.hook).toBe('processOutputStream');
    expect(processorError.cause).toBe(cause);
    expect(processorError.message).toBe('Processor "thrower" failed in processOutputStream: bad chunk');
  });

  it.each([
    ['null', null],
    ['undefined', undefined],
  ])('drops a chunk when the hook returns %s, and keeps streaming', (_label, dropped) => {
    const dropB: Processor = {
      id: 'drop-b',
      processOutputStream: ({ part }) => (part.type === 'text-delta' && part.payload.text === 'b' ? dropped : part),
    };
    const seen: string[] = [];
    const spy: Processor = {
      id: 'spy',
      processOutputStream: ({ part }) => {
        if (part.type === 'text-delta') seen.push(part.payload.text);
        return part;
      },
    };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-a-b-c|', { a, b, c }).pipe(processOutputStream([dropB, spy]))).toBe('-a---c|', { a, c });
    });
    expect(seen).toEqual(['a', 'c']); // the rest of the chain never sees a dropped chunk
  });

  it('errors with a TripWire (default reason "Stream part blocked by <id>") on abort()', () => {
    const guard: Processor = {
      id: 'guard',
      processOutputStream: ({ part, abort }) => (part.type === 'text-delta' && part.payload.text === 'b' ? abort() : part),
    };
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-b-c|', { a, b, c });
      expectObservable(source.pipe(processOutputStream([guard]))).toBe('-a-#', { a }, new TripWire('Stream part blocked by guard', {}, 'guard'));
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('carries the reason, retry and metadata of abort(reason, options)', () => {
    const guard: Processor = {
      id: 'guard',
      processOutputStream: ({ abort }) => abort('no thanks', { retry: true, metadata: { score: 0.2 } }),
    };
    const subject = new Subject<ChunkType>();
    const recording = record(subject.pipe(processOutputStream([guard])));
    subject.next(a);
    expect(TripWire.isInstance(recording.error)).toBe(true);
    const tripwire = recording.error as TripWire;
    expect(tripwire.reason).toBe('no thanks');
    expect(tripwire.processorId).toBe('guard');
    expect(tripwire.retry).toBe(true);
    expect(tripwire.metadata).toEqual({ score: 0.2 });
  });

  it('stops processing and unsubscribes the source on early unsubscription', () => {
    const seen: string[] = [];
    const spy: Processor = {
      id: 'spy',
      processOutputStream: ({ part }) => {
        if (part.type === 'text-delta') seen.push(part.payload.text);
        return part;
      },
    };
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a--b--c|', { a, b, c });
      expectObservable(source.pipe(processOutputStream([spy])), '^--!').toBe('-a--', { a });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
    expect(seen).toEqual(['a']);
  });

  it('calls no more hooks once the consumer unsubscribed mid-way through a synchronous source', () => {
    let calls = 0;
    const spy: Processor = { id: 'spy', processOutputStream: ({ part }) => (calls++, part) };
    const values: ChunkType[] = [];
    of(a, b, c).pipe(processOutputStream([spy]), take(1)).subscribe((value) => values.push(value));
    expect(values).toEqual([a]);
    expect(calls).toBe(1);
  });

  it('works on a hot source, subscribing late', () => {
    createTestScheduler(expect).run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-a-^-b-c-|', { a, b, c });
      expectObservable(source.pipe(processOutputStream([upper]))).toBe('--B-C-|', { B, C });
      expectSubscriptions(source.subscriptions).toBe('^-----!');
    });
  });
});

describe('processOutputStream (async hooks)', () => {
  it('keeps chunk order: later chunks wait for a pending hook', async () => {
    const pending = new Map<string, ReturnType<typeof deferred<ChunkType>>>();
    const calls: string[] = [];
    const slow: Processor = {
      id: 'slow',
      processOutputStream: ({ part }: ProcessOutputStreamArgs) => {
        const text = part.type === 'text-delta' ? part.payload.text : part.type;
        calls.push(text);
        const gate = deferred<ChunkType>();
        pending.set(text, gate);
        return gate.promise.then(() => upperText(part));
      },
    };
    const subject = new Subject<ChunkType>();
    const recording = record(subject.pipe(processOutputStream([slow])));
    subject.next(a);
    subject.next(b);
    subject.next(c);
    subject.complete();
    expect(calls).toEqual(['a']); // b and c wait for a
    pending.get('a')?.resolve(a);
    await flushMicrotasks();
    expect(recording.values).toEqual([A]);
    expect(calls).toEqual(['a', 'b']);
    pending.get('b')?.resolve(b);
    await flushMicrotasks();
    pending.get('c')?.resolve(c);
    await flushMicrotasks();
    expect(recording.values).toEqual([A, B, C]);
    expect(recording.completed).toBe(true);
  });

  it('does not complete before the last pending chunk was emitted', async () => {
    const gate = deferred<void>();
    const slow: Processor = { id: 'slow', processOutputStream: async ({ part }) => (await gate.promise, part) };
    const subject = new Subject<ChunkType>();
    const recording = record(subject.pipe(processOutputStream([slow])));
    subject.next(a);
    subject.complete();
    await flushMicrotasks();
    expect(recording.completed).toBe(false);
    gate.resolve();
    await flushMicrotasks();
    expect(recording.values).toEqual([a]);
    expect(recording.completed).toBe(true);
  });

  it('mixes sync and async processors, async ones after sync ones keep order', async () => {
    const asyncUpper: Processor = { id: 'async-upper', processOutputStream: async ({ part }) => upperText(part) };
    const tag: Processor = {
      id: 'tag',
      processOutputStream: ({ part }) => (part.type === 'text-delta' ? { ...part, payload: { ...part.payload, text: `[${part.payload.text}]` } } : part),
    };
    const subject = new Subject<ChunkType>();
    const recording = record(subject.pipe(processOutputStream([tag, asyncUpper, tag])));
    subject.next(a);
    subject.next(b);
    subject.complete();
    await flushMicrotasks();
    expect(recording.values).toEqual([chunk.textDelta('[[A]]'), chunk.textDelta('[[B]]')]);
    expect(recording.completed).toBe(true);
  });

  it('errors with the TripWire of an async abort, dropping the waiting chunks', async () => {
    const guard: Processor = {
      id: 'guard',
      processOutputStream: async ({ part, abort }) => (part.type === 'text-delta' && part.payload.text === 'a' ? abort('late no') : part),
    };
    const subject = new Subject<ChunkType>();
    const recording = record(subject.pipe(processOutputStream([guard])));
    subject.next(a);
    subject.next(b);
    await flushMicrotasks();
    expect(recording.values).toEqual([]);
    expect(TripWire.isInstance(recording.error)).toBe(true);
    expect((recording.error as TripWire).processorId).toBe('guard');
    expect((recording.error as TripWire).reason).toBe('late no');
  });

  it('wraps an async rejection in a ProcessorError', async () => {
    const failing: Processor = { id: 'failing', processOutputStream: () => Promise.reject(new Error('nope')) };
    const subject = new Subject<ChunkType>();
    const recording = record(subject.pipe(processOutputStream([failing])));
    subject.next(a);
    await flushMicrotasks();
    expect(ProcessorError.isInstance(recording.error)).toBe(true);
    expect((recording.error as ProcessorError).hook).toBe('processOutputStream');
    expect(((recording.error as ProcessorError).cause as Error).message).toBe('nope');
  });

  it('goes on behind async hooks with what waited: a written chunk first, then the queued ones, a dropped one left out', async () => {
    const note = chunk.data('data-note', { n: 1 });
    const writing: Processor = {
      id: 'writing',
      processOutputStream: async ({ part, writer }) => {
        if (part === a) await writer?.custom(note);
        return part;
      },
    };
    const dropB: Processor = {
      id: 'drop-b',
      processDataParts: true,
      processOutputStream: async ({ part }) => (part.type === 'text-delta' && part.payload.text === 'b' ? null : part),
    };
    const subject = new Subject<ChunkType>();
    const recording = record(subject.pipe(processOutputStream([writing, dropB])));
    subject.next(a);
    subject.next(b);
    subject.next(c);
    subject.complete();
    expect(recording.values).toEqual([]);
    await flushMicrotasks();
    expect(recording.values).toEqual([a, note, c]);
    expect(recording.completed).toBe(true);
  });

  it('calls no hook after unsubscription while a hook was pending', async () => {
    const gate = deferred<void>();
    const calls: string[] = [];
    const slow: Processor = {
      id: 'slow',
      processOutputStream: async ({ part }) => {
        calls.push(part.type);
        await gate.promise;
        return part;
      },
    };
    const subject = new Subject<ChunkType>();
    const recording = record(subject.pipe(processOutputStream([slow])));
    subject.next(a);
    subject.next(b);
    recording.unsubscribe();
    gate.resolve();
    await flushMicrotasks();
    expect(calls).toEqual(['text-delta']);
    expect(recording.values).toEqual([]);
    expect(subject.observed).toBe(false);
  });

  it('shares one run context between chunks (state, streamParts)', () => {
    const ctx = testContext();
    const counter: Processor = {
      id: 'counter',
      processOutputStream: ({ part, state, streamParts }) => {
        state.count = ((state.count as number | undefined) ?? 0) + 1;
        state.parts = streamParts.length;
        return part;
      },
    };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-a-b-c|', { a, b, c }).pipe(processOutputStream([counter], ctx))).toBe('-a-b-c|', { a, b, c });
    });
    expect(ctx.stateFor('counter')).toEqual({ count: 3, parts: 3 });
  });
});
