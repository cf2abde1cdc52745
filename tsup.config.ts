import { defineConfig } from 'tsup';
import { entries, outName } from './scripts/entries.mjs';

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
  // Class and function names survive bundling: `ProcessorError`, not `_ProcessorError`, in stack traces.
  esbuildOptions(options) {
    options.keepNames = true;
  },
  external: ['rxjs', 'ai', 'zod', '@ai-sdk/provider', '@ai-sdk/provider-utils', '@libsql/client', 'pg', '@opentelemetry/api'],
});
