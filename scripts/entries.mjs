// The package's entry points: subpath export → source file. tsup.config.ts builds one entry per
// row; `node scripts/entries.mjs --write` rewrites package.json `exports` to match; the smoke test
// imports every subpath from the built package.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const entries = {
  '.': 'src/index.ts',
  './operators': 'src/operators/index.ts',
  './message-list': 'src/message-list/index.ts',
  './testing': 'src/testing/index.ts',
  './processors': 'src/processors/index.ts',
  './ai-sdk': 'src/ai-sdk/index.ts',
  './memory': 'src/memory/index.ts',
  './storage/libsql': 'src/storage/libsql/index.ts',
  './storage/postgres': 'src/storage/postgres/index.ts',
};

/** The dist base name of an entry (`.` → `index`, `./storage/libsql` → `storage/libsql`). */
export const outName = (subpath) => (subpath === '.' ? 'index' : subpath.slice(2));

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes('--write')) {
  const pkgPath = new URL('../package.json', import.meta.url);
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
  pkg.exports = Object.fromEntries([
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
    ['./package.json', './package.json'],
  ]);
  writeFileSync(pkgPath, JSON.stringify(pkg, null, 2) + '\n');
  console.log(`exports: ${Object.keys(entries).join(', ')}`);
}
