/**
 * Hooks may return an Observable (or an interop observable): its first value is the result, an
 * empty completion counts as `undefined`, an error is a throw (a TripWire stays a tripwire, anything
 * else a ProcessorError). Timed by the Observable's own scheduler: virtual time under TestScheduler.
 */
import { describe, expect, it } from 'vitest';
import { delay, EMPTY, ignoreElements, map, NEVER, observable, of, throwError, timer, type Observable } from 'rxjs';
import { demandOf } from '../../src/operators/demand.js';
import { processInput, runProcessInput } from '../../src/operators/process-input.js';
import { processInputStep, type StepInput } from '../../src/operators/process-input-step.js';
import { processOutputStream } from '../../src/operators/process-output-stream.js';
import { retryOnAPIError } from '../../src/operators/retry-on-api-error.js';
import { ProcessorError } from '../../src/contract/errors/processor-error.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import type { Processor } from '../../src/contract/processor-types.js';
import { chunk } from '../../src/testing/chunk-builders.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { runProcessor } from '../../src/testing/run-processor.js';
import { createTestScheduler } from '../../src/testing/test-scheduler.js';
import { idsAndTexts, listWith, record, testContext, user } from './helpers.js';

const upperText = (part: ChunkType): ChunkType =>
  part.type === 'text-delta' ? { ...part, payload: { ...part.payload, text: part.payload.text.toUpperCase() } } : part;

const a = chunk.textDelta('a');
const b = chunk.textDelta('b');
const A = chunk.textDelta('A');
const B = chunk.textDelta('B');

