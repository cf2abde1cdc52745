import { JournalSchemaError } from '../journal/errors/journal-schema-error.js';
import type { Query } from './query.js';

/** One schema step; versions are applied in order, each exactly once. */
interface Migration {
  version: number;
  statements: (schema: string) => ReadonlyArray<string>;
}

/**
 * The PostgreSQL schema, as migrations run inside the configured schema (quoted identifier).
 * Content and metadata are `json` (kept verbatim: `jsonb` rejects `\u0000` in strings);
 * `seq` (a `bigserial`) is the thread order. Append new versions; never edit old ones.
 */
export const postgresMigrations: ReadonlyArray<Migration> = [
  {
    version: 1,
    statements: (schema) => [
      `CREATE TABLE ${schema}.threads (
        id text PRIMARY KEY,
        resource_id text NOT NULL,
        title text,
        metadata json,
        created_at timestamptz(3) NOT NULL,
        updated_at timestamptz(3) NOT NULL
      )`,
      `CREATE INDEX threads_resource ON ${schema}.threads (resource_id, updated_at DESC)`,
      `CREATE TABLE ${schema}.messages (
        seq bigserial NOT NULL UNIQUE,
        id text PRIMARY KEY,
        thread_id text NOT NULL REFERENCES ${schema}.threads (id) ON DELETE CASCADE,
        resource_id text NOT NULL,
        role text NOT NULL,
        type text,
        content json NOT NULL,
        created_at timestamptz(3) NOT NULL
      )`,
      `CREATE INDEX messages_thread_seq ON ${schema}.messages (thread_id, seq)`,
      `CREATE TABLE ${schema}.resources (
        id text PRIMARY KEY,
        working_memory text,
        metadata json,
        created_at timestamptz(3) NOT NULL,
        updated_at timestamptz(3) NOT NULL
      )`,
    ],
  },
  {
    // The run journal (durable runs): one row per run, its chunks (verbatim JSON text, `seq` dense
    // from 1), commits, tool ledger and signals. No foreign keys: every write goes through the run
    // row (fenced by `epoch`), and retention deletes a run's rows together.
    version: 2,
    statements: (schema) => [
      `CREATE TABLE ${schema}.runs (
        id text PRIMARY KEY,
        agent_id text NOT NULL,
        thread_id text,
        resource_id text,
        format integer NOT NULL,
        status text NOT NULL,
        epoch integer NOT NULL DEFAULT 0,
        owner text,
        last_seq bigint NOT NULL DEFAULT 0,
        last_commit integer NOT NULL DEFAULT 0,
        terminal text,
        terminal_seq bigint,
        input json NOT NULL,
        created_at timestamptz(3) NOT NULL,
        updated_at timestamptz(3) NOT NULL,
        ended_at timestamptz(3)
      )`,
      `CREATE INDEX runs_active_thread ON ${schema}.runs (thread_id, created_at) WHERE status IN ('queued', 'running')`,
      `CREATE TABLE ${schema}.run_chunks (
        run_id text NOT NULL,
        seq bigint NOT NULL,
        epoch integer NOT NULL,
        type text NOT NULL,
        chunk text NOT NULL,
        PRIMARY KEY (run_id, seq)
      )`,
      `CREATE TABLE ${schema}.run_commits (
        run_id text NOT NULL,
        no integer NOT NULL,
        kind text NOT NULL,
        step integer NOT NULL,
        attempt integer NOT NULL,
        epoch integer NOT NULL,
        seq_end bigint NOT NULL,
        state json NOT NULL,
        created_at timestamptz(3) NOT NULL,
        PRIMARY KEY (run_id, no)
      )`,
      `CREATE TABLE ${schema}.run_tool_calls (
        run_id text NOT NULL,
        tool_call_id text NOT NULL,
        tool_name text NOT NULL,
        args json NOT NULL,
        status text NOT NULL,
        epoch integer NOT NULL,
        output json,
        error json,
        position bigserial NOT NULL,
        updated_at timestamptz(3) NOT NULL,
        PRIMARY KEY (run_id, tool_call_id)
      )`,
      `CREATE TABLE ${schema}.run_signals (
        run_id text NOT NULL,
        id bigserial NOT NULL,
        kind text NOT NULL,
        reason json,
        created_at timestamptz(3) NOT NULL,
        PRIMARY KEY (run_id, id)
      )`,
    ],
  },
  {
    // Long runs and old runs. Retention: `expired_at` marks a run whose chunks, commits, ledger and
    // signals were removed (readers answer 410), `purged` that nothing but its row is left; two
    // partial indexes find ended runs by their end. `run_chunks_structure` indexes every chunk
    // that is not a delta: a takeover or a UI resume finds a step's start and its open parts by it,
    // without reading the step's deltas (the queries that use it repeat its predicate: run-journal-structure.ts).
    version: 3,
    statements: (schema) => [
      `ALTER TABLE ${schema}.runs ADD COLUMN expired_at timestamptz(3), ADD COLUMN purged boolean NOT NULL DEFAULT false`,
      `CREATE INDEX runs_retention_pending ON ${schema}.runs (ended_at) WHERE ended_at IS NOT NULL AND NOT purged`,
      `CREATE INDEX runs_retention_purged ON ${schema}.runs (ended_at) WHERE purged`,
      `CREATE INDEX run_chunks_structure ON ${schema}.run_chunks (run_id, seq) INCLUDE (type) WHERE type NOT IN ('text-delta', 'reasoning-delta', 'tool-call-delta')`,
    ],
  },
  {
    // Outages don't burn a run's attempts: the attempts the infrastructure failed, noted by their
    // worker (RunJournal.noteInfrastructureLoss) and refunded when the run's job runs out. A column
    // with a constant default: no table rewrite.
    version: 4,
    statements: (schema) => [`ALTER TABLE ${schema}.runs ADD COLUMN infrastructure_losses text[] NOT NULL DEFAULT '{}'`],
  },
  {
    // Which run stored each message (`SaveMessagesOptions.runId`, a durable run's fenced save): a
    // run's save replaces only its own messages. Rows stored before are nobody's run (`NULL`). A
    // nullable column without a default: no table rewrite.
    version: 5,
    statements: (schema) => [`ALTER TABLE ${schema}.messages ADD COLUMN run_id text`],
  },
  {
    // A run's row removed (erased, or purged past its row retention) clears `run_id` on its
    // messages: a run created again under the id is another run and neither replaces nor drops
    // them. The index finds a run's messages without reading the table.
    version: 6,
    statements: (schema) => [`CREATE INDEX messages_run ON ${schema}.messages (run_id) WHERE run_id IS NOT NULL`],
  },
  {
    // Which run a row is (`incarnation`, from a sequence at insert): a run erased and created again
    // under its id is another run, and a reader of the first must never be handed the second's rows
    // (live readers are keyed by it, and each page checks it). Rows stored before are `NULL`, which
    // no new run has. A nullable column, its default set after: no table rewrite.
    version: 7,
    statements: (schema) => [
      `CREATE SEQUENCE ${schema}.runs_incarnation`,
      `ALTER TABLE ${schema}.runs ADD COLUMN incarnation bigint`,
      `ALTER TABLE ${schema}.runs ALTER COLUMN incarnation SET DEFAULT nextval('${schema.replaceAll("'", "''")}.runs_incarnation')`,
    ],
  },
];

