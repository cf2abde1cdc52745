/**
 * docs/architecture.md's folder graph ("Folders") is the one src/ has: generated from
 * dependency-cruiser by scripts/folder-graph.mjs, which fails on a cycle between folders.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

function runGenerator(...args: string[]): { status: number; output: string } {
  try {
    return { status: 0, output: execFileSync(process.execPath, ['scripts/folder-graph.mjs', ...args], { encoding: 'utf8', stdio: 'pipe' }) };
  } catch (error) {
    const failed = error as { status: number; stdout: string; stderr: string };
    return { status: failed.status, output: failed.stdout + failed.stderr };
  }
}

describe('the folder graph in docs/architecture.md', () => {
  it('is the current one (npm run graph:folders -- --write regenerates it)', () => {
    const checked = runGenerator('--check');
    expect(checked.output).toBe('');
    expect(checked.status).toBe(0);
  });

  it('has the loop folders in order: data below tools below step below run', () => {
    const table = runGenerator().output;
    const layerOf = (folder: string): number => Number(new RegExp(`^\\| (\\d+) \\| \`${folder}\` \\|`, 'm').exec(table)?.[1] ?? Number.NaN);
    expect(layerOf('loop/data')).toBeLessThan(layerOf('loop/tools'));
    expect(layerOf('loop/tools')).toBeLessThan(layerOf('loop/step'));
    expect(layerOf('loop/step')).toBeLessThan(layerOf('loop/run'));
  });
});
