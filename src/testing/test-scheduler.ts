/**
 * A `TestScheduler` for marble tests of processors and operators, wired to vitest/jest `expect`.
 * Errors are compared by `{ name, message }` (plus `processorId` when they carry one, as
 * `TripWire` and `ProcessorError` do), never by identity, so an expected `TripWire` built in the
 * test matches the one the operator threw.
 */
import { TestScheduler } from 'rxjs/testing';

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
 * What an error is compared by in marble assertions.
 *
 * @example
 * ```ts
 * import type { ComparableError } from 'rxagent/testing';
 * const expected: ComparableError = { name: 'TripWire', message: 'blocked', processorId: 'guard' };
 * ```
 */
export interface ComparableError {
  /** A human-readable name. */
  name: string;
  /** The error message. */
  message: string;
  /** The `processorId` hook (see `Processor.processorId` for when it runs and what it may return). */
  processorId?: string;
}

function comparableError(error: Error): ComparableError {
  const processorId = (error as { processorId?: unknown }).processorId;
  return typeof processorId === 'string'
    ? { name: error.name, message: error.message, processorId }
    : { name: error.name, message: error.message };
}

function isPlainObject(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Replaces every `Error` inside `value` (walking arrays and plain objects) with its comparable
 * `{ name, message, processorId? }` form. Other class instances are kept as they are.
 *
 * @example
 * ```ts
 * import { TripWire } from 'rxagent';
 * import { normalizeErrors } from 'rxagent/testing';
 * normalizeErrors({ error: new TripWire('no', {}, 'guard') });
 * // { error: { name: 'TripWire', message: 'no', processorId: 'guard' } }
 * ```
 */
export function normalizeErrors(value: unknown, seen: WeakMap<object, unknown> = new WeakMap()): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return comparableError(value);
  const known = seen.get(value);
  if (known !== undefined) return known;
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
 * compared by `{ name, message, processorId? }`. Without an argument it uses the running test
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
