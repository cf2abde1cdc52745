/** The runnable examples keep running (each in its own process, as a user runs them). */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- plain ESM helper (no type declarations)
import { entryDrift, specifier, entries } from '../scripts/entries.mjs';

const runExample = (file: string) =>
  execFileSync(process.execPath, ['--import', 'tsx', file], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, OPENAI_API_KEY: '' } });

/** The .ts files of examples/ itself and examples/shared/ (the other folders are checked by their own tests). */
function exampleFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string, deep: boolean) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) {
        if (deep || name === 'shared') walk(path, true);
      } else if (/\.[cm]?tsx?$/.test(name)) files.push(path);
    }
  };
  walk('examples', false);
  return files;
}

describe('examples import rxagent by name, as a user copying them would', () => {
  it.each(exampleFiles())('%s: no relative import of the sources; every rxagent import is a published entry point', (file) => {
    const source = readFileSync(file, 'utf8');
    const specifiers = [...source.matchAll(/(?:from|import\(|require\()\s*['"]([^'"]+)['"]/g)].map((match) => match[1]!);
    expect(specifiers.filter((name) => name.includes('src/'))).toEqual([]);
    const published = Object.keys(entries as Record<string, string>).map((subpath) => (specifier as (subpath: string) => string)(subpath));
    for (const name of specifiers.filter((name) => name === 'rxagent' || name.startsWith('rxagent/'))) expect(published).toContain(name);
  });

  it('package.json exports and tsconfig.json paths match scripts/entries.mjs', () => {
    expect((entryDrift as () => string[])()).toEqual([]);
  });
});

describe('examples', () => {
  it('streaming-redactor redacts an e-mail split across chunks', () => {
    const output = runExample('examples/streaming-redactor.ts');
    expect(output).toContain('[REDACTED:email]');
    expect(output).not.toContain('lace@exam');
  });

  it('marble-test-a-processor passes', () => {
    expect(runExample('examples/marble-test-a-processor.ts')).toContain('marble test passed');
  });
});
