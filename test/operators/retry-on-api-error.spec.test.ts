import { describe, expect, it } from 'vitest';
import { defer, Subject } from 'rxjs';
import { APICallError } from '@ai-sdk/provider';
import { apiErrorBudget, DEFAULT_API_ERROR_RETRIES, retryOnAPIError } from '../../src/operators/retry-on-api-error.js';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import type { Processor, ProcessAPIErrorArgs } from '../../src/contract/processor-types.js';
import { createTestScheduler } from '../../src/testing/test-scheduler.js';
import { deferred, flushMicrotasks, listWith, record, testContext, user } from './helpers.js';

const apiError = new APICallError({
  message: 'context length exceeded',
  url: 'https://api.example.com/v1/chat',
  requestBodyValues: {},
  statusCode: 400,
});

const alwaysRetry: Processor = { id: 'always-retry', processAPIError: () => ({ retry: true }) };

/** `count` subscription marks for a source that errors 3 frames after each (re)subscription. */
const attempts = (count: number): string[] => Array.from({ length: count }, (_unused, index) => `${'-'.repeat(index * 3)}^--!`);

describe('retryOnAPIError (marbles)', () => {
  it('completes on an empty source, stays silent on never, passes values without frames', () => {
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('|').pipe(retryOnAPIError([alwaysRetry], testContext()))).toBe('|');
      expectObservable(cold('-').pipe(retryOnAPIError([alwaysRetry], testContext()))).toBe('-');
      expectObservable(cold('a|').pipe(retryOnAPIError([alwaysRetry], testContext()))).toBe('a|');
      expectObservable(cold('a-b-(c|)').pipe(retryOnAPIError([alwaysRetry], testContext()))).toBe('a-b-(c|)');
    });
  });

  it('resubscribes when processAPIError asks { retry: true }, bounded by maxProcessorRetries', () => {
    const ctx = testContext({ maxProcessorRetries: 2 });
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-#', undefined, apiError);
      expectObservable(source.pipe(retryOnAPIError([alwaysRetry], ctx))).toBe('-a--a--a-#', undefined, apiError);
      expectSubscriptions(source.subscriptions).toBe(attempts(3));
    });
    expect(ctx.apiErrorRetryCount).toBe(2);
  });

  it('defaults the budget to 10 when a processor has processAPIError', () => {
    const ctx = testContext();
    expect(apiErrorBudget([alwaysRetry], ctx)).toBe(DEFAULT_API_ERROR_RETRIES);
    expect(DEFAULT_API_ERROR_RETRIES).toBe(10);
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-#', undefined, apiError);
      expectObservable(source.pipe(retryOnAPIError([alwaysRetry], ctx))).toBe(`${'-a-'.repeat(10)}-a-#`, undefined, apiError);
      expectSubscriptions(source.subscriptions).toBe(attempts(11));
    });
  });

  it('does not resubscribe nor ask anyone when no processor has processAPIError (no budget)', () => {
    let asked = 0;
    const outputOnly: Processor = { id: 'output-only', processOutputStream: ({ part }) => (asked++, part) };
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-#', undefined, apiError);
      expectObservable(source.pipe(retryOnAPIError([outputOnly], testContext()))).toBe('-a-#', undefined, apiError);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
    expect(apiErrorBudget([outputOnly], testContext())).toBe(0);
    expect(asked).toBe(0);
  });

  it('does not resubscribe with an explicit budget of 0, even with error processors', () => {
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-#', undefined, apiError);
      expectObservable(source.pipe(retryOnAPIError([alwaysRetry], testContext({ maxProcessorRetries: 0 })))).toBe('-a-#', undefined, apiError);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it.each([
    ['undefined', undefined],
    ['{ retry: false }', { retry: false }],
  ])('does not resubscribe when processAPIError returns %s', (_label, answer) => {
    const declines: Processor = { id: 'declines', processAPIError: () => answer };
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-#', undefined, apiError);
      expectObservable(source.pipe(retryOnAPIError([declines], testContext()))).toBe('-a-#', undefined, apiError);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('asks processors in order; the first { retry: true } wins and later ones are not asked', () => {
    const asked: string[] = [];
    const ask = (id: string, retry: boolean): Processor => ({ id, processAPIError: () => (asked.push(id), { retry }) });
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      let attempt = 0;
      const source = defer(() => (attempt++ === 0 ? cold('-#', undefined, apiError) : cold('-b|')));
      expectObservable(source.pipe(retryOnAPIError([ask('no', false), ask('yes', true), ask('never', true)], testContext()))).toBe('--b|');
    });
    expect(asked).toEqual(['no', 'yes']);
  });

  it('treats a throwing processAPIError as "not handled" and asks the next one', () => {
    const broken: Processor = {
      id: 'broken',
      processAPIError: () => {
        throw new Error('bug in error handler');
      },
    };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      let attempt = 0;
      const source = defer(() => (attempt++ === 0 ? cold('-#', undefined, apiError) : cold('-b|')));
      expectObservable(source.pipe(retryOnAPIError([broken, alwaysRetry], testContext()))).toBe('--b|');
    });
  });

  it('never retries a TripWire and does not ask processAPIError about it', () => {
    let asked = 0;
    const counting: Processor = { id: 'counting', processAPIError: () => (asked++, { retry: true }) };
    const tripwire = new TripWire('blocked', { retry: true }, 'guard');
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-#', undefined, tripwire);
      expectObservable(source.pipe(retryOnAPIError([counting], testContext()))).toBe('-a-#', undefined, tripwire);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
    expect(asked).toBe(0);
  });

  it('never retries a ProcessorError (a failing hook is not an API error)', () => {
    let asked = 0;
    const counting: Processor = { id: 'counting', processAPIError: () => (asked++, { retry: true }) };
    const hookFailure = new ProcessorError('guard', 'processOutputStream', 'bug');
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-#', undefined, hookFailure);
      expectObservable(source.pipe(retryOnAPIError([counting], testContext()))).toBe('-a-#', undefined, hookFailure);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
    expect(asked).toBe(0);
  });

  it('uses isAPIError / toAPIError to pick and unwrap API errors, and reports each retry to onRetry', () => {
    class Wrapped extends Error {
      constructor(readonly inner: unknown) {
        super('wrapped');
      }
    }
    const received: unknown[] = [];
    const retries: Array<[unknown, number]> = [];
    const recorder: Processor = { id: 'recorder', processAPIError: ({ error, retryCount }) => (received.push(error), { retry: retryCount < 1 }) };
    const wrapped = new Wrapped(apiError);
    const options = {
      isAPIError: (error: unknown) => error instanceof Wrapped,
      toAPIError: (error: unknown) => (error as Wrapped).inner,
      onRetry: (error: unknown, count: number) => void retries.push([error, count]),
    };
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-#', undefined, wrapped);
      expectObservable(source.pipe(retryOnAPIError([recorder], testContext(), options))).toBe('--#', undefined, wrapped);
      expectSubscriptions(source.subscriptions).toBe(['^!', '-^!']);
      const other = cold('-#', undefined, new Error('not an API error'));
      expectObservable(other.pipe(retryOnAPIError([recorder], testContext(), options))).toBe('-#', undefined, new Error('not an API error'));
    });
    expect(received).toEqual([apiError, apiError]);
    expect(retries).toEqual([[wrapped, 1]]);
  });

  it('errors with the TripWire when processAPIError aborts (default reason "Tripwire triggered by <id>")', () => {
    const aborting: Processor = { id: 'aborting', processAPIError: ({ abort }) => abort() };
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-#', undefined, apiError);
      expectObservable(source.pipe(retryOnAPIError([aborting], testContext()))).toBe(
        '-a-#',
        undefined,
        new TripWire('Tripwire triggered by aborting', {}, 'aborting'),
      );
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('gives processAPIError retryCount 0, 1, 2 and the error, messages, list, stepNumber and steps', () => {
    const ctx = testContext({ messageList: listWith([user('u1', 'hi')]), stepNumber: 3 });
    const seen: ProcessAPIErrorArgs[] = [];
    const recorder: Processor = { id: 'recorder', processAPIError: (args) => (seen.push(args), { retry: args.retryCount < 2 }) };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-#', undefined, apiError).pipe(retryOnAPIError([recorder], ctx))).toBe('---#', undefined, apiError);
    });
    expect(seen.map((args) => args.retryCount)).toEqual([0, 1, 2]);
    const first = seen[0] as ProcessAPIErrorArgs;
    expect(first.error).toBe(apiError);
    expect(first.messageList).toBe(ctx.messageList);
    expect(first.messages.map((message) => message.id)).toEqual(['u1']);
    expect(first.stepNumber).toBe(3);
    expect(first.steps).toEqual(ctx.steps); // a copy of the run's list (red-team-2026-12d: a hook cannot drop or add steps)
    expect(first.state).toBe(ctx.stateFor('recorder'));
  });

  it('retries with the list as processAPIError left it (the specification\'s trimming example)', () => {
    const ctx = testContext({ messageList: listWith([user('u1', 'a'), user('u2', 'b'), user('u3', 'c'), user('u4', 'd'), user('u5', 'e')]) });
    const sentLengths: number[] = [];
    const trim: Processor = {
      id: 'trim',
      processAPIError: ({ messageList, retryCount }) => {
        if (retryCount > 0) return;
        const messages = messageList.get.all.db();
        messageList.removeByIds([messages[1]!.id, messages[2]!.id]);
        return { retry: true };
      },
    };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      const call$ = defer(() => {
        const length = ctx.messageList.get.all.db().length;
        sentLengths.push(length);
        return length > 3 ? cold('-#', undefined, apiError) : cold('-(r|)');
      });
      expectObservable(call$.pipe(retryOnAPIError([trim], ctx))).toBe('--(r|)');
    });
    expect(sentLengths).toEqual([5, 3]);
  });

  it('unsubscribes the current attempt on early unsubscription', () => {
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-#', undefined, apiError);
      expectObservable(source.pipe(retryOnAPIError([alwaysRetry], testContext())), '^----!').toBe('-a--a-');
      expectSubscriptions(source.subscriptions).toBe(['^--!', '---^-!']);
    });
  });
});

