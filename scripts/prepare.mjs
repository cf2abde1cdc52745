// npm's `prepare`: runs on `npm install` / `npm ci` in a clone, and when a git URL
// (`npm install github:rxagent/rxagent`) is installed — npm installs the clone's dev dependencies,
// runs `prepare`, then packs it. So an install from a clone or a git URL gets a built `dist/`.
// It builds only when there is something to build with and something new to build:
// - skipped when the dev dependencies are not installed (`npm ci --omit=dev`: no tsup);
// - skipped when dist/ is up to date (every entry's four files newer than every source input);
// - skipped under `npm ci` (npm_command=ci): the README's quick start and .ci/run install a clone to
//   run it from source (`npm run demo`, `npm test`), and .ci/run builds later with `npm run build`;
//   a git URL's install and `npm install` in a clone are `npm install`, and build;
// - skipped when RXAGENT_SKIP_PREPARE=1;
// - otherwise `npm run build` (whose prebuild asserts Node >= 22: the `node` devDependency).
// It prints nothing when it skips (an `npm ci` on Node 20 prints npm's EBADENGINE warnings, which
// the README explains, and nothing of rxagent's), and one line before and after a build.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { entries, outName } from './entries.mjs';

/** Files the build reads besides src/. */
const buildInputs = ['package.json', 'tsup.config.ts', 'tsconfig.json', 'scripts/entries.mjs', 'scripts/flatten-entry-imports.mjs'];

function newestMtime(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = 0; // files only: a directory's time changes with what is added to it, not only sources
  for (const name of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, name)));
  return newest;
}

/**
 * What `prepare` does in `root` with `env`: `{ build: false, reason }` or `{ build: true, reason }`.
 * @param {string} root
 * @param {Record<string, string | undefined>} env
 */
export function prepareDecision(root, env) {
  if (env.RXAGENT_SKIP_PREPARE === '1') return { build: false, reason: 'RXAGENT_SKIP_PREPARE=1' };
  if (env.npm_command === 'ci') return { build: false, reason: '`npm ci` runs a clone from source (`npm run build` builds dist/)' };
  if (!existsSync(join(root, 'node_modules', 'tsup', 'package.json'))) {
    return { build: false, reason: 'the dev dependencies are not installed (no tsup): nothing to build with' };
  }
  const outputs = Object.keys(entries).flatMap((subpath) => ['.js', '.cjs', '.d.ts', '.d.cts'].map((extension) => join(root, 'dist', `${outName(subpath)}${extension}`)));
  const missing = outputs.find((path) => !existsSync(path));
  if (missing !== undefined) return { build: true, reason: `dist/ is missing ${missing.slice(root.length + 1)}` };
  const oldestOutput = Math.min(...outputs.map((path) => statSync(path).mtimeMs));
  const inputs = ['src', ...buildInputs].map((path) => join(root, path)).filter((path) => existsSync(path));
  const newestInput = Math.max(...inputs.map(newestMtime));
  if (newestInput > oldestOutput) return { build: true, reason: 'a source file is newer than dist/' };
  return { build: false, reason: 'dist/ is up to date' };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const decision = prepareDecision(root, process.env);
  // Quiet when it does not build (an install prints nothing of ours); `prepareDecision` says why.
  if (decision.build) {
    console.error(`prepare: building (${decision.reason})…`);
    const result = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
    if (result.status !== 0) {
      console.error(`prepare: \`npm run build\` failed (exit ${result.status}); run it in ${root} to see why.`);
      process.exit(result.status ?? 1);
    }
    console.error('prepare: built dist/.');
  }
}
