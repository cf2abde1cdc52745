/**
 * For the adversarial suites: around every test of the file, no error may be reported to RxJS's
 * `config.onUnhandledError` (an error thrown at a subscriber that had no one to notify) or thrown
 * at nobody (`uncaughtException`). Call once at the top level of a test file.
 */
import { config } from 'rxjs';
import { afterEach, beforeEach, expect } from 'vitest';

export function expectNothingUnhandled(): void {
  let unhandled: unknown[] = [];
  let previousOnUnhandledError: typeof config.onUnhandledError;
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown): void => {
    uncaught.push(error);
  };

  beforeEach(() => {
    unhandled = [];
    uncaught.length = 0;
    previousOnUnhandledError = config.onUnhandledError;
    config.onUnhandledError = (error: unknown) => {
      unhandled.push(error);
    };
    process.on('uncaughtException', onUncaught);
  });

  afterEach(async () => {
    // an error RxJS reports as unhandled lands on a timer: let it land before looking
    await new Promise((resolve) => setTimeout(resolve, 5));
    config.onUnhandledError = previousOnUnhandledError;
    process.off('uncaughtException', onUncaught);
    expect(unhandled, 'errors reported as unhandled instead of notified').toEqual([]);
    expect(uncaught, 'errors thrown at nobody').toEqual([]);
  });
}
