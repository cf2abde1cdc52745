/**
 * The public operators of `rxagent/loop` (`endWithTerminal`, `closeBrackets`, `orderedMergeMap`, the
 * run's phases and `isStepEnd`) under a hostile composer: callbacks that throw, sources that error
 * after partial output, synchronous re-entrant emissions, consumers that leave from inside a next
 * handler, chunks after a terminal, odd concurrency bounds, very long synchronous streams, and
 * teardown counted with `finalize`. Each test asserts the operator's documented contract (its JSDoc).
 *
 * A throw inside an observer RxJS wraps is not an error notification: it is reported through
 * `config.onUnhandledError` (an uncaught exception by default) while the stream goes on. Every test
 * here also asserts that nothing was reported that way.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  EMPTY,
  NEVER,
  Observable,
  Subject,
  concat,
  config,
  defer,
  expand,
  filter,
  finalize,
  from,
  lastValueFrom,
  map,
  of,
  range,
  take,
  tap,
  throwError,
  toArray,
  type ObservableInput,
} from 'rxjs';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { makeChunk } from '../../src/contract/make-chunk.js';
import { emptyUsage } from '../../src/model/usage.js';
import { Agent } from '../../src/loop/agent.js';
import type { Processor } from '../../src/contract/processor-types.js';
import {
  closeBrackets,
  endWithTerminal,
  isStepEnd,
  orderedMergeMap,
  runCommit,
  runFailed,
  runInput,
  runStep,
  withAgentRun,
  type AgentRun,
  type StepEnd,
} from '../../src/loop/public.js';
import { MissingTerminalError } from '../../src/loop/run/missing-terminal-error.js';
import { mockModel } from '../../src/testing/mock-model.js';
import { finishPart, textParts } from '../../src/testing/model-parts.js';
import { createTestScheduler } from '../../src/testing/test-scheduler.js';

const R = 'r';
const boom = new Error('boom');

const start = (): ChunkType => makeChunk(R, 'start', {});
const delta = (text = 'a', id = 't'): ChunkType => makeChunk(R, 'text-delta', { id, text });
const finish = (): ChunkType => makeChunk(R, 'finish', { stepResult: { reason: 'stop' }, output: { usage: emptyUsage(), text: '' } });
const errorChunk = (error: unknown): ChunkType => makeChunk(R, 'error', { error });
const stepStart = (stepNumber = 0): ChunkType => makeChunk(R, 'step-start', { stepNumber });

/** The chunks by marble letter. */
const v: Record<string, ChunkType> = {
  S: start(),
  a: delta('a'),
  b: delta('b'),
  F: finish(),
  X: errorChunk(boom),
  M: errorChunk(new MissingTerminalError()),
};

const scheduler = () => createTestScheduler(expect);

/** What a subscription saw, recorded synchronously. */
interface Seen<T> {
  values: T[];
  error?: unknown;
  completed: boolean;
}

function record<T>(source: Observable<T>): Seen<T> {
  const seen: Seen<T> = { values: [], completed: false };
  source.subscribe({
    next: (value) => seen.values.push(value),
    error: (error: unknown) => {
      seen.error = error;
    },
    complete: () => {
      seen.completed = true;
    },
  });
  return seen;
}

const typesOf = (values: readonly unknown[]): string[] =>
  values.map((value) => (typeof value === 'object' && value !== null && 'type' in value ? String(value.type) : String(value)));

let unhandled: unknown[] = [];
let previousOnUnhandledError: typeof config.onUnhandledError;

beforeEach(() => {
  unhandled = [];
  previousOnUnhandledError = config.onUnhandledError;
  config.onUnhandledError = (error: unknown) => {
    unhandled.push(error);
  };
});

afterEach(async () => {
  // RxJS reports an unhandled error on a timeout: let it land before looking
  await new Promise((resolve) => setTimeout(resolve, 0));
  config.onUnhandledError = previousOnUnhandledError;
  expect(unhandled, 'errors reported as unhandled instead of notified').toEqual([]);
});