/**
 * Brings the schema up to date in one transaction holding a transaction-level advisory lock
 * named after the schema: processes starting together take turns, and the later ones find
 * nothing left to do.
 */
export async function migratePostgres(query: Query, schemaName: string, statementTimeoutMs: number): Promise<void> {
  const schema = quoteIdentifier(schemaName);
  await query(`BEGIN; SET LOCAL statement_timeout = ${statementTimeoutMs}`);
  try {
    await query('SELECT pg_advisory_xact_lock(hashtext($1))', [`rxagent.migrate:${schemaName}`]);
    const exists = await query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schemaName]);
    // Only create a missing schema: CREATE SCHEMA IF NOT EXISTS needs CREATE on the database even when it exists.
    if (exists.rowCount === 0) await query(`CREATE SCHEMA ${schema}`);
    await query(
      `CREATE TABLE IF NOT EXISTS ${schema}.schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const result = await query<{ version: number }>(`SELECT coalesce(max(version), 0)::int4 AS version FROM ${schema}.schema_version`);
    const current = Number(result.rows[0]?.version ?? 0);
    const known = postgresMigrations.at(-1)?.version ?? 0;
    // Written by a newer rxagent: touch nothing (the ROLLBACK below undoes the CREATEs above).
    if (current > known) throw new JournalSchemaError({ found: current, known, subject: 'schema' });
    for (const migration of postgresMigrations) {
      if (migration.version <= current) continue;
      for (const statement of migration.statements(schema)) await query(statement);
      await query(`INSERT INTO ${schema}.schema_version (version) VALUES ($1)`, [migration.version]);
    }
    await query('COMMIT');
  } catch (error) {
    // A connection that failed is dropped by the caller; a failed statement leaves it usable.
    await query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** A schema name checked (letters, digits, `_`; at most 63 bytes) and double-quoted. */
export function quoteIdentifier(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) {
    throw new RangeError(`PostgresStorage: schema ${JSON.stringify(name)} must match /^[A-Za-z_][A-Za-z0-9_]{0,62}$/`);
  }
  return `"${name}"`;
}
