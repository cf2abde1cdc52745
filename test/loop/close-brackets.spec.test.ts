/**
 * Marble spec of `closeBrackets()` (issue 14 point 2): the checklist (empty, never, one and many
 * values, source error, early unsubscription) and each repair and closing rule.
 */
import { describe, expect, it } from 'vitest';
import { repeat } from 'rxjs';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { makeChunk } from '../../src/contract/make-chunk.js';
import { closeBrackets } from 'rxagent/loop';
import { emptyUsage } from '../../src/model/usage.js';
import { createTestScheduler } from '../../src/testing/test-scheduler.js';

const R = 'r';
const stepFinish = (reason: 'tripwire' | 'error' | 'other' | 'retry', stepNumber = 0): ChunkType =>
  makeChunk(R, 'step-finish', { stepNumber, stepResult: { reason, isContinued: false }, output: { text: '', toolCalls: [], usage: emptyUsage() } });

/** The chunks by marble letter. */
const v: Record<string, ChunkType> = {
  S: makeChunk(R, 'start', {}),
  B: makeChunk(R, 'step-start', { stepNumber: 0 }),
  b: makeChunk(R, 'step-start', { stepNumber: 1 }),
  o: makeChunk(R, 'text-start', { id: 'a' }),
  d: makeChunk(R, 'text-delta', { id: 'a', text: 'hi' }),
  c: makeChunk(R, 'text-end', { id: 'a' }),
  p: makeChunk(R, 'reasoning-start', { id: 'm' }),
  q: makeChunk(R, 'reasoning-delta', { id: 'm', text: 'hmm' }),
  n: makeChunk(R, 'reasoning-end', { id: 'm' }),
  i: makeChunk(R, 'tool-call-input-streaming-start', { toolCallId: 'k', toolName: 'get' }),
  j: makeChunk(R, 'tool-call-delta', { toolCallId: 'k', argsTextDelta: '{' }),
  l: makeChunk(R, 'tool-call-input-streaming-end', { toolCallId: 'k' }),
  E: makeChunk(R, 'step-finish', { stepNumber: 0, stepResult: { reason: 'stop', isContinued: false }, output: { text: 'hi', toolCalls: [], usage: emptyUsage() } }),
  F: makeChunk(R, 'finish', { stepResult: { reason: 'stop' }, output: { usage: emptyUsage(), text: 'hi' } }),
  W: makeChunk(R, 'tripwire', { reason: 'no', retry: false, processorId: 'guard' }),
  X: makeChunk(R, 'error', { error: new Error('boom') }),
  A: makeChunk(R, 'abort', { reason: 'stop' }),
  T: stepFinish('tripwire'),
  Y: stepFinish('error'),
  O: stepFinish('other'),
  Q: stepFinish('retry'),
};

const scheduler = () => createTestScheduler(expect);

describe('closeBrackets(): marble checklist', () => {
  it('completes on an empty source', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<ChunkType>('|').pipe(closeBrackets())).toBe('|');
    });
  });

  it('stays silent on a never source', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<ChunkType>('-').pipe(closeBrackets())).toBe('-');
    });
  });

  it('passes one value on its frame', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-S|', v).pipe(closeBrackets())).toBe('-S|', v);
    });
  });

  it('passes a well-bracketed run unchanged, frame for frame', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = '-S-B-o-d-c-p-q-n-i-j-l-E-F|';
      expectObservable(cold(source, v).pipe(closeBrackets())).toBe(source, v);
    });
  });

  it('closes what is open before passing a source error on', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const error = new Error('boom');
      expectObservable(cold('-S-B-o-d-#', v, error).pipe(closeBrackets())).toBe('-S-B-o-d-(cY#)', v, error);
    });
  });

  it('unsubscribes from the source when the consumer unsubscribes, adding nothing', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-S-B-o-d-d-E-F|', v);
      expectObservable(source.pipe(closeBrackets()), '^------!').toBe('-S-B-o-', v);
      expectSubscriptions(source.subscriptions).toBe('^------!');
    });
  });
});

describe('closeBrackets(): resubscription', () => {
  it('each subscription tracks its own brackets (repeat: the second closes only what it opened)', () => {
    scheduler().run(({ cold, expectObservable }) => {
      // a delta without its start, then completion: s = text-start made, c = text-end, O = step-finish 'other'
      const source = cold('B-----d-----|', v);
      expectObservable(source.pipe(closeBrackets(), repeat(2))).toBe('B-----(od)--(cOB)-(od)--(cO|)', v);
    });
  });
});

describe('closeBrackets(): repairs', () => {
  it('starts a text or reasoning part whose delta came without its start', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-B-d---q---(E|)', v).pipe(closeBrackets())).toBe('-B-(od)(pq)(cnE|)', v);
    });
  });

  it('drops a second start and an end of a part that is not open', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-B-o-o-d-c-c-n-E|', v).pipe(closeBrackets())).toBe('-B-o---d-c-----E|', v);
    });
  });

  it('ends the open parts (text, reasoning, tool input) before step-finish', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-B-o-p-i-(E|)', v).pipe(closeBrackets())).toBe('-B-o-p-i-(cnlE|)', v);
    });
  });

  it('closes an attempt left open (reason retry) when the next step-start arrives', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-B-o-B----E|', v).pipe(closeBrackets())).toBe('-B-o-(cQB)E|', v);
    });
  });
});

describe('closeBrackets(): the end of the stream', () => {
  it('closes the parts and the step before a tripwire (reason tripwire)', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-S-B-o-d-(W|)', v).pipe(closeBrackets())).toBe('-S-B-o-d-(cTW|)', v);
    });
  });

  it('closes before an error chunk (reason error) and an abort (reason other)', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-B-p-(X|)', v).pipe(closeBrackets())).toBe('-B-p-(nYX|)', v);
      expectObservable(cold('-B-i-j-(A|)', v).pipe(closeBrackets())).toBe('-B-i-j-(lOA|)', v);
    });
  });

  it('closes what is open when the source completes without a terminal (reason other)', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-B-o-|', v).pipe(closeBrackets())).toBe('-B-o-(cO|)', v);
    });
  });

  it('adds nothing before a terminal when every bracket is closed', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-B-o-c-E-W|', v).pipe(closeBrackets())).toBe('-B-o-c-E-W|', v);
    });
  });

  it('keeps no state across subscriptions', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const shared = cold('-B-o-|', v).pipe(closeBrackets());
      expectObservable(shared).toBe('-B-o-(cO|)', v);
      expectObservable(shared).toBe('-B-o-(cO|)', v);
    });
  });
});
