import { cpSync } from 'node:fs';
import { defineConfig } from 'tsup';
import { entries, outName } from './scripts/entries.mjs';
import { flattenEntryImportsPlugin } from './scripts/flatten-entry-imports.mjs';

const entryMap = entries as Record<string, string>;
const toOut = outName as (subpath: string) => string;

export default defineConfig({
  entry: Object.fromEntries(Object.entries(entryMap).map(([subpath, source]) => [toOut(subpath), source])),
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node22',
  splitting: true,
  treeshake: true,
  // No `keepNames`: it wraps every function in a `__name(f, 'f')` call (an `Object.defineProperty`
  // and a property dictionary per closure made at run time, ≈ 11 KiB per in-flight stream, see
  // bench/README.md). Exported classes keep their names without it (none refers to itself by name
  // in its own body, which is what makes esbuild rename it to `_Name`); `smoke/export-names.mjs`
  // checks every export of both builds.
  // Imports of another layer's entry file (src/<layer>/index.ts, the lint rule) are pointed at the
  // declaring modules, so code splitting gives each entry only what it uses: scripts/flatten-entry-imports.mjs.
  esbuildPlugins: [flattenEntryImportsPlugin()],
  // the inspector page's static files (plain HTML/JS/CSS) beside the built entries: dist/inspector-page/
  onSuccess: async () => {
    cpSync('src/devtools/inspector-page', 'dist/inspector-page', { recursive: true });
  },
  external: ['rxjs', 'ai', 'zod', '@ai-sdk/provider', '@ai-sdk/provider-utils', '@libsql/client', 'pg', 'pg-boss', '@opentelemetry/api'],
});
