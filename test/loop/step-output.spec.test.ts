/**
 * Marble spec of the step-output kernel, `stepOutput()`: the RxJS checklist (empty, never, one and
 * many values, source error, early unsubscription), the run's rules (conversion, facts, the fence,
 * processor errors, a source error waiting for the chunks before it), and the live path — the
 * provider's web stream read behind `callModel`'s Observable — with a throw inside accumulation:
 * one error, as it is, never an unhandled exception, never a retryable `ModelCallError`.
 */
import { describe, expect, it } from 'vitest';
import { delay, lastValueFrom, of, toArray, type Observable } from 'rxjs';
import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import { makeChunk } from '../../src/contract/make-chunk.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { MessageList } from '../../src/message-list/message-list.js';
import { ModelCallError } from '../../src/model/errors/model-call-error.js';
import type { ModelEvent } from '../../src/model/model-events.js';
import { newToolCallIds } from '../../src/model/model-part-to-chunk.js';
import { callModel, liveReadOf } from '../../src/model/stream-model.js';
import { createRunContext } from '../../src/operators/run-context.js';
import { newAttempt, type AttemptState } from '../../src/loop/data/attempt-state.js';
import { createOutputChain } from '../../src/loop/step/output-chain.js';
import { stepOutput, type StepOutputOptions } from '../../src/loop/step/step-output.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { createTestScheduler } from '../../src/testing/test-scheduler.js';

const R = 'run-1';
const S = makeChunk(R, 'step-start', { stepNumber: 0, messageId: 'm1' });
const [textStart, textDelta, textEnd] = textParts('hi', { id: 't' }) as [LanguageModelV4StreamPart, LanguageModelV4StreamPart, LanguageModelV4StreamPart];

/** Model events by marble letter. */
const e: Record<string, ModelEvent> = {
  i: { type: 'call-info', request: { body: { n: 1 } }, response: { headers: { 'x-id': 'r1' } } },
  w: { type: 'stream-start', warnings: [{ type: 'other', message: 'careful' }] },
  o: textStart,
  d: textDelta,
  c: textEnd,
  k: { type: 'tool-call', toolCallId: 'call-1', toolName: 'echo', input: '{"x":1}' },
  f: finishPart('stop'),
  x: { type: 'error', error: new Error('overloaded') },
  m: { type: 'file', mediaType: 'image/png', data: undefined } as unknown as ModelEvent, // malformed: no data
};

/** The chunks by marble letter. */
const c: Record<string, ChunkType> = {
  S,
  O: makeChunk(R, 'text-start', { id: 't' }),
  D: makeChunk(R, 'text-delta', { id: 't', text: 'hi' }),
  C: makeChunk(R, 'text-end', { id: 't' }),
  K: makeChunk(R, 'tool-call', { toolCallId: 'call-1', toolName: 'echo', args: { x: 1 } }),
};

interface Setup {
  attempt: AttemptState;
  kernel: (processors?: Processor[], extra?: Partial<StepOutputOptions>) => (events$: Observable<ModelEvent>) => Observable<ChunkType>;
}

function setup(): Setup {
  const ctx = createRunContext({ runId: R });
  const attempt = newAttempt({ stepNumber: 0, messageId: 'm1', boundary: new MessageList().openStepBoundary(), keepChunks: false });
  return {
    attempt,
    kernel: (processors = [], extra = {}) =>
      stepOutput({ runId: R, attempt, chain: createOutputChain(processors, ctx), toolCallIds: newToolCallIds(), lead: () => [S], ...extra }),
  };
}

const scheduler = () => createTestScheduler(expect);

