/**
 * The dependency direction of DESIGN.md §1, enforced: lower layers never import upper ones,
 * and there are no cycles.
 *
 *   message-list <- processor <- operators <- loop
 *   processors (built-ins), memory, storage <- processor, message-list (+ loop/model for model-backed)
 *   testing, ai-sdk <- public surface of the above
 */
const layer = (name) => `^src/${name}/`;
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
    forbidImports('message-list', ['processor', 'operators', 'loop', 'processors', 'memory', 'storage', 'testing', 'ai-sdk'],
      'message-list is the bottom layer'),
    forbidImports('processor', ['operators', 'loop', 'processors', 'memory', 'storage', 'testing', 'ai-sdk'],
      'processor types only depend on message-list'),
    forbidImports('operators', ['loop', 'processors', 'memory', 'storage', 'testing', 'ai-sdk'],
      'operators depend on processor and message-list only'),
    forbidImports('loop', ['processors', 'memory', 'storage', 'testing', 'ai-sdk'],
      'the loop composes operators; it never reaches up'),
    forbidImports('processors', ['operators', 'memory', 'storage', 'testing', 'ai-sdk'],
      'built-in processors are plain processors'),
    forbidImports('storage', ['operators', 'loop', 'processors', 'memory', 'testing', 'ai-sdk'],
      'stores know messages only'),
    forbidImports('memory', ['operators', 'loop', 'processors', 'testing', 'ai-sdk'],
      'memory is processors over a store'),
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
