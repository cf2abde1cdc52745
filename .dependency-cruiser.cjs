/**
 * The dependency direction of DESIGN.md §1, enforced: lower layers never import upper ones,
 * a folder's `internal/` is private to that folder, and there are no cycles.
 *
 *   errors (the root error class) <- message-list <- contract <- model <- operators <- loop
 *   processors (built-ins), memory, storage <- contract, message-list (+ model for model-backed)
 *   testing, ai-sdk <- the layers above, through their entry files
 *   devtools (the run inspector) <- the layers above, testing and ai-sdk, through their entry files
 *   durable (run journal readers, workers) <- loop, storage, contract, through their entry files
 *   inside the loop: data (state, position, attempt, snapshots, commit points) <- tools <- step <- run
 *
 * src/processors, src/testing, src/ai-sdk, src/devtools and src/durable import another layer only through its entry file,
 * `src/<layer>/index.ts` (rule `upper-layers-through-entry-files`). Some entry files are package
 * entries (scripts/entries.mjs: operators, message-list, …) and stay as curated as the export
 * snapshots say; contract, model and loop are internal entry files (src/index.ts picks the public
 * names from them), so what the upper layers share with the loop goes there, in a section marked
 * "not re-exported by `rxagent`". The build points those imports back at the declaring modules
 * (scripts/flatten-entry-imports.mjs) so no package entry's bundle grows. The loop's package entry
 * `rxagent/loop` is another file, `src/loop/public.ts` (curated: the operators and phases meant for
 * users); the layers above keep importing `src/loop/index.ts`.
 */
const { readdirSync } = require('node:fs');
const { join } = require('node:path');

const layer = (name) => `^src/${name}/`;
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Every `internal/` folder under `dir` (paths relative to the repository, `/`-separated). */
function internalFolders(dir) {
  const found = [];
  for (const entry of readdirSync(join(__dirname, dir), { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const path = `${dir}/${entry.name}`;
    if (entry.name === 'internal') found.push(path);
    found.push(...internalFolders(path));
  }
  return found;
}

/**
 * `P/internal/**` may be imported only from `P/**` (the folder holding `internal/` and its
 * subfolders). One rule per `internal/` folder found under `src/` when the linter runs, so a new
 * `internal/` is covered without editing this file.
 */
const internalIsPrivate = internalFolders('src').map((internal) => {
  const owner = internal.slice(0, -'/internal'.length);
  return {
    name: `${owner.replace(/^src\//, '').replaceAll('/', '-')}-internal-is-private`,
    comment: `${internal}/ is private to ${owner}/: move what others need to a non-internal file`,
    severity: 'error',
    from: { pathNot: `^${escape(owner)}/` },
    to: { path: `^${escape(internal)}/` },
  };
});
const forbidImports = (from, targets, comment) => ({
  name: `${from}-not-importing-${targets.join('-')}`,
  comment,
  severity: 'error',
  from: { path: layer(from) },
  to: { path: `^src/(${targets.join('|')})/` },
});

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    forbidImports('errors', ['message-list', 'contract', 'model', 'operators', 'loop', 'processors', 'memory', 'storage', 'testing', 'ai-sdk', 'devtools', 'durable'],
      'the root error class (RxAgentError) depends on nothing'),
    forbidImports('message-list', ['contract', 'model', 'operators', 'loop', 'processors', 'memory', 'storage', 'testing', 'ai-sdk', 'devtools', 'durable'],
      'message-list is the bottom layer'),
    forbidImports('contract', ['model', 'operators', 'loop', 'processors', 'memory', 'storage', 'testing', 'ai-sdk', 'devtools', 'durable'],
      'the processor contract (types, TripWire, chunks) depends on message-list only'),
    forbidImports('model', ['operators', 'loop', 'processors', 'memory', 'storage', 'testing', 'ai-sdk', 'devtools', 'durable'],
      'the provider seam depends on the contract and message-list only'),
    forbidImports('operators', ['loop', 'processors', 'memory', 'storage', 'testing', 'ai-sdk', 'devtools', 'durable'],
      'operators depend on model, contract and message-list only'),
    forbidImports('loop', ['processors', 'memory', 'storage', 'testing', 'ai-sdk', 'devtools', 'durable'],
      'the loop composes operators; it never reaches up'),
    forbidImports('processors', ['operators', 'loop', 'memory', 'storage', 'testing', 'ai-sdk', 'devtools', 'durable'],
      'built-in processors are plain processors'),
    forbidImports('storage', ['operators', 'loop', 'processors', 'memory', 'testing', 'ai-sdk', 'devtools', 'durable'],
      'stores know messages only'),
    forbidImports('memory', ['operators', 'loop', 'processors', 'testing', 'ai-sdk', 'devtools', 'durable'],
      'memory is processors over a store'),
    forbidImports('durable', ['operators', 'model', 'processors', 'memory', 'testing', 'ai-sdk', 'devtools'],
      'durable runs sit on the loop, the storage and the contract'),
    {
      name: 'loop-data-is-below-run-step-tools',
      comment:
        'src/loop/data (the run\'s state, its position, the attempt value, snapshots, commit points) is what run/, step/ ' +
        'and tools/ share: it imports none of them (nor the loop above them)',
      severity: 'error',
      from: { path: '^src/loop/data/' },
      to: { path: '^src/loop/', pathNot: ['^src/loop/data/', '^src/loop/internal/'] },
    },
    {
      name: 'loop-step-and-tools-not-importing-run',
      comment: 'a step and its tools get what they need of the run from src/loop/data (and the StepEnvironment): they never import src/loop/run',
      severity: 'error',
      from: { path: '^src/loop/(step|tools)/' },
      to: { path: '^src/loop/run/' },
    },
    {
      name: 'loop-tools-not-importing-step',
      comment:
        'src/loop/tools (executing a call, orderedMergeMap, tool schemas) is machinery a step composes: the step\'s tool ' +
        'phase lives in src/loop/step, and tools/ never imports step/ (no folder cycle)',
      severity: 'error',
      from: { path: '^src/loop/tools/' },
      to: { path: '^src/loop/step/' },
    },
    {
      name: 'devtools-is-the-top-layer',
      comment: 'src/devtools (the run inspector, node:http) sits above every other layer: nothing imports it',
      severity: 'error',
      from: { pathNot: '^src/devtools/' },
      to: { path: '^src/devtools/' },
    },
    ...internalIsPrivate,
    {
      name: 'upper-layers-through-entry-files',
      comment:
        'src/processors, src/testing, src/ai-sdk, src/devtools and src/durable import another layer only through its entry file src/<layer>/index.ts ' +
        '(type-only imports too): import the name from there, and if it is missing, export it from that entry file ' +
        '(an internal one — contract, model, loop — in its "not re-exported by rxagent" section; never widen a package ' +
        'entry such as operators or message-list for them)',
      severity: 'error',
      from: { path: '^src/(processors|testing|ai-sdk|devtools|durable)/' },
      to: { path: '^src/', pathNot: ['^src/$1/', '^src/[^/]+/index\\.ts$'] },
    },
    {
      name: 'no-rxjs-internal',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: 'rxjs/internal' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
