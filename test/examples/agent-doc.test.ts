/**
 * docs/agent.md is run, not just read: every ```ts block is extracted at test time, its `rxagent`
 * / `rxagent/*` imports pointed at the sources (so no build is needed), written under
 * `.rxagent/doc-snippets/` (gitignored), type-checked with the project's compiler options, and
 * imported. Each block checks itself with `node:assert`, so a wrong field name, a changed default
 * or a stale example fails here.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const page = readFileSync(join(root, 'docs/agent.md'), 'utf8');
const outDir = join(root, '.rxagent/doc-snippets');

/** The page's ```ts blocks with the line each starts on. */
function tsBlocks(markdown: string): Array<{ line: number; code: string }> {
  const blocks: Array<{ line: number; code: string }> = [];
  const fence = /^```ts\n([\s\S]*?)^```$/gm;
  for (let match = fence.exec(markdown); match !== null; match = fence.exec(markdown)) {
    blocks.push({ line: markdown.slice(0, match.index).split('\n').length, code: match[1] ?? '' });
  }
  return blocks;
}

/** `'rxagent'` → `src/index.ts`, `'rxagent/x'` → `src/x/index.ts` (the subpaths package.json exports). */
function pointAtSources(code: string, fromDir: string): string {
  const exportsMap = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown> }).exports;
  return code.replace(/from '(rxagent(?:\/[\w/-]+)?)'/g, (_, specifier: string) => {
    const subpath = specifier === 'rxagent' ? '.' : `.${specifier.slice('rxagent'.length)}`;
    if (!(subpath in exportsMap)) throw new Error(`docs/agent.md imports ${specifier}, which package.json does not export`);
    const source = subpath === '.' ? 'src/index.js' : `src/${subpath.slice(2)}/index.js`;
    return `from '${relative(fromDir, join(root, source)).replaceAll('\\', '/')}'`;
  });
}

const blocks = tsBlocks(page);
rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });
const files = blocks.map(({ code }, index) => {
  const file = join(outDir, `agent-${String(index + 1).padStart(2, '0')}.ts`);
  writeFileSync(file, `${pointAtSources(code, dirname(file))}\nexport {};\n`);
  return file;
});

describe('docs/agent.md', () => {
  it('has runnable examples for each section', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(10);
    for (const { code, line } of blocks) expect(code, `block at line ${line}`).toMatch(/from 'rxagent(\/[\w/-]+)?'/);
  });

  it('every block type-checks (strict, the project tsconfig)', () => {
    const parsed = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    });
    const program = ts.createProgram(files, { ...parsed?.options, noEmit: true });
    const problems = files.flatMap((file) =>
      ts.getPreEmitDiagnostics(program, program.getSourceFile(file)).map((diagnostic) => {
        const where = diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start) : undefined;
        const block = blocks[files.indexOf(file)];
        return `docs/agent.md:${(block?.line ?? 0) + (where?.line ?? 0) + 1}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`;
      }),
    );
    expect(problems).toEqual([]);
  }, 180_000);

  for (const [index, { line }] of blocks.entries()) {
    it(`block ${index + 1} (docs/agent.md:${line}) runs and its assertions hold`, async () => {
      await import(pathToFileURL(files[index] ?? '').href);
    });
  }
});
