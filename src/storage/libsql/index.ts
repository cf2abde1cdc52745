/**
 * `rxagent/storage/libsql`: memory storage on libSQL / SQLite (`@libsql/client`, a peer dependency).
 *
 * @example
 * ```ts
 * import { LibSQLStorage } from 'rxagent/storage/libsql';
 * const storage = new LibSQLStorage({ url: 'file:.rxagent/memory.db' });
 * ```
 */
export { LibSQLStorage, type LibSQLStorageOptions } from './libsql-storage.js';