describe('orderedMergeMap(): hostile projects', () => {
  it('a project that throws synchronously errors the result, and no later project is called', () => {
    const called: number[] = [];
    const seen = record(
      from([1, 2, 3]).pipe(
        orderedMergeMap((value: number) => {
          called.push(value);
          if (value === 2) throw boom;
          return of(value * 10);
        }, 1),
      ),
    );
    expect(seen.values).toEqual([10]);
    expect(seen.error).toBe(boom);
    expect(called).toEqual([1, 2]);
  });

  it('a project that returns something that is not an ObservableInput errors the result with a TypeError', () => {
    const seen = record(of(1).pipe(orderedMergeMap(() => undefined as unknown as ObservableInput<number>, 1)));
    expect(seen.error).toBeInstanceOf(TypeError);
    expect(seen.completed).toBe(false);
  });

  it('already-completed (EMPTY), already-erroring and never-completing projects (marbles)', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      // EMPTY emits nothing for its value and holds nothing back
      expectObservable(cold('(ab|)').pipe(orderedMergeMap<string, string>((value) => (value === 'a' ? EMPTY : cold('-B|')), 2))).toBe('--(B|)');
      // an erroring project errors the result in its frame, the one in flight is unsubscribed
      const slow = cold('-----A|');
      expectObservable(cold('(ab|)').pipe(orderedMergeMap<string, string>((value) => (value === 'a' ? slow : throwError(() => boom)), 2))).toBe('#', undefined, boom);
      expectSubscriptions(slow.subscriptions).toBe('(^!)');
      // a never-completing project holds every later result: source order is the contract
      expectObservable(cold('(ab|)').pipe(orderedMergeMap((value: string) => (value === 'a' ? NEVER : of('B')), 2))).toBe('-');
    });
  });

  it('a project that errors after earlier results were emitted: those stay, the rest are unsubscribed (finalize counted)', () => {
    let finalized = 0;
    scheduler().run(({ cold, expectObservable }) => {
      const projects: Record<string, string> = { a: '-A|', b: '---#', c: '-----C|' };
      const result = cold('(abc|)').pipe(orderedMergeMap((value: string) => cold(projects[value] as string).pipe(finalize(() => finalized++)), 3));
      expectObservable(result).toBe('--A#', undefined, 'error');
    });
    expect(finalized).toBe(3);
  });

  it('a project that emits many values gives its last one (promises too, a rejection errors)', async () => {
    const values = await lastValueFrom(from([1, 2]).pipe(orderedMergeMap((value: number) => (value === 1 ? of(1, 2, 3) : Promise.resolve(20)), 2), toArray()));
    expect(values).toEqual([3, 20]);
    await expect(lastValueFrom(of(1).pipe(orderedMergeMap(() => Promise.reject(boom), 1)))).rejects.toBe(boom);
  });
});

describe('orderedMergeMap(): the concurrency bound', () => {
  it('0, negative, -Infinity and NaN are a RangeError when the operator is made', () => {
    for (const bound of [0, -1, 0.5, Number.NEGATIVE_INFINITY, Number.NaN]) {
      expect(() => orderedMergeMap((value: number) => of(value), bound), String(bound)).toThrow(RangeError);
    }
  });

  it('Infinity subscribes every project at once (marbles)', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a = cold('---A|');
      const b = cold('-B|');
      const c = cold('--C|');
      const projects: Record<string, typeof a> = { a, b, c };
      expectObservable(cold('(abc|)').pipe(orderedMergeMap((value: string) => projects[value] as typeof a, Number.POSITIVE_INFINITY))).toBe('----(ABC|)');
      expectSubscriptions(a.subscriptions).toBe('^---!');
      expectSubscriptions(b.subscriptions).toBe('^-!');
      expectSubscriptions(c.subscriptions).toBe('^--!');
    });
  });

  it('a bound of 1.5 subscribes at most one project at once ("most projects subscribed at once")', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a = cold('--A|');
      const b = cold('--B|');
      const projects: Record<string, typeof a> = { a, b };
      expectObservable(cold('(ab|)').pipe(orderedMergeMap((value: string) => projects[value] as typeof a, 1.5))).toBe('---A--(B|)');
      expectSubscriptions(b.subscriptions).toBe('---^--!');
    });
  });
});

