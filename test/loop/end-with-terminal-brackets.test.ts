/**
 * `endWithTerminal({ closeBrackets: true })` (what a run uses: one subscriber) gives what
 * `endWithTerminal()` followed by `closeBrackets()` gives, frame by frame.
 */
import { describe, expect, it } from 'vitest';
import type { ChunkType } from '../../src/contract/chunk-types.js';
import { TripWire } from '../../src/contract/errors/trip-wire.js';
import { makeChunk } from '../../src/contract/make-chunk.js';
import { closeBrackets } from '../../src/loop/run/close-brackets.js';
import { endWithTerminal } from '../../src/loop/run/end-with-terminal.js';
import { emptyUsage } from '../../src/model/usage.js';
import { createTestScheduler } from '../../src/testing/test-scheduler.js';

const R = 'r';
const v: Record<string, ChunkType> = {
  S: makeChunk(R, 'start', {}),
  P: makeChunk(R, 'step-start', { stepNumber: 0, messageId: 'm' }),
  s: makeChunk(R, 'text-start', { id: 't' }),
  a: makeChunk(R, 'text-delta', { id: 't', text: 'a' }),
  u: makeChunk(R, 'text-delta', { id: 'u', text: 'u' }),
  e: makeChunk(R, 'text-end', { id: 't' }),
  r: makeChunk(R, 'reasoning-delta', { id: 'x', text: 'r' }),
  f: makeChunk(R, 'step-finish', {
    stepNumber: 0,
    messageId: 'm',
    stepResult: { reason: 'stop', isContinued: false },
    output: { text: 'a', toolCalls: [], usage: emptyUsage() },
  }),
  F: makeChunk(R, 'finish', { stepResult: { reason: 'stop' }, output: { usage: emptyUsage(), text: 'a' } }),
};

const sources: Array<[string, string, unknown?]> = [
  ['a whole run', 'S-P-s-a-e-f-F-|'],
  ['a delta of a part never started, then finish', 'S-P-u--F'],
  ['open parts and step at a source error', 'S-P-s-a-r-#', new Error('boom')],
  ['open parts at a tripwire', 'S-P-a-#', new TripWire('no', {}, 'guard')],
  ['a source that completes without a terminal', 'P-a-|'],
  ['a source that never ends', 'S-P-a-'],
];

describe('endWithTerminal({ closeBrackets: true }) = endWithTerminal() + closeBrackets()', () => {
  for (const [name, marbles, error] of sources) {
    it(name, () => {
      createTestScheduler(expect).run(({ cold, expectObservable }) => {
        const fused = cold<ChunkType>(marbles, v, error).pipe(endWithTerminal({ runId: R, closeBrackets: true }));
        const piped = cold<ChunkType>(marbles, v, error).pipe(endWithTerminal({ runId: R }), closeBrackets());
        expectObservable(fused).toEqual(piped);
      });
    });
  }
});
