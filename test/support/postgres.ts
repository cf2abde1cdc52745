/**
 * A PostgreSQL server for tests. With `DATABASE_URL` set (CI sources `.ci/postgres.sh`), that
 * server is used. Without it, a throwaway cluster is started from the local PostgreSQL
 * binaries (`/usr/lib/postgresql/<version>/bin`) on a free port and removed afterwards; as root
 * it runs through `runuser -u postgres`, since PostgreSQL refuses to run as root. No
 * PostgreSQL at all is a failure with instructions, never a skip.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A reachable PostgreSQL server and how to stop it (a no-op for `DATABASE_URL`). */
export interface TestPostgres {
  connectionString: string;
  /** True when this helper started the server (and `stop()` removes it). */
  started: boolean;
  stop(): Promise<void>;
  /**
   * Only on a cluster this helper started: stops the server (`pg_ctl -m fast`, keeping its
   * data) and starts it again on the same port (fault tests: server gone, server back).
   */
  pause?: () => Promise<void>;
  resume?: () => Promise<void>;
}

/** The newest local PostgreSQL `bin` directory, or `undefined`. */
function findPostgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  return readdirSync(root)
    .filter((version) => existsSync(join(root, version, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a))
    .map((version) => join(root, version, 'bin'))[0];
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('could not find a free port');
  return address.port;
}

/** `DATABASE_URL`'s server, or a throwaway cluster started for this test file. */
export async function startTestPostgres(options: { ownCluster?: boolean } = {}): Promise<TestPostgres> {
  const fromEnvironment = options.ownCluster === true ? undefined : process.env['DATABASE_URL'];
  if (fromEnvironment) return { connectionString: fromEnvironment, started: false, stop: async () => undefined };

  const bin = findPostgresBin();
  if (bin === undefined) {
    throw new Error(
      'PostgreSQL tests need a server: DATABASE_URL is not set and no PostgreSQL is installed under /usr/lib/postgresql. ' +
        'Run `source .ci/postgres.sh` (installs Debian\'s postgresql if needed, starts a throwaway server and exports DATABASE_URL), ' +
        'or install it: `apt-get install -y postgresql`.',
    );
  }
  const asRoot = process.getuid?.() === 0;
  const dataDir = mkdtempSync(join(tmpdir(), 'rxagent-pg-'));
  const postgres = (command: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, command), ...args]) : run(join(bin, command), args);
  const stopSync = () => {
    try {
      const args = ['-D', dataDir, '-m', 'immediate', '-w', 'stop'];
      if (asRoot) execFileSync('runuser', ['-u', 'postgres', '--', join(bin, 'pg_ctl'), ...args], { stdio: 'ignore' });
      else execFileSync(join(bin, 'pg_ctl'), args, { stdio: 'ignore' });
    } catch {
      // not running
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  // Safety net when the test process ends without afterAll (crash, Ctrl-C).
  process.once('exit', stopSync);

  try {
    if (asRoot) {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
      chownSync(dataDir, uid, gid);
    }
    await postgres('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-locale', '--no-sync']);
    const port = await freePort();
    const start = () =>
      postgres('pg_ctl', [
        '-D', dataDir, '-l', join(dataDir, 'server.log'), '-w', '-t', '30',
        '-o', `-c listen_addresses=127.0.0.1 -p ${port} -k ${dataDir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off`,
        'start',
      ]);
    await start();
    return {
      connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`,
      started: true,
      pause: async () => {
        await postgres('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', 'stop']);
      },
      resume: async () => {
        await start();
      },
      stop: async () => {
        process.removeListener('exit', stopSync);
        await postgres('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', 'stop']).catch(() => undefined);
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    const logFile = join(dataDir, 'server.log');
    const log = existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(-2000) : '';
    process.removeListener('exit', stopSync);
    stopSync();
    throw new Error(`could not start a throwaway PostgreSQL from ${bin}: ${error instanceof Error ? error.message : String(error)}\n${log}`, {
      cause: error,
    });
  }
}
