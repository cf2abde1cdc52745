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
  const message = (error as Error).message;
  expect(message).toContain(`${processorId}: option ${option} must be`);
  // a string value is described, never printed (an API key given to the wrong option must not reach a log)
  const { value } = error as InvalidProcessorOptionError;
  if (typeof value === 'string') {
    expect(message).toContain(value === '' ? '(got an empty string' : `(got a string of ${value.length} character${value.length === 1 ? '' : 's'}`);
    if (value.length >= 3) expect(message).not.toContain(JSON.stringify(value));
  }
  return error as InvalidProcessorOptionError;
}
