/** Types of `scripts/entries.mjs` (the package's entry table), for TypeScript importers. */
export declare const entries: Record<string, string>;
export declare function outName(subpath: string): string;
