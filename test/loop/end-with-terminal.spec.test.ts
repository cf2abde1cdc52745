/**
 * Marble spec of `endWithTerminal()` (issue 14 point 2): the checklist (empty, never, one and
 * many values, source error, early unsubscription) and the run invariants — one `start` first,
 * one terminal chunk last, errors and aborts turned into their terminal chunks.
 */
import { describe, expect, it } from 'vitest';
import { fromEvent, of, repeat, retry, takeUntil, throwError } from 'rxjs';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import { makeChunk } from '../../src/contract/make-chunk.js';
import { ModelCallError } from '../../src/model/errors/model-call-error.js';
import { endWithTerminal } from 'rxagent/loop';
import { failureChunk } from '../../src/loop/run/end-with-terminal.js';
import { MissingTerminalError } from '../../src/loop/run/missing-terminal-error.js';
import { emptyUsage } from '../../src/model/usage.js';
import { createTestScheduler } from '../../src/testing/test-scheduler.js';

const R = 'r';
const boom = new Error('boom');
const tripwire = new TripWire('blocked', { retry: false, metadata: { n: 1 } }, 'guard');

/** The chunks by marble letter. */
const v: Record<string, ChunkType> = {
  S: makeChunk(R, 'start', {}),
  a: makeChunk(R, 'text-delta', { id: 't', text: 'a' }),
  b: makeChunk(R, 'text-delta', { id: 't', text: 'b' }),
  F: makeChunk(R, 'finish', { stepResult: { reason: 'stop' }, output: { usage: emptyUsage(), text: 'ab' } }),
  W: makeChunk(R, 'tripwire', { reason: 'blocked', retry: false, metadata: { n: 1 }, processorId: 'guard' }),
  X: makeChunk(R, 'error', { error: boom }),
  M: makeChunk(R, 'error', { error: new MissingTerminalError() }),
  A: makeChunk(R, 'abort', { reason: 'stop' }),
};

const scheduler = () => createTestScheduler(expect);
const plain = () => endWithTerminal({ runId: R });

describe('endWithTerminal(): a run\'s own values', () => {
  it('a value with no `type` (a durable run\'s commit point) passes unchanged, opens and closes nothing, with closeBrackets too', () => {
    // what createRun's body emits between its chunks when commit points are on (run-durability.ts)
    const point = { kind: 'step', stepNumber: 0 } as unknown as ChunkType;
    const t = makeChunk(R, 'text-start', { id: 't' });
    const e = makeChunk(R, 'text-end', { id: 't' });
    const values = { ...v, P: point, t, e };
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-S-P-a-P-(F|)', values).pipe(plain())).toBe('-S-P-a-P-(F|)', values);
      expectObservable(cold('-S-t-a-P-(F|)', values).pipe(endWithTerminal({ runId: R, closeBrackets: true }))).toBe('-S-t-a-P-(eF|)', values);
    });
  });
});

describe('endWithTerminal(): marble checklist', () => {
  it('an empty source still gets its start and a terminal (the missing-terminal error)', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<ChunkType>('|').pipe(plain())).toBe('(SM|)', v);
    });
  });

  it('stays silent on a never source (no start is made before something happens)', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<ChunkType>('-').pipe(plain())).toBe('-');
    });
  });

  it('one value: its start, then the terminal when the source completes without one', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-S|', v).pipe(plain())).toBe('-S(M|)', v);
    });
  });

  it('many values pass in order, frame for frame, and the terminal completes the result', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-S-a-b-(F|)', v).pipe(plain())).toBe('-S-a-b-(F|)', v);
    });
  });

  it('a source error becomes an error chunk carrying the provider error', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-S-a-#', v, boom).pipe(plain())).toBe('-S-a-(X|)', v);
      const wrapped = new ModelCallError({ cause: boom });
      expectObservable(cold('-S-#', v, wrapped).pipe(plain())).toBe('-S-(X|)', v);
    });
  });

  it('a TripWire error becomes a tripwire chunk', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-S-a-#', v, tripwire).pipe(plain())).toBe('-S-a-(W|)', v);
    });
    expect(failureChunk(R, tripwire)).toEqual(v.W);
  });

  it('unsubscribes from the source when the consumer unsubscribes, adding nothing', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-S-a-b-(F|)', v);
      expectObservable(source.pipe(plain()), '^--!').toBe('-S-', v);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });
});

describe('endWithTerminal(): resubscription', () => {
  it('each subscription gets its own start and terminal (repeat)', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold('---a---F|', v);
      expectObservable(source.pipe(plain(), repeat(2))).toBe('---(Sa)F--(Sa)(F|)', v);
    });
  });

  it('a source retried upstream (retry before the operator) is one run: one start, one terminal', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('S-a-#', v, boom);
      expectObservable(source.pipe(retry(1), plain())).toBe('S-a---a-(X|)', v);
      expectSubscriptions(source.subscriptions).toBe(['^---!', '----^---!']);
    });
  });
});

