import { defineConfig } from 'vitest/config';

// Type tests (`test/**/*.test-d.ts`) are checked by `npm run typecheck` (tsc over src, test,
// examples, bench): `expectTypeOf` assertions are compile-time, so tsc fails on a wrong one.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 60_000,
    // test/reliability/leaks.test.ts measures the heap after `global.gc()`
    execArgv: ['--expose-gc'],
  },
});
