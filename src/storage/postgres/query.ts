import type { QueryResult, QueryResultRow } from 'pg';

/**
 * One statement on a connection the store has taken from the pool and guards (internal to
 * `rxagent/storage/postgres`; the migrations run through it).
 *
 * @example
 * ```ts
 * const result = await query<{ version: number }>('SELECT max(version) AS version FROM "rxagent".schema_version');
 * ```
 */
export type Query = <R extends QueryResultRow = QueryResultRow>(text: string, values?: ReadonlyArray<unknown>) => Promise<QueryResult<R>>;
