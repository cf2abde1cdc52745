/**
 * The SQL stores' drivers, loaded when a store first needs them rather than when its entry point
 * is imported: an app that imports `rxagent/storage/postgres` and never builds a `PostgresStorage`
 * needs no `pg`, and a missing driver is a {@link MissingDriverError} naming the package and the
 * entry point instead of Node's bare `ERR_MODULE_NOT_FOUND`. Loaded with `require` (synchronous,
 * as the stores' constructors are), resolved from this package's location, cached by Node.
 */
import { createRequire } from 'node:module';
import type * as LibSQL from '@libsql/client';
import type * as Pg from 'pg';
import { MissingDriverError } from '../errors/missing-driver-error.js';

let nodeRequire: NodeJS.Require | undefined;

/**
 * Loads `packageName` for `entry`, or throws a {@link MissingDriverError}.
 *
 * @example
 * ```ts
 * const { createClient } = loadDriver<typeof import('@libsql/client')>('@libsql/client', 'rxagent/storage/libsql');
 * ```
 */
export function loadDriver<T>(packageName: string, entry: string): T {
  try {
    // import.meta.url: this file in the ESM build; the CommonJS build's own file (tsup's shim)
    nodeRequire ??= createRequire(import.meta.url);
    return nodeRequire(packageName) as T;
  } catch (error) {
    throw new MissingDriverError({ packageName, entry, cause: error });
  }
}

/** `@libsql/client`'s `createClient`, loaded on the first call. */
export const createClient: typeof LibSQL.createClient = (config) =>
  loadDriver<typeof LibSQL>('@libsql/client', 'rxagent/storage/libsql').createClient(config);

/** `pg`'s default export as the PostgreSQL store uses it (`new pg.Pool(…)`, `new pg.Client(…)`), loaded on first use. */
export const pg: Pick<typeof Pg, 'Pool' | 'Client'> = {
  get Pool() {
    return loadDriver<typeof Pg>('pg', 'rxagent/storage/postgres').Pool;
  },
  get Client() {
    return loadDriver<typeof Pg>('pg', 'rxagent/storage/postgres').Client;
  },
};
