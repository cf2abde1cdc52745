// The package as `npm pack` makes it, installed into a consumer project of its own (outside this
// repository), type-checked under each TypeScript setup users have, with `skipLibCheck: false` so
// the shipped declarations themselves are checked:
// - NodeNext, ESM (`"type": "module"`)          - NodeNext, CommonJS (`"type": "commonjs"`: the .d.cts)
// - Bundler                                      - legacy `"moduleResolution": "node"` (node10, no
// - NodeNext + exactOptionalPropertyTypes          `exports`: subpaths through `typesVersions`)
// The consumer imports every entry point, implements a processor as a class, and passes tools of
// every kind an app has (inline, AI SDK `tool()`, a reference-style `createTool` object). It is
// compiled with `declaration`, as a library of processors would be: the declarations it emits name
// rxagent's types (`import("rxagent/types/processor-types").ProcessInputArgs`), never a bundled
// chunk's one-letter alias or hashed file; and a hook written with the wrong argument is an error
// naming `ProcessInputArgs`.
import { execFile, execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { promisify } from 'node:util';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { entries, specifier } from '../scripts/entries.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const peers = ['rxjs', 'ai', 'zod', '@ai-sdk/provider', '@ai-sdk/provider-utils', '@types/node', '@libsql/client', 'pg', '@types/pg'];
const tsc = join(root, 'node_modules', 'typescript', 'lib', 'tsc.js');

const settings = {
  'NodeNext (ESM)': { type: 'module', options: { module: 'NodeNext', moduleResolution: 'NodeNext' } },
  'NodeNext (CommonJS)': { type: 'commonjs', options: { module: 'NodeNext', moduleResolution: 'NodeNext' } },
  Bundler: { type: 'module', options: { module: 'ESNext', moduleResolution: 'Bundler' } },
  'legacy node (node10, CommonJS)': { type: 'commonjs', options: { module: 'CommonJS', moduleResolution: 'node', esModuleInterop: true } },
  'NodeNext + exactOptionalPropertyTypes': { type: 'module', options: { module: 'NodeNext', moduleResolution: 'NodeNext', exactOptionalPropertyTypes: true } },
};

const consumer = `${Object.keys(entries)
  .map((subpath, index) => `import * as entry${index} from '${specifier(subpath)}';\nvoid entry${index};`)
  .join('\n')}
import { tool } from 'ai';
import { z } from 'zod';
import { Agent, type AgentTool, type AgentToolSet, type ProcessOutputStreamArgs, type Processor, type ProcessorViolation, type ChunkType } from 'rxagent';
import { processOutputStream } from 'rxagent/operators';
import { RegexFilterProcessor, TokenLimiterProcessor, ModerationProcessor } from 'rxagent/processors';
import { scriptedModel } from 'rxagent/testing';
import { Memory, MissingDriverError } from 'rxagent/memory';
import { LibSQLStorage } from 'rxagent/storage/libsql';
import { PostgresStorage } from 'rxagent/storage/postgres';

// a processor written as a class, leaving its optional fields unset
class Shout implements Processor<'shout'> {
  readonly id = 'shout' as const;
  onViolation: ((violation: ProcessorViolation) => void) | undefined = undefined;
  processOutputStream({ part }: ProcessOutputStreamArgs): ChunkType {
    return part.type === 'text-delta' ? { ...part, payload: { ...part.payload, text: part.payload.text.toUpperCase() } } : part;
  }
}
// a tool made the way the reference's createTool makes one (an id, execute(input, context))
const referenceStyle = { id: 'lookup', description: 'Looks a word up', inputSchema: z.object({ word: z.string() }),
  execute: async (input: { word: string }, context: { observe: { log(level: 'info', message: string): void } }) => { context.observe.log('info', input.word); return input.word.length; } };
const tools: AgentToolSet = {
  inline: { description: 'Echo', inputSchema: z.object({ text: z.string() }), execute: async ({ text }: { text: string }, { toolCallId }) => text + toolCallId },
  aiSdk: tool({ description: 'Weather', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => ({ city }) }),
  referenceStyle,
};
const oneTool: AgentTool = referenceStyle;
const agent = new Agent({
  id: 'consumer',
  instructions: 'Be brief.',
  model: scriptedModel({ rules: [], fallback: { text: 'hi' } }),
  tools,
  inputProcessors: [new TokenLimiterProcessor({ limit: 1000, tokenCounter: (text) => text.length })],
  outputProcessors: [new RegexFilterProcessor({ presets: ['pii'], strategy: 'redact' }), new Shout()],
  memory: new Memory({ storage: new LibSQLStorage({ url: ':memory:' }) }),
});
void agent; void oneTool; void processOutputStream; void ModerationProcessor; void PostgresStorage; void MissingDriverError.isInstance;

// a library of processors built on rxagent, compiled with \`declaration\`: its emitted declarations must
// name rxagent's types (not TS2742 "cannot be named", not a chunk's one-letter alias)
export const redactor = new RegexFilterProcessor({ presets: ['pii'], strategy: 'redact' });
export const streamHook = redactor.processOutputStream;
export const inputHook = redactor.processInput;
`;

// A hook written with the wrong argument: the error names rxagent's real types.
const wrongHook = `import type { Processor } from 'rxagent';
export const wrong: Processor = { id: 'wrong', processInput: (args: { messages: number }) => args.messages };
`;

/** Problems with a consumer's emitted declarations (`consumer.d.ts`): unnamed or aliased rxagent types. */
function declarationProblems(text) {
  const problems = [];
  for (const name of ['ProcessOutputStreamArgs', 'ProcessInputArgs', 'ChunkType']) if (!text.includes(name)) problems.push(`no ${name} in consumer.d.ts`);
  const aliased = text.match(/import\("rxagent[^"]*"\)\.[A-Za-z_$][\w$]?(?![\w$])/g);
  if (aliased) problems.push(`one-letter aliases: ${[...new Set(aliased)].join(', ')}`);
  const hashed = text.match(/rxagent\/dist\/[\w-]+-[A-Za-z0-9_-]{8}\b/g);
  if (hashed) problems.push(`hashed chunk files: ${[...new Set(hashed)].join(', ')}`);
  return problems;
}

const dir = mkdtempSync(join(tmpdir(), 'rxagent-consumer-settings-'));
try {
  // npm pack, as a release would (the build is already there: `npm run build` ran before the smoke)
  const packed = JSON.parse(execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: root, encoding: 'utf8' }));
  const modules = join(dir, 'node_modules');
  mkdirSync(modules, { recursive: true });
  execFileSync('tar', ['-xzf', join(dir, packed[0].filename), '-C', modules]);
  renameSync(join(modules, 'package'), join(modules, 'rxagent'));
  if (!readdirSync(join(modules, 'rxagent', 'dist')).includes('index.d.ts')) throw new Error('consumer-settings: the packed package has no dist/index.d.ts');
  for (const name of peers) {
    mkdirSync(dirname(join(modules, name)), { recursive: true });
    symlinkSync(join(root, 'node_modules', name), join(modules, name), 'dir');
  }
  // @ai-sdk/provider's declarations import 'json-schema' types without depending on @types/json-schema
  // (see smoke/consumer.mjs): any consumer of `ai` with skipLibCheck false needs that or a shim
  const shim = "declare module 'json-schema' {\n  export interface JSONSchema7 { [key: string]: unknown }\n  export type JSONSchema7Definition = JSONSchema7 | boolean;\n}\n";
  // RXAGENT_TS_SETTINGS=<part of a name> checks only the matching setups (all by default)
  const only = process.env.RXAGENT_TS_SETTINGS;
  const chosen = Object.entries(settings).filter(([name]) => !only || name.includes(only));
  // one project per setup (its own package.json "type"), all resolving the one node_modules above
  // them; as many type-checks at once as the machine has cores
  const check = async ([name, { type, options }], index) => {
    const project = join(dir, `setup-${index}`);
    mkdirSync(project);
    writeFileSync(join(project, 'consumer.ts'), consumer);
    writeFileSync(join(project, 'json-schema-shim.d.ts'), shim);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: `consumer-${index}`, private: true, type }));
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2023', lib: ['ES2023', 'DOM', 'DOM.AsyncIterable'], types: ['node'], strict: true, skipLibCheck: false, declaration: true, emitDeclarationOnly: true, outDir: 'out', ...options },
        files: ['consumer.ts', 'json-schema-shim.d.ts'],
      }),
    );
    let output = '';
    try {
      await promisify(execFile)(process.execPath, [tsc, '-p', 'tsconfig.json', '--pretty', 'false'], { cwd: project, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    } catch (error) {
      output = `${error.stdout}${error.stderr}`;
    }
    // Errors in rxagent's declarations or in the consumer fail the check. Under
    // exactOptionalPropertyTypes with skipLibCheck false, the AI SDK's own declarations
    // (@ai-sdk/provider-utils) have errors of their own: counted and shown, not ours to fix.
    const errors = output.split('\n').filter((line) => /^\S.*\(\d+,\d+\): error TS/.test(line));
    const ours = errors.filter((line) => line.startsWith('consumer.ts') || line.includes('node_modules/rxagent/'));
    const others = errors.length - ours.length;
    const unparsed = output.trim() !== '' && errors.length === 0;
    if (ours.length > 0 || unparsed) return `${name}:\n${unparsed ? output : ours.join('\n')}`;
    const problems = declarationProblems(readFileSync(join(project, 'out', 'consumer.d.ts'), 'utf8'));
    if (problems.length > 0) return `${name}: emitted declarations: ${problems.join('; ')}`;
    // the wrong hook, once per setup: exactly its error, naming ProcessInputArgs
    writeFileSync(join(project, 'wrong.ts'), wrongHook);
    writeFileSync(join(project, 'tsconfig.wrong.json'), JSON.stringify({ compilerOptions: { strict: true, skipLibCheck: true, noEmit: true, types: ['node'], ...options }, files: ['wrong.ts'] }));
    const wrong = await promisify(execFile)(process.execPath, [tsc, '-p', 'tsconfig.wrong.json', '--pretty', 'false'], { cwd: project, encoding: 'utf8' }).then(
      () => '',
      (error) => `${error.stdout}${error.stderr}`,
    );
    if (!/^wrong\.ts\(2,\d+\): error TS2322: .*ProcessInputArgs/m.test(wrong) || /\.[A-Za-z_$][\w$]?\b\)? =>|-[A-Za-z0-9_-]{8}/.test(wrong.split('\n')[0] ?? '')) {
      return `${name}: a hook with the wrong argument should be an error naming ProcessInputArgs; tsc said:\n${wrong || '(nothing)'}`;
    }
    console.log(`smoke consumer-settings: ${name}: ok${others > 0 ? ` (${others} errors in other packages' declarations, e.g. ${errors[0].split('(')[0]})` : ''}`);
    return undefined;
  };
  const failures = [];
  const queue = chosen.map((setup, index) => [setup, index]);
  const workers = Array.from({ length: Math.max(1, Math.min(availableParallelism(), queue.length)) }, async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const failure = await check(...next);
      if (failure !== undefined) failures.push(failure);
    }
  });
  await Promise.all(workers);
  if (failures.length > 0) throw new Error(`smoke consumer-settings: the packed declarations do not type-check under\n${failures.join('\n')}`);
  console.log(`smoke consumer-settings: ok (${packed[0].filename}, ${packed[0].entryCount} files; ${Object.keys(settings).length} TypeScript setups)`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
