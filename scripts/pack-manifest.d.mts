/** Types of `scripts/pack-manifest.mjs` (npm's `prepack` / `postpack`: the packed package.json has no `prepare`), for TypeScript importers. */
export declare function packedManifest(text: string): string;
export declare function packManifest(root: string, command: 'strip' | 'restore'): void;
