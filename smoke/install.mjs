// Installs rxagent as a team would from a release: `npm pack` (the built dist/ as the registry would
// serve it), then `npm install <tarball>` with its peers into an app in a temp directory outside the
// repository, offline from the npm cache (`--prefer-offline`: the versions pinned by this repository,
// which its own install put in the cache). Then checks:
// - the tarball ships NOTICE and CHANGELOG.md, and its package.json has no `prepare` (prepack /
//   postpack: scripts/pack-manifest.mjs), so the app's install prints nothing but its summary;
// - one copy of each dependency rxagent shares with ai@7 (@ai-sdk/provider, @ai-sdk/provider-utils: every
//   name in both dependency lists): none under node_modules/rxagent/node_modules, one version in `npm ls`
//   (rxagent's ranges are carets that ai's exact pins fall in);
// - a tiny agent runs from the installed package, from ESM and from CommonJS;
// - an AI SDK 6 app (smoke/ai-sdk-6: ai@6, its provider package @ai-sdk/openai@3, its useChat from
//   @ai-sdk/react@3, installed from the npm registry at the versions pinned below) installs the
//   tarball without a peer conflict, type-checks (strict, exactOptionalPropertyTypes; rxagent's
//   declarations checked too, the AI SDK's own left to skipLibCheck) and streams a three-turn chat
//   through toUIMessageStreamResponse, read from the Response body's SSE by ai@6.
// Needs dist/ (`npm run build`). Not part of `npm run smoke` (an install takes ≈ 30 s or more on a
// loaded machine): `npm run smoke:install`.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packManifest } from '../scripts/pack-manifest.mjs';

const started = Date.now();
const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
if (!existsSync(join(root, 'dist', 'index.js'))) throw new Error('smoke install: no dist/ (run `npm run build` first)');
const dir = mkdtempSync(join(tmpdir(), 'rxagent-install-'));
const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
/** An AI SDK 6 app's packages (ai and @ai-sdk/react of one release: one copy of ai). */
const AI_SDK_6 = ['ai@6.0.325', '@ai-sdk/openai@3.0.141', '@ai-sdk/react@3.0.328', 'react@19.2.1', '@types/react@19.2.7'];

/**
 * The AI SDK 6 app: installs, type-checks (errors in the app's file or in rxagent's declarations
 * fail it; the AI SDK's own declarations do not type-check under exactOptionalPropertyTypes
 * without skipLibCheck, which is theirs) and runs its chat. Returns what it printed.
 */
