import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe } from 'vitest';
import { PostgresStorage } from '../../src/storage/postgres/postgres-storage.js';
import type { MemoryStorage } from '../../src/storage/types.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { describeMemory } from './memory-suite.js';

let server: TestPostgres | undefined;
let startupError: unknown;
const schema = `rxagent_memory_${randomUUID().slice(0, 8)}`;
const opened: MemoryStorage[] = [];

beforeAll(async () => {
  server = await startTestPostgres().catch((error: unknown) => {
    startupError = error;
    return undefined;
  });
});
beforeEach(() => {
  if (startupError !== undefined) throw startupError;
});
afterAll(async () => {
  await Promise.all(opened.map((storage) => storage.close()));
  if (server === undefined) return;
  if (!server.started) {
    const pool = new pg.Pool({ connectionString: server.connectionString });
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  }
  await server.stop();
});

describe('Memory on PostgreSQL', () =>
  describeMemory(() => {
    if (server === undefined) throw new Error('PostgreSQL did not start');
    const storage = new PostgresStorage({ connectionString: server.connectionString, schema });
    opened.push(storage);
    return storage;
  }));
