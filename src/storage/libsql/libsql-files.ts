/** What the libSQL store needs to know about its target: a file or not, busy, read-only, current schema. */
import { access } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Client } from '@libsql/client';
import { StorageError } from '../errors/storage-error.js';
import { readSchemaVersion } from './migrations.js';

export async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** True when SQLite refused a write because the database cannot be written (`SQLITE_READONLY*`). */
export function isReadOnlyError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code.startsWith('SQLITE_READONLY')) return true;
  return /SQLITE_READONLY|readonly database/.test(error instanceof Error ? error.message : '');
}

/**
 * Checks, without writing, that the database holds the rxagent schema its reads need (a read-only
 * store cannot create or migrate it; a migration only saves use, such as the messages' run, may be
 * missing). Throws a `StorageError` (`migrate`) otherwise.
 */
export async function requireCurrentSchema(client: Client, cause?: unknown): Promise<void> {
  const latest = readSchemaVersion;
  const found = await client.execute('SELECT COALESCE(MAX(version), 0) AS version FROM rxagent_schema_version').then(
    (result) => Number(result.rows[0]?.['version'] ?? 0),
    () => 0,
  );
  if (found < latest) {
    throw new StorageError({
      operation: 'migrate',
      message: `the database cannot be written and has no current rxagent schema (version ${found}, need ${latest})`,
      cause,
    });
  }
}

/** True for SQLite's "database is locked" (another connection holds the lock). */
export function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown; rawCode?: unknown } | null)?.code;
  if (typeof code === 'string' && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_'))) return true;
  const message = error instanceof Error ? error.message : '';
  return /SQLITE_BUSY|database is locked/.test(message);
}

/**
 * What a URL points at: an absolute file path, `'memory'` for an in-memory database, or
 * `undefined` for a server.
 */
export function fileTarget(url: string): string | undefined {
  if (url === ':memory:') return 'memory';
  if (!url.startsWith('file:')) return undefined;
  let path = url.slice('file:'.length).replace(/[?#].*$/, '');
  // file://localhost/abs or file:///abs: drop the (empty or localhost) authority.
  if (path.startsWith('//')) path = path.slice(2).replace(/^[^/]*/, '');
  path = decodeURIComponent(path);
  if (path === '' || path === ':memory:') return 'memory';
  return resolve(path);
}
