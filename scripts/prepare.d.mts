/** Types of `scripts/prepare.mjs` (npm's `prepare`: build dist/ on install when needed), for TypeScript importers. */
export declare function prepareDecision(root: string, env: Record<string, string | undefined>): { build: boolean; reason: string };
