/**
 * The `OBSERVABLE_STREAM` seam's leftovers: a model whose `OBSERVABLE_STREAM` property throws
 * where it is read, and the run's demand gate on that path.
 *
 * Found here (each failed before its fix):
 * - a model whose `OBSERVABLE_STREAM` is a getter that throws (a V4 model, a V3 one lifted to V4,
 *   through `stream$()`, `generate()` and `streamModel`) let the getter's error out raw, not as
 *   the `InvalidModelResponseError` naming the provider, the model and the problem that every other
 *   provider fault is;
 * - a consumer holding the run's demand gate (a reader that stopped reading) paused a web-stream
 *   model's read, but a model streaming through `OBSERVABLE_STREAM` kept pushing its parts through
 *   the run (its processors, its logs) to the consumer: the gate was not looked at on that path.
 *   Now the parts wait at the seam while the gate is held (an Observable cannot be paused: they
 *   queue there, as a web stream's wait in its own queue) and go on, in order, once it opens.
 */
import { describe, expect, it } from 'vitest';
import { from, lastValueFrom, Observable, of, Subject, take, timeout, toArray } from 'rxjs';
import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { Agent, DemandGate, InvalidModelResponseError, type ChunkType } from '../../src/index.js';
import { OBSERVABLE_STREAM } from '../../src/model/observable-stream.js';
import { callModel, streamModel } from '../../src/model/stream-model.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { CallAbort } from '../../src/model/internal/call-abort.js';
import { pacedCall } from '../../src/model/internal/paced-call.js';
import { createTestScheduler } from '../../src/testing/test-scheduler.js';
import { failOnProcessLevelErrors } from './process-guard.js';

failOnProcessLevelErrors();

const PROVIDER = 'acme.hostile';
const MODEL_ID = 'hostile-1';

const settle = async (): Promise<void> => {
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
};

function expectInvalid(error: unknown, problem: RegExp): void {
  expect(InvalidModelResponseError.isInstance(error), String((error as Error | undefined)?.message)).toBe(true);
  const invalid = error as InvalidModelResponseError;
  expect(invalid.provider).toBe(PROVIDER);
  expect(invalid.modelId).toBe(MODEL_ID);
  expect(invalid.problem).toMatch(problem);
}

/** A model whose `OBSERVABLE_STREAM` getter throws (and whose `doStream` would answer). */
function throwingGetterModel(version: 'v3' | 'v4'): LanguageModelV4 {
  const model = {
    specificationVersion: version,
    provider: PROVIDER,
    modelId: MODEL_ID,
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('doGenerate is not the way in')),
    doStream: async () => ({
      stream: new ReadableStream({
        start(controller) {
          for (const part of [...textParts('Hi'), finishPart()]) controller.enqueue(part);
          controller.close();
        },
      }),
    }),
  };
  Object.defineProperty(model, OBSERVABLE_STREAM, {
    get() {
      throw new Error('the getter is broken');
    },
  });
  return model as unknown as LanguageModelV4;
}

const agentOf = (model: LanguageModelV4): Agent => new Agent({ id: 'a', model, maxSteps: 1 });
const lastError = (chunks: readonly ChunkType[]): unknown => {
  const last = chunks.at(-1);
  return last?.type === 'error' ? last.payload.error : undefined;
};

describe('a model whose OBSERVABLE_STREAM property throws where it is read', () => {
  it.each(['v4', 'v3'] as const)('%s: stream$() ends with an InvalidModelResponseError naming the model and the problem', async (version) => {
    const chunks = await lastValueFrom(agentOf(throwingGetterModel(version)).stream$('Hello').pipe(timeout(10_000), toArray()));
    expect(chunks.at(-1)?.type).toBe('error');
    expectInvalid(lastError(chunks), /OBSERVABLE_STREAM property throws where it is read \(the getter is broken\)/);
  });

  it.each(['v4', 'v3'] as const)('%s: generate() rejects with the same error', async (version) => {
    const failure = await agentOf(throwingGetterModel(version))
      .generate('Hello')
      .then(
        (result) => (result as { error?: unknown }).error,
        (error: unknown) => error,
      );
    expectInvalid(failure, /OBSERVABLE_STREAM property throws/);
  });

  it('streamModel and callModel: the error notification, never a throw at the call', async () => {
    const model = throwingGetterModel('v4');
    let made: Observable<unknown> | undefined;
    expect(() => (made = streamModel(model, { prompt: [] }))).not.toThrow();
    expectInvalid(await lastValueFrom(made as Observable<unknown>).catch((error: unknown) => error), /OBSERVABLE_STREAM property throws/);
    expect(() => (made = callModel(model, { prompt: [] }))).not.toThrow();
    expectInvalid(await lastValueFrom(made as Observable<unknown>).catch((error: unknown) => error), /OBSERVABLE_STREAM property throws/);
  });
});