describe('stepOutput(): marble checklist', () => {
  it('an empty call: the lead, then completion', () => {
    const { kernel } = setup();
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<ModelEvent>('|').pipe(kernel())).toBe('(S|)', c);
    });
  });

  it('a call that never ends: the lead, then silence', () => {
    const { kernel } = setup();
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<ModelEvent>('-').pipe(kernel())).toBe('S', c);
    });
  });

  it('one and many events: every chunk in the frame its part arrives; facts emit nothing', () => {
    const { kernel, attempt } = setup();
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('iw-o-d-c-(f|)', e).pipe(kernel())).toBe('S--O-D-C-|', c);
    });
    expect(attempt.facts).toMatchObject({
      finishReason: 'stop',
      finished: true,
      warnings: [{ type: 'other', message: 'careful' }],
      request: { body: { n: 1 } },
      rawResponse: { headers: { 'x-id': 'r1' } },
    });
    expect(attempt.accumulator.text).toBe('hi');
    expect(attempt.opened).toBe(true);
  });

  it('the call failing is a ModelCallError carrying the provider error', () => {
    const { kernel } = setup();
    const overloaded = new Error('overloaded');
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-o-#', e, overloaded).pipe(kernel())).toBe('SO-#', c, new ModelCallError({ cause: overloaded }));
    });
  });

  it('unsubscribing mid-call unsubscribes the call in the same frame', () => {
    const { kernel } = setup();
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const events = cold('-o-d-c-(f|)', e);
      expectObservable(events.pipe(kernel()), '^--!').toBe('SO', c);
      expectSubscriptions(events.subscriptions).toBe('^--!');
    });
  });

  it('resubscribing starts over (a retried attempt reads its call again)', () => {
    const { kernel } = setup();
    scheduler().run(({ cold, expectObservable }) => {
      const result = cold('-o|', e).pipe(kernel());
      expectObservable(result).toBe('SO|', c);
      expectObservable(result).toBe('SO|', c);
    });
  });
});

describe('stepOutput(): the run rules', () => {
  it('an error part ends the call as a ModelCallError (processAPIError may retry it)', () => {
    const { kernel } = setup();
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const events = cold('-o-x-c-|', e);
      expectObservable(events.pipe(kernel())).toBe('SO-#', c, new ModelCallError({ cause: (e['x'] as { error: unknown }).error, source: 'stream-part' }));
      expectSubscriptions(events.subscriptions).toBe('^--!');
    });
  });

  it('a part that does not convert ends the call as a ModelCallError', () => {
    const { kernel } = setup();
    let error: unknown;
    scheduler().run(({ cold }) => {
      cold('-o-m-c-|', e).pipe(kernel()).subscribe({ error: (thrown: unknown) => (error = thrown) });
    });
    expect(ModelCallError.isInstance(error)).toBe(true);
  });

  it('a processor hook that throws is its ProcessorError; the chunk it checked never passes', () => {
    const broken: Processor = {
      id: 'broken',
      processOutputStream: ({ part }) => {
        if (part.type === 'text-delta') throw new Error('bug');
        return part;
      },
    };
    const { kernel } = setup();
    let error: unknown;
    const seen: string[] = [];
    scheduler().run(({ cold }) => {
      cold('-o-d-c-|', e)
        .pipe(kernel([broken]))
        .subscribe({ next: (chunk) => seen.push(chunk.type), error: (thrown: unknown) => (error = thrown) });
    });
    expect(seen).toEqual(['step-start', 'text-start']);
    expect(error).toSatisfy((thrown: unknown) => ProcessorError.isInstance(thrown));
    expect(error).toMatchObject({ processorId: 'broken', hook: 'processOutputStream' });
  });

  it('the fence: a processor cannot invent a tool call or a run-level chunk', () => {
    const inventor: Processor = {
      id: 'inventor',
      processOutputStream: ({ part }) => {
        if (part.type === 'text-start') return makeChunk(R, 'tool-call', { toolCallId: 'forged', toolName: 'rm', args: {} });
        if (part.type === 'text-end') return makeChunk(R, 'finish', { stepResult: { reason: 'stop' }, output: { usage: undefined as never, text: '' } });
        return part;
      },
    };
    const { kernel, attempt } = setup();
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-o-d-c-k-(f|)', e).pipe(kernel([inventor]))).toBe('S--D---K-|', c);
    });
    expect(attempt.accumulator.toolCalls.map((call) => call.toolCallId)).toEqual(['call-1']);
  });

  it('a source error waits for the chunks before it (a hook still working on them)', () => {
    const slow: Processor = { id: 'slow', processOutputStream: ({ part }) => of(part).pipe(delay(3)) };
    const { kernel } = setup();
    const overloaded = new Error('overloaded');
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-o#', e, overloaded).pipe(kernel([slow]))).toBe('---S--(O#)', c, new ModelCallError({ cause: overloaded }));
    });
  });

  it('structured output: an object chunk after each delta that changes the partial value', () => {
    const { kernel } = setup();
    const json: Record<string, ModelEvent> = {
      o: { type: 'text-start', id: 'j' },
      a: { type: 'text-delta', id: 'j', delta: '{"city":' },
      b: { type: 'text-delta', id: 'j', delta: '"Oslo"}' },
    };
    const seen: string[] = [];
    scheduler().run(({ cold }) => {
      cold('-o-a-b|', json)
        .pipe(kernel([], { partialObjects: true }))
        .subscribe((chunk) => seen.push(chunk.type === 'object' ? `object ${JSON.stringify(chunk.payload.object)}` : chunk.type));
    });
    expect(seen).toEqual(['step-start', 'text-start', 'text-delta', 'object {}', 'text-delta', 'object {"city":"Oslo"}']);
  });

  it('a throw inside accumulation is one error, as it is (not a ModelCallError, so nothing retries it)', () => {
    const { kernel, attempt } = setup();
    const bug = new Error('accumulator bug');
    attempt.accumulator.observe = (chunk) => {
      if (chunk.type === 'text-delta') throw bug;
      return undefined;
    };
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const events = cold('-o-d-c-|', e);
      expectObservable(events.pipe(kernel())).toBe('SO-#', c, bug);
      expectSubscriptions(events.subscriptions).toBe('^--!');
    });
  });
});