describe('endWithTerminal(): one start, one terminal', () => {
  it('makes the start when the first chunk is not one', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-a---(F|)', v).pipe(plain())).toBe('-(Sa)(F|)', v);
    });
  });

  it('makes the start before a terminal that comes first', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-#', v, boom).pipe(plain())).toBe('-(SX|)', v);
    });
  });

  it('leaves out a second start', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-S-S-a-(F|)', v).pipe(plain())).toBe('-S---a-(F|)', v);
    });
  });

  it('completes on the first terminal chunk and unsubscribes from the source: nothing after it', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-S-W-a-F-|', v);
      expectObservable(source.pipe(plain())).toBe('-S-(W|)', v);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('asks the run id when it makes a chunk', () => {
    let id = 'early';
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold('-a---#', v, boom);
      expectObservable(source.pipe(endWithTerminal({ runId: () => id }))).toBe('-(Sa)(X|)', {
        S: makeChunk('early', 'start', {}),
        a: v.a,
        X: makeChunk('later', 'error', { error: boom }),
      });
      cold('--x').subscribe(() => {
        id = 'later';
      });
    });
  });
});

describe('endWithTerminal(): onError', () => {
  it('ends with the chunks onError gives for the error, cut at their terminal', () => {
    const seen: unknown[] = [];
    scheduler().run(({ cold, expectObservable }) => {
      const onError = (error: unknown, runId: string) => {
        seen.push(error, runId);
        return cold('--b-A-a|', v);
      };
      expectObservable(cold('-S-#', v, boom).pipe(endWithTerminal({ runId: R, onError }))).toBe('-S---b-(A|)', v);
    });
    expect(seen).toEqual([boom, R]);
  });

  it('an error of onError’s chunks becomes its default terminal chunk', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const onError = () => cold('--#', v, tripwire);
      expectObservable(cold('-S-#', v, boom).pipe(endWithTerminal({ runId: R, onError }))).toBe('-S---(W|)', v);
    });
  });

  it('a synchronous onError (of / throwError) ends in the frame of the error', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-S-#', v, boom).pipe(endWithTerminal({ runId: R, onError: () => of(v.A as ChunkType) }))).toBe('-S-(A|)', v);
      expectObservable(cold('-S-#', v, boom).pipe(endWithTerminal({ runId: R, onError: () => throwError(() => tripwire) }))).toBe('-S-(W|)', v);
    });
  });
});

describe('endWithTerminal(): abort (the source cut by takeUntil, as the run does)', () => {
  it('a source cut by the abort (takeUntil) ends with an abort chunk carrying the reason', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const controller = new AbortController();
      const source = cold('-S-a-b-(F|)', v);
      const aborted$ = fromEvent(controller.signal, 'abort');
      expectObservable(source.pipe(takeUntil(aborted$), endWithTerminal({ runId: R, abortSignal: controller.signal }))).toBe('-S-a(A|)', v);
      expectSubscriptions(source.subscriptions).toBe('^---!');
      cold('----x').subscribe(() => controller.abort('stop'));
    });
  });

  it('the abort alone does not cut the source: what is not under takeUntil runs to its terminal', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const controller = new AbortController();
      expectObservable(cold('-S-a-b-(F|)', v).pipe(endWithTerminal({ runId: R, abortSignal: controller.signal }))).toBe('-S-a-b-(F|)', v);
      cold('---x').subscribe(() => controller.abort('stop'));
    });
  });

  it('a source that completes without a terminal after an abort ends with abort', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const controller = new AbortController();
      expectObservable(cold('-S-a-|', v).pipe(endWithTerminal({ runId: R, abortSignal: controller.signal }))).toBe('-S-a-(A|)', v);
      cold('---x').subscribe(() => controller.abort('stop'));
    });
  });

  it('a source that completes without a terminal and no abort is the missing-terminal error', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const controller = new AbortController();
      expectObservable(cold('-S-a-|', v).pipe(endWithTerminal({ runId: R, abortSignal: controller.signal }))).toBe('-S-a-(M|)', v);
    });
  });

  it('an abort after the terminal changes nothing', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const controller = new AbortController();
      expectObservable(cold('-S-(F|)', v).pipe(endWithTerminal({ runId: R, abortSignal: controller.signal }))).toBe('-S-(F|)', v);
      cold('-----x').subscribe(() => controller.abort('stop'));
    });
  });
});

describe('endWithTerminal(): then (the run’s RunEnd after its terminal chunk)', () => {
  const end = { kind: 'end' } as const;
  const withThen = () => endWithTerminal({ runId: R, then: () => end });

  it('the value follows the terminal chunk in the same frame, then the result completes', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-S-a-F-b|', v).pipe(withThen())).toBe('-S-a-(FE|)', { ...v, E: end });
    });
  });

  it('it follows a terminal made from an error or a missing terminal too, asked for once', () => {
    let made = 0;
    const counting = endWithTerminal({ runId: R, then: () => (made++, end) });
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-S-#', v, boom).pipe(counting)).toBe('-S-(XE|)', { ...v, E: end });
    });
    expect(made).toBe(1);
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-S-|', v).pipe(withThen())).toBe('-S-(ME|)', { ...v, E: end });
    });
  });

  it('an unsubscription before the terminal makes no value', () => {
    let made = 0;
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-S-a-F', v).pipe(endWithTerminal({ runId: R, then: () => (made++, end) })), '^--!').toBe('-S-', v);
    });
    expect(made).toBe(0);
  });
});