describe('processOutputStream with Observable results (marbles)', () => {
  it('a delayed Observable runs on virtual time: one chunk at a time, in order, exact frames', () => {
    const slowUpper: Processor = { id: 'slow-upper', processOutputStream: ({ part }) => of(upperText(part)).pipe(delay(3)) };
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-b|', { a, b });
      // a enters at 1 and leaves at 4; b waited its turn (arrived at 3), enters at 4, leaves at 7
      expectObservable(source.pipe(processOutputStream([slowUpper], testContext()))).toBe('----A--(B|)', { A, B });
      expectSubscriptions(source.subscriptions).toBe('^---!');
    });
  });

  it('an Observable that settles at once (of) is a synchronous result: no frame added', () => {
    const upper: Processor = { id: 'upper', processOutputStream: ({ part }) => of(upperText(part)) };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-a-b|', { a, b }).pipe(processOutputStream([upper], testContext()))).toBe('-A-B|', { A, B });
    });
  });

  it('takes the first value and unsubscribes from the rest', () => {
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const answer = cold('--x-y|', { x: A, y: B });
      const first: Processor = { id: 'first', processOutputStream: () => answer };
      expectObservable(cold('a|', { a }).pipe(processOutputStream([first], testContext()))).toBe('--(A|)', { A });
      expectSubscriptions(answer.subscriptions).toBe('^-!');
    });
  });

  it('an Observable erroring with a TripWire (or calling abort inside) ends the stream with the tripwire', () => {
    const thrown: Processor = { id: 'thrown', processOutputStream: () => timer(2).pipe(map(() => { throw new TripWire('blocked later'); })) };
    const aborted: Processor = { id: 'aborted', processOutputStream: ({ abort }) => timer(2).pipe(map(() => abort('nope'))) };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-a|', { a }).pipe(processOutputStream([thrown], testContext()))).toBe(
        '---#',
        undefined,
        new TripWire('blocked later', {}, 'thrown'),
      );
      expectObservable(cold('-a|', { a }).pipe(processOutputStream([aborted], testContext()))).toBe('---#', undefined, new TripWire('nope', {}, 'aborted'));
    });
  });

  it('any other Observable error is a ProcessorError (fail closed)', () => {
    const failing: Processor = { id: 'failing', processOutputStream: () => throwError(() => new Error('classifier down')).pipe(delay(0)) };
    const lateFailing: Processor = { id: 'late', processOutputStream: () => timer(2).pipe(map(() => { throw new Error('classifier down'); })) };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      // an immediate error is a synchronous throw (delay does not delay errors)
      expectObservable(cold('-a|', { a }).pipe(processOutputStream([failing], testContext()))).toBe(
        '-#',
        undefined,
        ProcessorError.fromThrown('failing', 'processOutputStream', new Error('classifier down')),
      );
      expectObservable(cold('-a|', { a }).pipe(processOutputStream([lateFailing], testContext()))).toBe(
        '---#',
        undefined,
        ProcessorError.fromThrown('late', 'processOutputStream', new Error('classifier down')),
      );
    });
  });

  it('an Observable completing without a value counts as undefined: the chunk is dropped (a lifecycle chunk is kept)', () => {
    const finish = chunk.finish();
    const dropAll: Processor = { id: 'drop-all', processOutputStream: () => timer(2).pipe(ignoreElements()) };
    const dropNow: Processor = { id: 'drop-now', processOutputStream: () => EMPTY };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-a-f|', { a, f: finish }).pipe(processOutputStream([dropAll], testContext()))).toBe('-----(f|)', { f: finish });
      expectObservable(cold('-a-b|', { a, b }).pipe(processOutputStream([dropNow], testContext()))).toBe('----|');
    });
  });

  it('with a tracer attached, a pending Observable is traced when it settles (and keeps virtual time)', () => {
    const outcomes: string[] = [];
    const tracingContext = { onHook: ({ outcome }: { outcome: string }) => void outcomes.push(outcome) };
    const dropLater: Processor = { id: 'drop-later', processOutputStream: ({ part }) => timer(2).pipe(map(() => (part === a ? null : part))) };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-a-b|', { a, b }).pipe(processOutputStream([dropLater], testContext({ tracingContext })))).toBe('-----(b|)', { b });
    });
    expect(outcomes).toEqual(['drop', 'pass']);
  });

  it('processorTimeoutMs bounds a pending Observable on the run scheduler', () => {
    const scheduler = createTestScheduler(expect);
    const stuck: Processor = { id: 'stuck', processOutputStream: () => NEVER };
    scheduler.run(({ cold, expectObservable }) => {
      const ctx = testContext({ processorTimeoutMs: 5, scheduler });
      expectObservable(cold('-a|', { a }).pipe(processOutputStream([stuck], ctx))).toBe(
        '------#',
        undefined,
        new ProcessorError('stuck', 'processOutputStream', 'did not settle within processorTimeoutMs (5 ms); failing closed.'),
      );
    });
  });

  it('early unsubscription cancels the pending Observable', () => {
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const answer = cold('-----x|', { x: A });
      const slow: Processor = { id: 'slow', processOutputStream: () => answer };
      expectObservable(cold('a|', { a }).pipe(processOutputStream([slow], testContext())), '^--!').toBe('---');
      expectSubscriptions(answer.subscriptions).toBe('^--!');
    });
  });

  it('accepts an interop observable (Symbol.observable), and a later processor sees the result', () => {
    const interop: Processor = {
      id: 'interop',
      processOutputStream: ({ part }) => ({ [observable]: () => of(upperText(part)) }) as unknown as Observable<ChunkType>,
    };
    const seen: ChunkType[] = [];
    const spy: Processor = { id: 'spy', processOutputStream: ({ part }) => (seen.push(part), part) };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-a|', { a }).pipe(processOutputStream([interop, spy], testContext()))).toBe('-A|', { A });
    });
    expect(seen).toEqual([A]);
  });
});

