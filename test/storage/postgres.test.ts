/**
 * PostgresStorage against a real PostgreSQL server: `DATABASE_URL` (CI: `.ci/postgres.sh`), or
 * a throwaway cluster from the local binaries (test/support/postgres.ts). Every run uses its
 * own schemas and drops them afterwards.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { StorageError } from '../../src/storage/errors/storage-error.js';
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { describeStorage, textMessage } from './storage-suite.js';

let server: TestPostgres | undefined;
let startupError: unknown;
const runId = randomUUID().slice(0, 8);
const schema = `rxagent_test_${runId}`;
const createdSchemas = new Set<string>([schema]);

beforeAll(async () => {
  // No PostgreSQL is a failure of every test below (never a skip), with the reason.
  server = await startTestPostgres().catch((error: unknown) => {
    startupError = error;
    return undefined;
  });
});

beforeEach(() => {
  if (startupError !== undefined) throw startupError;
});

/** The server's connection string (only read inside tests, after beforeAll). */
const connectionString = (): string => {
  if (server === undefined) throw new Error('PostgreSQL did not start');
  return server.connectionString;
};

afterAll(async () => {
  if (server === undefined) return;
  if (!server.started) {
    // A shared DATABASE_URL server: leave it as we found it.
    const pool = new pg.Pool({ connectionString: connectionString() });
    for (const name of createdSchemas) await pool.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
    await pool.end();
  }
  await server.stop();
});

describeStorage('PostgresStorage', () => new PostgresStorage({ connectionString: connectionString(), schema }));

async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe('PostgresStorage specifics', () => {
  it('several processes starting together on a new schema migrate once', async () => {
    const fresh = `rxagent_test_${runId}_migrate`;
    createdSchemas.add(fresh);
    const stores = Array.from({ length: 6 }, () => new PostgresStorage({ connectionString: connectionString(), schema: fresh }));
    await Promise.all(stores.map((store, index) => store.createThread({ id: 't', resourceId: 'r', title: `${index}` })));
    const pool = new pg.Pool({ connectionString: connectionString() });
    const versions = await pool.query<{ version: number }>(`SELECT version FROM "${fresh}".schema_version ORDER BY version`);
    const threads = await pool.query(`SELECT id FROM "${fresh}".threads`);
    await pool.end();
    expect(versions.rows.map((row) => row.version)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(threads.rowCount).toBe(1);
    await Promise.all(stores.map((store) => store.close()));
  });

  it('concurrent saves from separate pools (processes) on one thread all land, batches contiguous', async () => {
    const stores = Array.from({ length: 4 }, () => new PostgresStorage({ connectionString: connectionString(), schema }));
    const threadId = `shared-${randomUUID()}`;
    await Promise.all(
      Array.from({ length: 40 }, (_, run) =>
        stores[run % stores.length]!.saveMessages({
          threadId,
          resourceId: 'r',
          ensureThread: true,
          messages: [textMessage(`${threadId}-u${run}`, `u${run}`), textMessage(`${threadId}-a${run}`, `a${run}`, { role: 'assistant' })],
        }),
      ),
    );
    const all = await stores[0]!.getMessages({ threadId });
    expect(all).toHaveLength(80);
    for (let index = 0; index < all.length; index += 2) {
      expect(all[index + 1]?.id).toBe(all[index]!.id.replace(/-u(\d+)$/, '-a$1'));
    }
    await Promise.all(stores.map((store) => store.close()));
  });

  it('works on a pool it does not own and leaves that pool open on close()', async () => {
    const pool = new pg.Pool({ connectionString: connectionString(), max: 3 });
    const storage = new PostgresStorage({ pool, schema });
    await storage.saveMessages({ threadId: `pool-${runId}`, resourceId: 'r', messages: [textMessage(`pool-${runId}-m`, 'x')], ensureThread: true });
    await storage.close();
    expect((await pool.query('SELECT 1 AS one')).rows[0]).toEqual({ one: 1 });
    await pool.end();
  });

  it('uses the `rxagent` schema by default and rejects an unsafe schema name', async () => {
    createdSchemas.add('rxagent');
    const storage = new PostgresStorage({ connectionString: connectionString() });
    await storage.getThread('nothing');
    await storage.close();
    expect(() => new PostgresStorage({ connectionString: connectionString(), schema: 'x"; DROP TABLE y; --' })).toThrow(RangeError);
  });

  for (const deadlineMs of [0, 300]) {
    it(`an unreachable server (closed port on 127.0.0.1) is a StorageError once the retries end (retry.deadlineMs ${deadlineMs})`, { timeout: 10_000 }, async () => {
      const storage = new PostgresStorage({ connectionString: `postgres://app:app@127.0.0.1:${await closedPort()}/appdb`, retry: { deadlineMs } });
      for (const attempt of [() => storage.getThread('t'), () => storage.saveMessages({ threadId: 't', resourceId: 'r', messages: [], ensureThread: true })]) {
        const error = await attempt().catch((caught: unknown) => caught);
        expect(StorageError.isInstance(error)).toBe(true);
        expect(error).toMatchObject({ name: 'StorageError', operation: 'migrate' });
        expect(String((error as StorageError).message)).toMatch(/ECONNREFUSED/);
      }
      await storage.close();
    });
  }
});
