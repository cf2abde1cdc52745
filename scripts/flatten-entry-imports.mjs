// An esbuild plugin (tsup.config.ts) that gives the bundler the import graph the lint rule hides.
//
// `.dependency-cruiser.cjs` makes src/processors, src/testing and src/ai-sdk import the layers below
// only through their entry files (`src/<layer>/index.ts`). With code splitting, esbuild assigns a
// module to every entry point whose files import it, following each file's import records whether
// or not a name is used (tree shaking then removes unused code inside a chunk, not the chunk from an
// entry's imports). An entry file is a list of `export … from` records, so `rxagent/testing`,
// importing one name from `src/operators/index.ts`, would load every chunk of `rxagent/operators`
// (+50–90 % per entry; `/* @__PURE__ */` cannot help: a module of plain functions is pulled in the
// same way).
//
// So, at build time only: each named value import from another layer's entry file is rewritten to
// import the name from the module that defines it (following `export { … } from` and
// `export * from` through entry files), and the built chunks are what direct imports would give.
// Type-only imports are left alone (esbuild erases them). Line count is kept (source maps). An
// entry file holding anything but re-exports, or a name it does not re-export, fails the build.
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));
const fromSrc = (file) => relative(SRC, file).replaceAll('\\', '/');
/** The layer of `src/<layer>/…` (undefined outside a layer folder). */
const layerOf = (file) => (/^([^./][^/]*)\/./.exec(fromSrc(file)) ?? [])[1];
/** `src/<layer>/index.ts`, a layer's entry file. */
const isEntryFile = (file) => /^[^./][^/]*\/index\.ts$/.test(fromSrc(file));
const IMPORT = /^import\s+(type\s+)?\{([^}]*)\}\s*from\s*'([^']+)';/gm;
const RE_EXPORT = /^export\s+(type\s+)?(?:\{([^}]*)\}|\*)\s*from\s*'([^']+)';/gm;
const DECLARED = /^export\s+(?:declare\s+)?(?:async\s+)?(?:function\*?|const|let|var|class|abstract\s+class|enum)\s+([A-Za-z_$][\w$]*)/gm;

const tsPath = (specifier, fromDir) => resolve(fromDir, specifier.replace(/\.js$/, '.ts'));
const withoutComments = (code) => code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');

/** `a`, `a as b`, `type T` → `{ name, local, type }`. */
function specifiers(list) {
  return list
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
    .map((item) => {
      const type = item.startsWith('type ');
      const [name, local = name] = (type ? item.slice(5) : item).split(/\s+as\s+/).map((part) => part.trim());
      return { name, local, type };
    });
}

/**
 * The value names an entry file re-exports: exported name → `{ file, name }` where it is declared.
 * Cached per build.
 */
function entryExports(file, cache) {
  const known = cache.get(file);
  if (known) return known;
  const code = withoutComments(readFileSync(file, 'utf8'));
  const leftover = code.replace(RE_EXPORT, '').trim();
  if (leftover !== '') throw new Error(`flatten-entry-imports: ${file} is an entry file but holds more than re-exports: ${leftover.slice(0, 80)}`);
  const names = new Map();
  for (const [, typeOnly, list, specifier] of code.matchAll(RE_EXPORT)) {
    if (typeOnly) continue;
    const target = tsPath(specifier, dirname(file));
    if (list === undefined) {
      for (const [name, origin] of moduleExports(target, cache)) if (!names.has(name)) names.set(name, origin);
      continue;
    }
    for (const { name, local, type } of specifiers(list)) if (!type) names.set(local, origin(target, name, cache));
  }
  cache.set(file, names);
  return names;
}

/** Where `name`, exported by `file`, is declared (through entry files). */
function origin(file, name, cache) {
  if (!isEntryFile(file)) return { file, name };
  const found = entryExports(file, cache).get(name);
  if (!found) throw new Error(`flatten-entry-imports: ${file} does not export ${name}`);
  return found;
}

/** The value names `file` exports (an entry file's re-exports, or a module's own declarations). */
function moduleExports(file, cache) {
  if (isEntryFile(file)) return entryExports(file, cache);
  const names = new Map();
  for (const [, name] of readFileSync(file, 'utf8').matchAll(DECLARED)) names.set(name, { file, name });
  return names;
}

/** Any statement with a `from '…'` clause (imports and re-exports, one line or several). */
const FROM = /^(import|export)\s+(type\s+)?[^;]*?\bfrom\s*'([^']+)';/gm;

/** The other layer's entry file `specifier` (seen from `file`) names, or undefined. */
function otherEntry(specifier, file) {
  if (!specifier.startsWith('.')) return undefined;
  const target = tsPath(specifier, dirname(file));
  return isEntryFile(target) && layerOf(target) !== layerOf(file) ? target : undefined;
}

/**
 * `code` of `file` with its value imports from other layers' entry files pointed at the declaring
 * modules. Throws on a form it cannot point (`import * as`, a default import, `export … from` an
 * entry file of another layer, `import()`): esbuild would then give the entry the whole layer.
 */
export function flattenEntryImports(code, file, cache = new Map()) {
  const flattened = code.replace(IMPORT, (statement, typeOnly, list, specifier) => {
    const target = typeOnly ? undefined : otherEntry(specifier, file);
    if (!target) return statement;
    const byModule = new Map();
    const types = [];
    for (const { name, local, type } of specifiers(list)) {
      if (type) {
        types.push(name === local ? name : `${name} as ${local}`);
        continue;
      }
      const found = origin(target, name, cache);
      const path = relative(dirname(file), found.file).replaceAll('\\', '/').replace(/\.ts$/, '.js');
      const from = path.startsWith('.') ? path : `./${path}`;
      if (!byModule.has(from)) byModule.set(from, []);
      byModule.get(from).push(found.name === local ? local : `${found.name} as ${local}`);
    }
    const lines = [...byModule].map(([from, names]) => `import { ${names.join(', ')} } from '${from}';`);
    if (types.length > 0) lines.push(`import type { ${types.join(', ')} } from '${specifier}';`);
    return lines.join(' ') + '\n'.repeat((statement.match(/\n/g) ?? []).length);
  });
  for (const [statement, , typeOnly, specifier] of flattened.matchAll(FROM)) {
    if (typeOnly || !otherEntry(specifier, file)) continue;
    throw new Error(`flatten-entry-imports: ${file}: write \`import { … } from '${specifier}'\` (named imports only): ${statement.slice(0, 80)}`);
  }
  for (const [, specifier] of flattened.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)) {
    if (otherEntry(specifier, file)) throw new Error(`flatten-entry-imports: ${file}: import('${specifier}') of another layer's entry file`);
  }
  return flattened;
}

/** The esbuild plugin: applies {@link flattenEntryImports} to every `src/**.ts` but the entry files. */
export function flattenEntryImportsPlugin() {
  return {
    name: 'flatten-entry-imports',
    setup(build) {
      const cache = new Map();
      build.onStart(() => cache.clear());
      build.onLoad({ filter: /\.ts$/ }, ({ path }) => {
        if (layerOf(path) === undefined || isEntryFile(path)) return undefined;
        const code = readFileSync(path, 'utf8');
        const flattened = flattenEntryImports(code, path, cache);
        return flattened === code ? undefined : { contents: flattened, loader: 'ts', resolveDir: dirname(path) };
      });
    },
  };
}