describe('stepOutput(): the live path (the provider web stream read behind callModel)', () => {
  const parts = [...textParts('hello world', { id: 't' }), finishPart('stop')];

  /** A V4 model with only `doStream` (no virtual-time fast path): `callModel` reads its web stream. */
  function liveModel(wrap: (stream: ReadableStream<LanguageModelV4StreamPart>) => ReadableStream<LanguageModelV4StreamPart> = (stream) => stream): LanguageModelV4 {
    const base = mockModel({ parts });
    return {
      specificationVersion: 'v4',
      provider: 'test',
      modelId: 'live',
      supportedUrls: {},
      doGenerate: (options) => base.doGenerate(options),
      doStream: async (options) => {
        const result = await base.doStream(options);
        return { ...result, stream: wrap(result.stream) };
      },
    };
  }

  it('gives the same chunks as the Observable path', async () => {
    const live = setup();
    const viaObservable = setup();
    const model = liveModel();
    expect(liveReadOf(callModel(model, { prompt: [] }))).toBeTypeOf('function');
    const liveChunks = await lastValueFrom(callModel(model, { prompt: [] }).pipe(live.kernel(), toArray()));
    const observableChunks = await lastValueFrom(of<ModelEvent[]>({ type: 'call-info' }, ...parts).pipe(viaObservable.kernel(), toArray()));
    expect(liveChunks).toEqual(observableChunks);
    expect(live.attempt.facts.finishReason).toBe('stop');
  });

  it('a throw inside accumulation is one error, as it is; the provider stream is cancelled; nothing unhandled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { kernel, attempt } = setup();
      const bug = new Error('accumulator bug');
      attempt.accumulator.observe = (chunk) => {
        if (chunk.type === 'text-delta') throw bug;
        return undefined;
      };
      let cancelled = false;
      const model = liveModel((stream) => {
        const reader = stream.getReader();
        return new ReadableStream({
          pull: async (controller) => {
            const next = await reader.read();
            if (next.done) controller.close();
            else controller.enqueue(next.value);
          },
          cancel: () => {
            cancelled = true;
          },
        });
      });
      const error = await lastValueFrom(callModel(model, { prompt: [] }).pipe(kernel())).catch((thrown: unknown) => thrown);
      expect(error).toBe(bug);
      expect(ModelCallError.isInstance(error)).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(cancelled).toBe(true);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
