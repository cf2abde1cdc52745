/**
 * README.md's code blocks, extracted at test time and run as written, so README and code cannot drift:
 *
 * - `ts` blocks are written to `.rxagent/readme/` (gitignored) under the name of their first line
 *   (`// no-secrets.ts`, else `block-<n>.ts`), type-checked together with the repository's
 *   tsconfig (`rxagent/…` resolve to the sources through its `paths`), then run: a block that
 *   imports `vitest` is a test file and its tests are collected into this file (they run below,
 *   named after the block); any other block runs as a program (`tsx`), as a user would run it;
 * - shell blocks: every command is an npm script, `npm ci` or an existing file;
 * - the layout block: every path it lists exists;
 * - every `rxagent/…` the README names is a published entry point.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it, type RunnerTask } from 'vitest';
// @ts-expect-error -- plain ESM helper (no type declarations)
import { entries, specifier } from '../scripts/entries.mjs';

interface Block {
  lang: string;
  code: string;
  line: number;
  file?: string;
}

const root = resolve(import.meta.dirname, '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const scratch = join(root, '.rxagent', 'readme');

function codeBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const fence = /^```([\w-]*)[^\n]*\n([\s\S]*?)^```[ \t]*$/gm;
  for (const match of markdown.matchAll(fence)) {
    blocks.push({ lang: match[1] ?? '', code: match[2] ?? '', line: markdown.slice(0, match.index).split('\n').length });
  }
  return blocks;
}

const blocks = codeBlocks(readme);
const tsBlocks = blocks.filter((block) => block.lang === 'ts' || block.lang === 'typescript');
tsBlocks.forEach((block, index) => {
  const named = /^\/\/ ([\w./-]+\.tsx?)\s*$/m.exec(block.code.split('\n')[0] ?? '');
  block.file = join(scratch, named?.[1] ?? `block-${index + 1}.ts`);
});
const isTestFile = (block: Block) => /from 'vitest'/.test(block.code);

rmSync(scratch, { recursive: true, force: true });
mkdirSync(scratch, { recursive: true });
for (const block of tsBlocks) writeFileSync(block.file!, block.code);

// The test-file blocks are collected here, at this file's collection: their `it`s become tests of
// this file and run first; a test below checks that each ran and passed.
describe('README test blocks (collected as written)', async () => {
  for (const block of tsBlocks.filter(isTestFile)) await import(block.file!);
});

const testNames = (block: Block) => [...block.code.matchAll(/\b(?:it|test)\(\s*'([^']+)'/g)].map((match) => match[1]!);
const allTasks = (tasks: readonly RunnerTask[]): RunnerTask[] => tasks.flatMap((task) => [task, ...('tasks' in task ? allTasks(task.tasks) : [])]);

describe('README code blocks', () => {
  it('has the blocks this test expects (ts, sh, the layout)', () => {
    expect(tsBlocks.length).toBeGreaterThanOrEqual(3);
    expect(tsBlocks.filter(isTestFile).length).toBeGreaterThanOrEqual(1);
    expect(blocks.some((block) => block.lang === 'sh')).toBe(true);
  });

  it('the tests of the test-file blocks were collected and passed', ({ task }) => {
    const ran = allTasks(task.file.tasks);
    const names = tsBlocks.filter(isTestFile).flatMap(testNames);
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) {
      const found = ran.find((candidate) => candidate.type === 'test' && candidate.name === name);
      expect(found?.result?.state, `README test "${name}"`).toBe('pass');
    }
  });

  it('every ts block type-checks (strict, the repository tsconfig, rxagent/… by name)', () => {
    const parsed = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    });
    if (parsed === undefined) throw new Error('tsconfig.json did not parse');
    const files = tsBlocks.map((block) => block.file!);
    const program = ts.createProgram({ rootNames: files, options: { ...parsed.options, noEmit: true } });
    const problems = files.flatMap((file) =>
      ts.getPreEmitDiagnostics(program, program.getSourceFile(file)).map((diagnostic) => {
        const where = diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start) : undefined;
        const block = tsBlocks.find((candidate) => candidate.file === diagnostic.file?.fileName);
        const line = block && where ? `README.md:${block.line + 1 + where.line}` : (diagnostic.file?.fileName ?? 'README');
        return `${line}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
      }),
    );
    expect(problems).toEqual([]);
  }, 120_000);

  it.each(tsBlocks.filter((block) => !isTestFile(block) && !block.file!.endsWith('/agent.ts')).map((block) => [block.line, block] as const))(
    'the ts block at line %i runs as a program without an error',
    (_line, block) => {
      const output = execFileSync(process.execPath, ['--import', 'tsx', block.file!], {
        cwd: root,
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, OPENAI_API_KEY: '' },
      });
      expect(typeof output).toBe('string');
    },
    90_000,
  );

  it('the agent block runs and prints what its comments say', () => {
    const block = tsBlocks.find((candidate) => candidate.file?.endsWith('agent.ts'));
    expect(block).toBeDefined();
    const output = execFileSync(process.execPath, ['--import', 'tsx', block!.file!], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    expect(output).toContain('"" Secret in output');
    expect(output.split('\n')).toContain('finish');
  }, 90_000);

  it('every command of the shell blocks exists (npm scripts, npm ci, files)', () => {
    const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const commands = blocks
      .filter((block) => ['sh', 'bash', 'shell', 'console'].includes(block.lang))
      .flatMap((block) => block.code.split('\n'))
      .map((line) => line.replace(/#.*$/, '').trim())
      .flatMap((line) => line.split(/&&|\|\||;/).map((command) => command.trim()))
      .filter((command) => command.length > 0);
    expect(commands.length).toBeGreaterThan(0);
    for (const command of commands) {
      const [tool, sub, name] = command.split(/\s+/);
      if (tool === 'npm' && (sub === 'ci' || sub === 'install')) continue;
      if (tool === 'npm' && (sub === 'test' || sub === 't')) expect(scripts, command).toHaveProperty('test');
      else if (tool === 'npm' && sub === 'run') expect(Object.keys(scripts), command).toContain(name);
      else expect(existsSync(join(root, tool!)), `${command}: not an npm script nor a file of the repository`).toBe(true);
    }
  });

  it('the npm scripts named anywhere in the README exist', () => {
    const scripts = Object.keys((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts);
    const named = [...readme.matchAll(/npm run ([\w:-]+)/g)].map((match) => match[1]!);
    expect(named.length).toBeGreaterThan(0);
    for (const name of named) expect(scripts, `npm run ${name}`).toContain(name);
  });

  it('every path of the layout block exists', () => {
    const layout = blocks.find((block) => block.lang === '' && /^src\//m.test(block.code));
    expect(layout).toBeDefined();
    const paths = layout!.code
      .split('\n')
      .flatMap((line) => (line.match(/^[^\s].*?(?=\s{2,}|$)/)?.[0] ?? '').split(/,\s*|\s+/))
      .filter((path) => /^[\w.-]+\//.test(path));
    expect(paths.length).toBeGreaterThan(5);
    for (const path of paths) expect(existsSync(join(root, path)), path).toBe(true);
  });

  it('every rxagent entry point the README names is published', () => {
    const published = Object.keys(entries as Record<string, string>).map((subpath) => (specifier as (subpath: string) => string)(subpath));
    const named = [...readme.matchAll(/[`'"](rxagent(?:\/[\w/-]+)?)[`'"]/g)].map((match) => match[1]!);
    expect(named.length).toBeGreaterThan(5);
    // rxagent/types/<name>: the declarations-only subpath of the shared declaration files (./types/* in exports)
    for (const name of named.filter((each) => !/^rxagent\/types\/[\w-]+$/.test(each))) expect(published, name).toContain(name);
  });
});
