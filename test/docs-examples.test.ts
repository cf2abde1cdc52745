/**
 * Every code block of docs/*.md runs in the suite as written, as README.md's do
 * (test/readme-examples.test.ts) and docs/agent.md's (test/examples/agent-doc.test.ts, its own file):
 *
 * - ```ts blocks are written to `.rxagent/docs/<page>/` (gitignored) under the name of their first
 *   line (`// state-example.ts`, else `block-<n>.ts`), type-checked together (strict, the repository
 *   tsconfig: `rxagent/…` resolve to the sources), then run: a block importing `vitest` is a test
 *   file whose tests are collected into this file; any other block is imported as a program and
 *   checks itself with `node:assert`; a page whose blocks read `DATABASE_URL` (docs/durable.md's
 *   "Durable in five minutes") runs them against the test PostgreSQL (`DATABASE_URL`, else a
 *   throwaway cluster: test/support/postgres.ts);
 * - ```sh blocks: every command is an npm script, `npm ci`/`npm install`, or a file of the repository;
 * - other languages are refused (a ```tsx block would need a JSX setup: write it without JSX);
 *   blocks without a language are diagrams and shapes, not code.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterAll, describe, expect, it, type RunnerTask } from 'vitest';
import { startTestPostgres } from './support/postgres.js';

interface Block {
  page: string;
  lang: string;
  code: string;
  line: number;
  file: string;
}

const root = resolve(import.meta.dirname, '..');
const docsDir = join(root, 'docs');
const scratch = join(root, '.rxagent', 'docs');
/** docs/agent.md has its own runner (test/examples/agent-doc.test.ts). */
const ownRunner = new Set(['agent.md']);
const pages = readdirSync(docsDir).filter((name) => name.endsWith('.md') && !ownRunner.has(name)).sort();

function blocksOf(page: string): Block[] {
  const markdown = readFileSync(join(docsDir, page), 'utf8');
  const blocks: Block[] = [];
  const fence = /^```([\w-]*)[^\n]*\n([\s\S]*?)^```[ \t]*$/gm;
  let index = 0;
  for (const match of markdown.matchAll(fence)) {
    const lang = match[1] ?? '';
    const code = match[2] ?? '';
    const named = /^\/\/ ([\w.-]+\.ts)\s*$/.exec(code.split('\n')[0] ?? '');
    index++;
    blocks.push({
      page,
      lang,
      code,
      line: markdown.slice(0, match.index).split('\n').length,
      file: join(scratch, basename(page, '.md'), named?.[1] ?? `block-${index}.ts`),
    });
  }
  return blocks;
}

const blocks = pages.flatMap(blocksOf);
const tsBlocks = blocks.filter((block) => block.lang === 'ts' || block.lang === 'typescript');
const isTestFile = (block: Block) => /from 'vitest'/.test(block.code);
const where = (block: Block) => `docs/${block.page}:${block.line}`;

rmSync(scratch, { recursive: true, force: true });
for (const block of tsBlocks) {
  mkdirSync(join(block.file, '..'), { recursive: true });
  writeFileSync(block.file, isTestFile(block) ? block.code : `${block.code}\nexport {};\n`);
}

// blocks that read DATABASE_URL run against the test PostgreSQL (CI's, else a throwaway cluster)
if (tsBlocks.some((block) => block.code.includes('process.env.DATABASE_URL'))) {
  const server = await startTestPostgres();
  process.env['DATABASE_URL'] = server.connectionString;
  afterAll(() => server.stop(), 60_000);
}

describe('docs test blocks (collected as written)', async () => {
  for (const block of tsBlocks.filter(isTestFile)) await import(pathToFileURL(block.file).href);
});

