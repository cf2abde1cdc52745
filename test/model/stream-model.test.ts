import { describe, expect, it } from 'vitest';
import { Subject, take } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { APICallError, type LanguageModelV4, type LanguageModelV4CallOptions, type LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { streamModel, type ModelResponseMeta } from '../../src/model/stream-model.js';
import { OBSERVABLE_STREAM } from '../../src/model/observable-stream.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { collect, userPrompt } from './helpers.js';
import { waitFor } from '../support/wait-for.js';

const delta = (text: string): LanguageModelV4StreamPart => ({ type: 'text-delta', id: 't', delta: text });

/** A V4 model over a hand-made ReadableStream that counts pulls and observes cancel. */
function countingModel(total: number, doStreamExtras: { request?: { body?: unknown }; response?: { headers?: Record<string, string> } } = {}) {
  const state = { pulls: 0, cancelled: false, cancelReason: undefined as unknown, signals: [] as Array<AbortSignal | undefined> };
  const model: LanguageModelV4 = {
    specificationVersion: 'v4',
    provider: 'test',
    modelId: 'counting',
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('not used')),
    async doStream(options) {
      state.signals.push(options.abortSignal);
      const stream = new ReadableStream<LanguageModelV4StreamPart>(
        {
          pull(controller) {
            state.pulls += 1;
            if (state.pulls > total) controller.close();
            else controller.enqueue(delta(String(state.pulls)));
          },
          cancel(reason) {
            state.cancelled = true;
            state.cancelReason = reason;
          },
        },
        { highWaterMark: 0 },
      );
      return { stream, ...doStreamExtras };
    },
  };
  return { model, state };
}

