import type { Client } from '@libsql/client';

/** One schema step; versions are applied in order, each exactly once. */
interface Migration {
  version: number;
  statements: ReadonlyArray<string>;
  /** Only saves use what it adds: a store that cannot write (read-only) reads a database without it. */
  writesOnly?: true;
}

/**
 * The libSQL schema, as migrations. Tables are prefixed `rxagent_` because a SQLite file has no
 * schemas and may hold the application's own tables. Append new versions; never edit old ones.
 */
export const libsqlMigrations: ReadonlyArray<Migration> = [
  {
    version: 1,
    statements: [
      `CREATE TABLE rxagent_threads (
        id TEXT PRIMARY KEY,
        resource_id TEXT NOT NULL,
        title TEXT,
        metadata TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      )`,
      'CREATE INDEX rxagent_threads_resource ON rxagent_threads (resource_id, updated_at DESC)',
      `CREATE TABLE rxagent_messages (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        thread_id TEXT NOT NULL,
        resource_id TEXT NOT NULL,
        role TEXT NOT NULL,
        type TEXT,
        content TEXT NOT NULL,
        created_at INTEGER NOT NULL
      )`,
      'CREATE INDEX rxagent_messages_thread ON rxagent_messages (thread_id, seq)',
      `CREATE TABLE rxagent_resources (
        id TEXT PRIMARY KEY,
        working_memory TEXT,
        metadata TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      )`,
    ],
  },
  {
    // Which run stored each message (`SaveMessagesOptions.runId`): a run's save replaces only its
    // own messages. Rows stored before are nobody's run (`NULL`).
    version: 2,
    statements: ['ALTER TABLE rxagent_messages ADD COLUMN run_id TEXT'],
    writesOnly: true,
  },
];

/** The schema version a store that only reads needs (the newest migration its reads use). */
export const readSchemaVersion = libsqlMigrations.filter((migration) => migration.writesOnly !== true).at(-1)?.version ?? 0;

/**
 * Brings the schema up to date inside one write transaction (`BEGIN IMMEDIATE` on a file), so
 * a second process opening the same file waits (busy timeout) and then finds nothing to do.
 */
export async function migrateLibSQL(client: Client, now: number): Promise<void> {
  const transaction = await client.transaction('write');
  try {
    await transaction.execute(
      'CREATE TABLE IF NOT EXISTS rxagent_schema_version (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)',
    );
    const result = await transaction.execute('SELECT COALESCE(MAX(version), 0) AS version FROM rxagent_schema_version');
    const current = Number(result.rows[0]?.['version'] ?? 0);
    for (const migration of libsqlMigrations) {
      if (migration.version <= current) continue;
      for (const statement of migration.statements) await transaction.execute(statement);
      await transaction.execute({
        sql: 'INSERT INTO rxagent_schema_version (version, applied_at) VALUES (?, ?)',
        args: [migration.version, now],
      });
    }
    await transaction.commit();
  } finally {
    transaction.close();
  }
}
