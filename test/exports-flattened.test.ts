/**
 * src/processors, src/testing and src/ai-sdk import the layers below through their entry files
 * (`src/<layer>/index.ts`, the `upper-layers-through-entry-files` lint rule); the build points each
 * such import at the declaring module (scripts/flatten-entry-imports.mjs), so a package entry's
 * chunks hold only what it uses. These tests check the rewrite on every file it applies to.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { flattenEntryImports } from '../scripts/flatten-entry-imports.mjs';

const src = fileURLToPath(new URL('../src/', import.meta.url));

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? tsFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** `from '…'` specifiers of value statements (not `import type` / `export type`). */
function valueSpecifiers(code: string): string[] {
  return [...code.matchAll(/(?:^|;\s*)(import|export)\s+(?!type\s)[^;]*?\bfrom\s*'([^']+)';/gm)].map((match) => match[2] ?? '');
}

describe('flattenEntryImports', () => {
  const files = ['processors', 'testing', 'ai-sdk', 'devtools'].flatMap((layer) => tsFiles(join(src, layer))).filter((file) => !/[\\/]src[\\/][^\\/]+[\\/]index\.ts$/.test(file));

  it('leaves no value import of another layer’s entry file in src/processors, src/testing, src/ai-sdk, src/devtools', () => {
    expect(files.length).toBeGreaterThan(30);
    const left = files.flatMap((file) => {
      const flattened = flattenEntryImports(readFileSync(file, 'utf8'), file);
      return valueSpecifiers(flattened)
        .filter((specifier) => /^(\.\.\/)+[a-z-]+\/index\.js$/.test(specifier))
        .map((specifier) => `${file}: ${specifier}`);
    });
    expect(left).toEqual([]);
  });

  it('keeps the line count (source maps)', () => {
    for (const file of files) {
      const code = readFileSync(file, 'utf8');
      expect(flattenEntryImports(code, file).split('\n').length, file).toBe(code.split('\n').length);
    }
  });

  it('follows `export *` and renames, and keeps type-only names on the entry file', () => {
    const file = join(src, 'testing', 'example.ts');
    const code = "import {\n  isTextDeltaChunk,\n  TripWire as Wire,\n  type ChunkType,\n} from '../contract/index.js';\n";
    expect(flattenEntryImports(code, file)).toBe(
      "import { isTextDeltaChunk } from '../contract/chunk-guards.js'; import { TripWire as Wire } from '../contract/errors/trip-wire.js'; " +
        "import type { ChunkType } from '../contract/index.js';" +
        '\n'.repeat(5),
    );
  });

  it('follows an entry file re-exporting another (loop → model)', () => {
    const file = join(src, 'ai-sdk', 'example.ts');
    expect(flattenEntryImports("import { resolveModel } from '../loop/index.js';\n", file)).toBe(
      "import { resolveModel } from '../model/resolve-model.js';\n",
    );
  });

  it('leaves imports inside a layer, and entry-file imports from the same layer, alone', () => {
    const file = join(src, 'ai-sdk', 'internal', 'example.ts');
    const code = "import { toUIMessageStream } from '../index.js';\nimport { x } from './x.js';\n";
    expect(flattenEntryImports(code, file)).toBe(code);
  });

  it('fails on a name the entry file does not export, and on forms it cannot point', () => {
    const file = join(src, 'testing', 'example.ts');
    expect(() => flattenEntryImports("import { streamModel } from '../operators/index.js';\n", file)).toThrow(/does not export streamModel/);
    expect(() => flattenEntryImports("import * as contract from '../contract/index.js';\n", file)).toThrow(/named imports only/);
    expect(() => flattenEntryImports("export { TripWire } from '../contract/index.js';\n", file)).toThrow(/named imports only/);
  });
});
