/**
 * `rxagent/storage/postgres`: memory storage on PostgreSQL (`pg`, a peer dependency), for many
 * agent processes sharing one database.
 *
 * @example
 * ```ts
 * import { PostgresStorage } from 'rxagent/storage/postgres';
 * const storage = new PostgresStorage({ connectionString: process.env.DATABASE_URL! });
 * ```
 */
export { PostgresStorage, type PostgresStorageOptions, type PostgresStorageRetry } from './postgres-storage.js';
export { PostgresRunJournal, type PostgresRunJournalOptions } from './postgres-run-journal.js';
