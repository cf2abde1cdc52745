/**
 * `--node <major>`: re-runs the benchmark under another Node major, installed from the npm
 * registry (the `node` package, pinned below) into `bench/node<major>/` on first use. Workers
 * and memory processes inherit it (they start from `process.execPath`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The exact versions `--node` installs (as verified on this machine kind). */
const pinned: Record<string, string> = { '22': '22.23.3', '24': '24.21.0' };

const benchDir = join(dirname(fileURLToPath(import.meta.url)), '..');

function ensureNode(major: string): string {
  const version = pinned[major];
  if (version === undefined) throw new Error(`bench: --node ${major}: known majors are ${Object.keys(pinned).join(', ')}`);
  const prefix = join(benchDir, `node${major}`);
  const binary = join(prefix, 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(binary)) {
    process.stderr.write(`bench: installing node@${version} into ${prefix} (first use)…\n`);
    const result = spawnSync('npm', ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', '--loglevel=error', `node@${version}`], {
      stdio: ['ignore', process.stderr, process.stderr],
    });
    if (result.status !== 0 || !existsSync(binary)) throw new Error(`bench: could not install node@${version} into ${prefix}`);
  }
  return binary;
}

/**
 * With `--node <major>` in `argv` and a different running major: runs this script again on that
 * Node with the same arguments (less `--node`), then exits with its status. Otherwise returns.
 */
export async function reexecOnNode(argv: readonly string[]): Promise<void> {
  const at = argv.indexOf('--node');
  if (at < 0) return;
  const major = argv[at + 1] ?? '';
  if (process.versions.node.split('.')[0] === major) return;
  const binary = ensureNode(major);
  const rest = argv.filter((_, index) => index !== at && index !== at + 1);
  const script = process.argv[1] as string;
  const result = spawnSync(binary, ['--expose-gc', '--import', 'tsx', script, ...rest, '--node', major], { stdio: 'inherit' });
  process.exit(result.status ?? 1);
}