describe('orderedMergeMap(): unsubscription and teardown', () => {
  it('a consumer that leaves inside a next handler (take(1)) stops a synchronous source at once', () => {
    let pulled = 0;
    let projected = 0;
    const seen = record(
      range(0, 100_000).pipe(
        tap(() => pulled++),
        orderedMergeMap((value: number) => (projected++, of(value)), 1),
        take(1),
      ),
    );
    expect(seen.values).toEqual([0]);
    expect(projected).toBe(1);
    expect(pulled).toBe(1);
  });

  it('a result that errors during a synchronous source stops that source at once', () => {
    let pulled = 0;
    const seen = record(
      range(0, 100_000).pipe(
        tap(() => pulled++),
        orderedMergeMap((value: number) => (value === 1 ? throwError(() => boom) : of(value)), 1),
      ),
    );
    expect(seen.error).toBe(boom);
    expect(pulled).toBe(2);
  });

  it('every project subscription is released: on completion, on unsubscription, on a source error', () => {
    let subscribed = 0;
    let finalized = 0;
    const counted = <T>(inner: Observable<T>) =>
      defer(() => {
        subscribed++;
        return inner;
      }).pipe(finalize(() => finalized++));

    const done = record(range(0, 10).pipe(orderedMergeMap((value: number) => counted(of(value)), 3)));
    expect(done.values).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect([subscribed, finalized]).toEqual([10, 10]);

    const gate = new Subject<number>();
    const left = gate.pipe(orderedMergeMap(() => counted(NEVER), 4)).subscribe();
    gate.next(1);
    gate.next(2);
    gate.next(3);
    left.unsubscribe();
    expect([subscribed, finalized]).toEqual([13, 13]);
    expect(gate.observed).toBe(false);

    const failing = new Subject<number>();
    const errored = record(failing.pipe(orderedMergeMap(() => counted(NEVER), 4)));
    failing.next(1);
    failing.next(2);
    failing.error(boom);
    expect(errored.error).toBe(boom);
    expect([subscribed, finalized]).toEqual([15, 15]);
  });
});

describe('orderedMergeMap(): re-entrancy and long synchronous streams', () => {
  it('a source fed back from the result’s next handler (a Subject) keeps source order and completes', () => {
    const source = new Subject<number>();
    const seen: number[] = [];
    let completed = false;
    source.pipe(orderedMergeMap((value: number) => of(value), 2)).subscribe({
      next: (value) => {
        seen.push(value);
        if (value < 5) source.next(value + 1);
        else source.complete();
      },
      complete: () => {
        completed = true;
      },
    });
    source.next(0);
    expect(seen).toEqual([0, 1, 2, 3, 4, 5]);
    expect(completed).toBe(true);
  });

  it('100,000 synchronous values with synchronous projects, bound 1 and Infinity', () => {
    for (const bound of [1, Number.POSITIVE_INFINITY]) {
      const seen = record(range(0, 100_000).pipe(orderedMergeMap((value: number) => of(value), bound)));
      expect(seen.values).toHaveLength(100_000);
      expect(seen.values.at(-1)).toBe(99_999);
      expect(seen.completed).toBe(true);
    }
  });

  it('a backlog of 100,000 synchronous projects, released when the first (asynchronous) one completes, does not overflow the stack', () => {
    const gate = new Subject<number>();
    const seen = record(range(0, 100_000).pipe(orderedMergeMap((value: number, index) => (index === 0 ? gate : of(value)), 1)));
    expect(seen.values).toEqual([]);
    gate.next(0);
    gate.complete();
    expect(seen.error).toBeUndefined();
    expect(seen.values).toHaveLength(100_000);
    expect(seen.completed).toBe(true);
  });
});