const testNames = (block: Block) => [...block.code.matchAll(/\b(?:it|test)\(\s*'([^']+)'/g)].map((match) => match[1]!);
const allTasks = (tasks: readonly RunnerTask[]): RunnerTask[] => tasks.flatMap((task) => [task, ...('tasks' in task ? allTasks(task.tasks) : [])]);

describe('docs code blocks', () => {
  it('the pages have code blocks (writing-a-processor, testing, processors, ai-sdk, memory among them)', () => {
    const pagesWithCode = new Set(tsBlocks.map((block) => block.page));
    for (const page of ['writing-a-processor.md', 'testing.md', 'processors.md', 'ai-sdk.md', 'memory.md']) expect(pagesWithCode, page).toContain(page);
    expect(tsBlocks.filter(isTestFile).length).toBeGreaterThanOrEqual(4);
  });

  it('every labelled block is ts or sh (no tsx, js or other code that would go unchecked)', () => {
    const other = blocks.filter((block) => block.lang !== '' && !['ts', 'typescript', 'sh', 'bash', 'text'].includes(block.lang));
    expect(other.map((block) => `${where(block)}: \`\`\`${block.lang}`)).toEqual([]);
  });

  it('block files are named uniquely per page', () => {
    const files = tsBlocks.map((block) => block.file);
    expect(new Set(files).size).toBe(files.length);
  });

  it('every ts block type-checks (strict, the repository tsconfig, rxagent/… by name)', () => {
    const parsed = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    });
    if (parsed === undefined) throw new Error('tsconfig.json did not parse');
    const files = tsBlocks.map((block) => block.file);
    const program = ts.createProgram({ rootNames: files, options: { ...parsed.options, noEmit: true } });
    const problems = files.flatMap((file) =>
      ts.getPreEmitDiagnostics(program, program.getSourceFile(file)).map((diagnostic) => {
        const at = diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start) : undefined;
        const block = tsBlocks.find((candidate) => candidate.file === diagnostic.file?.fileName);
        const location = block && at ? `docs/${block.page}:${block.line + 1 + at.line}` : (diagnostic.file?.fileName ?? 'docs');
        return `${location}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
      }),
    );
    expect(problems).toEqual([]);
  }, 180_000);

  for (const block of tsBlocks.filter((candidate) => !isTestFile(candidate))) {
    it(`${where(block)} runs and its assertions hold`, async () => {
      await import(pathToFileURL(block.file).href);
    }, 60_000);
  }

  it('the tests of the test-file blocks were collected and passed', ({ task }) => {
    const ran = allTasks(task.file.tasks);
    const names = tsBlocks.filter(isTestFile).flatMap(testNames);
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) {
      const found = ran.find((candidate) => candidate.type === 'test' && candidate.name === name);
      expect(found?.result?.state, `docs test "${name}"`).toBe('pass');
    }
  });

  it('every command of the shell blocks exists (npm scripts, npm ci / install, files)', () => {
    const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const commands = blocks
      .filter((block) => ['sh', 'bash'].includes(block.lang))
      .flatMap((block) => block.code.split('\n').map((line) => [block, line.replace(/#.*$/, '').trim()] as const))
      .flatMap(([block, line]) => line.split(/&&|\|\||;/).map((command) => [block, command.trim()] as const))
      .filter(([, command]) => command.length > 0);
    for (const [block, command] of commands) {
      const [tool, sub, name] = command.split(/\s+/);
      if (tool === 'npm' && (sub === 'ci' || sub === 'install' || sub === 'i')) continue;
      if (tool === 'npx' && sub !== undefined) continue;
      if (tool === 'npm' && (sub === 'test' || sub === 't')) expect(scripts, `${where(block)}: ${command}`).toHaveProperty('test');
      else if (tool === 'npm' && sub === 'run') expect(Object.keys(scripts), `${where(block)}: ${command}`).toContain(name);
      else expect(existsSync(join(root, tool!)), `${where(block)}: ${command}: not an npm script nor a file of the repository`).toBe(true);
    }
  });

  it('links between the docs pages point at pages that exist', () => {
    for (const page of pages) {
      const markdown = readFileSync(join(docsDir, page), 'utf8');
      for (const match of markdown.matchAll(/\]\(([\w.-]+\.md)(?:#[\w-]+)?\)/g)) expect(existsSync(join(docsDir, match[1]!)), `docs/${page} → ${match[1]}`).toBe(true);
    }
  });
});
