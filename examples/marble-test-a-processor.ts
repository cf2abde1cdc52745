/**
 * Marble-testing a processor like any RxJS operator, on virtual time (runs without a test runner:
 * node's assert is the `expect`).
 *
 *   npx tsx examples/marble-test-a-processor.ts
 */
import { deepStrictEqual } from 'node:assert';
import { TripWire, type Processor } from 'rxagent';
import { processOutputStream } from 'rxagent/operators';
import { chunk, createTestScheduler } from 'rxagent/testing';

/** Blocks a stream as soon as a chunk mentions a password. */
const noPasswords: Processor = {
  id: 'no-passwords',
  processOutputStream: ({ part, abort }) => {
    if (part.type === 'text-delta' && /password/i.test(part.payload.text)) abort('Password in output');
    return part;
  },
};

const scheduler = createTestScheduler((actual: unknown) => ({ toEqual: (expected: unknown) => deepStrictEqual(actual, expected) }));

scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
  const values = { a: chunk.textDelta('Hello'), b: chunk.textDelta('the password is…'), c: chunk.textDelta('never sent') };
  const source = cold('-a--b--c-|', values);
  const result = source.pipe(processOutputStream([noPasswords]));
  expectObservable(result).toBe('-a--#', { a: values.a }, new TripWire('Password in output', {}, 'no-passwords'));
  expectSubscriptions(source.subscriptions).toBe('^---!');
});
console.log('marble test passed: the chunk after the password never reaches the client');
