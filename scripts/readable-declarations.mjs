// After `tsup`: the declaration chunks the entries share get names a user can read.
//
// tsup bundles declarations with rollup, which exports a shared chunk's types under one-letter
// aliases (`export { type ProcessInputArgs as B }`) from a file named with a hash
// (`dist/processor-types-Dn-wCXko.d.ts`). A consumer's compiler then prints
// `import("rxagent/dist/processor-types-Dn-wCXko").B` in declarations it emits and in errors, and
// under `"moduleResolution": "bundler"` or NodeNext cannot name such a type at all (TS2742: "cannot be
// named without a reference to …/dist/processor-types-Dn-wCXko").
//
// This script, run by `npm run build` after tsup:
// - exports every chunk's declarations under their own names (`export { type ProcessInputArgs }`),
//   rewriting the entries' and other chunks' imports (`import { B as ProcessInputArgs } from …`);
// - moves the chunks to `dist/types/<name>.d.ts` / `.d.cts` without the hash,
//   so `rxagent/types/<name>` — a declarations-only subpath in package.json `exports` and
//   `typesVersions` — names them the same from one build to the next. (Several chunks of one name,
//   like rollup's `types`, are told apart by their alphabetically first export, for both formats alike.)
//
// Usage: node scripts/readable-declarations.mjs [distDir]   (default: dist)
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { entries, outName } from './entries.mjs';

const dist = process.argv[2] ?? 'dist';
const chunkName = /^(?<name>.+)-[A-Za-z0-9_-]{8}\.d\.(?<ext>c?ts)$/;
const exportList = /export (type )?\{([^}]*)\};\s*$/;

/** `type X as B` → `{ local: 'X', exported: 'B', type: true }`. */
function parseSpecifiers(list) {
  return list
    .split(',')
    .map((text) => text.trim())
    .filter((text) => text !== '')
    .map((text) => {
      const type = text.startsWith('type ');
      const [local, exported] = (type ? text.slice(5) : text).split(/\s+as\s+/);
      return { local, exported: exported ?? local, type };
    });
}

const files = readdirSync(dist, { recursive: true })
  .map(String)
  .map((file) => file.split('\\').join('/'))
  .filter((file) => /\.d\.c?ts$/.test(file));
if (files.some((file) => file.startsWith('types/'))) throw new Error('readable-declarations: dist/types exists already (run once per build)');

const entryFiles = new Set(Object.keys(entries).map(outName));

/** Each chunk file: its new path (relative to dist), its alias → own-name map. */
const chunks = new Map();
const groups = new Map();
for (const file of files) {
  const match = chunkName.exec(file);
  if (match === null || entryFiles.has(file.replace(/\.d\.c?ts$/, ''))) continue;
  const text = readFileSync(join(dist, file), 'utf8');
  const exports = exportList.exec(text);
  if (exports === null) throw new Error(`readable-declarations: ${file} has no export list`);
  const specifiers = parseSpecifiers(exports[2]);
  const renames = new Map(specifiers.map(({ local, exported }) => [exported, local]));
  const key = `${match.groups.name}.${match.groups.ext}`;
  const chunk = { file, name: match.groups.name, ext: match.groups.ext, text, exports, specifiers, renames, signature: specifiers.map(({ local }) => local).sort().join(',') };
  chunks.set(file, chunk);
  groups.set(key, [...(groups.get(key) ?? []), chunk]);
}
for (const group of groups.values()) {
  group.sort((a, b) => (a.signature < b.signature ? -1 : a.signature > b.signature ? 1 : 0));
  const kebab = (name) => name.replace(/\$\d*$/, '').replace(/([a-z0-9])([A-Z])/g, '$1-$2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1-$2').toLowerCase();
  const taken = new Set();
  for (const chunk of group) {
    // one chunk of a name keeps it; several are told apart by their first export (`types-mastra-db-message`)
    let name = group.length === 1 ? chunk.name : `${chunk.name}-${kebab(chunk.signature.split(',')[0])}`;
    for (let n = 2; taken.has(name); n += 1) name = `${chunk.name}-${n}`;
    taken.add(name);
    chunk.target = `types/${name}.d.${chunk.ext}`;
  }
}

/** The chunk a relative specifier (`../processor-types-Dn-wCXko.js` from `dir`) points at, if any. */
function chunkOf(specifier, ext, dir) {
  const base = posix.join(dir, specifier).replace(/\.(c?js)$/, '');
  return chunks.get(`${base}.d.${ext}`);
}

/** The specifier of `chunk`'s new file from a file in `dir` (both relative to dist). */
function moved(chunk, dir) {
  const js = chunk.target.replace(/\.d\.cts$/, '.cjs').replace(/\.d\.ts$/, '.js');
  const relative = posix.relative(dir, js);
  return relative.startsWith('.') ? relative : `./${relative}`;
}

/** `text` (a file of `dir`) with its imports of chunks pointed at their new files and own names. */
function rewrite(text, ext, fromDir, toDir) {
  // import { B as ProcessInputArgs, R as RequestContext } from './chunk.js';  (also `export { … } from`)
  let out = text.replace(/\{([^{}]*)\}(\s*from\s*)'(\.\.?\/[^']+)'/g, (whole, list, from, specifier) => {
    const chunk = chunkOf(specifier, ext, fromDir);
    if (chunk === undefined) return whole;
    const items = parseSpecifiers(list).map(({ local, exported, type }) => {
      // in an import, `exported` is the importer's name and `local` the chunk's export
      const own = chunk.renames.get(local);
      if (own === undefined) throw new Error(`readable-declarations: ${chunk.file} exports no ${local}`);
      return `${type ? 'type ' : ''}${own === exported ? own : `${own} as ${exported}`}`;
    });
    return `{ ${items.join(', ')} }${from}'${moved(chunk, toDir)}'`;
  });
  // import("./chunk.js").B
  out = out.replace(/import\("(\.\.?\/[^"]+)"\)\.([\w$]+)/g, (whole, specifier, name) => {
    const chunk = chunkOf(specifier, ext, fromDir);
    if (chunk === undefined) return whole;
    return `import("${moved(chunk, toDir)}").${chunk.renames.get(name) ?? name}`;
  });
  return out;
}

mkdirSync(join(dist, 'types'), { recursive: true });
for (const file of files) {
  const chunk = chunks.get(file);
  const ext = file.endsWith('.d.cts') ? 'cts' : 'ts';
  const dir = posix.dirname(file);
  if (chunk === undefined) {
    writeFileSync(join(dist, file), rewrite(readFileSync(join(dist, file), 'utf8'), ext, dir, dir));
    continue;
  }
  const own = chunk.specifiers.map(({ local, type }) => `${type ? 'type ' : ''}${local}`).join(', ');
  const text = chunk.text.slice(0, chunk.exports.index) + `export ${chunk.exports[1] ?? ''}{ ${own} };\n`;
  writeFileSync(join(dist, chunk.target), rewrite(text, ext, dir, 'types'));
  rmSync(join(dist, file));
}
console.log(`readable-declarations: ${chunks.size} chunks → dist/types/ (${[...chunks.values()].map((chunk) => chunk.target.slice(6)).sort().join(', ')})`);
