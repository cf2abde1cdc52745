// A processor class typed only with the reference implementation's own types (`@mastra/core/processors`,
// as pinned in bench/peer and installed by `npm test`'s pretest) type-checks, unchanged, in an
// rxagent Agent's processor lists, per-call lists and every hook operator (smoke/mastra-types/processor.ts).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const peer = join(root, 'bench', 'peer', 'node_modules', '@mastra', 'core', 'package.json');
if (!existsSync(peer)) {
  console.error('mastra-types: bench/peer has no @mastra/core; run `node scripts/ensure-peer.mjs` (npm test does) first.');
  process.exit(1);
}
const tsc = join(root, 'node_modules', 'typescript', 'lib', 'tsc.js');
try {
  execFileSync(process.execPath, [tsc, '--noEmit', '-p', join(root, 'smoke', 'mastra-types', 'tsconfig.json')], { cwd: root, stdio: 'pipe', encoding: 'utf8' });
} catch (error) {
  console.error(`mastra-types: a processor typed with @mastra/core's types does not type-check in rxagent:\n${error.stdout ?? ''}${error.stderr ?? ''}`);
  process.exit(1);
}
console.log('mastra-types: a processor typed with @mastra/core/processors (every hook) type-checks in Agent lists, call options and operators');
