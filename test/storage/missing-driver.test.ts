/**
 * A store whose driver is not installed: the error names the package to install and the entry point
 * that needs it (src/storage/internal/load-driver.ts). Each case runs in a child process whose module
 * resolution hides the driver (fixtures/drivers/hide-drivers.mjs, a Node resolve hook), on the
 * sources; smoke/consumer.mjs checks the same against the built package in an app without them.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const hook = fileURLToPath(new URL('./fixtures/drivers/hide-drivers.mjs', import.meta.url));

/** Runs `script` (an ES module on the sources) with the hook; returns what it printed as JSON. */
function runHidden(script: string, env: Record<string, string>): Record<string, unknown> {
  const output = execFileSync(process.execPath, ['--import', hook, '--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, ...env },
  });
  return JSON.parse(output.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
}

const describeError = `
const describe = (error) => ({ name: error?.name, message: error?.message, packageName: error?.packageName, entry: error?.entry,
  missing: MissingDriverError.isInstance(error), causeCode: error?.cause?.code });`;

describe('a missing store driver', () => {
  it('rxagent/storage/libsql without @libsql/client: the entry imports; the first operation rejects naming the package and the entry', () => {
    const result = runHidden(
      `import { LibSQLStorage } from './src/storage/libsql/index.ts';
import { MissingDriverError, StorageError } from './src/memory/index.ts';${describeError}
const storage = new LibSQLStorage({ url: ':memory:' });
const error = await storage.getThread('t1').then(() => undefined, (caught) => caught);
console.log(JSON.stringify({ storageError: StorageError.isInstance(error), operation: error?.operation, message: error?.message, cause: describe(error?.cause) }));`,
      { RXAGENT_HIDE_PACKAGES: '@libsql/client' },
    );
    expect(result).toMatchObject({ storageError: true, operation: 'migrate' });
    expect(result['cause']).toMatchObject({
      name: 'MissingDriverError',
      missing: true,
      packageName: '@libsql/client',
      entry: 'rxagent/storage/libsql',
      causeCode: 'MODULE_NOT_FOUND',
    });
    expect(String(result['message'])).toContain('rxagent/storage/libsql needs the package "@libsql/client"');
    expect(String(result['message'])).toContain('npm install @libsql/client');
    expect(String(result['message'])).not.toContain('ERR_MODULE_NOT_FOUND');
  });

  it('rxagent/storage/postgres without pg: the entry imports; new PostgresStorage() throws naming pg and the entry', () => {
    const result = runHidden(
      `import { PostgresStorage } from './src/storage/postgres/index.ts';
import { MissingDriverError } from './src/memory/index.ts';${describeError}
let error;
try { new PostgresStorage({ connectionString: 'postgres://nobody@127.0.0.1:1/none' }); } catch (caught) { error = caught; }
console.log(JSON.stringify(describe(error)));`,
      { RXAGENT_HIDE_PACKAGES: 'pg' },
    );
    expect(result).toMatchObject({ name: 'MissingDriverError', missing: true, packageName: 'pg', entry: 'rxagent/storage/postgres' });
    expect(String(result['message'])).toBe(
      'rxagent/storage/postgres needs the package "pg" (an optional peer dependency of rxagent), which is not installed. Install it in your app: npm install pg',
    );
  });

  it('a driver that is installed but fails to load says so (with its own error), not "not installed"', () => {
    const result = runHidden(
      `import { LibSQLStorage } from './src/storage/libsql/index.ts';
import { MissingDriverError } from './src/memory/index.ts';${describeError}
const error = await new LibSQLStorage({ url: ':memory:' }).getThread('t1').then(() => undefined, (caught) => caught);
console.log(JSON.stringify(describe(error?.cause)));`,
      { RXAGENT_BROKEN_PACKAGES: '@libsql/client' },
    );
    expect(result).toMatchObject({ missing: true, packageName: '@libsql/client' });
    expect(String(result['message'])).toContain('is installed but failed to load: libsql.linux-x64-gnu.node: wrong ELF class');
    expect(String(result['message'])).not.toContain('not installed');
  });

  it('with the drivers present the stores work (the hook hides nothing unless asked)', () => {
    const result = runHidden(
      `import { LibSQLStorage } from './src/storage/libsql/index.ts';
const storage = new LibSQLStorage({ url: ':memory:' });
const thread = await storage.getThread('t1');
await storage.close();
console.log(JSON.stringify({ thread }));`,
      {},
    );
    expect(result).toEqual({ thread: null });
  });
});
