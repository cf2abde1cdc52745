/**
 * The provider seam's other ways in: a model that streams through `OBSERVABLE_STREAM` (the testing
 * models — `mockModel`, `scriptedModel`, the legacy mocks — and virtual time), the provider
 * stream `processorsMiddleware` reads for the AI SDK, and streams whose reads are always ready.
 * Each must meet what a `doStream` web stream meets in `provider-streams.adversarial.test.ts`: one
 * check of every part where it enters the run, the call over at its first `finish`, and a run
 * that its caller's `abortSignal` can end.
 *
 * Found here (each failed before its fix):
 * - a model streaming through `OBSERVABLE_STREAM` skipped the part check: a `text-delta` with a
 *   numeric id, `providerMetadata` holding a BigInt, a tool call whose input is a number reached
 *   the run; `null` or a part whose `type` getter throws was a raw `TypeError`; a V3 model's
 *   Observable (lifted to V4) sending `null` likewise; parts after `finish` were taken, and an
 *   Observable that did not complete after its `finish` hung the run; an error that cannot be
 *   written as JSON (a Proxy that throws) went to the client as it was;
 * - `processorsMiddleware` read the provider's stream itself, unchecked: the same parts reached
 *   `streamText`/`generateText`, parts after `finish` were taken, and a stream that never closed
 *   after its `finish` hung the call; a `read()` resolving with `null` was a raw `TypeError`;
 * - a provider stream whose reads are always ready (a pull that enqueues at once, a queue filled
 *   ahead with millions of parts, an Observable emitting synchronously or in microtasks for ever)
 *   kept the event loop to itself: `AbortSignal.timeout(50)` as the run's signal never fired, and
 *   the run never ended (or only when the stream did).
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { asapScheduler, concat, count, from, lastValueFrom, NEVER, Observable, scheduled, throwError, timeout, toArray } from 'rxjs';
import { generateText, streamText, wrapLanguageModel, type TextStreamPart, type ToolSet } from 'ai';
import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { Agent, InvalidModelResponseError, type ChunkType } from '../../src/index.js';
import { processorsMiddleware } from '../../src/ai-sdk/index.js';
import { encodeJson } from '../../src/contract/json-codec.js';
import { OBSERVABLE_STREAM } from '../../src/model/observable-stream.js';
import { OBSERVABLE_TURN_MS, streamModel } from '../../src/model/stream-model.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { failOnProcessLevelErrors } from './process-guard.js';
import { partStream, type StreamProbe } from './part-stream.js';

failOnProcessLevelErrors();

const PROVIDER = 'acme.hostile';
const MODEL_ID = 'hostile-1';

type Part = Record<string, unknown>;

const finish = (): Part => ({ ...finishPart('stop') });
const text = (...deltas: string[]): Part[] => [
  { type: 'text-start', id: 't' },
  ...deltas.map((delta) => ({ type: 'text-delta', id: 't', delta })),
  { type: 'text-end', id: 't' },
];

function throwingProxy(): object {
  const trap = (): never => {
    throw new Error('proxy trap');
  };
  return new Proxy({}, { get: trap, has: trap, ownKeys: trap, getPrototypeOf: trap, getOwnPropertyDescriptor: trap });
}

/** Parts no run may take, each as a fresh value (a Proxy or a getter cannot be shared between runs). */
const hostileParts: ReadonlyArray<readonly [string, () => unknown, RegExp]> = [
  ['a text-delta whose id is a number', () => ({ type: 'text-delta', id: 7, delta: 'x' }), /"text-delta" part whose id is a number/],
  ['a text-start whose providerMetadata holds a BigInt', () => ({ type: 'text-start', id: 't', providerMetadata: { acme: { n: 1n } } }), /providerMetadata is not JSON/],
  ['a tool call whose input is a number', () => ({ type: 'tool-call', toolCallId: 'c', toolName: 'weather', input: 42 }), /"tool-call" part whose input is a number/],
  ['a finish without a reason', () => ({ type: 'finish', usage: finishPart('stop').usage }), /"finish" part whose finishReason is undefined/],
  ['null', () => null, /sent null where a stream part/],
  ['a string', () => 'text-delta', /sent a string where a stream part/],
  ['a part without a type', () => ({ id: 't', delta: 'x' }), /sent an object where a stream part/],
  ['a Proxy that throws', throwingProxy, /proxy trap/],
  [
    'a part whose type getter throws',
    () => ({
      get type(): string {
        throw new Error('type getter');
      },
    }),
    /type getter/,
  ],
  [
    'a tool call whose toolName getter throws',
    () => ({
      type: 'tool-call',
      toolCallId: 'c',
      get toolName(): string {
        throw new Error('name getter');
      },
      input: '{}',
    }),
    /"tool-call" part that throws where it is read \(name getter\)/,
  ],
];

