// Installs the reference implementation pinned in bench/peer (its own package.json and lock, from
// the npm registry) when it is missing or at another version: test/compat runs the reference's own
// processors, and bench:compare measures against it. Run by `npm test` (pretest), so a fresh clone
// needs nothing beside it.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const peer = fileURLToPath(new URL('../bench/peer/', import.meta.url));
const wanted = JSON.parse(readFileSync(`${peer}package.json`, 'utf8')).dependencies['@mastra/core'];
const installedManifest = `${peer}node_modules/@mastra/core/package.json`;
const installed = existsSync(installedManifest) ? JSON.parse(readFileSync(installedManifest, 'utf8')).version : undefined;
if (installed !== wanted) {
  console.error(`ensure-peer: installing @mastra/core@${wanted} into bench/peer (the reference, for test/compat)…`);
  const result = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: peer, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`ensure-peer: npm ci in bench/peer failed (exit ${result.status}); test/compat needs it.`);
    process.exit(1);
  }
}
