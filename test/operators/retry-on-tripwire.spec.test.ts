import { describe, expect, it } from 'vitest';
import { defer, Subject } from 'rxjs';
import { processOutputStep, type StepOutput } from '../../src/operators/process-output-step.js';
import { retryOnTripwire } from '../../src/operators/retry-on-tripwire.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { testUsage } from '../../src/testing/chunk-builders.js';
import { createTestScheduler } from '../../src/testing/test-scheduler.js';
import { record, testContext } from './helpers.js';

const retryMe = new TripWire('try again', { retry: true }, 'guard');
const plainAbort = new TripWire('stop', {}, 'guard');
const output: StepOutput = { stepNumber: 0, finishReason: 'stop', toolCalls: [], text: 'meh', usage: testUsage() };

describe('retryOnTripwire (marbles)', () => {
  it('completes on an empty source and stays silent on never', () => {
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('|').pipe(retryOnTripwire(testContext({ maxProcessorRetries: 1 })))).toBe('|');
      expectObservable(cold('-').pipe(retryOnTripwire(testContext({ maxProcessorRetries: 1 })))).toBe('-');
    });
  });

  it('passes one and many values through without frames', () => {
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('a|').pipe(retryOnTripwire(testContext({ maxProcessorRetries: 1 })))).toBe('a|');
      expectObservable(cold('a-b-(c|)').pipe(retryOnTripwire(testContext({ maxProcessorRetries: 1 })))).toBe('a-b-(c|)');
    });
  });

  it('resubscribes while retryCount < maxProcessorRetries, then lets the TripWire through', () => {
    const ctx = testContext({ maxProcessorRetries: 2 });
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-#', undefined, retryMe);
      expectObservable(source.pipe(retryOnTripwire(ctx))).toBe('-a--a--a-#', undefined, retryMe);
      expectSubscriptions(source.subscriptions).toBe(['^--!', '---^--!', '------^--!']);
    });
    expect(ctx.retryCount).toBe(2);
    expect(ctx.retryFeedback).toBe('try again');
  });

  it('completes after a successful retry', () => {
    let attempt = 0;
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      const failing = cold('-a-#', undefined, retryMe);
      const passing = cold('-b|');
      const source = defer(() => (attempt++ === 0 ? failing : passing));
      expectObservable(source.pipe(retryOnTripwire(testContext({ maxProcessorRetries: 3 })))).toBe('-a--b|');
    });
  });

  it('does not resubscribe without a budget (maxProcessorRetries unset): a plain abort', () => {
    const ctx = testContext();
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-#', undefined, retryMe);
      expectObservable(source.pipe(retryOnTripwire(ctx))).toBe('-a-#', undefined, retryMe);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
    expect(ctx.retryCount).toBe(0);
  });

  it('does not resubscribe with a budget of 0', () => {
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-#', undefined, retryMe);
      expectObservable(source.pipe(retryOnTripwire(testContext({ maxProcessorRetries: 0 })))).toBe('-a-#', undefined, retryMe);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('does not resubscribe for a TripWire without retry: true, nor for other errors', () => {
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const aborted = cold('-a-#', undefined, plainAbort);
      const failed = cold('-a-#', undefined, new Error('provider'));
      expectObservable(aborted.pipe(retryOnTripwire(testContext({ maxProcessorRetries: 5 })))).toBe('-a-#', undefined, plainAbort);
      expectObservable(failed.pipe(retryOnTripwire(testContext({ maxProcessorRetries: 5 })))).toBe('-a-#', undefined, new Error('provider'));
      expectSubscriptions(aborted.subscriptions).toBe('^--!');
      expectSubscriptions(failed.subscriptions).toBe('^--!');
    });
  });

  it('does not resubscribe when shouldRetry vetoes the TripWire (e.g. one from a pre-model hook)', () => {
    const vetoed: TripWire[] = [];
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-#', undefined, retryMe);
      const ctx = testContext({ maxProcessorRetries: 3 });
      const result = source.pipe(retryOnTripwire(ctx, { shouldRetry: (tripwire) => (vetoed.push(tripwire), false) }));
      expectObservable(result).toBe('-a-#', undefined, retryMe);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
    expect(vetoed).toEqual([retryMe]);
  });

  it('unsubscribes the current attempt on early unsubscription', () => {
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-#', undefined, retryMe);
      expectObservable(source.pipe(retryOnTripwire(testContext({ maxProcessorRetries: 5 }))), '^----!').toBe('-a--a-');
      expectSubscriptions(source.subscriptions).toBe(['^--!', '---^-!']);
    });
  });

  it('counts retryCount 0, 1, 2 in the hooks of the retried attempts and stores the feedback', () => {
    const ctx = testContext({ maxProcessorRetries: 5 });
    const seen: number[] = [];
    const retried: Array<[string, number]> = [];
    const guard: Processor = {
      id: 'guard',
      processOutputStep: ({ retryCount, abort }) => {
        seen.push(retryCount);
        if (retryCount < 2) abort(`attempt ${retryCount} too short`, { retry: true });
      },
    };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      const step$ = cold('-o|', { o: output }).pipe(processOutputStep([guard], ctx));
      const retriedStep$ = step$.pipe(retryOnTripwire(ctx, { onRetry: (tripwire, count) => retried.push([tripwire.reason, count]) }));
      expectObservable(retriedStep$).toBe('---o|', { o: output });
    });
    expect(seen).toEqual([0, 1, 2]);
    expect(retried).toEqual([
      ['attempt 0 too short', 1],
      ['attempt 1 too short', 2],
    ]);
    expect(ctx.retryFeedback).toBe('attempt 1 too short');
  });
});

describe('retryOnTripwire (abort signal)', () => {
  it('does not retry once the run was cancelled', () => {
    const controller = new AbortController();
    const ctx = testContext({ maxProcessorRetries: 3, abortSignal: controller.signal });
    controller.abort();
    let subscriptions = 0;
    const source = defer(() => {
      subscriptions++;
      const subject = new Subject<never>();
      queueMicrotask(() => subject.error(retryMe));
      return subject;
    });
    const recording = record(source.pipe(retryOnTripwire(ctx)));
    return new Promise<void>((resolve) => {
      setTimeout(() => {
        expect(subscriptions).toBe(1);
        expect(recording.error).toBe(retryMe);
        resolve();
      }, 10);
    });
  });
});