describe('message hooks with Observable results (marbles)', () => {
  it('processInput returning an Observable of messages: reconciled on virtual time', () => {
    const rewrite: Processor = {
      id: 'rewrite',
      processInput: ({ messages }) => of(messages.map((message) => ({ ...message, content: { ...message.content, parts: [{ type: 'text' as const, text: 'rewritten' }] } }))).pipe(delay(4)),
    };
    const list = listWith([user('u1', 'hello')]);
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('-l|', { l: list }).pipe(processInput([rewrite], testContext()))).toBe('-----(l|)', { l: list });
    });
    expect(idsAndTexts(list.get.input.db())).toEqual([['u1', 'rewritten']]);
  });

  it('processInput: runProcessInput stays synchronous for of(), and gives a promise for a pending Observable', async () => {
    const now: Processor = { id: 'now', processInput: ({ messages }) => of([...messages, user('u2', 'added')]) };
    const later: Processor = { id: 'later', processInput: ({ messages }) => timer(1).pipe(map(() => [...messages, user('u3', 'later')])) };
    const list = listWith([user('u1', 'hello')]);
    const synchronous = runProcessInput([now], testContext(), list);
    expect(synchronous).toBe(list);
    const pending = runProcessInput([later], testContext(), list);
    expect(pending).toBeInstanceOf(Promise);
    expect(await pending).toBe(list);
    expect(idsAndTexts(list.get.input.db()).map(([id]) => id)).toEqual(['u1', 'u2', 'u3']);
  });

  it('processInputStep: an Observable erroring with a TripWire is a tripwire; an empty one changes nothing', () => {
    const blocked: Processor = { id: 'blocked', processInputStep: () => timer(2).pipe(map(() => { throw new TripWire('no step'); })) };
    const quiet: Processor = { id: 'quiet', processInputStep: () => timer(2).pipe(ignoreElements()) };
    const step: StepInput = { stepNumber: 0, model: mockModel({ modelId: 'base' }) };
    createTestScheduler(expect).run(({ cold, expectObservable }) => {
      expectObservable(cold('s|', { s: step }).pipe(processInputStep([blocked], testContext({ llmRequestStage: false })))).toBe(
        '--#',
        undefined,
        new TripWire('no step', {}, 'blocked'),
      );
      expectObservable(cold('s|', { s: step }).pipe(processInputStep([quiet], testContext({ llmRequestStage: false })))).toBe('--(s|)', { s: step });
    });
  });

  it('processAPIError answering { retry: true } through a delayed Observable resubscribes on virtual time', () => {
    const failure = new Error('rate limited');
    const later: Processor = { id: 'later', processAPIError: () => of({ retry: true }).pipe(delay(2)) };
    createTestScheduler(expect).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-#', undefined, failure);
      // fails at 1, the answer arrives 2 frames later (3): resubscribed, fails again at 4, budget spent
      expectObservable(source.pipe(retryOnAPIError([later], testContext({ maxProcessorRetries: 1 })))).toBe('----#', undefined, failure);
      expectSubscriptions(source.subscriptions).toBe(['^!', '---^!']);
    });
  });

  it('runProcessor (rxagent/testing) reports an Observable hook by its first value', async () => {
    const observed: Processor = { id: 'observed', processOutputStream: ({ part }) => of(upperText(part)) };
    const outcome = await runProcessor(observed, 'processOutputStream', { part: a });
    expect(outcome.result).toEqual(A);
  });
});

describe('per-run machinery lives on the run context', () => {
  it('processor state persists across the subscriptions of one run; two runs never share it', () => {
    const counter: Processor = {
      id: 'counter',
      processOutputStream: ({ part, state }) => {
        const seen = ((state.seen as number | undefined) ?? 0) + 1;
        state.seen = seen;
        return part.type === 'text-delta' ? { ...part, payload: { ...part.payload, text: `${part.payload.text}${seen}` } } : part;
      },
    };
    const processors = [counter];
    const first = testContext();
    const second = testContext();
    const texts = (ctx: ReturnType<typeof testContext>): string[] => {
      const recording = record(of(a, b).pipe(processOutputStream(processors, ctx)));
      return recording.values.map((part) => (part.type === 'text-delta' ? part.payload.text : part.type));
    };
    expect(texts(first)).toEqual(['a1', 'b2']);
    expect(texts(first)).toEqual(['a3', 'b4']); // the loop's next step: same run, same chain
    expect(texts(second)).toEqual(['a1', 'b2']); // another run starts clean
  });

  it('each run context has its own demand gate, kept off its enumerable fields', () => {
    const first = testContext();
    const second = testContext();
    expect(demandOf(first)).toBe(demandOf(first));
    expect(demandOf(first)).not.toBe(demandOf(second));
    const holder = {};
    demandOf(first).hold(holder);
    expect(demandOf(first).open).toBe(false);
    expect(demandOf(second).open).toBe(true);
    demandOf(first).release(holder);
    // not a public field: a spread copy is not a run context
    expect(() => demandOf({ ...first })).toThrow(TypeError);
  });
});
