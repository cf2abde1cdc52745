// A consumer of the built package in a directory of its own, outside this repository, with only the
// required peers installed: no `@opentelemetry/api`, no `gpt-tokenizer` (both optional peers).
// - types: a consumer file importing every entry point type-checks with `skipLibCheck: false`;
// - runtime: `rxagent/processors` and `rxagent/ai-sdk` load; the token limiter with its default
//   counter fails with a clear error naming the missing peer, and works with a `tokenCounter`;
//   the store entries load without their drivers, and using a store fails with a
//   MissingDriverError naming the package and the entry point.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { entries, specifier } from '../scripts/entries.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
// the required peers, and the dependencies (with theirs) that npm installs along with rxagent
const peers = ['rxjs', 'ai', 'zod', '@ai-sdk/provider', '@ai-sdk/provider-utils', '@types/node', 'bidi-js', 'require-from-string'];
const absent = ['@opentelemetry/api', 'gpt-tokenizer', '@libsql/client', 'pg'];
const dir = mkdtempSync(join(tmpdir(), 'rxagent-consumer-'));
try {
  const modules = join(dir, 'node_modules');
  mkdirSync(join(modules, 'rxagent'), { recursive: true });
  cpSync(join(root, 'package.json'), join(modules, 'rxagent', 'package.json'));
  cpSync(join(root, 'dist'), join(modules, 'rxagent', 'dist'), { recursive: true });
  for (const name of peers) {
    mkdirSync(dirname(join(modules, name)), { recursive: true });
    symlinkSync(join(root, 'node_modules', name), join(modules, name), 'dir');
  }
  const require = createRequire(join(dir, 'consumer.mjs'));
  for (const name of absent) {
    let found;
    try {
      found = require.resolve(name);
    } catch {
      // expected: not resolvable from the consumer
    }
    if (found) throw new Error(`smoke consumer: ${name} resolves from ${dir} (${found}): the check would prove nothing`);
  }

  // types
  const imports = Object.keys(entries)
    .filter((subpath) => !subpath.startsWith('./storage/'))
    .map((subpath, index) => `import * as entry${index} from '${specifier(subpath)}';\nvoid entry${index};`);
  writeFileSync(
    join(dir, 'consumer.ts'),
    `${imports.join('\n')}
import { createRunTelemetry, type RunTelemetryOptions } from 'rxagent/ai-sdk';
import { TokenLimiterProcessor } from 'rxagent/processors';
const options: RunTelemetryOptions = { attributes: { 'app.tenant': 'acme' } };
const telemetry = createRunTelemetry(options);
void telemetry.tracingContext;
void new TokenLimiterProcessor({ limit: 10, tokenCounter: (text) => text.length });
`,
  );
  // @ai-sdk/provider's declarations import 'json-schema' types without depending on @types/json-schema:
  // any consumer of `ai` with skipLibCheck false needs that (or a shim like this one); not ours to fix
  writeFileSync(
    join(dir, 'json-schema-shim.d.ts'),
    "declare module 'json-schema' {\n  export interface JSONSchema7 { [key: string]: unknown }\n  export type JSONSchema7Definition = JSONSchema7 | boolean;\n}\n",
  );
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2023',
        lib: ['ES2023', 'DOM', 'DOM.AsyncIterable'],
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        types: ['node'],
        strict: true,
        skipLibCheck: false,
        noEmit: true,
      },
      files: ['consumer.ts', 'json-schema-shim.d.ts'],
    }),
  );
  try {
    execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'lib', 'tsc.js'), '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8' });
  } catch (error) {
    throw new Error(`smoke consumer: the declarations do not type-check without ${absent.join(' and ')} (skipLibCheck: false):\n${error.stdout}${error.stderr}`);
  }

  // runtime
  writeFileSync(
    join(dir, 'consumer.mjs'),
    `import { TokenLimiterProcessor } from 'rxagent/processors';
import { createRunTelemetry } from 'rxagent/ai-sdk';
createRunTelemetry();
const error = await new TokenLimiterProcessor({ limit: 10 }).ready().then(() => undefined, (caught) => caught);
if (!(error instanceof Error) || !/optional peer dependency "gpt-tokenizer".*npm install gpt-tokenizer/.test(error.message)) {
  throw new Error('expected a clear error about the missing gpt-tokenizer, got ' + String(error));
}
const counted = await new TokenLimiterProcessor({ limit: 10, tokenCounter: (text) => text.length }).ready();
if (counted.countMessage({ id: 'm', role: 'user', createdAt: new Date(), content: { format: 2, parts: [{ type: 'text', text: 'abc' }] } }) !== 7) throw new Error('custom counter not used');
const { LibSQLStorage } = await import('rxagent/storage/libsql');
const { PostgresStorage } = await import('rxagent/storage/postgres');
const { MissingDriverError } = await import('rxagent/memory');
const libsqlError = await new LibSQLStorage({ url: ':memory:' }).getThread('t').then(() => undefined, (caught) => caught);
if (!MissingDriverError.isInstance(libsqlError?.cause) || !libsqlError.message.includes('rxagent/storage/libsql needs the package "@libsql/client"') || !libsqlError.message.includes('npm install @libsql/client')) {
  throw new Error('expected a MissingDriverError for @libsql/client, got ' + String(libsqlError) + ' / ' + String(libsqlError?.cause));
}
let pgError;
try { new PostgresStorage({ connectionString: 'postgres://nobody@127.0.0.1:1/none' }); } catch (caught) { pgError = caught; }
if (!MissingDriverError.isInstance(pgError) || pgError.packageName !== 'pg' || pgError.entry !== 'rxagent/storage/postgres') {
  throw new Error('expected a MissingDriverError for pg, got ' + String(pgError));
}
console.log('ok');
`,
  );
  const out = execFileSync(process.execPath, [join(dir, 'consumer.mjs')], { cwd: dir, encoding: 'utf8' });
  if (out.trim() !== 'ok') throw new Error(`smoke consumer: runtime check printed ${out}`);
  console.log(`smoke consumer: ok (declarations type-check and entries load without ${absent.join(', ')}; clear errors for the missing tokenizer and store drivers)`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
