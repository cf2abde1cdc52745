import { defineConfig } from 'vitest/config';
// @ts-expect-error -- plain ESM helper shared with tsup.config.ts and the export sync script (no type declarations)
import { sourceAliases } from './scripts/entries.mjs';

// Type tests (`test/**/*.test-d.ts`) are checked by `npm run typecheck` (tsc over src, test,
// examples, bench): `expectTypeOf` assertions are compile-time, so tsc fails on a wrong one.
export default defineConfig({
  // `rxagent` and `rxagent/*` imported by name (README code, examples) run on the sources, no build
  resolve: { alias: (sourceAliases as () => Array<{ find: RegExp; replacement: string }>)() },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 60_000,
    // test/reliability/leaks.test.ts measures the heap after `global.gc()`
    execArgv: ['--expose-gc'],
  },
});
