/**
 * The packed package.json leaves out `prepare` (scripts/pack-manifest.mjs, npm's prepack /
 * postpack): npm >= 11 lists a tarball's `prepare` as an install script on every app's install,
 * for a script that does not run there. The repository's package.json comes back as it was,
 * times included (prepare compares them with dist/).
 */
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { packManifest, packedManifest } from '../../scripts/pack-manifest.mjs';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

const repositoryManifest = readFileSync(resolve(import.meta.dirname, '../../package.json'), 'utf8');

describe('pack-manifest', () => {
  it('the packed manifest is the repository’s without scripts.prepare (every other field, and its order, kept)', () => {
    const original = JSON.parse(repositoryManifest) as { scripts: Record<string, string> };
    expect(original.scripts['prepare']).toBeDefined();
    const packed = JSON.parse(packedManifest(repositoryManifest)) as { scripts: Record<string, string> };
    const { prepare: _dropped, ...otherScripts } = original.scripts;
    expect(packed).toEqual({ ...original, scripts: otherScripts });
    expect(Object.keys(packed)).toEqual(Object.keys(original));
    expect(packedManifest(packedManifest(repositoryManifest))).toBe(packedManifest(repositoryManifest));
  });

  it('strip, then restore: package.json back byte for byte with its times; a strip after a pack that died restores first', () => {
    const root = mkdtempSync(join(tmpdir(), 'rxagent-pack-'));
    roots.push(root);
    const path = join(root, 'package.json');
    writeFileSync(path, repositoryManifest);
    utimesSync(path, 1_000, 1_000);
    packManifest(root, 'strip');
    expect(JSON.parse(readFileSync(path, 'utf8')).scripts.prepare).toBeUndefined();
    packManifest(root, 'strip'); // the pack died before postpack; the next one strips the original again
    packManifest(root, 'restore');
    expect(readFileSync(path, 'utf8')).toBe(repositoryManifest);
    expect(statSync(path).mtimeMs).toBe(1_000_000);
    packManifest(root, 'restore'); // nothing aside: nothing to do
    expect(readFileSync(path, 'utf8')).toBe(repositoryManifest);
    expect(() => packManifest(root, 'unpack' as 'strip')).toThrow(/expected 'strip' or 'restore'/);
  });
});
