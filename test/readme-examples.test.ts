/** The README's processor and marble example, kept true. */
import { expect, it } from 'vitest';
import { processOutputStream } from '../src/operators/process-output-stream.js';
import { TripWire } from '../src/processor/errors/trip-wire.js';
import type { Processor } from '../src/processor/processor-types.js';
import { chunk } from '../src/testing/chunk-builders.js';
import { createTestScheduler } from '../src/testing/test-scheduler.js';

const noSecrets: Processor = {
  id: 'no-secrets',
  processOutputStream: ({ part, abort }) => {
    if (part.type === 'text-delta' && /password/i.test(part.payload.text)) abort('Secret in output');
    return part;
  },
};

it('the README marble test passes as written', () => {
  createTestScheduler(expect).run(({ cold, expectObservable }) => {
    const source = cold('-a-b-|', { a: chunk.textDelta('hi'), b: chunk.textDelta('password!') });
    expectObservable(source.pipe(processOutputStream([noSecrets]))).toBe('-a-#', { a: chunk.textDelta('hi') }, new TripWire('Secret in output', {}, 'no-secrets'));
  });
});
