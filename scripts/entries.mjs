// The package's entry points: subpath export → source file. One table, three uses:
// - tsup.config.ts builds one entry per row;
// - `node scripts/entries.mjs --write` rewrites package.json `exports` (the built files) and
//   tsconfig.json `paths` (`rxagent/…` → the source file) to match; `--check` fails when they differ;
// - vitest.config.ts aliases `rxagent/…` to the source files (`sourceAliases`).
// So examples, README code and tests import `rxagent` and `rxagent/*` by name and run on the sources
// without a build (tsx reads tsconfig `paths`, vitest the aliases, tsc the paths), while the published
// package resolves the same names through `exports` to dist/. The smoke test imports every subpath
// from the built package.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const entries = {
  '.': 'src/index.ts',
  './operators': 'src/operators/index.ts',
  './loop': 'src/loop/public.ts',
  './message-list': 'src/message-list/index.ts',
  './testing': 'src/testing/index.ts',
  './processors': 'src/processors/index.ts',
  './ai-sdk': 'src/ai-sdk/index.ts',
  './devtools': 'src/devtools/index.ts',
  './memory': 'src/memory/index.ts',
  './storage/libsql': 'src/storage/libsql/index.ts',
  './storage/postgres': 'src/storage/postgres/index.ts',
  './durable': 'src/durable/index.ts',
};

/** The dist base name of an entry (`.` → `index`, `./storage/libsql` → `storage/libsql`). */
export const outName = (subpath) => (subpath === '.' ? 'index' : subpath.slice(2));

/** The import specifier of an entry (`.` → `rxagent`, `./operators` → `rxagent/operators`). */
export const specifier = (subpath) => (subpath === '.' ? 'rxagent' : `rxagent/${subpath.slice(2)}`);

/** package.json `exports` for the entries (ESM + CJS, with their declarations). */
export function packageExports() {
  return Object.fromEntries([
    ...Object.keys(entries).map((subpath) => {
      const out = outName(subpath);
      return [
        subpath,
        {
          import: { types: `./dist/${out}.d.ts`, default: `./dist/${out}.js` },
          require: { types: `./dist/${out}.d.cts`, default: `./dist/${out}.cjs` },
        },
      ];
    }),
    // the declaration chunks the entries share, by name (scripts/readable-declarations.mjs): types only,
    // so a consumer's compiler can name them (`import("rxagent/types/processor-types").ProcessInputArgs`)
    ['./types/*', { import: { types: './dist/types/*.d.ts' }, require: { types: './dist/types/*.d.cts' } }],
    ['./package.json', './package.json'],
  ]);
}

/**
 * package.json `typesVersions`: each subpath → its declarations, for TypeScript's legacy
 * `"moduleResolution": "node"` (node10), which ignores `exports` (older NestJS templates use it).
 */
export function packageTypesVersions() {
  return {
    '*': Object.fromEntries(
      Object.keys(entries)
        .filter((subpath) => subpath !== '.')
        .map((subpath) => [outName(subpath), [`./dist/${outName(subpath)}.d.ts`]])
        .concat([['types/*', ['./dist/types/*.d.ts']]]),
    ),
  };
}

/** tsconfig.json `compilerOptions.paths`: each `rxagent/…` name → its source file. */
export function tsconfigPaths() {
  return Object.fromEntries(Object.entries(entries).map(([subpath, source]) => [specifier(subpath), [`./${source}`]]));
}

/** Vite/vitest `resolve.alias` rows: each exact `rxagent/…` name → its source file (absolute). */
export function sourceAliases(root = new URL('..', import.meta.url)) {
  const escape = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return Object.entries(entries).map(([subpath, source]) => ({
    find: new RegExp(`^${escape(specifier(subpath))}$`),
    replacement: fileURLToPath(new URL(source, root)),
  }));
}

/** What differs between the files and the table (empty when in sync). */
export function entryDrift() {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const tsconfig = JSON.parse(readFileSync(new URL('../tsconfig.json', import.meta.url), 'utf8'));
  const drift = [];
  if (JSON.stringify(pkg.exports) !== JSON.stringify(packageExports())) drift.push('package.json exports');
  if (JSON.stringify(pkg.typesVersions) !== JSON.stringify(packageTypesVersions())) drift.push('package.json typesVersions');
  if (JSON.stringify(tsconfig.compilerOptions?.paths) !== JSON.stringify(tsconfigPaths())) drift.push('tsconfig.json paths');
  return drift;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--write')) {
    const pkgPath = new URL('../package.json', import.meta.url);
    const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
    pkg.exports = packageExports();
    pkg.typesVersions = packageTypesVersions();
    writeFileSync(pkgPath, JSON.stringify(pkg, null, 2) + '\n');
    const tsconfigPath = new URL('../tsconfig.json', import.meta.url);
    const tsconfig = JSON.parse(readFileSync(tsconfigPath, 'utf8'));
    tsconfig.compilerOptions.paths = tsconfigPaths();
    // arrays of strings on one line, as the file is written by hand
    const text = JSON.stringify(tsconfig, null, 2).replace(/\[\s*("[^"\n]*"(?:,\s*"[^"\n]*")*)\s*\]/g, (_, items) => `[${items.split(/,\s*/).join(', ')}]`);
    writeFileSync(tsconfigPath, text + '\n');
    console.log(`exports, typesVersions and paths: ${Object.keys(entries).join(', ')}`);
  } else if (process.argv.includes('--check')) {
    const drift = entryDrift();
    if (drift.length > 0) {
      console.error(`entries: ${drift.join(', ')} out of date: run \`node scripts/entries.mjs --write\``);
      process.exit(1);
    }
    console.log('entries: package.json exports, typesVersions and tsconfig.json paths match scripts/entries.mjs');
  }
}
