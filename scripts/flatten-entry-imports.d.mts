/** Types of `scripts/flatten-entry-imports.mjs` (the build's entry-file import flattening), for TypeScript importers. */
import type { Plugin } from 'esbuild';

export declare function flattenEntryImports(code: string, file: string, cache?: Map<string, unknown>): string;
export declare function flattenEntryImportsPlugin(): Plugin;
