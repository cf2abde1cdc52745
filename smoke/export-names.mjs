// Every exported class and function of every entry point has the `name` it is exported under, in
// the ESM and the CJS build. The build runs without esbuild's `keepNames` (it wraps every function
// in a `__name` call, ≈ 11 KiB per in-flight stream); without it esbuild renames a class that
// refers to itself inside its own body (`MessageList` → `_MessageList`), so a regression shows up
// here, not in a user's stack trace or `error.name`/`constructor.name` check.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const require = createRequire(import.meta.url);

/**
 * Exports whose `name` differs on purpose, as `specifier:export` → the expected `name`:
 * - `TokenLimiter` is an alias of `TokenLimiterProcessor` (the reference's two names for one class);
 * - the per-kind chunk guards (`isTextDeltaChunk`, … in src/contract/chunk-guards.ts) are made by
 *   one factory, `const isX = guard('x')`: anonymous arrows in the sources too (tsx, vitest), not a
 *   bundling artefact. Only those exports may be anonymous: see `anonymousGuard`.
 */
const exceptions = new Map([
  ['rxagent/processors:TokenLimiter', 'TokenLimiterProcessor'],
]);
const anonymousGuard = (specifier, exportName) => specifier === 'rxagent' && /^is[A-Z][A-Za-z]*Chunk$/.test(exportName);

const problems = [];
let checked = 0;
for (const subpath of Object.keys(pkg.exports).filter((key) => key !== './package.json' && !key.includes('*'))) {
  const specifier = subpath === '.' ? 'rxagent' : `rxagent/${subpath.slice(2)}`;
  const builds = { esm: await import(specifier), cjs: require(specifier) };
  for (const [format, module] of Object.entries(builds)) {
    for (const [exportName, value] of Object.entries(module)) {
      if (typeof value !== 'function') continue;
      checked++;
      const expected = exceptions.get(`${specifier}:${exportName}`) ?? exportName;
      if (value.name === '' && anonymousGuard(specifier, exportName)) continue;
      if (value.name !== expected) problems.push(`${specifier} (${format}) ${exportName}.name === ${JSON.stringify(value.name)}`);
    }
  }
}
if (problems.length > 0) throw new Error(`exported names differ from their export:\n  ${problems.join('\n  ')}`);
console.log(`smoke export names: ok (${checked} functions and classes, esm + cjs)`);
