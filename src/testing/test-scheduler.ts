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
export type ExpectLike = (actual: unknown) => { toEqual(expected: unknown): void };

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
  name: string;
  message: string;
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

function resolveExpect(expectFn: ExpectLike | undefined): ExpectLike {
  if (expectFn !== undefined) return expectFn;
  const globalExpect = (globalThis as { expect?: unknown }).expect;
  if (typeof globalExpect === 'function') return globalExpect as ExpectLike;
  throw new Error(
    'createTestScheduler: no expect function. Pass one (createTestScheduler(expect) with expect from vitest or jest) or enable test globals.',
  );
}

/**
 * Makes a `TestScheduler` whose assertion is `expect(actual).toEqual(expected)`, with errors
 * compared by `{ name, message, processorId? }`. Pass vitest's or jest's `expect`; without one,
 * the global `expect` (vitest `globals: true`, jest) is looked up when an assertion runs, so the
 * library never depends on a test runner.
 *
 * @example
 * ```ts
 * import { expect, it } from 'vitest';
 * import { TripWire } from 'rxagent';
 * import { processOutputStream } from 'rxagent/operators';
 * import { chunk, createTestScheduler } from 'rxagent/testing';
 *
 * it('blocks "secret"', () => {
 *   createTestScheduler(expect).run(({ cold, expectObservable }) => {
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
