// Installs rxagent as a team would from a release: `npm pack` (the built dist/ as the registry would
// serve it), then `npm install <tarball>` with its peers into an app in a temp directory outside the
// repository, offline from the npm cache (`--prefer-offline`: the versions pinned by this repository,
// which its own install put in the cache). Then checks:
// - the tarball ships NOTICE and CHANGELOG.md;
// - one copy of @ai-sdk/provider: none under node_modules/rxagent/node_modules (a caret range shared with ai);
// - a tiny agent runs from the installed package, from ESM and from CommonJS.
// Needs dist/ (`npm run build`). Not part of `npm run smoke` (an install takes ≈ 30 s or more on a
// loaded machine): `npm run smoke:install`.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const started = Date.now();
const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
if (!existsSync(join(root, 'dist', 'index.js'))) throw new Error('smoke install: no dist/ (run `npm run build` first)');
const dir = mkdtempSync(join(tmpdir(), 'rxagent-install-'));
const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
try {
  // --ignore-scripts: prepack would build again; dist/ is what this run checks
  const [packed] = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--loglevel=error', '--pack-destination', dir], root));
  const shipped = packed.files.map((file) => file.path);
  for (const name of ['NOTICE', 'CHANGELOG.md', 'LICENSE', 'dist/index.js', 'dist/index.cjs']) {
    if (!shipped.includes(name)) throw new Error(`smoke install: the tarball does not ship ${name}`);
  }
  const app = join(dir, 'app');
  execFileSync('mkdir', [app]);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  const dev = pkg.devDependencies;
  npm(
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error',
      join(dir, packed.filename), `rxjs@${dev.rxjs}`, `ai@${dev.ai}`, `zod@${dev.zod}`],
    app,
  );
  const nested = join(app, 'node_modules', 'rxagent', 'node_modules', '@ai-sdk', 'provider');
  if (existsSync(nested)) throw new Error(`smoke install: a second copy of @ai-sdk/provider under rxagent: ${nested}`);
  const agentCode = (imports) => `${imports}
const agent = new Agent({ id: 'smoke', instructions: 'Be brief.', model: scriptedModel({ rules: [], fallback: { text: 'Hello from the tarball.' } }) });
const { text } = await agent.generate('Hi');
if (text !== 'Hello from the tarball.') throw new Error('unexpected reply: ' + text);
console.log(text);
`;
  writeFileSync(join(app, 'agent.mjs'), agentCode("import { Agent } from 'rxagent';\nimport { scriptedModel } from 'rxagent/testing';"));
  writeFileSync(join(app, 'agent.cjs'), `(async () => {\n${agentCode("const { Agent } = require('rxagent');\nconst { scriptedModel } = require('rxagent/testing');")}})().catch((error) => { console.error(error); process.exit(1); });\n`);
  for (const file of ['agent.mjs', 'agent.cjs']) {
    const out = execFileSync(process.execPath, [file], { cwd: app, encoding: 'utf8' }).trim();
    if (out !== 'Hello from the tarball.') throw new Error(`smoke install: ${file} printed ${out}`);
  }
  const providers = JSON.parse(npm(['ls', '@ai-sdk/provider', '--all', '--json'], app));
  const versions = new Set();
  const walk = (node) => {
    for (const [name, child] of Object.entries(node.dependencies ?? {})) {
      if (name === '@ai-sdk/provider') versions.add(child.version);
      walk(child);
    }
  };
  walk(providers);
  console.log(
    `smoke install: ok in ${((Date.now() - started) / 1000).toFixed(1)} s (${packed.filename}, ${shipped.length} files with NOTICE and CHANGELOG.md; ` +
      `installed offline outside the repository; one @ai-sdk/provider (${[...versions].join(', ')}), none under rxagent/node_modules; an agent ran from ESM and CommonJS)`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