/** A V4 model that streams through `OBSERVABLE_STREAM` only (`doStream` is never the way in). */
function observableModel(stream: (options: { abortSignal?: AbortSignal }) => Observable<unknown>, version: 'v3' | 'v4' = 'v4'): LanguageModelV4 {
  return {
    specificationVersion: version,
    provider: PROVIDER,
    modelId: MODEL_ID,
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('doGenerate is not the way in')),
    doStream: () => Promise.reject(new Error('doStream is not the way in')),
    [OBSERVABLE_STREAM]: stream,
  } as unknown as LanguageModelV4;
}

/** A V4 model whose `doStream` streams `stream()` (a fresh web stream per call). */
function webModel(stream: () => ReadableStream<unknown>, extra: Part = {}): LanguageModelV4 {
  return {
    specificationVersion: 'v4',
    provider: PROVIDER,
    modelId: MODEL_ID,
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('doGenerate is not the way in')),
    doStream: async () => ({ stream: stream(), ...extra }),
  } as unknown as LanguageModelV4;
}

const settle = async (): Promise<void> => {
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
};

const agentOf = (model: LanguageModelV4): Agent => new Agent({ id: 'a', instructions: 'Be brief.', model, maxSteps: 1 });

/** A run's chunks; exactly one terminal, last, every chunk writable as JSON. */
async function runChunks(model: LanguageModelV4, options: { abortSignal?: AbortSignal } = {}): Promise<ChunkType[]> {
  const chunks = await lastValueFrom(agentOf(model).stream$('Hello', options).pipe(timeout(10_000), toArray()));
  const terminals = chunks.filter((chunk) => ['finish', 'error', 'abort', 'tripwire'].includes(chunk.type));
  expect(terminals.map((chunk) => chunk.type), chunks.map((chunk) => chunk.type).join(',')).toHaveLength(1);
  expect(chunks.at(-1)).toBe(terminals[0]);
  for (const chunk of chunks) expect(() => encodeJson(chunk), `chunk ${chunk.type}`).not.toThrow();
  return chunks;
}

function expectInvalid(error: unknown, problem: RegExp, context = ''): void {
  expect(InvalidModelResponseError.isInstance(error), `${context}: ${String((error as Error | undefined)?.message)}`).toBe(true);
  const invalid = error as InvalidModelResponseError;
  expect(invalid.provider).toBe(PROVIDER);
  expect(invalid.modelId).toBe(MODEL_ID);
  expect(invalid.problem).toMatch(problem);
}

const runError = (chunks: readonly ChunkType[]): unknown => {
  const last = chunks.at(-1);
  return last?.type === 'error' ? last.payload.error : undefined;
};

const runText = (chunks: readonly ChunkType[]): string =>
  chunks.flatMap((chunk) => (chunk.type === 'text-delta' ? [chunk.payload.text] : [])).join('');

// ---------------------------------------------------------------------------------------------
// 1. OBSERVABLE_STREAM models take the same check
// ---------------------------------------------------------------------------------------------