describe('endWithTerminal(): callbacks that throw', () => {
  it('a `then` that throws errors the result after the terminal chunk (it does not leave it open)', () => {
    const thrown = new Error('then');
    const seen = record(
      of(start(), finish()).pipe(
        endWithTerminal({
          runId: R,
          then: (): never => {
            throw thrown;
          },
        }),
      ),
    );
    expect(typesOf(seen.values)).toEqual(['start', 'finish']);
    expect(seen.error).toBe(thrown);
  });

  it('an `onError` that throws is an error of its chunks: it becomes its own terminal chunk (marbles)', () => {
    const thrown = new Error('onError');
    scheduler().run(({ cold, expectObservable }) => {
      const onError = (): ObservableInput<ChunkType> => {
        throw thrown;
      };
      expectObservable(cold('-S-a-#', v, boom).pipe(endWithTerminal({ runId: R, onError }))).toBe('-S-a-(Y|)', { ...v, Y: errorChunk(thrown) });
    });
  });

  it('an `onError` that returns something that is not an ObservableInput ends with an error chunk', () => {
    const seen = record(
      throwError(() => boom).pipe(endWithTerminal({ runId: R, onError: () => undefined as unknown as ObservableInput<ChunkType> })),
    );
    expect(typesOf(seen.values)).toEqual(['start', 'error']);
    expect((seen.values[1] as ChunkType & { type: 'error' }).payload.error).toBeInstanceOf(TypeError);
    expect(seen.completed).toBe(true);
  });

  it('a `runId` function that throws errors the result (it does not leave it open)', () => {
    const thrown = new Error('runId');
    const seen = record(
      of(delta()).pipe(
        endWithTerminal({
          runId: (): string => {
            throw thrown;
          },
        }),
      ),
    );
    expect(seen.values).toEqual([]);
    expect(seen.error).toBe(thrown);
  });

  it('a value that is not a chunk (null) errors the result rather than being dropped with an uncaught exception', () => {
    const seen = record(of(start(), null as unknown as ChunkType, finish()).pipe(endWithTerminal({ runId: R })));
    expect(typesOf(seen.values)).toEqual(['start']);
    expect(seen.error).toBeInstanceOf(TypeError);
  });
});

describe('endWithTerminal(): re-entrancy, unsubscription, chunks after the terminal', () => {
  it('a terminal chunk fed back while the made start is out: one terminal, and `then` is asked once', () => {
    const source = new Subject<ChunkType>();
    let made = 0;
    const seen: string[] = [];
    source.pipe(endWithTerminal({ runId: R, then: () => (made++, 'E') })).subscribe((value) => {
      seen.push(typeof value === 'string' ? value : value.type);
      if (typeof value !== 'string' && value.type === 'start') source.next(errorChunk(boom));
    });
    source.next(finish());
    expect(seen).toEqual(['start', 'error', 'E']);
    expect(made).toBe(1);
  });

  it('chunks after a terminal, a second terminal and a second start are never pulled or passed (synchronous source)', () => {
    let pulled = 0;
    const seen = record(
      from([delta(), start(), finish(), finish(), delta(), errorChunk(boom)]).pipe(
        tap(() => pulled++),
        endWithTerminal({ runId: R }),
      ),
    );
    expect(typesOf(seen.values)).toEqual(['start', 'text-delta', 'finish']);
    expect(seen.completed).toBe(true);
    expect(pulled).toBe(3);
  });

  it('a consumer that leaves inside a next handler (take(2)) stops a synchronous source of 100,000 chunks', () => {
    let pulled = 0;
    const seen = record(
      range(0, 100_000).pipe(
        tap(() => pulled++),
        map((n) => delta(String(n))),
        endWithTerminal({ runId: R, closeBrackets: true }),
        take(3),
      ),
    );
    expect(typesOf(seen.values)).toEqual(['start', 'text-start', 'text-delta']);
    expect(pulled).toBe(1);
  });

  it('100,000 synchronous chunks: one start, one terminal, no stack overflow (with and without closeBrackets)', () => {
    const chunks = Array.from({ length: 100_000 }, (_, index) => delta(String(index)));
    for (const fused of [false, true]) {
      const seen = record(from(chunks).pipe(endWithTerminal({ runId: R, closeBrackets: fused })));
      const types = typesOf(seen.values);
      expect(types.filter((type) => type === 'start')).toHaveLength(1);
      expect(types.at(-1)).toBe('error');
      expect(types.filter((type) => type === 'error')).toHaveLength(1);
      expect(seen.completed).toBe(true);
    }
  });

  it('a source that errors after partial output, bracketed: closers, then the error chunk; source and onError’s chunks released once', () => {
    let sourceReleased = 0;
    let onErrorReleased = 0;
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold('-P-----a-----#', { ...v, P: stepStart() }, boom).pipe(finalize(() => sourceReleased++));
      const onError = (error: unknown) => cold('-x', { x: errorChunk(error) }).pipe(finalize(() => onErrorReleased++));
      const text = { s: makeChunk(R, 'text-start', { id: 't' }), e: makeChunk(R, 'text-end', { id: 't' }) };
      const closer = makeChunk(R, 'step-finish', { stepNumber: 0, stepResult: { reason: 'error', isContinued: false }, output: { text: '', toolCalls: [], usage: emptyUsage() } });
      expectObservable(source.pipe(endWithTerminal({ runId: R, closeBrackets: true, onError }))).toBe('-(SP)--(sa)---(eYX|)', {
        ...v,
        ...text,
        P: stepStart(),
        Y: closer,
      });
    });
    expect([sourceReleased, onErrorReleased]).toEqual([1, 1]);
  });

  it('onError’s chunks that error, synchronously or later, end with that error’s chunk (marbles)', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const second = new Error('second');
      const Z = errorChunk(second);
      expectObservable(cold('-a-----#', v, boom).pipe(endWithTerminal({ runId: R, onError: () => throwError(() => second) }))).toBe('-(Sa)--(Z|)', { ...v, Z });
      expectObservable(cold('-a-----#', v, boom).pipe(endWithTerminal({ runId: R, onError: () => cold('-b-#', v, second) }))).toBe('-(Sa)---b-(Z|)', { ...v, Z });
    });
  });
});