function aiSdk6App(dir, tarball) {
  const app = join(dir, 'app-ai6');
  execFileSync('mkdir', [app]);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app-ai6', private: true, type: 'module' }));
  for (const file of ['chat.ts', 'tsconfig.json']) copyFileSync(join(root, 'smoke', 'ai-sdk-6', file), join(app, file));
  const dev = pkg.devDependencies;
  npm(
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error',
      tarball, `rxjs@${dev.rxjs}`, `zod@${dev.zod}`, `@types/node@${dev['@types/node']}`, ...AI_SDK_6],
    app,
  );
  const ai = JSON.parse(readFileSync(join(app, 'node_modules', 'ai', 'package.json'), 'utf8')).version;
  if (!ai.startsWith('6.')) throw new Error(`smoke install (ai@6): the app got ai@${ai}`);
  let diagnostics = '';
  try {
    execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json', '--pretty', 'false'], { cwd: app, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    diagnostics = String(error.stdout ?? '') + String(error.stderr ?? '');
  }
  const ours = diagnostics
    .split('\n')
    .filter((line) => /^\S.*\(\d+,\d+\): error/.test(line))
    .filter((line) => !line.startsWith('node_modules/') || line.startsWith('node_modules/rxagent/dist/'));
  if (ours.length > 0) throw new Error(`smoke install (ai@6): type errors\n${ours.join('\n')}`);
  const out = execFileSync(process.execPath, ['--experimental-strip-types', '--disable-warning=ExperimentalWarning', 'chat.ts'], { cwd: app, encoding: 'utf8' }).trim();
  const expected = [
    'user: Hello | assistant: Turn with 2 messages. | user: And again? | assistant: Turn with 4 messages. | user: One more | assistant: Turn with 6 messages.',
    // what the README says does not work on ai@6 (reset-step), and its way round (release: 'accepted')
    'live: parts [step-start, text], errors [AI_TypeValidationError]',
    'accepted: parts [data-tripwire], errors [no turns here]',
  ].join('\n');
  if (out !== expected) throw new Error(`smoke install (ai@6): chat.ts printed\n${out}\nexpected\n${expected}`);
  return `ai@${ai}: type-checked (strict, exactOptionalPropertyTypes, useChat with DurableChatTransport), 3 turns streamed: ${out.replaceAll('\n', '; tripwire ')}`;
}
try {
  // --ignore-scripts: prepack would build again; dist/ is what this run checks. Its manifest step
  // runs here, as prepack and postpack run it (the packed package.json has no `prepare`).
  packManifest(root, 'strip');
  let packed;
  try {
    [packed] = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--loglevel=error', '--pack-destination', dir], root));
  } finally {
    packManifest(root, 'restore');
  }
  const packedScripts = JSON.parse(execFileSync('tar', ['-xzOf', join(dir, packed.filename), 'package/package.json'], { encoding: 'utf8' })).scripts;
  if (packedScripts.prepare !== undefined) throw new Error('smoke install: the tarball\'s package.json has a prepare script (npm lists it on every install)');
  const shipped = packed.files.map((file) => file.path);
  for (const name of ['NOTICE', 'CHANGELOG.md', 'LICENSE', 'dist/index.js', 'dist/index.cjs']) {
    if (!shipped.includes(name)) throw new Error(`smoke install: the tarball does not ship ${name}`);
  }
  const app = join(dir, 'app');
  execFileSync('mkdir', [app]);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  const dev = pkg.devDependencies;
  // npm's warnings shown (on the Node 22 this script runs on there is no EBADENGINE): an install prints none
  const installed = spawnSync(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', join(dir, packed.filename), `rxjs@${dev.rxjs}`, `ai@${dev.ai}`, `zod@${dev.zod}`],
    { cwd: app, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  if (installed.status !== 0) throw new Error(`smoke install: npm install failed (${installed.status})\n${installed.stderr}`);
  const noise = `${installed.stdout}\n${installed.stderr}`.split('\n').filter((line) => line.trim() !== '' && !/^(added|changed|removed|up to date)\b/.test(line));
  if (noise.length > 0) throw new Error(`smoke install: the install printed more than its summary:\n${noise.join('\n')}`);
  const installedAi = JSON.parse(readFileSync(join(app, 'node_modules', 'ai', 'package.json'), 'utf8'));
  const shared = Object.keys(pkg.dependencies).filter((name) => name in (installedAi.dependencies ?? {}));
  for (const name of ['@ai-sdk/provider', '@ai-sdk/provider-utils']) {
    if (!shared.includes(name)) throw new Error(`smoke install: ${name} is no longer a dependency shared by rxagent and ai@${installedAi.version}: update this check`);
  }
  const versionsOf = (name) => {
    const versions = new Set();
    const walk = (node) => {
      for (const [child, info] of Object.entries(node.dependencies ?? {})) {
        if (child === name) versions.add(info.version);
        walk(info);
      }
    };
    walk(JSON.parse(npm(['ls', name, '--all', '--json'], app)));
    return [...versions];
  };
  const sharedCopies = shared.map((name) => {
    const nested = join(app, 'node_modules', 'rxagent', 'node_modules', ...name.split('/'));
    if (existsSync(nested)) throw new Error(`smoke install: a second copy of ${name} under rxagent: ${nested}`);
    const versions = versionsOf(name);
    if (versions.length !== 1) throw new Error(`smoke install: ${versions.length} versions of ${name} (${versions.join(', ')}), want one shared with ai`);
    return `${name}@${versions[0]}`;
  });
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
  const ai6 = aiSdk6App(dir, join(dir, packed.filename));
  console.log(
    `smoke install: ok in ${((Date.now() - started) / 1000).toFixed(1)} s (${packed.filename}, ${shipped.length} files with NOTICE and CHANGELOG.md; ` +
      `installed offline outside the repository; one copy each of what it shares with ai@${installedAi.version} (${sharedCopies.join(', ')}), none under rxagent/node_modules; an agent ran from ESM and CommonJS); ${ai6}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
