/**
 * A `TestScheduler` for marble tests of processors and operators, wired to vitest/jest `expect`.
 * Errors are compared by `{ name, message }` (plus `processorId` when they carry one, as
 * `TripWire` and `ProcessorError` do), never by identity, so an expected `TripWire` built in the
 * test matches the one the operator threw. A `TripWire` is also compared by its options, `retry`
 * and `metadata`: a test that expects a retry fails against a guard that does not ask for one.
 */
import { TestScheduler } from 'rxjs/testing';
import { toTripWire } from '../contract/index.js';

/**
 * The part of vitest's / jest's `expect` the scheduler uses.
 *
 * @example
 * ```ts
 * import { expect } from 'vitest';
 * import type { ExpectLike } from 'rxagent/testing';
 * const assertWith: ExpectLike = expect;
 * ```
 */
export type ExpectLike = (actual: unknown) => {
  /** Fails the test unless `actual` deeply equals `expected`. */
  toEqual(expected: unknown): void;
};

/**
 * What an error is compared by in marble assertions: `name`, `message` and `processorId` for every
 * error that has them, plus `retry` and `metadata` for a `TripWire` (rxagent's, from any copy of the
 * package, or another package's `TripWire` with `options`, as `toTripWire` reads it).
 *
 * @example
 * ```ts
 * import type { ComparableError } from 'rxagent/testing';
 * const expected: ComparableError = { name: 'TripWire', message: 'blocked', processorId: 'guard', retry: true };
 * ```
 */
export interface ComparableError {
  /** The error's `name` (`'TripWire'`, `'ProcessorError'`, …). */
  name: string;
  /** The error message (a `TripWire`'s reason). */
  message: string;
  /** The id of the processor the error came from, when the error carries one. */
  processorId?: string;
  /** A `TripWire` only: whether it asked for a retry of the step (`abort(reason, { retry: true })`). */
  retry?: boolean;
  /** A `TripWire` only: the `metadata` given to `abort()`, with errors inside it compared the same way. */
  metadata?: unknown;
}

function comparableError(error: Error, seen: WeakMap<object, unknown>): ComparableError {
  const tripwire = toTripWire(error);
  const processorId = (error as { processorId?: unknown }).processorId;
  const comparable: ComparableError = { name: error.name, message: error.message };
  seen.set(error, comparable); // metadata that holds the error itself
  if (typeof processorId === 'string') comparable.processorId = processorId;
  if (tripwire !== undefined) {
    // always present, so `retry: false` expected and `retry: true` thrown differ (and the reverse)
    comparable.retry = tripwire.retry;
    if (tripwire.metadata !== undefined) comparable.metadata = normalizeErrors(tripwire.metadata, seen);
  }
  return comparable;
}

function isPlainObject(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Replaces every `Error` inside `value` (walking arrays and plain objects) with its comparable
 * `{ name, message, processorId?, retry?, metadata? }` form ({@link ComparableError}). Other class
 * instances are kept as they are.
 *
 * @example
 * ```ts
 * import { TripWire } from 'rxagent';
 * import { normalizeErrors } from 'rxagent/testing';
 * normalizeErrors({ error: new TripWire('no', { retry: true }, 'guard') });
 * // { error: { name: 'TripWire', message: 'no', processorId: 'guard', retry: true } }
 * ```
 */
export function normalizeErrors(value: unknown, seen: WeakMap<object, unknown> = new WeakMap()): unknown {
  if (value === null || typeof value !== 'object') return value;
  const known = seen.get(value);
  if (known !== undefined) return known;
  if (value instanceof Error) return comparableError(value, seen);
  if (Array.isArray(value)) {
    const copy: unknown[] = [];
    seen.set(value, copy);
    for (const item of value) copy.push(normalizeErrors(item, seen));
    return copy;
  }
  if (!isPlainObject(value)) return value;
  const copy: Record<string, unknown> = {};
  seen.set(value, copy);
  for (const [key, item] of Object.entries(value)) copy[key] = normalizeErrors(item, seen);
  return copy;
}

/** Where vitest keeps its global `expect` (set when vitest runs, with or without `globals: true`). */
const VITEST_GLOBAL_EXPECT = Symbol.for('expect-global');

function resolveExpect(expectFn: ExpectLike | undefined): ExpectLike {
  if (expectFn !== undefined) return expectFn;
  const scope = globalThis as { expect?: unknown; [VITEST_GLOBAL_EXPECT]?: unknown };
  // jest (and vitest with `globals: true`) put `expect` on the global object; vitest always keeps
  // its own under a registered symbol, also in a default project without globals
  const found = typeof scope.expect === 'function' ? scope.expect : scope[VITEST_GLOBAL_EXPECT];
  if (typeof found === 'function') return found as ExpectLike;
  throw new TypeError(
    'createTestScheduler(): no expect function found (no vitest or jest running, or a runner without a global expect). ' +
      "Pass one: createTestScheduler(expect) with `import { expect } from 'vitest'` (or jest's), " +
      'or any (actual) => ({ toEqual(expected) { … } }), e.g. built on node:assert deepStrictEqual.',
  );
}

/**
 * Makes a `TestScheduler` whose assertion is `expect(actual).toEqual(expected)`, with errors
 * compared by `{ name, message, processorId? }` and a `TripWire` also by `retry` and `metadata`
 * (so `new TripWire('Say please.', { retry: true }, 'polite')` is what a retrying guard throws, and
 * `new TripWire('Say please.', {}, 'polite')` fails against it). Without an argument it uses the running test
 * runner's `expect`, looked up when an assertion runs: jest's or vitest's global `expect`, or
 * vitest's own (present in a default vitest project, no `globals: true` needed); with no runner it
 * throws a `TypeError` saying how to pass one. The library never depends on a test runner.
 *
 * @example
 * ```ts
 * import { it } from 'vitest';
 * import { TripWire } from 'rxagent';
 * import { processOutputStream } from 'rxagent/operators';
 * import { chunk, createTestScheduler } from 'rxagent/testing';
 *
 * it('blocks "secret"', () => {
 *   createTestScheduler().run(({ cold, expectObservable }) => {
 *     const source = cold('-a-b|', { a: chunk.textDelta('hi'), b: chunk.textDelta('secret') });
 *     expectObservable(source.pipe(processOutputStream([guard]))).toBe(
 *       '-a-#', { a: chunk.textDelta('hi') }, new TripWire('Stream part blocked by guard', {}, 'guard'),
 *     );
 *   });
 * });
 * ```
 */
export function createTestScheduler(expectFn?: ExpectLike): TestScheduler {
  return new TestScheduler((actual, expected) => {
    resolveExpect(expectFn)(normalizeErrors(actual)).toEqual(normalizeErrors(expected));
  });
}
