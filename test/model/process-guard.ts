import { afterEach, beforeEach, expect } from 'vitest';

/**
 * Fails the surrounding tests when anything reaches the process as an unhandled rejection or an
 * uncaught exception while they run (or in the few macrotasks after each test).
 */
export function failOnProcessLevelErrors(): void {
  const seen: unknown[] = [];
  const onRejection = (reason: unknown): void => {
    seen.push(reason);
  };
  const onException = (error: unknown): void => {
    seen.push(error);
  };
  beforeEach(() => {
    seen.length = 0;
    process.on('unhandledRejection', onRejection);
    process.on('uncaughtException', onException);
  });
  afterEach(async () => {
    // unhandled rejections are reported after the microtask queue drains: give them a few turns
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onException);
    expect(seen, 'process-level errors').toEqual([]);
  });
}
