/**
 * The RxJS marble checklist, shared by the specs of the operators that process one value at a
 * time through one hook (processInput, processInputStep, processLLMRequest, processLLMResponse,
 * processOutputStep, processToolResult, processOutputResult): empty, never, one and many values,
 * source error, hook throws, hook returns null/undefined, abort (plain, with options, caught by
 * the processor), early unsubscription, and async hooks keeping order.
 */
import { describe, expect, it } from 'vitest';
import { Subject, type OperatorFunction } from 'rxjs';
import type { RunContext } from '../../src/operators/run-context.js';
import { ProcessorError, type ProcessorHookName } from '../../src/contract/errors/processor-error.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import type { Processor, ProcessorContext } from '../../src/contract/processor-types.js';
import { RequestContext } from '../../src/contract/request-context.js';
import { createTestScheduler } from '../../src/testing/test-scheduler.js';
import { deferred, flushMicrotasks, record } from './helpers.js';

/** What the checklist needs to know about one operator. */
export interface ChecklistOptions<T> {
  hook: ProcessorHookName;
  operator: (processors: readonly Processor[], ctx?: RunContext) => OperatorFunction<T, T>;
  /** A fresh run context and two inputs that belong to it. */
  setup: () => { ctx: RunContext; a: T; b: T };
}

type HookImpl = (args: ProcessorContext & Record<string, unknown>) => unknown;

/** A processor implementing only `hook` with `impl`. */
export function processorWith(id: string, hook: ProcessorHookName, impl: HookImpl, extra: Partial<Processor> = {}): Processor {
  return { id, ...extra, [hook]: impl } as unknown as Processor;
}