/** A V4 model streaming `parts$()` through `OBSERVABLE_STREAM`; `emitted` counts what it pushed. */
function pushingModel(parts$: () => Observable<LanguageModelV4StreamPart>): LanguageModelV4 {
  return mockModel({ provider: PROVIDER, modelId: MODEL_ID, stream: parts$ });
}

const deltasOf = (chunks: readonly ChunkType[]): string[] => chunks.flatMap((chunk) => (chunk.type === 'text-delta' ? [chunk.payload.text] : []));

describe('the run’s demand gate on the OBSERVABLE_STREAM path', () => {
  const parts = [...textParts('one two three four five six'), finishPart()];

  it('a gate held before the run starts: no part of the model reaches the run until it opens, then all of them, in order', async () => {
    const source = new Subject<LanguageModelV4StreamPart>();
    const gate = new DemandGate();
    const reader = {};
    gate.hold(reader);
    const seen: ChunkType[] = [];
    let ended = false;
    agentOf(pushingModel(() => source)).stream$('Hello', { demand: gate }).subscribe({ next: (chunk) => seen.push(chunk), complete: () => (ended = true) });
    await settle();
    for (const part of parts) source.next(part);
    source.complete();
    await settle();
    expect(deltasOf(seen)).toEqual([]);
    expect(ended).toBe(false);
    gate.release(reader);
    await settle();
    expect(deltasOf(seen).join('')).toBe('one two three four five six');
    expect(seen.at(-1)?.type).toBe('finish');
    expect(ended).toBe(true);
  });

  it('a gate held mid-stream (the consumer is full): the parts after it wait; released, they come in order; held again, they wait again', async () => {
    const source = new Subject<LanguageModelV4StreamPart>();
    const gate = new DemandGate();
    const reader = {};
    const seen: ChunkType[] = [];
    agentOf(pushingModel(() => source)).stream$('Hello', { demand: gate }).subscribe((chunk) => {
      seen.push(chunk);
      // a consumer that can take one delta at a time
      if (chunk.type === 'text-delta') gate.hold(reader);
    });
    await settle();
    for (const part of parts) source.next(part);
    source.complete();
    await settle();
    expect(deltasOf(seen)).toEqual(['one']);
    const deltas = ['one'];
    for (const word of [' two', ' three', ' four', ' five', ' six']) {
      gate.release(reader);
      await settle();
      deltas.push(word);
      expect(deltasOf(seen)).toEqual(deltas);
    }
    gate.release(reader);
    await settle();
    expect(seen.at(-1)?.type).toBe('finish');
  });

  it('the same consumer on a web-stream model sees the same pacing (the reference the Observable path now meets)', async () => {
    const gate = new DemandGate();
    const reader = {};
    gate.hold(reader);
    const web: LanguageModelV4 = {
      specificationVersion: 'v4',
      provider: PROVIDER,
      modelId: MODEL_ID,
      supportedUrls: {},
      doGenerate: () => Promise.reject(new Error('not here')),
      doStream: async () => ({
        stream: new ReadableStream({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      }),
    };
    const seen: ChunkType[] = [];
    agentOf(web).stream$('Hello', { demand: gate }).subscribe((chunk) => seen.push(chunk));
    await settle();
    expect(deltasOf(seen)).toEqual([]);
    gate.release(reader);
    await settle();
    expect(deltasOf(seen).join('')).toBe('one two three four five six');
  });

  it('a run dropped while the gate is held: the model’s Observable is unsubscribed, its call signal aborted, and nothing more is delivered', async () => {
    const source = new Subject<LanguageModelV4StreamPart>();
    const gate = new DemandGate();
    const reader = {};
    gate.hold(reader);
    const model = mockModel({ provider: PROVIDER, modelId: MODEL_ID, stream: () => source });
    const seen: ChunkType[] = [];
    const subscription = agentOf(model).stream$('Hello', { demand: gate }).subscribe((chunk) => seen.push(chunk));
    await settle();
    source.next(parts[0] as LanguageModelV4StreamPart);
    source.next(parts[1] as LanguageModelV4StreamPart);
    subscription.unsubscribe();
    expect(source.observed).toBe(false);
    expect(model.abortSignals[0]?.aborted).toBe(true);
    const before = seen.length;
    gate.release(reader);
    await settle();
    expect(seen.length).toBe(before);
    expect(deltasOf(seen)).toEqual([]);
  });

  it('a model error while parts wait behind the gate comes after them, in order', async () => {
    const source = new Subject<LanguageModelV4StreamPart>();
    const gate = new DemandGate();
    const reader = {};
    gate.hold(reader);
    const seen: ChunkType[] = [];
    agentOf(pushingModel(() => source)).stream$('Hello', { demand: gate }).subscribe((chunk) => seen.push(chunk));
    await settle();
    for (const part of textParts('before the error')) source.next(part);
    source.error(new Error('rate limited'));
    await settle();
    expect(seen.some((chunk) => chunk.type === 'error')).toBe(false);
    gate.release(reader);
    await settle();
    expect(deltasOf(seen).join('')).toBe('before the error');
    expect(seen.at(-1)?.type).toBe('error');
  });

  it('nobody holds the gate (the default): a synchronous Observable is taken as it was, in the subscribe frame', () => {
    const events: string[] = [];
    const model = mockModel({ provider: PROVIDER, modelId: MODEL_ID, stream: () => of(...parts) });
    callModel(model, { prompt: [] }, new DemandGate()).subscribe((event) => events.push(event.type));
    expect(events.at(-1)).toBe('finish');
  });
});

describe('pacedCall (the end of an OBSERVABLE_STREAM call): spec', () => {
  const flushMicrotasks = async (): Promise<void> => {
    for (let turn = 0; turn < 3; turn++) await Promise.resolve();
  };
  const abortOf = () => new CallAbort({ prompt: [] });

  it('nobody holds the gate, or there is none: values, error and completion pass as they come (marbles)', () => {
    for (const demand of [new DemandGate(), undefined]) {
      createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold('-a-b-|');
        expectObservable(source.pipe(pacedCall(abortOf(), demand))).toBe('-a-b-|');
        expectSubscriptions(source.subscriptions).toBe('^----!');
        const failing = cold('-a-#');
        expectObservable(failing.pipe(pacedCall(abortOf(), demand))).toBe('-a-#');
        expectObservable(cold('-').pipe(pacedCall(abortOf(), demand))).toBe('-');
        expectObservable(cold('|').pipe(pacedCall(abortOf(), demand))).toBe('|');
      });
    }
  });

  it('an early unsubscription unsubscribes the source and cuts the call; an ended call is let go, not cut', () => {
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-b-c-|');
      expectObservable(source.pipe(pacedCall(abortOf(), new DemandGate())), '^--!').toBe('-a-');
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
    const cut = abortOf();
    const source = new Subject<string>();
    const subscription = source.pipe(pacedCall(cut, new DemandGate())).subscribe();
    source.next('a');
    subscription.unsubscribe();
    expect(cut.controller.signal.aborted).toBe(true);
    const ended = abortOf();
    of('a').pipe(pacedCall(ended, new DemandGate())).subscribe();
    expect(ended.controller.signal.aborted).toBe(false);
  });

  it('a synchronous source the result left early (take) is cut, though it runs on to its end after the unsubscription', () => {
    for (const gate of [new DemandGate(), undefined]) {
      const cut = abortOf();
      const seen: string[] = [];
      from(['a', 'b', 'c']).pipe(pacedCall(cut, gate), take(1)).subscribe((value) => seen.push(value));
      expect(seen).toEqual(['a']);
      expect(cut.controller.signal.aborted).toBe(true);
    }
  });

  it('held: values, then the end, wait; opened, they go on in order a microtask later; held again in between, they wait again', async () => {
    const gate = new DemandGate();
    const holder = {};
    const source = new Subject<string>();
    const seen: string[] = [];
    source.pipe(pacedCall(abortOf(), gate)).subscribe({
      next: (value) => {
        seen.push(value);
        if (value === 'b') gate.hold(holder);
      },
      complete: () => seen.push('|'),
    });
    source.next('a');
    gate.hold(holder);
    source.next('b');
    source.next('c');
    source.complete();
    expect(seen).toEqual(['a']);
    gate.release(holder);
    expect(seen).toEqual(['a']);
    await flushMicrotasks();
    expect(seen).toEqual(['a', 'b']);
    gate.release(holder);
    await flushMicrotasks();
    expect(seen).toEqual(['a', 'b', 'c', '|']);
  });

  it('unsubscribed while values wait: the gate forgets the wait, nothing more is delivered, the call is cut', async () => {
    const gate = new DemandGate();
    const holder = {};
    gate.hold(holder);
    const source = new Subject<string>();
    const abort = abortOf();
    const seen: string[] = [];
    const subscription = source.pipe(pacedCall(abort, gate)).subscribe((value) => seen.push(value));
    source.next('a');
    subscription.unsubscribe();
    gate.release(holder);
    await flushMicrotasks();
    expect(seen).toEqual([]);
    expect(source.observed).toBe(false);
    expect(abort.controller.signal.aborted).toBe(true);
  });
});
