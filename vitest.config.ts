import { defineConfig } from 'vitest/config';
// @ts-expect-error -- plain ESM helper shared with tsup.config.ts and the export sync script (no type declarations)
import { sourceAliases } from './scripts/entries.mjs';

// The pacing tests run a second time with `rxjs` resolved to RxJS 8's alpha (the `rxjs8`
// devDependency): pacing must not rely on what RxJS 8 removes from the public API (`lift`).
const PACING_TESTS = ['test/ai-sdk/ui-stream-backpressure.test.ts', 'test/loop/stream-pacing.test.ts'];

// Type tests (`test/**/*.test-d.ts`) are checked by `npm run typecheck` (tsc over src, test,
// examples, bench): `expectTypeOf` assertions are compile-time, so tsc fails on a wrong one.
export default defineConfig({
  // `rxagent` and `rxagent/*` imported by name (README code, examples) run on the sources, no build
  resolve: { alias: (sourceAliases as () => Array<{ find: RegExp; replacement: string }>)() },
  test: {
    testTimeout: 20_000,
    hookTimeout: 60_000,
    // test/reliability/leaks.test.ts measures the heap after `global.gc()`
    execArgv: ['--expose-gc'],
    projects: [
      { extends: true, test: { name: 'rxjs7', include: ['test/**/*.test.ts'], env: { RXAGENT_TEST_RXJS: '7' } } },
      {
        extends: true,
        test: { name: 'rxjs8', include: PACING_TESTS, env: { RXAGENT_TEST_RXJS: '8' } },
        resolve: { alias: [{ find: /^rxjs(\/testing)?$/, replacement: 'rxjs8$1' }] },
      },
    ],
  },
});