describe('streamModel', () => {
  it('emits every part of doStream and completes, without aborting the signal', async () => {
    const { model, state } = countingModel(5);
    const parts = await collect(model);
    expect(parts.map((part) => (part.type === 'text-delta' ? part.delta : part.type))).toEqual(['1', '2', '3', '4', '5']);
    expect(state.signals[0]?.aborted).toBe(false);
    expect(state.cancelled).toBe(false);
  });

  it('does not call the provider before subscription (the call is deferred)', () => {
    const { model, state } = countingModel(1);
    const parts$ = streamModel(model, userPrompt());
    expect(state.signals).toHaveLength(0);
    parts$.subscribe().unsubscribe();
    expect(state.signals).toHaveLength(1);
  });

  it('pulls one chunk at a time: a read happens only after the previous part was delivered', async () => {
    const { model, state } = countingModel(20);
    const pullsSeenAtEachPart: number[] = [];
    await new Promise<void>((resolve, reject) =>
      streamModel(model, userPrompt()).subscribe({
        next: () => {
          pullsSeenAtEachPart.push(state.pulls);
          const until = Date.now() + 2; // a slow synchronous consumer
          while (Date.now() < until);
        },
        error: reject,
        complete: resolve,
      }),
    );
    expect(pullsSeenAtEachPart).toEqual(Array.from({ length: 20 }, (_, index) => index + 1));
    expect(state.pulls).toBe(21); // 20 parts + the read that saw the end
  });

  it('unsubscribing mid-stream aborts the signal the provider saw and cancels the stream', async () => {
    const { model, state } = countingModel(1000);
    const received: string[] = [];
    await new Promise<void>((resolve) =>
      streamModel(model, userPrompt())
        .pipe(take(3))
        .subscribe({ next: (part) => received.push(part.type === 'text-delta' ? part.delta : ''), complete: resolve }),
    );
    await waitFor(() => state.cancelled, 'the stream to be cancelled');
    expect(received).toEqual(['1', '2', '3']);
    expect(state.signals[0]?.aborted).toBe(true);
    expect(state.cancelled).toBe(true);
    expect(state.pulls).toBeLessThanOrEqual(4);
  });

  it('combines the caller abortSignal with its own: aborting the caller mid-call aborts the provider signal', async () => {
    const caller = new AbortController();
    const state = { signals: [] as Array<AbortSignal | undefined> };
    const model: LanguageModelV4 = {
      ...countingModel(0).model,
      async doStream(options) {
        state.signals.push(options.abortSignal);
        let pulled = false;
        // one part, then a stream that waits
        const stream = new ReadableStream<LanguageModelV4StreamPart>({ pull: (controller) => (pulled ? new Promise<void>(() => undefined) : ((pulled = true), controller.enqueue(delta('1')))) }, { highWaterMark: 0 });
        return { stream };
      },
    };
    const reason = new Error('stop');
    const parts: LanguageModelV4StreamPart[] = [];
    const subscription = streamModel(model, { ...userPrompt(), abortSignal: caller.signal }).subscribe((event) => {
      if (event.type === 'text-delta') parts.push(event);
    });
    await waitFor(() => parts.length > 0, 'the first part');
    const seen = state.signals[0];
    expect(seen).not.toBe(caller.signal);
    expect(seen?.aborted).toBe(false);
    caller.abort(reason);
    expect(seen?.aborted).toBe(true);
    expect(seen?.reason).toBe(reason);
    subscription.unsubscribe();
  });

  it('lets go of the caller abortSignal once the call ended: a run signal does not collect a listener per finished call', async () => {
    const caller = new AbortController();
    const added: unknown[] = [];
    const removed: unknown[] = [];
    const { addEventListener, removeEventListener } = caller.signal;
    caller.signal.addEventListener = function (this: AbortSignal, ...args: Parameters<AbortSignal['addEventListener']>) {
      added.push(args[1]);
      addEventListener.apply(this, args);
    };
    caller.signal.removeEventListener = function (this: AbortSignal, ...args: Parameters<AbortSignal['removeEventListener']>) {
      removed.push(args[1]);
      removeEventListener.apply(this, args);
    };
    const { model, state } = countingModel(3);
    await collect(model, { ...userPrompt(), abortSignal: caller.signal });
    await collect(countingModel(0).model, { ...userPrompt(), abortSignal: caller.signal }).catch(() => undefined);
    expect(added).toHaveLength(2);
    expect(removed).toEqual(added);
    caller.abort(new Error('the run is over'));
    expect(state.signals[0]?.aborted).toBe(false); // nothing of that call was in flight
  });

  it('cancels the stream when unsubscribed before doStream resolved', async () => {
    let cancelled = false;
    let resolveCall!: () => void;
    const called = new Promise<void>((resolve) => (resolveCall = resolve));
    let seenSignal: AbortSignal | undefined;
    const model: LanguageModelV4 = {
      ...countingModel(0).model,
      async doStream(options) {
        seenSignal = options.abortSignal;
        await called;
        return { stream: new ReadableStream({ cancel: () => void (cancelled = true) }) };
      },
    };
    const subscription = streamModel(model, userPrompt()).subscribe();
    subscription.unsubscribe();
    expect(seenSignal?.aborted).toBe(true);
    resolveCall();
    await waitFor(() => cancelled, 'the late stream to be cancelled');
    expect(cancelled).toBe(true);
  });

  it('propagates a thrown doStream error as the error notification, unchanged', async () => {
    const error = new APICallError({ message: 'rate limited', url: 'https://example.test', requestBodyValues: {}, statusCode: 429 });
    const model = mockModel({ error });
    const { [OBSERVABLE_STREAM]: _fastPath, ...withoutFastPath } = model; // exercise doStream
    await expect(collect(withoutFastPath)).rejects.toBe(error);
    await expect(collect(model)).rejects.toBe(error);
  });

  it('propagates a stream read error as the error notification, after the parts before it', async () => {
    const error = new Error('connection reset');
    const model: LanguageModelV4 = {
      ...countingModel(0).model,
      async doStream() {
        return {
          stream: new ReadableStream<LanguageModelV4StreamPart>({
            start(controller) {
              controller.enqueue(delta('a'));
            },
            pull(controller) {
              controller.error(error);
            },
          }),
        };
      },
    };
    const received: LanguageModelV4StreamPart[] = [];
    const failure = await new Promise<unknown>((resolve) =>
      streamModel(model, userPrompt()).subscribe({ next: (part) => received.push(part), error: resolve }),
    );
    expect(failure).toBe(error);
    expect(received).toEqual([delta('a')]);
  });

  it('reports request/response metadata and stream-start warnings once, before the first part', async () => {
    const { model } = countingModel(2, { request: { body: { model: 'x' } }, response: { headers: { 'x-id': '1' } } });
    const withStart: LanguageModelV4 = {
      ...model,
      async doStream(options) {
        const result = await model.doStream(options);
        const reader = result.stream.getReader();
        let started = false;
        return {
          ...result,
          stream: new ReadableStream<LanguageModelV4StreamPart>({
            async pull(controller) {
              if (!started) {
                started = true;
                controller.enqueue({ type: 'stream-start', warnings: [{ type: 'other', message: 'w' }] });
                return;
              }
              const next = await reader.read();
              if (next.done) controller.close();
              else controller.enqueue(next.value);
            },
          }),
        };
      },
    };
    const events: string[] = [];
    let meta: ModelResponseMeta | undefined;
    await new Promise<void>((resolve) =>
      streamModel(withStart, userPrompt(), (reported) => {
        events.push('response');
        meta = reported;
      }).subscribe({ next: (part) => events.push(part.type), complete: resolve }),
    );
    expect(events).toEqual(['response', 'stream-start', 'text-delta', 'text-delta']);
    expect(meta).toEqual({
      request: { body: { model: 'x' } },
      response: { headers: { 'x-id': '1' } },
      warnings: [{ type: 'other', message: 'w' }],
    });
  });

  it('turns an onResponse throw into the error notification', async () => {
    const { model } = countingModel(2);
    const error = new Error('callback bug');
    await expect(
      new Promise<void>((resolve, reject) =>
        streamModel(model, userPrompt(), () => {
          throw error;
        }).subscribe({ complete: resolve, error: reject }),
      ),
    ).rejects.toBe(error);
  });

  it('uses the OBSERVABLE_STREAM fast path when present (no doStream call)', async () => {
    const subject = new Subject<LanguageModelV4StreamPart>();
    let doStreamCalls = 0;
    let fastOptions: LanguageModelV4CallOptions | undefined;
    const model = {
      ...countingModel(0).model,
      doStream: () => {
        doStreamCalls += 1;
        return Promise.reject(new Error('not used'));
      },
      [OBSERVABLE_STREAM]: (options: LanguageModelV4CallOptions) => {
        fastOptions = options;
        return subject;
      },
    };
    const received: LanguageModelV4StreamPart[] = [];
    const subscription = streamModel(model, userPrompt()).subscribe((part) => received.push(part));
    subject.next(delta('x'));
    expect(received).toEqual([delta('x')]);
    expect(doStreamCalls).toBe(0);
    subscription.unsubscribe();
    expect(fastOptions?.abortSignal?.aborted).toBe(true);
    expect(subject.observed).toBe(false);
  });
});

