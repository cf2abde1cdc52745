/**
 * The reference implementation lives in `bench/peer/` (its own package.json + lock, pinned
 * `@mastra/core`), installed there on first use, never a dependency of rxagent.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** `bench/peer/`. */
export const peerDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'peer');

/** The pinned reference version (from `bench/peer/package.json`). */
export function pinnedVersion(): string {
  const manifest = JSON.parse(readFileSync(join(peerDir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  return manifest.dependencies['@mastra/core'] as string;
}

function installedVersion(): string | undefined {
  const path = join(peerDir, 'node_modules', '@mastra', 'core', 'package.json');
  if (!existsSync(path)) return undefined;
  return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
}

/** Installs the pinned reference into `bench/peer/node_modules` unless it is there. Logs to stderr. */
export function ensurePeer(): void {
  const wanted = pinnedVersion();
  if (installedVersion() === wanted) return;
  process.stderr.write(`bench: installing @mastra/core@${wanted} into bench/peer (first use)…\n`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['install', '--prefix', peerDir, '--no-audit', '--no-fund', '--loglevel=error'], {
    stdio: ['ignore', process.stderr, process.stderr],
  });
  if (result.status !== 0 || installedVersion() !== wanted) {
    throw new Error(`bench: could not install @mastra/core@${wanted} into ${peerDir} (npm exit ${String(result.status)}).`);
  }
}
