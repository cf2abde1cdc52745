import { defineConfig } from 'tsup';

/** One tsup entry per package.json subpath export (keep the two lists in step; `npm run smoke` checks). */
export const entries = {
  index: 'src/index.ts',
} as const;

export default defineConfig({
  entry: entries,
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node22',
  splitting: true,
  treeshake: true,
});