describe('streamModel on virtual time (marbles)', () => {
  const createScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
  const values = { a: delta('Hel'), b: delta('lo'), c: finishPart('stop') };

  it('emits a marble mock model stream on virtual time', () => {
    createScheduler().run(({ cold, expectObservable }) => {
      const model = mockModel({ stream: cold('a-b-(c|)', values) });
      expectObservable(streamModel(model, userPrompt())).toBe('a-b-(c|)', values);
    });
  });

  it('early unsubscription tears the model stream down and aborts the signal', () => {
    const source$ = { model: mockModel() };
    createScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('a-b---c|', values);
      source$.model = mockModel({ stream: source });
      expectObservable(streamModel(source$.model, userPrompt()), '^--!').toBe('a-b', values);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
    expect(source$.model.abortSignals[0]?.aborted).toBe(true);
  });

  it('completion on virtual time leaves the signal unaborted', () => {
    const holder = { model: mockModel() };
    createScheduler().run(({ cold, expectObservable }) => {
      holder.model = mockModel({ stream: cold('a-(c|)', values) });
      expectObservable(streamModel(holder.model, userPrompt())).toBe('a-(c|)', values);
    });
    expect(holder.model.abortSignals[0]?.aborted).toBe(false);
  });

  it('a stream error is an error notification on virtual time', () => {
    createScheduler().run(({ cold, expectObservable }) => {
      const error = new Error('boom');
      const model = mockModel({ stream: cold('a-#', values, error) });
      expectObservable(streamModel(model, userPrompt())).toBe('a-#', values, error);
    });
  });

  it('each subscription is a new call with its own signal', () => {
    const [start, hi, end] = textParts('Hi');
    const model = mockModel({ parts: () => textParts('Hi') });
    createScheduler().run(({ expectObservable }) => {
      const parts$ = streamModel(model, userPrompt());
      expectObservable(parts$).toBe('(abc|)', { a: start, b: hi, c: end });
      expectObservable(parts$).toBe('(abc|)', { a: start, b: hi, c: end });
    });
    expect(model.calls).toHaveLength(2);
    expect(model.abortSignals[0]).not.toBe(model.abortSignals[1]);
  });
});