describe('a model streaming through OBSERVABLE_STREAM meets the web stream’s checks', () => {
  it.each(hostileParts)('%s ends the run with an InvalidModelResponseError naming the model (a raw model)', async (_label, make, problem) => {
    const model = observableModel(() => from([...text('Hi'), make(), finish()]));
    const chunks = await runChunks(model);
    expectInvalid(runError(chunks), problem, chunks.map((chunk) => chunk.type).join(','));
  });

  it.each(hostileParts)('%s ends the run with an InvalidModelResponseError (mockModel with a stream)', async (_label, make, problem) => {
    const model = mockModel({ provider: PROVIDER, modelId: MODEL_ID, stream: () => from([...text('Hi'), make(), finish()]) as Observable<LanguageModelV4StreamPart> });
    const chunks = await runChunks(model);
    expectInvalid(runError(chunks), problem, chunks.map((chunk) => chunk.type).join(','));
  });

  it.each(hostileParts)('%s is the error of streamModel on the fast path too', async (_label, make, problem) => {
    const model = observableModel(() => from([...text('Hi'), make(), finish()]));
    let failure: unknown;
    await lastValueFrom(streamModel(model, { prompt: [] }).pipe(toArray())).catch((error: unknown) => {
      failure = error;
    });
    expectInvalid(failure, problem);
  });

  it.each(hostileParts.filter(([label]) => !label.startsWith('a text') && !label.startsWith('a tool') && !label.startsWith('a finish')))(
    '%s from a V3 model’s Observable (lifted to V4) is an InvalidModelResponseError, not a TypeError',
    async (_label, make, problem) => {
      const model = observableModel(() => from([{ type: 'text-start', id: 't' }, make()]), 'v3');
      const chunks = await runChunks(model);
      expectInvalid(runError(chunks), problem, chunks.map((chunk) => chunk.type).join(','));
    },
  );

  it('drops the parts after the first finish, and ends the call there even when the Observable never completes', async () => {
    const model = observableModel(() => concat(from([...text('Hi'), finish(), { type: 'text-delta', id: 't', delta: ' after' }, finish()]), NEVER));
    const chunks = await runChunks(model);
    expect(chunks.at(-1)?.type).toBe('finish');
    expect(runText(chunks)).toBe('Hi');
  });

  it('an OBSERVABLE_STREAM function that throws, or returns no Observable, is contained and leaves no listener on the caller’s signal (V4, and V3 lifted)', async () => {
    const cases: ReadonlyArray<readonly [() => unknown, (error: unknown) => void]> = [
      [
        () => {
          throw new Error('no stream today');
        },
        (error) => expect((error as Error).message).toContain('no stream today'),
      ],
      [() => { throw throwingProxy(); }, (error) => expectInvalid(error, /failed with an error that cannot be read/)],
      [() => undefined, (error) => expectInvalid(error, /returned undefined, not an Observable/)],
      [() => [finish()], (error) => expectInvalid(error, /returned an array, not an Observable/)],
      [throwingProxy, (error) => expectInvalid(error, /returned an object that throws where it is read/)],
    ];
    for (const version of ['v4', 'v3'] as const) {
      for (const [stream, check] of cases) {
        const controller = new AbortController();
        const chunks = await runChunks(observableModel(stream as never, version), { abortSignal: controller.signal });
        check(runError(chunks));
        await settle();
        expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
      }
    }
  });

  it('an error that cannot be written as JSON is an InvalidModelResponseError; a plain one stays itself', async () => {
    const proxied = await runChunks(observableModel(() => concat(from(text('Hi')), throwError(() => throwingProxy()))));
    expectInvalid(runError(proxied), /failed with an error that cannot be read/);
    const plain = new Error('rate limited');
    const chunks = await runChunks(observableModel(() => concat(from(text('Hi')), throwError(() => plain))));
    expect((runError(chunks) as { message?: unknown }).message).toContain('rate limited');
  });

  it('a well-formed stream is unchanged: scriptedModel, mockModel parts, the call’s signal released at finish', async () => {
    const scripted = await runChunks(scriptedModel({ rules: [], fallback: { text: 'Hello there' } }));
    expect(runText(scripted)).toBe('Hello there');
    const model = mockModel({ parts: [...textParts('Hi all'), finishPart('stop')] });
    const chunks = await runChunks(model);
    expect(runText(chunks)).toBe('Hi all');
    expect(model.abortSignals[0]?.aborted).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// 2. processorsMiddleware reads the provider's stream through the same check
// ---------------------------------------------------------------------------------------------

async function collect(stream: AsyncIterable<TextStreamPart<ToolSet>>): Promise<Array<TextStreamPart<ToolSet>>> {
  const parts: Array<TextStreamPart<ToolSet>> = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

const wrapped = (model: LanguageModelV4, outputProcessors = true): LanguageModelV4 =>
  wrapLanguageModel({
    model,
    middleware: processorsMiddleware(outputProcessors ? { outputProcessors: [{ id: 'pass', processOutputStream: ({ part }) => part }] } : {}),
  });

describe('processorsMiddleware checks the provider parts it reads', () => {
  it.each(hostileParts)('%s reaches streamText as an error part carrying an InvalidModelResponseError', async (_label, make, problem) => {
    const probe: StreamProbe = { state: 'open' };
    const model = webModel(() => partStream([{ type: 'stream-start', warnings: [] }, ...text('Hi'), make(), finish()], probe));
    const errors: unknown[] = [];
    const result = streamText({ model: wrapped(model), prompt: 'Hello', onError: ({ error }) => void errors.push(error) });
    const parts = await collect(result.fullStream);
    const errorPart = parts.find((part) => part.type === 'error') as { error: unknown } | undefined;
    expectInvalid(errorPart?.error, problem, parts.map((part) => part.type).join(','));
    await settle();
    expect(probe.state).not.toBe('open');
  });

  it.each(hostileParts.slice(0, 3))('%s makes generateText fail with an InvalidModelResponseError (no output processors too)', async (_label, make, problem) => {
    const model = webModel(() => partStream([...text('Hi'), make(), finish()]));
    for (const withProcessors of [true, false]) {
      let failure: unknown;
      await generateText({ model: wrapped(model, withProcessors), prompt: 'Hello' }).catch((error: unknown) => {
        failure = error;
      });
      expectInvalid(failure, problem, `with processors: ${withProcessors}`);
    }
  });

  it('a read() resolving with null is an InvalidModelResponseError', async () => {
    const stream = (): ReadableStream<unknown> => ({ getReader: () => ({ read: async () => null, cancel: async () => undefined, releaseLock: () => undefined }) }) as never;
    const result = streamText({ model: wrapped(webModel(stream)), prompt: 'Hello', onError: () => undefined });
    const parts = await collect(result.fullStream);
    const errorPart = parts.find((part) => part.type === 'error') as { error: unknown } | undefined;
    expectInvalid(errorPart?.error, /read\(\) resolved with null/);
  });

  it('a doStream result whose request getter throws is an InvalidModelResponseError, and its stream is released', async () => {
    const probe: StreamProbe = { state: 'open' };
    const model = webModel(() => partStream([...text('Hi'), finish()], probe));
    const throwing = {
      ...model,
      doStream: async (options: never) => {
        const result = await model.doStream(options);
        return Object.defineProperty({ ...result }, 'request', {
          get() {
            throw new Error('request getter');
          },
        });
      },
    } as LanguageModelV4;
    const errors: unknown[] = [];
    const result = streamText({ model: wrapped(throwing), prompt: 'Hello', onError: ({ error }) => void errors.push(error) });
    await collect(result.fullStream);
    expect(errors).toHaveLength(1);
    expectInvalid(errors[0], /result\.request threw: request getter/);
    await settle();
    expect(probe.state).not.toBe('open');
  });

  it('drops parts after finish, and a stream that never closes after its finish does not hang the call', async () => {
    const probe: StreamProbe = { state: 'open' };
    const model = webModel(() => partStream([...text('Hi'), finish(), { type: 'text-delta', id: 't', delta: ' after' }], probe, true));
    const result = streamText({ model: wrapped(model), prompt: 'Hello' });
    expect(await result.text).toBe('Hi');
    expect(await result.finishReason).toBe('stop');
  });
});

// ---------------------------------------------------------------------------------------------
// 3. Always-ready streams give timers a turn
// ---------------------------------------------------------------------------------------------

/**
 * How long an endless test stream goes on before it ends by itself (with a `finish`): the net
 * under a starved run, whose own timers (the test's timeout too) never fire. The run must have
 * ended with the abort long before; if it did not, it ends with `finish` and the test fails.
 */
const SAFETY_NET_MS = OBSERVABLE_TURN_MS + 4000;

const delta = { type: 'text-delta', id: 't', delta: 'x' };

/** A pull stream that enqueues a delta at once on every pull, for ever (but for the safety net). */
function alwaysReady(): ReadableStream<unknown> {
  const until = performance.now() + SAFETY_NET_MS;
  let started = false;
  return new ReadableStream<unknown>(
    {
      pull(controller) {
        if (!started) {
          started = true;
          controller.enqueue({ type: 'text-start', id: 't' });
          return;
        }
        if (performance.now() < until) controller.enqueue(delta);
        else {
          controller.enqueue({ type: 'text-end', id: 't' });
          controller.enqueue(finish());
          controller.close();
        }
      },
    },
    { highWaterMark: 1 },
  );
}

/** A stream whose queue holds `size` parts before the first read. */
function filledAhead(size: number): ReadableStream<unknown> {
  return new ReadableStream<unknown>(
    {
      start(controller) {
        controller.enqueue({ type: 'text-start', id: 't' });
        for (let index = 0; index < size; index++) controller.enqueue(delta);
        controller.enqueue({ type: 'text-end', id: 't' });
        controller.enqueue(finish());
        controller.close();
      },
    },
    { highWaterMark: 0 },
  );
}

/** An Observable that emits synchronously, in its subscribe, while its subscriber is open (but for the safety net). */
const synchronousForEver = (): Observable<unknown> =>
  new Observable<unknown>((subscriber) => {
    const until = performance.now() + SAFETY_NET_MS;
    subscriber.next({ type: 'text-start', id: 't' });
    while (!subscriber.closed && performance.now() < until) subscriber.next(delta);
    subscriber.next({ type: 'text-end', id: 't' });
    subscriber.next(finish());
    subscriber.complete();
  });

/** An Observable that emits one delta per microtask while its subscriber is open (but for the safety net). */
const microtasksForEver = (): Observable<unknown> =>
  new Observable<unknown>((subscriber) => {
    const until = performance.now() + SAFETY_NET_MS;
    subscriber.next({ type: 'text-start', id: 't' });
    const emit = (): void => {
      if (subscriber.closed) return;
      if (performance.now() < until) {
        subscriber.next(delta);
        queueMicrotask(emit);
        return;
      }
      subscriber.next({ type: 'text-end', id: 't' });
      subscriber.next(finish());
      subscriber.complete();
    };
    queueMicrotask(emit);
  });

/** The last chunk of a run and how many chunks it had (an endless run holds none of them). */
async function lastOfRun(model: LanguageModelV4, abortSignal?: AbortSignal): Promise<{ last: ChunkType | undefined; chunks: number }> {
  let last: ChunkType | undefined;
  const chunks = await lastValueFrom(
    agentOf(model)
      .stream$('Hello', abortSignal === undefined ? {} : { abortSignal })
      .pipe(
        // keeps only the last chunk
        (source) =>
          new Observable<ChunkType>((subscriber) =>
            source.subscribe({
              next: (chunk) => {
                last = chunk;
                subscriber.next(chunk);
              },
              error: (error: unknown) => subscriber.error(error),
              complete: () => subscriber.complete(),
            }),
          ),
        count(),
      ),
  );
  return { last, chunks };
}

const TEST_TIMEOUT_MS = SAFETY_NET_MS * 3;

describe('an always-ready provider stream leaves timers a turn: AbortSignal.timeout(50) ends the run', () => {
  it(
    'a pull that enqueues at once, for ever (doStream)',
    async () => {
      const { last } = await lastOfRun(webModel(alwaysReady), AbortSignal.timeout(50));
      expect(last?.type).toBe('abort');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a pull that enqueues at once, for ever, through the V3 adapter (doStream)',
    async () => {
      const model = { ...webModel(alwaysReady), specificationVersion: 'v3' } as unknown as LanguageModelV4;
      const { last } = await lastOfRun(model, AbortSignal.timeout(50));
      expect(last?.type).toBe('abort');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a queue filled ahead with 100,000 parts (doStream)',
    async () => {
      const { last } = await lastOfRun(webModel(() => filledAhead(100_000)), AbortSignal.timeout(50));
      expect(last?.type).toBe('abort');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'an Observable emitting synchronously for ever (OBSERVABLE_STREAM)',
    async () => {
      const { last } = await lastOfRun(observableModel(synchronousForEver), AbortSignal.timeout(50));
      expect(last?.type).toBe('abort');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'an Observable emitting in microtasks for ever (OBSERVABLE_STREAM)',
    async () => {
      const { last } = await lastOfRun(observableModel(microtasksForEver), AbortSignal.timeout(50));
      expect(last?.type, last?.type === 'error' ? String((last.payload.error as Error | undefined)?.message) : undefined).toBe('abort');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'without an abort, an Observable that never lets the loop turn is cut: an InvalidModelResponseError naming it',
    async () => {
      const { last } = await lastOfRun(observableModel(synchronousForEver));
      expect(last?.type).toBe('error');
      expectInvalid(last?.type === 'error' ? last.payload.error : undefined, /without the event loop taking a turn/);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'processorsMiddleware: streamText over a pull that enqueues at once, for ever, ends at the abort',
    async () => {
      const result = streamText({ model: wrapped(webModel(alwaysReady)), prompt: 'Hello', abortSignal: AbortSignal.timeout(50), onError: () => undefined });
      let types = new Set<string>();
      for await (const part of result.fullStream) types = types.add(part.type);
      expect([...types].at(-1), [...types].join(',')).toBe('abort');
    },
    TEST_TIMEOUT_MS,
  );

  it('a long ready stream is read whole across its turns: 50,000 deltas read, emitted in microtasks and synchronously', async () => {
    const textLength = (last: ChunkType | undefined): number => (last?.type === 'finish' ? last.payload.output.text.length : -1);
    const long = (): unknown[] => [{ type: 'text-start', id: 't' }, ...Array.from({ length: 50_000 }, () => delta), { type: 'text-end', id: 't' }, finish()];
    expect(textLength((await lastOfRun(webModel(() => filledAhead(50_000)))).last)).toBe(50_000);
    expect(textLength((await lastOfRun(observableModel(() => scheduled(long(), asapScheduler)))).last)).toBe(50_000);
    expect(textLength((await lastOfRun(observableModel(() => from(long())))).last)).toBe(50_000);
  }, 60_000);
});