describe('closeBrackets(): hostile sources', () => {
  it('a consumer that leaves inside a next handler stops a synchronous source', () => {
    let pulled = 0;
    const chunks = Array.from({ length: 100_000 }, (_, index) => delta(String(index)));
    const seen = record(from(chunks).pipe(tap(() => pulled++), closeBrackets(), take(2)));
    expect(typesOf(seen.values)).toEqual(['text-start', 'text-delta']);
    expect(pulled).toBe(1);
  });

  it('100,000 synchronous chunks of one part pass with one start and one end', () => {
    const chunks = [stepStart(), ...Array.from({ length: 100_000 }, (_, index) => delta(String(index)))];
    const seen = record(from(chunks).pipe(closeBrackets()));
    const types = typesOf(seen.values);
    expect(types).toHaveLength(100_004);
    expect(types.slice(0, 2)).toEqual(['step-start', 'text-start']);
    expect(types.slice(-2)).toEqual(['text-end', 'step-finish']);
    expect(seen.completed).toBe(true);
  });

  it('a step-start fed back while the closers of a terminal go out: every step still closed once, before the terminal', () => {
    const source = new Subject<ChunkType>();
    const seen: string[] = [];
    let fedBack = false;
    source.pipe(closeBrackets()).subscribe((chunk) => {
      seen.push(chunk.type === 'step-finish' ? `step-finish:${chunk.payload.stepNumber}:${chunk.payload.stepResult.reason}` : chunk.type);
      if (chunk.type === 'text-end' && !fedBack) {
        fedBack = true;
        source.next(stepStart(1));
      }
    });
    source.next(stepStart(0));
    source.next(delta());
    source.next(finish());
    expect(seen).toEqual(['step-start', 'text-start', 'text-delta', 'text-end', 'step-finish:0:retry', 'step-start', 'step-finish:1:other', 'finish']);
  });

  it('by design, closeBrackets() does not cut after a terminal: later chunks pass, bracketed on their own', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const text = { s: makeChunk(R, 'text-start', { id: 't' }), e: makeChunk(R, 'text-end', { id: 't' }) };
      expectObservable(cold('-F-a-----(F|)', v).pipe(closeBrackets())).toBe('-F-(sa)--(eF|)', { ...v, ...text });
    });
  });

  it('a source error after partial output closes what is open, then errors; the source is released once', () => {
    let released = 0;
    scheduler().run(({ cold, expectObservable }) => {
      const text = { P: stepStart(), s: makeChunk(R, 'text-start', { id: 't' }), e: makeChunk(R, 'text-end', { id: 't' }) };
      const closer = makeChunk(R, 'step-finish', { stepNumber: 0, stepResult: { reason: 'error', isContinued: false }, output: { text: '', toolCalls: [], usage: emptyUsage() } });
      const source = cold('P-a-----#', { ...v, ...text }, boom).pipe(finalize(() => released++));
      expectObservable(source.pipe(closeBrackets())).toBe('P-(sa)--(eY#)', { ...v, ...text, Y: closer }, boom);
    });
    expect(released).toBe(1);
  });
});