/** Registers the checklist for one operator. */
export function describeMarbleChecklist<T>(name: string, options: ChecklistOptions<T>): void {
  const { hook, operator, setup } = options;

  describe(`${name}: marble checklist`, () => {
    it('completes on an empty source without calling the hook', () => {
      const { ctx } = setup();
      let calls = 0;
      const spy = processorWith('spy', hook, () => void calls++);
      createTestScheduler(expect).run(({ cold, expectObservable }) => {
        expectObservable(cold<T>('|').pipe(operator([spy], ctx))).toBe('|');
      });
      expect(calls).toBe(0);
    });

    it('stays silent on a never source', () => {
      const { ctx } = setup();
      const spy = processorWith('spy', hook, () => undefined);
      createTestScheduler(expect).run(({ cold, expectObservable }) => {
        expectObservable(cold<T>('-').pipe(operator([spy], ctx))).toBe('-');
      });
    });

    it('processes one value, giving the hook the run context fields', () => {
      const { ctx, a } = setup();
      const seen: Array<ProcessorContext & Record<string, unknown>> = [];
      const spy = processorWith('spy', hook, (args) => void seen.push(args));
      createTestScheduler(expect).run(({ cold, expectObservable }) => {
        expectObservable(cold('-a|', { a }).pipe(operator([spy], ctx))).toBe('-a|', { a });
      });
      expect(seen).toHaveLength(1);
      const args = seen[0] as ProcessorContext;
      expect(args.retryCount).toBe(0);
      expect(args.state).toBe(ctx.stateFor('spy'));
      expect(args.requestContext).toBeInstanceOf(RequestContext);
      expect(args.requestContext).toBe(ctx.requestContext);
      expect(args.tracingContext).toBe(ctx.tracingContext);
      expect(args.abortSignal).toBe(ctx.abortSignal);
      expect(typeof args.writer.custom).toBe('function');
      expect(typeof args.abort).toBe('function');
      expect(args.runId).toBe('test-run');
    });

    it('processes many values in order, a synchronous hook adding no frames', () => {
      const { ctx, a, b } = setup();
      let calls = 0;
      const spy = processorWith('spy', hook, () => void calls++);
      createTestScheduler(expect).run(({ cold, expectObservable }) => {
        expectObservable(cold('a-(b|)', { a, b }).pipe(operator([spy], ctx))).toBe('a-(b|)', { a, b });
      });
      expect(calls).toBe(2);
    });

    it('forwards a source error', () => {
      const { ctx, a } = setup();
      const spy = processorWith('spy', hook, () => undefined);
      const failure = new Error('upstream failed');
      createTestScheduler(expect).run(({ cold, expectObservable }) => {
        expectObservable(cold('-a-#', { a }, failure).pipe(operator([spy], ctx))).toBe('-a-#', { a }, failure);
      });
    });

    it('errors with a ProcessorError (processorId, hook, cause) when the hook throws', () => {
      const { ctx, a, b } = setup();
      const cause = new Error('boom');
      let calls = 0;
      const thrower = processorWith('thrower', hook, () => {
        if (++calls === 2) throw cause;
      });
      createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold('-a-b-|', { a, b });
        expectObservable(source.pipe(operator([thrower], ctx))).toBe('-a-#', { a }, new ProcessorError('thrower', hook, 'boom'));
        expectSubscriptions(source.subscriptions).toBe('^--!');
      });
      const subject = new Subject<T>();
      const recording = record(subject.pipe(operator([thrower], setup().ctx)));
      calls = 1;
      subject.next(a);
      expect(ProcessorError.isInstance(recording.error)).toBe(true);
      const error = recording.error as ProcessorError;
      expect([error.processorId, error.hook, error.cause]).toEqual(['thrower', hook, cause]);
    });

    it.each([
      ['null', null],
      ['undefined', undefined],
    ])('passes the value on unchanged when the hook returns %s', (_label, returned) => {
      const { ctx, a, b } = setup();
      const nothing = processorWith('nothing', hook, () => returned);
      createTestScheduler(expect).run(({ cold, expectObservable }) => {
        expectObservable(cold('-a-b|', { a, b }).pipe(operator([nothing], ctx))).toBe('-a-b|', { a, b });
      });
    });

    it('errors with a TripWire on abort(), default reason "Tripwire triggered by <id>"', () => {
      const { ctx, a, b } = setup();
      let calls = 0;
      const guard = processorWith('guard', hook, ({ abort }) => (++calls === 2 ? abort() : undefined));
      let laterCalls = 0;
      const laterSpy = processorWith('later', hook, () => void laterCalls++);
      createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold('-a-b-|', { a, b });
        expectObservable(source.pipe(operator([guard, laterSpy], ctx))).toBe(
          '-a-#',
          { a },
          new TripWire('Tripwire triggered by guard', {}, 'guard'),
        );
        expectSubscriptions(source.subscriptions).toBe('^--!');
      });
      expect(laterCalls).toBe(1); // no later processor runs after an abort
    });

    it('carries reason, retry and metadata of abort(reason, options)', () => {
      const { ctx, a } = setup();
      const guard = processorWith('guard', hook, ({ abort }) => abort('too short', { retry: true, metadata: { score: 0.1 } }));
      const subject = new Subject<T>();
      const recording = record(subject.pipe(operator([guard], ctx)));
      subject.next(a);
      expect(TripWire.isInstance(recording.error)).toBe(true);
      const tripwire = recording.error as TripWire;
      expect([tripwire.reason, tripwire.processorId, tripwire.retry, tripwire.metadata]).toEqual(['too short', 'guard', true, { score: 0.1 }]);
    });

    it('still aborts when the processor catches its own TripWire', () => {
      const { ctx, a } = setup();
      const failOpen = processorWith('fail-open', hook, ({ abort }) => {
        try {
          abort('blocked');
        } catch {
          // a fail-open catch-all: the abort must stand anyway
        }
        return undefined;
      });
      createTestScheduler(expect).run(({ cold, expectObservable }) => {
        expectObservable(cold('-a|', { a }).pipe(operator([failOpen], ctx))).toBe('-#', undefined, new TripWire('blocked', {}, 'fail-open'));
      });
    });

    it('unsubscribes the source on early unsubscription, calling no more hooks', () => {
      const { ctx, a, b } = setup();
      let calls = 0;
      const spy = processorWith('spy', hook, () => void calls++);
      createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold('-a--b-|', { a, b });
        expectObservable(source.pipe(operator([spy], ctx)), '^--!').toBe('-a--', { a });
        expectSubscriptions(source.subscriptions).toBe('^--!');
      });
      expect(calls).toBe(1);
    });

    it('keeps order with an async hook: the next value waits for the pending one', async () => {
      const { ctx, a, b } = setup();
      const gates = [deferred<void>(), deferred<void>()];
      let calls = 0;
      const slow = processorWith('slow', hook, () => (gates[calls++] as ReturnType<typeof deferred<void>>).promise);
      const subject = new Subject<T>();
      const recording = record(subject.pipe(operator([slow], ctx)));
      subject.next(a);
      subject.next(b);
      subject.complete();
      await flushMicrotasks();
      expect(calls).toBe(1);
      expect(recording.values).toEqual([]);
      gates[0]?.resolve();
      await flushMicrotasks();
      expect(recording.values).toEqual([a]);
      expect(calls).toBe(2);
      expect(recording.completed).toBe(false);
      gates[1]?.resolve();
      await flushMicrotasks();
      expect(recording.values).toEqual([a, b]);
      expect(recording.completed).toBe(true);
    });

    it('errors with a ProcessorError when an async hook rejects', async () => {
      const { ctx, a } = setup();
      const failing = processorWith('failing', hook, () => Promise.reject(new Error('later boom')));
      const subject = new Subject<T>();
      const recording = record(subject.pipe(operator([failing], ctx)));
      subject.next(a);
      await flushMicrotasks();
      expect(ProcessorError.isInstance(recording.error)).toBe(true);
      expect((recording.error as ProcessorError).hook).toBe(hook);
      expect(((recording.error as ProcessorError).cause as Error).message).toBe('later boom');
    });

    it('skips processors that lack the hook', () => {
      const { ctx, a } = setup();
      let calls = 0;
      const other = { id: 'other' } as Processor;
      const spy = processorWith('spy', hook, () => void calls++);
      createTestScheduler(expect).run(({ cold, expectObservable }) => {
        expectObservable(cold('-a|', { a }).pipe(operator([other, spy, other], ctx))).toBe('-a|', { a });
      });
      expect(calls).toBe(1);
    });
  });
}
