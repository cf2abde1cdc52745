/**
 * docs/security.md: every claim points to its test. Each `test/….test.ts` path the page names must
 * exist in the repository, and every row of the threat model names at least one.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const page = readFileSync(`${root}docs/security.md`, 'utf8');

describe('docs/security.md', () => {
  it('names only test files that exist', () => {
    const named = [...new Set([...page.matchAll(/`(test\/[\w./-]+\.test\.ts)`/g)].map((match) => match[1] as string))];
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((path) => !existsSync(`${root}${path}`))).toEqual([]);
  });

  it('gives every surface of the threat model a test', () => {
    const section = page.slice(page.indexOf('## Threat model'), page.indexOf('\n## ', page.indexOf('## Threat model') + 1));
    const rows = section.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| surface'));
    expect(rows.length).toBeGreaterThanOrEqual(8);
    for (const row of rows) expect(row, row.slice(0, 60)).toMatch(/`test\/[\w./-]+\.test\.ts`/);
  });
});