describe('isStepEnd()', () => {
  it('is true for a StepEnd only, never for a chunk', () => {
    const end: StepEnd = { kind: 'step-end', next: { kind: 'commit' } };
    expect(isStepEnd(end)).toBe(true);
    for (const chunk of [start(), delta(), finish(), errorChunk(boom), stepStart(), { type: 'data-x', data: 1 } as unknown as ChunkType]) {
      expect(isStepEnd(chunk)).toBe(false);
    }
  });
});

describe('withAgentRun() and the phases under a hostile loop', () => {
  const agentWith = (inputProcessors: Processor[] = []) =>
    new Agent({ id: 'a', model: mockModel({ parts: [...textParts('ok'), finishPart('stop')] }), inputProcessors });

  it('a body that throws synchronously errors the result with that error', async () => {
    await expect(
      lastValueFrom(
        withAgentRun({ agent: agentWith(), input: 'hi' }, () => {
          throw boom;
        }),
      ),
    ).rejects.toBe(boom);
  });

  it('a consumer that leaves after the first chunk releases the body once and ends the run (its signal aborted)', async () => {
    const signals: AbortSignal[] = [];
    const probe: Processor = { id: 'probe', processInput: ({ messages, abortSignal }) => (signals.push(abortSignal), messages) };
    let released = 0;
    const chunks = await lastValueFrom(
      withAgentRun({ agent: agentWith([probe]), input: 'hi' }, (run) =>
        concat(
          runInput(run),
          runStep(run, 0).pipe(
            expand((item) => (isStepEnd(item) && item.next.kind === 'step' ? runStep(run, item.next.stepNumber) : EMPTY)),
            filter((item): item is ChunkType => !isStepEnd(item)),
          ),
          runCommit(run),
        ).pipe(endWithTerminal({ runId: run.runId, onError: (error) => runFailed(run, error) }), closeBrackets(), finalize(() => released++)),
      ).pipe(take(1), toArray()),
    );
    expect(typesOf(chunks)).toEqual(['start']);
    expect(released).toBe(1);
    expect(signals.map((signal) => signal.aborted)).toEqual([true]);
  });

  it('a step number that is not a whole number ≥ 0 is a RangeError naming it, before any hook runs', async () => {
    let steps = 0;
    const counter: Processor = { id: 'counter', processInputStep: () => void steps++ };
    const agent = new Agent({ id: 'a', model: mockModel({ parts: [...textParts('ok'), finishPart('stop')] }), inputProcessors: [counter] });
    for (const bad of [Number.NaN, -1, 0.5, Infinity]) {
      const run$ = withAgentRun({ agent, input: 'hi' }, (run) => concat(runInput(run), runStep(run, bad)));
      const error = await lastValueFrom(run$).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(RangeError);
      expect(String((error as Error).message)).toContain(String(bad));
    }
    expect(steps).toBe(0);
  });

  it('a phase subscribed after the run is over is refused (the model is not called on an ended run)', async () => {
    let calls = 0;
    const counter: Processor = { id: 'counter', processLLMRequest: () => void calls++ };
    const agent = new Agent({ id: 'a', model: mockModel({ parts: [...textParts('ok'), finishPart('stop')] }), inputProcessors: [counter] });
    let kept: AgentRun | undefined;
    await lastValueFrom(
      withAgentRun({ agent, input: 'hi' }, (run) => {
        kept = run;
        return concat(runInput(run), runStep(run, 0));
      }),
    );
    expect(calls).toBe(1);
    const over = kept as AgentRun;
    for (const phase of [runInput(over), runStep(over, 1), runCommit(over), runFailed(over, boom)]) {
      const seen = record<unknown>(phase);
      expect(seen.error).toBeInstanceOf(TypeError);
      expect(String((seen.error as Error).message)).toContain('is over');
    }
    expect(calls).toBe(1);
  });

  it('each phase refuses a run withAgentRun did not make', () => {
    const fake: AgentRun = { runId: 'r', messageList: undefined as never, steps: [], abortSignal: undefined };
    for (const phase of [runInput(fake), runStep(fake, 0), runCommit(fake), runFailed(fake, boom)]) {
      const seen = record<unknown>(phase);
      expect(seen.error).toBeInstanceOf(TypeError);
    }
  });
});
