/**
 * npm's `prepare` (scripts/prepare.mjs) builds dist/ when a clone or a git URL is installed, and
 * costs nothing where it must not: no dev dependencies (nothing to build with), dist/ up to date,
 * `npm ci` (the README's quick start and .ci/run run the clone from source), or RXAGENT_SKIP_PREPARE=1.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { entries, outName } from '../../scripts/entries.mjs';
import { prepareDecision } from '../../scripts/prepare.mjs';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function write(root: string, path: string, at: number): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), '');
  utimesSync(join(root, path), at, at);
}

/** A clone: sources written at `sourcesAt` (seconds), dist/ at `distAt` (or none), tsup installed or not. */
function clone(options: { sourcesAt: number; distAt?: number; devDependencies?: boolean }): string {
  const root = mkdtempSync(join(tmpdir(), 'rxagent-prepare-'));
  roots.push(root);
  for (const path of ['package.json', 'tsup.config.ts', 'src/index.ts', 'src/loop/agent.ts']) write(root, path, options.sourcesAt);
  if (options.devDependencies !== false) write(root, 'node_modules/tsup/package.json', options.sourcesAt);
  if (options.distAt !== undefined) {
    for (const subpath of Object.keys(entries)) {
      for (const extension of ['.js', '.cjs', '.d.ts', '.d.cts']) write(root, `dist/${outName(subpath)}${extension}`, options.distAt);
    }
  }
  return root;
}

describe('prepare', () => {
  it('builds a fresh clone (no dist/)', () => {
    expect(prepareDecision(clone({ sourcesAt: 1000 }), {})).toEqual({ build: true, reason: 'dist/ is missing dist/index.js' });
  });

  it('skips when dist/ is newer than every source, builds again when a source changed', () => {
    const root = clone({ sourcesAt: 1000, distAt: 2000 });
    expect(prepareDecision(root, {})).toEqual({ build: false, reason: 'dist/ is up to date' });
    utimesSync(join(root, 'src/loop/agent.ts'), 3000, 3000);
    expect(prepareDecision(root, {})).toEqual({ build: true, reason: 'a source file is newer than dist/' });
  });

  it('builds when one entry of dist/ is missing', () => {
    const root = clone({ sourcesAt: 1000, distAt: 2000 });
    rmSync(join(root, 'dist/storage/postgres.d.cts'));
    expect(prepareDecision(root, {}).build).toBe(true);
  });

  it('skips without the dev dependencies (npm ci --omit=dev), and with RXAGENT_SKIP_PREPARE=1', () => {
    expect(prepareDecision(clone({ sourcesAt: 1000, devDependencies: false }), {})).toEqual({
      build: false,
      reason: 'the dev dependencies are not installed (no tsup): nothing to build with',
    });
    expect(prepareDecision(clone({ sourcesAt: 1000 }), { RXAGENT_SKIP_PREPARE: '1' }).build).toBe(false);
  });

  it("skips under `npm ci` (the quick start runs from source), builds under a git URL's or a clone's `npm install`", () => {
    expect(prepareDecision(clone({ sourcesAt: 1000 }), { npm_command: 'ci' }).build).toBe(false);
    expect(prepareDecision(clone({ sourcesAt: 1000 }), { npm_command: 'install' }).build).toBe(true);
  });

  it('prints nothing when it skips (the quick start’s `npm ci` shows nothing of rxagent’s)', () => {
    const script = resolve(import.meta.dirname, '../../scripts/prepare.mjs');
    for (const env of [{ npm_command: 'ci' }, { RXAGENT_SKIP_PREPARE: '1' }]) {
      const run = spawnSync(process.execPath, [script], { env: { PATH: process.env['PATH'] ?? '', ...env }, encoding: 'utf8' });
      expect({ status: run.status, stdout: run.stdout, stderr: run.stderr }, JSON.stringify(env)).toEqual({ status: 0, stdout: '', stderr: '' });
    }
  });
});
