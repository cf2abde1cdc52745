/** Assertions on the typed error a processor's constructor throws for a bad option. */
import { expect } from 'vitest';
import { InvalidProcessorOptionError } from '../../../src/contract/errors/invalid-processor-option-error.js';

/** What `make` threw (fails the test when it returned). */
export function thrownBy(make: () => unknown): unknown {
  try {
    make();
  } catch (error) {
    return error;
  }
  throw new Error('expected the constructor to throw');
}

/** `make` throws an `InvalidProcessorOptionError` naming `processorId` and `option`; returns it. */
export function expectOptionError(make: () => unknown, processorId: string, option: string): InvalidProcessorOptionError {
  const error = thrownBy(make);
  expect(InvalidProcessorOptionError.isInstance(error), String(error)).toBe(true);
  expect(error).toMatchObject({ name: 'InvalidProcessorOptionError', processorId, option });
  expect((error as Error).message).toContain(`${processorId}: option ${option} must be`);
  return error as InvalidProcessorOptionError;
}