describe('retryOnAPIError (async processAPIError)', () => {
  it('waits for an async answer before resubscribing', async () => {
    const answer = deferred<{ retry: boolean }>();
    const slow: Processor = { id: 'slow', processAPIError: () => answer.promise };
    let subscriptions = 0;
    const failures = new Subject<void>();
    const source = defer(() => {
      subscriptions++;
      const attempt = new Subject<string>();
      if (subscriptions === 1) failures.subscribe(() => attempt.error(apiError));
      else queueMicrotask(() => (attempt.next('ok'), attempt.complete()));
      return attempt;
    });
    const recording = record(source.pipe(retryOnAPIError([slow], testContext())));
    failures.next();
    await flushMicrotasks();
    expect(subscriptions).toBe(1);
    answer.resolve({ retry: true });
    await flushMicrotasks();
    expect(subscriptions).toBe(2);
    expect(recording.values).toEqual(['ok']);
    expect(recording.completed).toBe(true);
  });

  it('errors with the original error when the async answer declines', async () => {
    const slow: Processor = { id: 'slow', processAPIError: async () => undefined };
    const subject = new Subject<string>();
    const recording = record(subject.pipe(retryOnAPIError([slow], testContext())));
    subject.error(apiError);
    await flushMicrotasks();
    expect(recording.error).toBe(apiError);
  });
});
